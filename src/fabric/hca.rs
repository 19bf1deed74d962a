//! An HCA of the fabric: switch-asic's credit-obeying [`Endpoint`] as the link port, driven packet by packet
//! by this adapter so that several flows can share one port, and a per-flow sink that counts payload when a
//! packet's last byte is in.
//!
//! This stands in for hca-model's `TxPort`/`Sink` until they are wired to the switch's port interface (see
//! the fabric module): it sends saturating flows round-robin, segments messages into MTU packets (First /
//! Middle / Last, or Only), and has no congestion-control reaction point.

use rtl_model::wire::bth::Opcode;
use switch_asic::endpoint::{Endpoint, EndpointOut};
use switch_asic::{ConfigError, FcPacket, LinkRate, PacketDesc, PacketStart};

/// One flow as its source HCA sends it.
#[derive(Debug, Clone)]
pub struct TxFlow {
    /// Index of the flow in the scenario (carried in every packet's `tag`).
    pub flow: u32,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// Path MTU in bytes (payload per packet).
    pub mtu: u16,
    /// Message length in bytes.
    pub message_bytes: u64,
    /// First cycle it may send.
    pub start: u64,
    /// First cycle it no longer sends.
    pub stop: u64,
    /// Payload bytes of the current message still to send.
    left: u64,
    /// Next PSN.
    psn: u32,
}

impl TxFlow {
    /// A flow of scenario index `flow` to `dlid`, sending in cycles `start..stop`.
    pub fn new(
        flow: u32,
        dlid: u16,
        sl: u8,
        mtu: u16,
        message_bytes: u64,
        start: u64,
        stop: u64,
    ) -> Self {
        TxFlow {
            flow,
            dlid,
            sl,
            mtu,
            message_bytes,
            start,
            stop,
            left: message_bytes,
            psn: 0,
        }
    }

    fn active(&self, t: u64) -> bool {
        self.start <= t && t < self.stop
    }

    /// The next packet of this flow; advances the message and the PSN.
    fn next_packet(&mut self, slid: u16, vls: u8) -> PacketDesc {
        let first = self.left == self.message_bytes;
        let payload = self.left.min(u64::from(self.mtu));
        self.left -= payload;
        let last = self.left == 0;
        let op = match (first, last) {
            (true, true) => Opcode::RcSendOnly,
            (true, false) => Opcode::RcSendFirst,
            (false, false) => Opcode::RcSendMiddle,
            (false, true) => Opcode::RcSendLast,
        };
        if last {
            self.left = self.message_bytes;
        }
        let mut d = PacketDesc::local(self.dlid, slid, self.sl, op, payload as u16);
        d.vl = self.sl % vls;
        d.psn = self.psn;
        d.payload_seed = self.psn;
        d.dest_qp = self.flow + 1;
        d.tag = self.flow;
        self.psn = (self.psn + 1) & 0xFF_FFFF;
        d
    }
}

/// What an HCA received for one flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxCount {
    /// Packets whose last byte is in.
    pub packets: u64,
    /// Their payload bytes.
    pub payload_bytes: u64,
    /// Of them, FECN-marked.
    pub fecn: u64,
}

/// One HCA: port, flows it sends, and receive accounting. See the module documentation.
#[derive(Debug, Clone)]
pub struct Hca {
    ep: Endpoint,
    lid: u16,
    vls: u8,
    rate: LinkRate,
    flows: Vec<TxFlow>,
    rr: usize,
    /// Flow whose packet is loaded into the endpoint and not yet sent.
    loaded: Option<usize>,
    /// The packet arriving now: its tail cycle and descriptor.
    arriving: Option<(u64, PacketDesc)>,
    /// Per scenario flow: what this HCA received (only flows addressed here count).
    pub rx: Vec<RxCount>,
    /// Per scenario flow: packets this HCA injected.
    pub injected: Vec<u64>,
}

impl Hca {
    /// An HCA with LID `lid` on a link of `rate`, `vls` data VLs of `buf_blocks` receive buffer, sending
    /// flow-control packets every `fc_interval` cycles; `nflows` is the number of flows in the scenario.
    pub fn new(
        lid: u16,
        rate: LinkRate,
        vls: u8,
        buf_blocks: u16,
        fc_interval: u16,
        nflows: usize,
    ) -> Result<Self, ConfigError> {
        Ok(Hca {
            ep: Endpoint::new(rate, vls, buf_blocks, fc_interval)?,
            lid,
            vls: vls.max(1),
            rate,
            flows: Vec::new(),
            rr: 0,
            loaded: None,
            arriving: None,
            rx: vec![RxCount::default(); nflows],
            injected: vec![0; nflows],
        })
    }

    /// Every flow stops sending from cycle `t` on (a packet already on the wire completes).
    pub fn stop_all(&mut self, t: u64) {
        for f in &mut self.flows {
            f.stop = f.stop.min(t);
        }
    }

    /// Adds a flow this HCA sends.
    pub fn add_flow(&mut self, f: TxFlow) {
        self.flows.push(f);
    }

    /// A packet head arrives this cycle.
    pub fn rx_packet(&mut self, now: u64, p: PacketStart) {
        self.ep.rx_packet(p);
        let start = self.rate.tick_of(now) + u64::from(p.offset);
        let tail = self
            .rate
            .cycle_of_byte_end(start, u64::from(p.desc.wire_len));
        self.account_tail(now);
        if let Some((t, d)) = self.arriving.replace((tail, p.desc)) {
            // The link is serial: a new head means the previous tail is in.
            self.count(d);
            debug_assert!(t <= now);
        }
        self.account_tail(now);
    }

    /// A flow-control packet arrives this cycle.
    pub fn rx_fc(&mut self, fc: FcPacket) {
        self.ep.rx_fc(fc);
    }

    fn count(&mut self, d: PacketDesc) {
        if let Some(c) = self.rx.get_mut(d.tag as usize) {
            c.packets += 1;
            c.payload_bytes += u64::from(d.payload_len);
            c.fecn += u64::from(d.fecn);
        }
    }

    fn account_tail(&mut self, now: u64) {
        if let Some((t, d)) = self.arriving {
            if t <= now {
                self.arriving = None;
                self.count(d);
            }
        }
    }

    /// A packet is arriving (head in, tail not yet).
    pub fn receiving(&self) -> bool {
        self.arriving.is_some()
    }

    /// One cycle at `now` (the fabric's clock): loads the next packet of the round-robin flow when none is
    /// waiting, steps the port, and returns what goes on the link.
    pub fn step(&mut self, now: u64) -> EndpointOut {
        self.account_tail(now);
        if let Some(i) = self.loaded {
            if !self.flows[i].active(now) {
                self.ep.stop_source();
                self.loaded = None;
            }
        }
        if self.loaded.is_none() && !self.flows.is_empty() {
            let n = self.flows.len();
            if let Some(k) = (0..n)
                .map(|k| (self.rr + k) % n)
                .find(|&k| self.flows[k].active(now))
            {
                let d = self.flows[k].next_packet(self.lid, self.vls);
                self.ep.set_source(d, Some(1));
                self.loaded = Some(k);
                self.rr = (k + 1) % n;
            }
        }
        let out = self.ep.step();
        if let (Some(p), Some(i)) = (out.pkt, self.loaded) {
            self.loaded = None;
            if let Some(c) = self.injected.get_mut(p.desc.tag as usize) {
                *c += 1;
            }
            debug_assert_eq!(p.desc.tag, self.flows[i].flow);
        }
        out
    }

    /// Credit of `vl` towards the switch, in blocks.
    pub fn credits_avail(&self, vl: usize) -> u16 {
        self.ep.credits_avail(vl)
    }

    /// Free blocks of the receive buffer of `vl`.
    pub fn rx_free(&self, vl: usize) -> u16 {
        self.ep.rx_free(vl)
    }

    /// Overflow cycles and credit errors of the port (lossless violations; zero in a correct run).
    pub fn violations(&self) -> u64 {
        let s = self.ep.stats();
        s.overflow + s.credit_err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_segmented_and_psns_advance() {
        let mut f = TxFlow::new(3, 9, 0, 1024, 2500, 0, 10);
        let ops: Vec<(u8, u16, u32)> = (0..4)
            .map(|_| {
                let d = f.next_packet(1, 1);
                (d.opcode, d.payload_len, d.psn)
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                (Opcode::RcSendFirst.into(), 1024, 0),
                (Opcode::RcSendMiddle.into(), 1024, 1),
                (Opcode::RcSendLast.into(), 452, 2),
                (Opcode::RcSendFirst.into(), 1024, 3),
            ]
        );
        assert!(f.active(9) && !f.active(10));
    }

    #[test]
    fn two_flows_alternate_on_one_port() {
        let r = LinkRate::new(2, 1).unwrap();
        let mut h = Hca::new(1, r, 1, 128, 256, 2).unwrap();
        h.add_flow(TxFlow::new(0, 5, 0, 256, 1 << 20, 0, u64::MAX));
        h.add_flow(TxFlow::new(1, 6, 0, 256, 1 << 20, 0, u64::MAX));
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 128,
        });
        let mut dlids = Vec::new();
        for t in 0..5000 {
            if let Some(p) = h.step(t).pkt {
                dlids.push(p.desc.dlid);
            }
        }
        // 128 blocks of credit at start, 5 blocks per packet: 25 packets before credit runs out.
        assert_eq!(dlids.len(), 25);
        assert!(dlids
            .chunks(2)
            .all(|c| c[0] == 5 && c.get(1).is_none_or(|&d| d == 6)));
        assert_eq!(h.injected, vec![13, 12]);
    }
}
