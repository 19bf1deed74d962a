//! A transaction-level scoreboard for switch RTL that is not the project's own twin: it sees, per switch port,
//! the packets (bytes) and flow-control packets that went in and came out, plus the golden model's view of the
//! same traffic (`switch_asic::Switch`: where each packet goes, its VL, its marking state), and checks the
//! properties a switch must keep whatever its pipeline depth, beat width or arbitration order:
//!
//! | check | what is a violation ([`Kind`]) |
//! |---|---|
//! | exactly once | a packet out that matches no packet in ([`Kind::Unknown`]), or one delivered before ([`Kind::Duplicate`]) |
//! | order | a packet out before an earlier packet of the same (input, input VL, output, output VL) ([`Kind::OutOfOrder`]) |
//! | route | out at a port other than the LFT's ([`Kind::WrongPort`]) |
//! | VL | out on a VL other than the SL2VL table's for (input, output, SL) ([`Kind::WrongVl`]) |
//! | bytes | any byte differing from the packet in except the LRH VL, the BTH FECN bit and the VCRC ([`Kind::BytesChanged`]); the ICRC field changed ([`Kind::IcrcChanged`]) |
//! | VCRC | not the VCRC of the bytes out ([`Kind::BadVcrc`]) |
//! | FECN | cleared ([`Kind::FecnCleared`]), or set on a packet that was not eligible ([`Kind::FecnIneligible`], below) |
//! | credits | a packet out beyond the link partner's FCCL ([`Kind::CreditOverrun`]); an FCTBS other than the blocks sent ([`Kind::BadFctbs`]); an FCCL beyond the buffer ([`Kind::CreditBeyondBuffer`]) |
//! | arbitration | a VL with weight, waiting with credit through a whole window, short of its weighted share of its table's bytes by more than the slack ([`Kind::ArbShare`]) |
//! | latency | out more than [`Bounds::max_extra_latency`] cycles after the golden model sent it ([`Kind::Latency`]) |
//! | lossless | after the drain: a packet not delivered ([`Kind::Lost`]), an input buffer whose whole credit is not advertised again ([`Kind::CreditLost`]) |
//!
//! **FECN eligibility.** Marking is a designer's choice: Marking_Rate spaces marks out by a counter or a
//! pseudo-random draw, and the RTL's draw need not be the golden model's. So the scoreboard does not demand
//! the golden model's marks; it demands that the RTL mark only what the golden model *could* have marked: a
//! packet of at least Packet_Size (64-byte units; 0: any) whose output port-VL was in the golden model's
//! marking state (`cong_detect` `mark_state_o` under the configured threshold mapping) at some cycle from
//! [`Bounds::fecn_slack`] cycles before the packet came in to that many after it came out. That window covers
//! both mark points (enqueue and dequeue) and the RTL's extra latency. A packet that came in with FECN set
//! keeps it. With [`Bounds::mark_rate_check`], the RTL's marks over the run must also not exceed the eligible
//! packets' count divided by Marking_Rate + 1, plus [`Bounds::mark_rate_slack`] (a rate no designer's method
//! may exceed on average).
//!
//! Events are handed in in cycle order (equal cycles in any order, except that a port's flow-control packet
//! in counts before its packets out of the same cycle). The first violation is returned; the scoreboard keeps
//! going if the caller wants more.
//!
//! [`golden`] runs `switch_asic::Switch` on the same packets and feeds its view in.

pub mod bench;
pub mod golden;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

use rtl_model::crc::vcrc::verify_vcrc;
use rtl_model::link::packet::FcPacket;
use switch_asic::config::mtu_packet_blocks;
use switch_asic::SwitchConfig;

/// Credit counters are 12 bits (IBA flow control).
const FC_MOD: u32 = 4096;
const FC_HALF: u32 = 2048;

/// Tolerances: how far the RTL may differ from the golden model without it being a bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bounds {
    /// Cycles a packet may leave the RTL after the golden model sent it (extra pipeline stages, another
    /// arbitration order, credit returned later). `u64::MAX`: no bound.
    pub max_extra_latency: u64,
    /// Cycles either side of a packet's stay in which the golden model's marking state makes it eligible.
    pub fecn_slack: u64,
    /// Check the RTL's marks against Marking_Rate over the run.
    pub mark_rate_check: bool,
    /// Marks allowed beyond eligible / (Marking_Rate + 1), per port-VL.
    pub mark_rate_slack: u64,
    /// Length of an arbitration window in cycles (0: no arbitration check).
    pub arb_window: u64,
    /// Cycles a packet is given, after it came in, before it counts as waiting at its output.
    pub arb_settle: u64,
    /// Bytes a waiting VL may be short of its weighted share within one window.
    pub arb_slack_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_extra_latency: 20_000,
            fecn_slack: 200,
            mark_rate_check: true,
            mark_rate_slack: 2,
            arb_window: 20_000,
            arb_settle: 2_000,
            arb_slack_bytes: 3 * 4_200,
        }
    }
}

/// What was violated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A packet out that matches no packet in.
    Unknown,
    /// A packet out a second time.
    Duplicate,
    /// Out before an earlier packet of its (input, input VL, output, output VL).
    OutOfOrder,
    /// Out at a port other than the LFT's.
    WrongPort,
    /// Out on a VL other than SL2VL's.
    WrongVl,
    /// Bytes changed beyond LRH VL, FECN and VCRC.
    BytesChanged,
    /// The ICRC field changed.
    IcrcChanged,
    /// VCRC wrong.
    BadVcrc,
    /// FECN was set on the way in and is clear on the way out.
    FecnCleared,
    /// FECN set on a packet the golden model's congestion state does not make eligible.
    FecnIneligible,
    /// More marks than Marking_Rate allows.
    MarkRate,
    /// A packet out beyond the link partner's credit.
    CreditOverrun,
    /// The switch's FCTBS is not the blocks it sent.
    BadFctbs,
    /// The switch advertised credit beyond its buffer.
    CreditBeyondBuffer,
    /// A VL short of its weighted share over a window.
    ArbShare,
    /// Out later than the golden model by more than the bound.
    Latency,
    /// Not delivered after the drain.
    Lost,
    /// An input buffer's credit not all advertised again after the drain.
    CreditLost,
}

/// The first thing found wrong, with both sides' view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What was violated.
    pub kind: Kind,
    /// Cycle at which it was seen.
    pub cycle: u64,
    /// Switch port (output, or input for credit advertisements).
    pub port: usize,
    /// The packet concerned (index in the order packets came in), if any.
    pub packet: Option<usize>,
    /// What the RTL did.
    pub rtl: String,
    /// What the golden model (or the rule) says.
    pub golden: String,
    /// The packet's bytes as they came out (or in), when there is a packet.
    pub bytes: Vec<u8>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "violation {:?} at cycle {}, port {}",
            self.kind, self.cycle, self.port
        )?;
        if let Some(p) = self.packet {
            write!(f, ", packet #{p}")?;
        }
        write!(f, "\n  RTL:    {}\n  golden: {}", self.rtl, self.golden)?;
        if !self.bytes.is_empty() {
            write!(f, "\n  bytes ({}):", self.bytes.len())?;
            for (i, b) in self.bytes.iter().enumerate().take(64) {
                if i % 32 == 0 {
                    write!(f, "\n    ")?;
                }
                write!(f, "{b:02x}")?;
            }
            if self.bytes.len() > 64 {
                write!(f, " ...")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// Header fields the scoreboard reads from a packet's bytes (LRH, and the BTH's place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hdr {
    /// LRH VL.
    pub vl: u8,
    /// LRH SL.
    pub sl: u8,
    /// LRH DLID.
    pub dlid: u16,
    /// LRH SLID.
    pub slid: u16,
    /// Offset of the BTH (8, or 48 after a GRH).
    pub bth_at: usize,
    /// BTH FECN.
    pub fecn: bool,
}

/// Reads the fields of an IB packet (LRH through VCRC); `None` when too short for its headers.
pub fn hdr(b: &[u8]) -> Option<Hdr> {
    if b.len() < 8 {
        return None;
    }
    let bth_at = if b[1] & 3 == 3 { 48 } else { 8 };
    if b.len() < bth_at + 12 + 6 {
        return None;
    }
    Some(Hdr {
        vl: b[0] >> 4,
        sl: b[1] >> 4,
        dlid: u16::from_be_bytes([b[2], b[3]]),
        slid: u16::from_be_bytes([b[6], b[7]]),
        bth_at,
        fecn: b[bth_at + 4] & 0x80 != 0,
    })
}

/// The bytes a switch must not change: everything but the LRH VL, the BTH FECN bit and the VCRC.
fn invariant(b: &[u8], h: &Hdr) -> Vec<u8> {
    let mut k = b[..b.len() - 2].to_vec();
    k[0] &= 0x0f;
    k[h.bth_at + 4] &= 0x7f;
    k
}

fn key_of(inv: &[u8]) -> u64 {
    // FNV-1a, 64 bits, with the length folded in: a key, the bytes themselves decide a match.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ inv.len() as u64;
    for &x in inv {
        h ^= u64::from(x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn blocks_of(len: usize) -> u32 {
    len.div_ceil(64) as u32
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A packet that came in.
#[derive(Debug, Clone)]
struct InPkt {
    cycle: u64,
    port: usize,
    hdr: Hdr,
    /// Invariant bytes (kept while outstanding).
    inv: Vec<u8>,
    len: usize,
    /// Sequence number within its (input, input VL).
    seq: u64,
    /// Where it went, when delivered.
    out_cycle: Option<u64>,
    golden_out: Option<(u64, usize, u8, bool)>,
}

/// Per (output port, VL): transmitter state as the link partner sees it.
#[derive(Debug, Clone, Default)]
struct TxVl {
    /// Blocks the switch sent on this VL (mod 4096).
    sent: u32,
    /// The partner's FCCL as last handed to the switch.
    fccl: u32,
    /// The partner's FCCLs with the cycle each reached the switch, since the last packet out (a packet out is
    /// checked against the FCCL in force at its first byte, which a caller that reports packets when their
    /// last byte is out may have passed).
    fccl_hist: VecDeque<(u64, u32)>,
    /// The FCCL in force before the first entry of `fccl_hist`.
    fccl_before: u32,
    /// Start of the current stretch with less than an MTU packet of credit, if in one.
    starved_since: Option<u64>,
    /// End of the last such stretch.
    starved_until: u64,
    /// Bytes sent in the current arbitration window.
    win_bytes: u64,
    /// Packets the golden model made eligible for marking / the RTL marked.
    eligible: u64,
    marked: u64,
    /// Golden marking state: changes (cycle, on) in order.
    mark_state: Vec<(u64, bool)>,
}

/// Per (input port, VL): receiver state.
#[derive(Debug, Clone, Default)]
struct RxVl {
    /// Blocks received (ABR, mod 4096).
    abr: u32,
    /// Last FCCL the switch advertised.
    fccl: Option<u32>,
    seq: u64,
}

/// The scoreboard. See the module documentation.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    cfg: SwitchConfig,
    bounds: Bounds,
    n: usize,
    nvl: usize,
    mtu_blocks: u32,
    pkts: Vec<InPkt>,
    /// Invariant-bytes key -> packets in, not yet out (oldest first).
    outstanding: HashMap<u64, VecDeque<usize>>,
    /// Invariant-bytes key -> packets already out.
    delivered: HashMap<u64, Vec<usize>>,
    /// Per (input, in VL, output, out VL): last sequence number delivered.
    last_seq: HashMap<(usize, u8, usize, u8), u64>,
    /// Per (output, VL): packets waiting (id -> cycle in).
    pending: Vec<BTreeMap<usize, u64>>,
    tx: Vec<TxVl>,
    rx: Vec<RxVl>,
    win_start: u64,
    now: u64,
    checked: usize,
    first: Option<Violation>,
}

impl Scoreboard {
    /// A scoreboard for a switch configured by `cfg` (its LFT, SL2VL, buffers, VL arbitration and marking
    /// settings are the rules).
    pub fn new(cfg: &SwitchConfig, bounds: Bounds) -> Self {
        let n = cfg.ports.len();
        let nvl = 15;
        let fccl0 = u32::from(rtl_model::blocks::credit_tx::Config::default().fccl_reset);
        let mut tx = vec![TxVl::default(); n * nvl];
        for t in &mut tx {
            t.fccl = fccl0;
            t.fccl_before = fccl0;
            t.starved_since = Some(0);
        }
        Scoreboard {
            cfg: cfg.clone(),
            bounds,
            n,
            nvl,
            mtu_blocks: u32::from(mtu_packet_blocks(cfg.mtu)),
            pkts: Vec::new(),
            outstanding: HashMap::new(),
            delivered: HashMap::new(),
            last_seq: HashMap::new(),
            pending: vec![BTreeMap::new(); n * nvl],
            tx,
            rx: vec![RxVl::default(); n * nvl],
            win_start: 0,
            now: 0,
            checked: 0,
            first: None,
        }
    }

    /// Packets delivered and checked so far.
    pub fn checked(&self) -> usize {
        self.checked
    }

    /// Packets handed in so far.
    pub fn packets_in(&self) -> usize {
        self.pkts.len()
    }

    /// Over every output port-VL: packets out that the golden model made eligible for FECN, and packets the
    /// switch marked.
    pub fn marks(&self) -> (u64, u64) {
        self.tx
            .iter()
            .fold((0, 0), |(e, m), t| (e + t.eligible, m + t.marked))
    }

    /// The first violation found, if any.
    pub fn first_violation(&self) -> Option<&Violation> {
        self.first.as_ref()
    }

    /// The bounds in force.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    fn k(&self, port: usize, vl: u8) -> usize {
        port * self.nvl + usize::from(vl).min(self.nvl - 1)
    }

    fn report(&mut self, v: Violation) -> Result<(), Violation> {
        if self.first.is_none() {
            self.first = Some(v.clone());
        }
        Err(v)
    }

    /// Time moves to `cycle`: closes the arbitration windows that end by then. Packets and flow-control
    /// packets in do not move time (they cannot violate anything); packets and flow-control packets out do.
    pub fn advance(&mut self, cycle: u64) -> Result<(), Violation> {
        let w = self.bounds.arb_window;
        if cycle > self.now {
            self.now = cycle;
        }
        if w == 0 {
            return Ok(());
        }
        while self.win_start + w <= cycle {
            let (s, e) = (self.win_start, self.win_start + w);
            self.win_start = e;
            self.close_window(s, e)?;
        }
        Ok(())
    }

    /// Checks one arbitration window [s, e) at every output: among the VLs of one table (only high, or only
    /// low entries) that waited with credit through the whole window, each got at least its weighted share
    /// of the bytes its table's VLs got, less the slack.
    fn close_window(&mut self, s: u64, e: u64) -> Result<(), Violation> {
        let mut res = Ok(());
        for out in 0..self.n {
            let pc = &self.cfg.ports[out];
            let nvl = usize::from(pc.data_vls).min(self.nvl);
            let mut hi = vec![0u64; nvl];
            let mut lo = vec![0u64; nvl];
            for en in &pc.vlarb.high {
                if usize::from(en.vl) < nvl {
                    hi[usize::from(en.vl)] += u64::from(en.weight);
                }
            }
            for en in &pc.vlarb.low {
                if usize::from(en.vl) < nvl {
                    lo[usize::from(en.vl)] += u64::from(en.weight);
                }
            }
            let waiting: Vec<bool> = (0..nvl)
                .map(|vl| {
                    let k = out * self.nvl + vl;
                    let t = &self.tx[k];
                    let credit = t.starved_since.is_none() && t.starved_until <= s;
                    let old = self.pending[k]
                        .values()
                        .any(|&c| c.saturating_add(self.bounds.arb_settle) <= s);
                    credit && old
                })
                .collect();
            for (table, other) in [(&hi, &lo), (&lo, &hi)] {
                // VLs in this table only.
                let mine: Vec<usize> = (0..nvl)
                    .filter(|&v| table[v] > 0 && other[v] == 0)
                    .collect();
                let bytes: u64 = mine
                    .iter()
                    .map(|&v| self.tx[out * self.nvl + v].win_bytes)
                    .sum();
                let wsum: u64 = mine
                    .iter()
                    .filter(|&&v| waiting[v])
                    .map(|&v| table[v])
                    .sum();
                for &v in mine.iter().filter(|&&v| waiting[v]) {
                    let got = self.tx[out * self.nvl + v].win_bytes;
                    let share = bytes * table[v] / wsum.max(1);
                    if got + self.bounds.arb_slack_bytes < share && res.is_ok() {
                        let id = self.pending[out * self.nvl + v].keys().next().copied();
                        res = Err(Violation {
                            kind: Kind::ArbShare,
                            cycle: e,
                            port: out,
                            packet: id,
                            rtl: format!(
                                "VL {v} sent {got} bytes in cycles {s}..{e} while waiting with credit; its table's VLs sent {bytes}"
                            ),
                            golden: format!(
                                "weight {} of {wsum} among the waiting VLs: at least {share} bytes less {} slack",
                                table[v], self.bounds.arb_slack_bytes
                            ),
                            bytes: Vec::new(),
                        });
                    }
                }
            }
            for v in 0..nvl {
                self.tx[out * self.nvl + v].win_bytes = 0;
            }
        }
        match res {
            Ok(()) => Ok(()),
            Err(v) => self.report(v),
        }
    }

    /// A packet came in at `port` (its first byte in `cycle`). Returns its index.
    pub fn rx_packet(&mut self, cycle: u64, port: usize, bytes: &[u8]) -> usize {
        let id = self.pkts.len();
        let h = hdr(bytes).unwrap_or(Hdr {
            vl: 0,
            sl: 0,
            dlid: 0,
            slid: 0,
            bth_at: 0,
            fecn: false,
        });
        let inv = if bytes.len() >= 20 {
            invariant(bytes, &h)
        } else {
            bytes.to_vec()
        };
        let k = self.k(port, h.vl);
        let r = &mut self.rx[k];
        r.abr = (r.abr + blocks_of(bytes.len())) % FC_MOD;
        let seq = r.seq;
        r.seq += 1;
        self.outstanding
            .entry(key_of(&inv))
            .or_default()
            .push_back(id);
        if let Some(out) = self.lft_port(h.dlid) {
            let ovl = self.sl2vl(port, out, h.sl);
            let ko = self.k(out, ovl);
            self.pending[ko].insert(id, cycle);
        }
        self.pkts.push(InPkt {
            cycle,
            port,
            hdr: h,
            inv,
            len: bytes.len(),
            seq,
            out_cycle: None,
            golden_out: None,
        });
        id
    }

    fn lft_port(&self, dlid: u16) -> Option<usize> {
        self.cfg
            .lft
            .get(usize::from(dlid))
            .copied()
            .flatten()
            .map(usize::from)
            .filter(|&p| p < self.n)
    }

    fn sl2vl(&self, inp: usize, out: usize, sl: u8) -> u8 {
        self.cfg.sl2vl_of(inp, out).vl_of(sl).unwrap_or(15)
    }

    /// The link partner at `port` handed the switch a flow-control packet (its FCCL: the switch's credit).
    pub fn rx_fc(&mut self, cycle: u64, port: usize, fc: FcPacket) {
        let k = self.k(port, fc.vl);
        let f = u32::from(fc.fccl) % FC_MOD;
        self.tx[k].fccl = f;
        self.tx[k].fccl_hist.push_back((cycle, f));
        self.update_starved(k, cycle);
    }

    fn avail(&self, k: usize) -> u32 {
        let t = &self.tx[k];
        let a = (t.fccl + FC_MOD - t.sent) % FC_MOD;
        if a > FC_HALF {
            0
        } else {
            a
        }
    }

    fn update_starved(&mut self, k: usize, cycle: u64) {
        let starved = self.avail(k) < self.mtu_blocks;
        let t = &mut self.tx[k];
        match (starved, t.starved_since) {
            (true, None) => t.starved_since = Some(cycle),
            (false, Some(_)) => {
                t.starved_since = None;
                t.starved_until = cycle;
            }
            _ => {}
        }
    }

    /// The golden model sent packet `id` at `port` in `cycle` on VL `vl`, FECN `fecn`.
    pub fn golden_tx(&mut self, cycle: u64, id: usize, port: usize, vl: u8, fecn: bool) {
        if let Some(p) = self.pkts.get_mut(id) {
            p.golden_out = Some((cycle, port, vl, fecn));
        }
    }

    /// The golden model's marking state of output `port`, VL `vl` is `on` from `cycle`.
    pub fn golden_mark_state(&mut self, cycle: u64, port: usize, vl: u8, on: bool) {
        let k = self.k(port, vl);
        let m = &mut self.tx[k].mark_state;
        if m.last().map(|&(_, o)| o) != Some(on) {
            m.push((cycle, on));
        }
    }

    /// Whether the golden marking state of `k` was on at some cycle in [a, b].
    fn marking_in(&self, k: usize, a: u64, b: u64) -> bool {
        let m = &self.tx[k].mark_state;
        // The state at a: the last change at or before a.
        let i = m.partition_point(|&(c, _)| c <= a);
        if i > 0 && m[i - 1].1 {
            return true;
        }
        m[i..]
            .iter()
            .take_while(|&&(c, _)| c <= b)
            .any(|&(_, on)| on)
    }

    /// The switch sent a flow-control packet at `port`: its FCTBS (blocks it sent on that VL) and its FCCL
    /// (credit for its own input buffer).
    pub fn tx_fc(&mut self, cycle: u64, port: usize, fc: FcPacket) -> Result<(), Violation> {
        self.advance(cycle)?;
        if port >= self.n || fc.vl >= self.cfg.ports[port].data_vls {
            // Ports and VLs the switch lacks (an RTL larger than the configuration) have no link partner.
            return Ok(());
        }
        let k = self.k(port, fc.vl);
        let sent = self.tx[k].sent;
        if u32::from(fc.fctbs) % FC_MOD != sent {
            return self.report(Violation {
                kind: Kind::BadFctbs,
                cycle,
                port,
                packet: None,
                rtl: format!("flow-control packet VL {} FCTBS {}", fc.vl, fc.fctbs),
                golden: format!("the switch sent {sent} blocks (mod 4096) on that VL"),
                bytes: Vec::new(),
            });
        }
        let buf = self.buf_blocks(port, fc.vl);
        let r = &mut self.rx[k];
        let fccl = u32::from(fc.fccl) % FC_MOD;
        r.fccl = Some(fccl);
        let abr = r.abr;
        let adv = (fccl + FC_MOD - abr) % FC_MOD;
        if adv > buf && adv <= FC_HALF {
            return self.report(Violation {
                kind: Kind::CreditBeyondBuffer,
                cycle,
                port,
                packet: None,
                rtl: format!(
                    "flow-control packet VL {} FCCL {fccl}: {adv} blocks beyond the {abr} received",
                    fc.vl
                ),
                golden: format!("the input buffer of that VL holds {buf} blocks"),
                bytes: Vec::new(),
            });
        }
        Ok(())
    }

    fn buf_blocks(&self, port: usize, vl: u8) -> u32 {
        self.cfg.ports[port]
            .vl_buf_blocks
            .get(usize::from(vl))
            .map_or(0, |&b| u32::from(b))
    }

    /// A packet came out of the switch at `port` (its first byte in `cycle`): the checks of the table above.
    pub fn tx_packet(&mut self, cycle: u64, port: usize, bytes: &[u8]) -> Result<(), Violation> {
        self.advance(cycle)?;
        if port >= self.n {
            return self.report(Violation {
                kind: Kind::WrongPort,
                cycle,
                port,
                packet: None,
                rtl: format!("a {}-byte packet out of port {port}", bytes.len()),
                golden: format!("the switch has {} ports", self.n),
                bytes: bytes.to_vec(),
            });
        }
        let Some(h) = hdr(bytes) else {
            return self.report(Violation {
                kind: Kind::Unknown,
                cycle,
                port,
                packet: None,
                rtl: format!("a {}-byte packet, too short for its headers", bytes.len()),
                golden: "no such packet came in".into(),
                bytes: bytes.to_vec(),
            });
        };
        let inv = invariant(bytes, &h);
        let key = key_of(&inv);
        let found = self.outstanding.get(&key).and_then(|q| {
            q.iter()
                .position(|&i| self.pkts[i].inv == inv)
                .map(|pos| (pos, q[pos]))
        });
        let Some((pos, id)) = found else {
            return self.unmatched(cycle, port, bytes, &h, &inv, key);
        };
        self.outstanding.get_mut(&key).map(|q| q.remove(pos));
        self.delivered.entry(key).or_default().push(id);
        let p = self.pkts[id].clone();
        self.pkts[id].out_cycle = Some(cycle);
        self.pkts[id].inv = Vec::new();
        self.checked += 1;
        let v = |kind, rtl: String, golden: String| Violation {
            kind,
            cycle,
            port,
            packet: Some(id),
            rtl,
            golden,
            bytes: bytes.to_vec(),
        };
        // Route.
        let want = self.lft_port(p.hdr.dlid);
        if want != Some(port) {
            return self.report(v(
                Kind::WrongPort,
                format!(
                    "DLID {:#x} in at port {} out at port {port}",
                    p.hdr.dlid, p.port
                ),
                format!("the LFT names {want:?}"),
            ));
        }
        let ovl = self.sl2vl(p.port, port, p.hdr.sl);
        let kin = self.k(port, ovl);
        self.pending[kin].remove(&id);
        if h.vl != ovl {
            return self.report(v(
                Kind::WrongVl,
                format!(
                    "SL {} in at port {} on VL {}, out on VL {}",
                    p.hdr.sl, p.port, p.hdr.vl, h.vl
                ),
                format!("SL2VL({}, {port}) maps SL {} to VL {ovl}", p.port, p.hdr.sl),
            ));
        }
        if !verify_vcrc(bytes) {
            let l = bytes.len();
            let mut want = bytes.to_vec();
            rtl_model::crc::vcrc::fill_vcrc(&mut want);
            return self.report(v(
                Kind::BadVcrc,
                format!("VCRC bytes {:02x} {:02x}", bytes[l - 2], bytes[l - 1]),
                format!(
                    "VCRC bytes {:02x} {:02x} over the bytes out",
                    want[l - 2],
                    want[l - 1]
                ),
            ));
        }
        // Order within (input, input VL, output, output VL).
        let okey = (p.port, p.hdr.vl, port, ovl);
        if let Some(&last) = self.last_seq.get(&okey) {
            if p.seq < last {
                return self.report(v(
                    Kind::OutOfOrder,
                    format!(
                        "packet {} of input {} VL {} out after packet {last} of the same input VL, output and VL",
                        p.seq, p.port, p.hdr.vl
                    ),
                    "in the order they came in".into(),
                ));
            }
        }
        self.last_seq.insert(okey, p.seq);
        // FECN.
        if p.hdr.fecn && !h.fecn {
            return self.report(v(
                Kind::FecnCleared,
                "FECN clear".into(),
                "it came in with FECN set".into(),
            ));
        }
        let cc = &self.cfg.ports[port].cc;
        let size_ok = cc.packet_size == 0 || bytes.len() >= usize::from(cc.packet_size) * 64;
        let slack = self.bounds.fecn_slack;
        let eligible =
            size_ok && self.marking_in(kin, p.cycle.saturating_sub(slack), cycle + slack);
        if eligible {
            self.tx[kin].eligible += 1;
        }
        if h.fecn && !p.hdr.fecn {
            self.tx[kin].marked += 1;
            if !eligible {
                let state = self.tx[kin]
                    .mark_state
                    .iter()
                    .rev()
                    .find(|&&(c, _)| c <= cycle + slack)
                    .copied();
                return self.report(v(
                    Kind::FecnIneligible,
                    format!("FECN set on a {}-byte packet in at cycle {}", bytes.len(), p.cycle),
                    format!(
                        "port {port} VL {ovl}: not in the marking state from cycle {} to {} (last change {state:?}), or shorter than Packet_Size {} x 64 bytes; golden sent it with {:?}",
                        p.cycle.saturating_sub(slack),
                        cycle + slack,
                        cc.packet_size,
                        p.golden_out
                    ),
                ));
            }
            if self.bounds.mark_rate_check {
                let t = &self.tx[kin];
                let allowed =
                    t.eligible / (u64::from(cc.marking_rate) + 1) + 1 + self.bounds.mark_rate_slack;
                if t.marked > allowed {
                    let (m, e) = (t.marked, t.eligible);
                    return self.report(v(
                        Kind::MarkRate,
                        format!("{m} packets marked at port {port} VL {ovl}"),
                        format!(
                            "{e} eligible with Marking_Rate {}: at most {allowed}",
                            cc.marking_rate
                        ),
                    ));
                }
            }
        }
        // Credit: the packet's blocks within the partner's FCCL.
        let blocks = blocks_of(bytes.len());
        let t = &mut self.tx[kin];
        // The FCCL in force at the first byte: the last one handed in at or before it (packets out of one
        // port come in the order of their first bytes).
        while let Some(&(c, f)) = t.fccl_hist.front() {
            if c > cycle {
                break;
            }
            t.fccl_before = f;
            t.fccl_hist.pop_front();
        }
        let fccl_then = t.fccl_before;
        let t = &self.tx[kin];
        let after = (t.sent + blocks) % FC_MOD;
        let room = (fccl_then + FC_MOD - after) % FC_MOD;
        if room > FC_HALF {
            let (fccl, sent) = (fccl_then, t.sent);
            return self.report(v(
                Kind::CreditOverrun,
                format!("{blocks} blocks sent on VL {ovl} with {sent} sent before (mod 4096)"),
                format!("the link partner's FCCL is {fccl}"),
            ));
        }
        self.tx[kin].sent = after;
        self.tx[kin].win_bytes += bytes.len() as u64;
        self.update_starved(kin, cycle);
        // Latency against the golden model.
        if let Some((g, ..)) = p.golden_out {
            if cycle > g.saturating_add(self.bounds.max_extra_latency) {
                return self.report(v(
                    Kind::Latency,
                    format!("out at cycle {cycle}"),
                    format!(
                        "golden sent it at cycle {g}; the bound is {} cycles later",
                        self.bounds.max_extra_latency
                    ),
                ));
            }
        }
        Ok(())
    }

    fn unmatched(
        &mut self,
        cycle: u64,
        port: usize,
        bytes: &[u8],
        h: &Hdr,
        inv: &[u8],
        key: u64,
    ) -> Result<(), Violation> {
        if let Some(ids) = self.delivered.get(&key) {
            let id = ids[0];
            let first = self.pkts[id].out_cycle;
            return self.report(Violation {
                kind: Kind::Duplicate,
                cycle,
                port,
                packet: Some(id),
                rtl: format!("sent again (first out at cycle {first:?})"),
                golden: format!(
                    "came in once, at port {} cycle {}",
                    self.pkts[id].port, self.pkts[id].cycle
                ),
                bytes: bytes.to_vec(),
            });
        }
        // The nearest outstanding packet: same length and addresses, fewest differing bytes.
        let mut best: Option<(usize, usize)> = None;
        for q in self.outstanding.values() {
            for &i in q {
                let p = &self.pkts[i];
                if p.len != bytes.len() || p.hdr.dlid != h.dlid || p.hdr.slid != h.slid {
                    continue;
                }
                let d = p.inv.iter().zip(inv).filter(|(a, b)| a != b).count();
                if best.is_none_or(|(_, bd)| d < bd) {
                    best = Some((i, d));
                }
            }
        }
        let Some((id, _)) = best else {
            return self.report(Violation {
                kind: Kind::Unknown,
                cycle,
                port,
                packet: None,
                rtl: format!(
                    "a {}-byte packet DLID {:#x} SLID {:#x}",
                    bytes.len(),
                    h.dlid,
                    h.slid
                ),
                golden: "no packet of that length and addresses is waiting".into(),
                bytes: bytes.to_vec(),
            });
        };
        let p = &self.pkts[id];
        let diff: Vec<usize> = (0..inv.len()).filter(|&i| p.inv[i] != inv[i]).collect();
        let icrc_at = bytes.len() - 6..bytes.len() - 2;
        let kind = if diff.iter().any(|i| icrc_at.contains(i)) {
            Kind::IcrcChanged
        } else {
            Kind::BytesChanged
        };
        let first = diff[0];
        let golden = format!(
            "packet in at port {} cycle {}: byte {first} is {:02x} (invariant bytes {})",
            p.port,
            p.cycle,
            p.inv[first],
            hex(&p.inv[..p.inv.len().min(48)])
        );
        self.report(Violation {
            kind,
            cycle,
            port,
            packet: Some(id),
            rtl: format!(
                "{} byte(s) differ, first at {first}: {:02x}",
                diff.len(),
                inv[first]
            ),
            golden,
            bytes: bytes.to_vec(),
        })
    }

    /// Whether every input buffer's whole credit is advertised again (the last FCCL on each input VL is ABR
    /// plus the buffer, within the cap): what [`Scoreboard::finish`] checks, for a caller waiting for it.
    pub fn credits_returned(&self) -> bool {
        let cap = u32::from(rtl_model::blocks::credit_rx::FCCL_CAP);
        (0..self.n).all(|port| {
            (0..self.cfg.ports[port].data_vls).all(|vl| {
                let r = &self.rx[self.k(port, vl)];
                r.fccl
                    .is_none_or(|f| f == (r.abr + self.buf_blocks(port, vl).min(cap)) % FC_MOD)
            })
        })
    }

    /// The end of the run, after a drain: every packet delivered, every input buffer's credit advertised
    /// again (the last FCCL the switch sent on each input VL is ABR + the whole buffer, within the cap).
    pub fn finish(&mut self, cycle: u64) -> Result<(), Violation> {
        self.advance(cycle)?;
        if let Some(first) = &self.first {
            return Err(first.clone());
        }
        if let Some((id, p)) = self
            .pkts
            .iter()
            .enumerate()
            .find(|(_, p)| p.out_cycle.is_none())
        {
            let v = Violation {
                kind: Kind::Lost,
                cycle,
                port: p.port,
                packet: Some(id),
                rtl: format!(
                    "never came out (in at port {} cycle {}, DLID {:#x}, VL {})",
                    p.port, p.cycle, p.hdr.dlid, p.hdr.vl
                ),
                golden: match p.golden_out {
                    Some((c, port, vl, f)) => {
                        format!("out at port {port} cycle {c} VL {vl} FECN {f}")
                    }
                    None => format!("the LFT names port {:?}", self.lft_port(p.hdr.dlid)),
                },
                bytes: p.inv.clone(),
            };
            return self.report(v);
        }
        let cap = u32::from(rtl_model::blocks::credit_rx::FCCL_CAP);
        for port in 0..self.n {
            for vl in 0..self.cfg.ports[port].data_vls {
                let r = &self.rx[self.k(port, vl)];
                let Some(fccl) = r.fccl else { continue };
                let want = (r.abr + self.buf_blocks(port, vl).min(cap)) % FC_MOD;
                if fccl != want {
                    let v = Violation {
                        kind: Kind::CreditLost,
                        cycle,
                        port,
                        packet: None,
                        rtl: format!("last FCCL on VL {vl}: {fccl}"),
                        golden: format!(
                            "{} blocks received and a {}-block buffer, empty after the drain: FCCL {want}",
                            r.abr,
                            self.buf_blocks(port, vl)
                        ),
                        bytes: Vec::new(),
                    };
                    return self.report(v);
                }
            }
        }
        Ok(())
    }
}
