//! What a caller can read from the switch each cycle (signals) and over a run (counters).

/// Per-clock signals of one (port, VL), as the RTL would show them on probe ports. Built on request from the
/// block registers; reading it allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortVlSignals {
    /// `cong_detect` `cong_o` of this output port-VL.
    pub cong: bool,
    /// `root_o`.
    pub root: bool,
    /// `victim_o`.
    pub victim: bool,
    /// `mark_state_o`: packets leaving now may be marked.
    pub mark_state: bool,
    /// Sum over inputs of the VoQ fill for this output and VL, in blocks.
    pub voq_fill: u32,
    /// Input buffer of this port's VL in use, in blocks (`buf_blocks - credit_rx free_q`).
    pub in_buf_used: u16,
    /// Credit of this output VL in blocks (`credit_tx` `avail_o`).
    pub credits_avail: u16,
    /// A packet started on this output VL in the last stepped cycle.
    pub started: bool,
    /// Whether that packet was marked (FECN set, or ECN CE on a PFC port) by `fecn_marker`.
    pub marked: bool,
    /// PFC port: this output priority is paused by the downstream port.
    pub paused: bool,
    /// PFC port: this input priority has an XOFF in force upstream (sent, not lifted).
    pub pause_sent: bool,
}

/// Counters of one (port, VL), in the spirit of PortCounters / PortXmitDataVL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortVlCounters {
    /// Packets sent on this output VL.
    pub xmit_pkts: u64,
    /// Bytes sent (PortXmitData counts these in 4-byte words).
    pub xmit_bytes: u64,
    /// Packets received on this input VL.
    pub rcv_pkts: u64,
    /// Bytes received.
    pub rcv_bytes: u64,
    /// Cycles this output VL had a packet queued that its credit could not cover (PortVLXmitWait in spirit).
    pub xmit_wait: u64,
    /// Cycles this output VL was in the congestion state (`cong_o`).
    pub cong_cycles: u64,
    /// Packets that left while the port-VL was in the marking state and were at least Packet_Size long.
    pub eligible: u64,
    /// Packets marked with FECN.
    pub marked: u64,
    /// Packets dropped at this input VL (no route, SL mapped to VL15, too long, bad VL).
    pub dropped: u64,
    /// Cycles in which `credit_rx` of this input VL flagged an overflow (a lossless violation upstream).
    pub overflow: u64,
    /// Takes without credit flagged by `credit_tx` (a bug if ever nonzero).
    pub credit_err: u64,
    /// PFC: XOFF frames sent for this input priority (refreshes included).
    pub pauses_sent: u64,
    /// PFC: XON (pause 0) frames sent for this input priority.
    pub resumes_sent: u64,
}

impl PortVlCounters {
    /// Adds `o` into `self` (for per-port totals).
    pub fn add(&mut self, o: &PortVlCounters) {
        self.xmit_pkts += o.xmit_pkts;
        self.xmit_bytes += o.xmit_bytes;
        self.rcv_pkts += o.rcv_pkts;
        self.rcv_bytes += o.rcv_bytes;
        self.xmit_wait += o.xmit_wait;
        self.cong_cycles += o.cong_cycles;
        self.eligible += o.eligible;
        self.marked += o.marked;
        self.dropped += o.dropped;
        self.overflow += o.overflow;
        self.credit_err += o.credit_err;
        self.pauses_sent += o.pauses_sent;
        self.resumes_sent += o.resumes_sent;
    }
}

/// A duration counted lazily: the state is evaluated only when it can change, and the open interval is added
/// when read, so an idle switch does no per-cycle counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LazyCycles {
    total: u64,
    since: Option<u64>,
}

impl LazyCycles {
    /// The state holds from cycle `t` on (until the next call).
    pub(crate) fn set(&mut self, on: bool, t: u64) {
        match (self.since, on) {
            (None, true) => self.since = Some(t),
            (Some(s), false) => {
                self.total += t.saturating_sub(s);
                self.since = None;
            }
            _ => {}
        }
    }

    /// Whether the state is on (as last set).
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.since.is_some()
    }

    /// Cycles counted before cycle `now`.
    pub(crate) fn read(&self, now: u64) -> u64 {
        self.total + self.since.map_or(0, |s| now.saturating_sub(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_cycles_count_open_and_closed_intervals() {
        let mut l = LazyCycles::default();
        l.set(true, 10);
        l.set(true, 12);
        assert_eq!(l.read(15), 5);
        l.set(false, 20);
        assert_eq!(l.read(100), 10);
        l.set(true, 30);
        assert_eq!(l.read(31), 11);
    }
}
