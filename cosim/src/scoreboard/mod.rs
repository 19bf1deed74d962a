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
//! **RoCEv2 ports** (a port with PFC in the configuration, [`LinkKind::RoceV2`]): the same core reads
//! Ethernet frames ([`roce_hdr`]) and keeps exactly once, order, route, the ICRC, Marking_Rate, latency and
//! loss; the IB-only checks (LRH VL, VCRC, FECN, credits) give way to: the bytes but ECN and the IPv4 header
//! checksum ([`Kind::BytesChanged`]), the checksum right ([`Kind::BadIpChecksum`]), CE only on ECN-capable
//! eligible frames and never cleared ([`Kind::CeIneligible`], [`Kind::CeCleared`]), no frame started on a
//! priority the partner paused beyond [`Bounds::pause_response`] ([`Kind::PauseIgnored`]), and no frame in
//! while its priority's buffer is full of frames not yet out ([`Kind::PfcOverrun`]).
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
    /// RoCEv2 ports: cycles after a pause frame reaches the switch within which it may still start a frame
    /// of the paused priority (its pipeline between the pause input and the transmit stream; IEEE 802.1Qbb
    /// allows a response delay, which the link partner's headroom covers).
    pub pause_response: u64,
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
            pause_response: 8,
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
    /// RoCEv2: the IPv4 header checksum out is not the header's.
    BadIpChecksum,
    /// RoCEv2: ECN CE was set on the way in and is not on the way out.
    CeCleared,
    /// RoCEv2: ECN CE set on a packet that was not ECN-capable or that the golden model's congestion state
    /// does not make eligible.
    CeIneligible,
    /// RoCEv2: a frame started on a priority the link partner had paused.
    PauseIgnored,
    /// RoCEv2: a frame came in while the input priority's buffer was full (the switch did not pause its
    /// link partner in time).
    PfcOverrun,
}

/// What a switch port carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkKind {
    /// InfiniBand: LRH through VCRC, credit flow control, FECN.
    #[default]
    Ib,
    /// RoCEv2: Ethernet frames (Ethernet, IPv4 or IPv6, UDP, BTH ... ICRC; no FCS, as the golden model
    /// frames them), PFC pause frames, ECN CE marking.
    RoceV2,
}

impl LinkKind {
    /// A port of `cfg` is RoCEv2 when it runs PFC.
    pub fn of(cfg: &SwitchConfig, port: usize) -> LinkKind {
        match cfg.ports.get(port).and_then(|p| p.pfc) {
            Some(_) => LinkKind::RoceV2,
            None => LinkKind::Ib,
        }
    }
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
    /// The link kind it was read as.
    pub link: LinkKind,
    /// RoCEv2: the IP ECN field (0 not ECT, 1 and 2 ECT, 3 CE); 0 on IB.
    pub ecn: u8,
    /// RoCEv2: IPv6 (no header checksum) rather than IPv4.
    pub ipv6: bool,
}

/// Ethernet header bytes before the IP header of a RoCEv2 frame.
const ETH_LEN: usize = 14;

/// Reads the fields of a RoCEv2 frame (Ethernet, IPv4 without options or IPv6, UDP, BTH, ..., ICRC; no
/// FCS); `None` when it is not one or is too short. The addresses are the golden model's framing
/// (`PacketDesc::materialise_roce_v4`): DLID and SLID are the low 16 bits of the destination and source
/// MAC; the priority is DSCP / 8 (the frames carry no VLAN tag), and stands for both SL and input VL.
pub fn roce_hdr(b: &[u8]) -> Option<Hdr> {
    if b.len() < ETH_LEN + 40 {
        return None;
    }
    let (ipv6, tc, bth_at) = match u16::from_be_bytes([b[12], b[13]]) {
        0x0800 if b[ETH_LEN] == 0x45 => (false, b[ETH_LEN + 1], ETH_LEN + 20 + 8),
        0x86dd if b[ETH_LEN] >> 4 == 6 => (
            true,
            (b[ETH_LEN] << 4) | (b[ETH_LEN + 1] >> 4),
            ETH_LEN + 40 + 8,
        ),
        _ => return None,
    };
    if b.len() < bth_at + 12 + 4 {
        return None;
    }
    let prio = (tc >> 5) & 7;
    Some(Hdr {
        vl: prio,
        sl: prio,
        dlid: u16::from_be_bytes([b[4], b[5]]),
        slid: u16::from_be_bytes([b[10], b[11]]),
        bth_at,
        fecn: b[bth_at + 4] & 0x80 != 0,
        link: LinkKind::RoceV2,
        ecn: tc & 3,
        ipv6,
    })
}

/// Reads a packet of link kind `link`.
pub fn hdr_of(link: LinkKind, b: &[u8]) -> Option<Hdr> {
    match link {
        LinkKind::Ib => hdr(b),
        LinkKind::RoceV2 => roce_hdr(b),
    }
}

/// Whether the IPv4 header of a RoCEv2 frame (IPv6: no checksum, true) sums to 0xffff ([`roce_hdr`] took only
/// a 20-byte header, IHL 5).
fn ip_checksum_ok(b: &[u8], h: &Hdr) -> bool {
    h.ipv6
        || rtl_model::wire::ipv4::Packet::new_unchecked(&b[ETH_LEN..ETH_LEN + 20]).verify_checksum()
}

/// The header checksum the IPv4 header of a RoCEv2 frame should carry.
fn ip_checksum_of(b: &[u8]) -> u16 {
    let mut head = b[ETH_LEN..ETH_LEN + 20].to_vec();
    let mut p = rtl_model::wire::ipv4::Packet::new_unchecked(&mut head[..]);
    p.fill_checksum();
    p.checksum()
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
        link: LinkKind::Ib,
        ecn: 0,
        ipv6: false,
    })
}

/// The bytes a switch must not change. IB: everything but the LRH VL, the BTH FECN bit and the VCRC.
/// RoCEv2: everything but the ECN field (IPv4 ToS / IPv6 traffic class, low two bits) and the IPv4 header
/// checksum (whose value is checked on its own).
fn invariant(b: &[u8], h: &Hdr) -> Vec<u8> {
    match h.link {
        LinkKind::Ib => {
            let mut k = b[..b.len() - 2].to_vec();
            k[0] &= 0x0f;
            k[h.bth_at + 4] &= 0x7f;
            k
        }
        LinkKind::RoceV2 => {
            let mut k = b.to_vec();
            if h.ipv6 {
                k[ETH_LEN + 1] &= 0xcf;
            } else {
                k[ETH_LEN + 1] &= 0xfc;
                k[ETH_LEN + 10] = 0;
                k[ETH_LEN + 11] = 0;
            }
            k
        }
    }
}

/// Where the ICRC sits in a packet of `len` bytes: IB before the VCRC, RoCEv2 at the end (no FCS).
fn icrc_range(link: LinkKind, len: usize) -> std::ops::Range<usize> {
    match link {
        LinkKind::Ib => len.saturating_sub(6)..len.saturating_sub(2),
        LinkKind::RoceV2 => len.saturating_sub(4)..len,
    }
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
    /// RoCEv2: the link partner's pauses of this priority, [from, until) in cycles, in order (merged when a
    /// pause is refreshed before it ends).
    pauses: VecDeque<(u64, u64)>,
}

/// Per (input port, VL): receiver state.
#[derive(Debug, Clone, Default)]
struct RxVl {
    /// Blocks received (ABR, mod 4096).
    abr: u32,
    /// Last FCCL the switch advertised.
    fccl: Option<u32>,
    seq: u64,
    /// RoCEv2: blocks of the packets in whose first byte has not gone out yet.
    held: u32,
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
    /// Per port: what it carries.
    links: Vec<LinkKind>,
    /// A violation found while handing a packet in, reported at the next step of time.
    pending_v: Option<Violation>,
    /// Pause frames handed to the switch and sent by it.
    pauses_in: u64,
    pauses_out: u64,
    /// The output VL (priority) of the last packet checked.
    last_out_vl: Option<u8>,
}

impl Scoreboard {
    /// A scoreboard for a switch configured by `cfg` (its LFT, SL2VL, buffers, VL arbitration and marking
    /// settings are the rules).
    pub fn new(cfg: &SwitchConfig, bounds: Bounds) -> Self {
        let n = cfg.ports.len();
        let nvl = 15;
        let fccl0 = u32::from(rtl_model::blocks::credit_tx::Config::default().fccl_reset);
        let links: Vec<LinkKind> = (0..n).map(|p| LinkKind::of(cfg, p)).collect();
        let mut tx = vec![TxVl::default(); n * nvl];
        for (i, t) in tx.iter_mut().enumerate() {
            if links[i / nvl] == LinkKind::RoceV2 {
                // No credit on a PFC link: a priority can send unless paused, so it never counts as starved
                // and its credit check never fires (half the counter range ahead of nothing sent).
                t.fccl = FC_HALF;
                t.fccl_before = FC_HALF;
                continue;
            }
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
            links,
            pending_v: None,
            pauses_in: 0,
            pauses_out: 0,
            last_out_vl: None,
        }
    }

    /// What port `port` carries.
    pub fn link(&self, port: usize) -> LinkKind {
        self.links.get(port).copied().unwrap_or_default()
    }

    /// Pause frames handed to the switch by its link partners, and sent by it.
    pub fn pauses(&self) -> (u64, u64) {
        (self.pauses_in, self.pauses_out)
    }

    /// The output VL (RoCEv2: priority) of the last packet checked, as SL2VL gives it (a RoCEv2 frame does
    /// not carry it: the link partner's receive buffer is per priority).
    pub fn last_out_vl(&self) -> Option<u8> {
        self.last_out_vl
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
        if let Some(v) = self.pending_v.take() {
            return self.report(v);
        }
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
                    let credit = t.starved_since.is_none()
                        && t.starved_until <= s
                        && !t.pauses.iter().any(|&(a, b)| a < e && b > s);
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
        let link = self.link(port);
        let parsed = hdr_of(link, bytes);
        let h = parsed.unwrap_or(Hdr {
            vl: 0,
            sl: 0,
            dlid: 0,
            slid: 0,
            bth_at: 0,
            fecn: false,
            link,
            ecn: 0,
            ipv6: false,
        });
        let inv = if parsed.is_some() {
            invariant(bytes, &h)
        } else {
            bytes.to_vec()
        };
        let k = self.k(port, h.vl);
        if link == LinkKind::RoceV2 && port < self.n {
            // The packets in before this one have all their bytes in (a link carries one at a time); those
            // whose first byte is not out yet are in the buffer still, so with this one's first block they
            // must fit. Cut-through may free earlier than that, never later than the first byte out.
            let buf = self.buf_blocks(port, h.vl);
            let held = self.rx[k].held;
            if held + 1 > buf && self.pending_v.is_none() && self.first.is_none() {
                self.pending_v = Some(Violation {
                    kind: Kind::PfcOverrun,
                    cycle,
                    port,
                    packet: Some(id),
                    rtl: format!(
                        "a frame in on priority {} with {held} blocks of earlier frames still in the switch",
                        h.vl
                    ),
                    golden: format!(
                        "the input buffer of that priority holds {buf} blocks: the switch must pause its link partner before it fills"
                    ),
                    bytes: bytes.to_vec(),
                });
            }
            self.rx[k].held = held + blocks_of(bytes.len());
        }
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

    /// The link partner at `port` (a RoCEv2 port) handed the switch a PFC pause frame: each priority it
    /// enables is paused for its quanta from this cycle (an XOFF refreshed before it ends extends it), or
    /// free again from the next cycle (0 quanta), as the golden model's transmitter takes it.
    pub fn rx_pause(&mut self, cycle: u64, port: usize, frame: rtl_model::wire::pfc::Repr) {
        if port >= self.n || self.link(port) != LinkKind::RoceV2 {
            return;
        }
        self.pauses_in += 1;
        let rate = self.cfg.ports[port].rate;
        for prio in 0..8u8 {
            if !frame.is_enabled(prio) || prio >= self.cfg.ports[port].data_vls {
                continue;
            }
            let q = frame.quanta[usize::from(prio)];
            let k = self.k(port, prio);
            let ps = &mut self.tx[k].pauses;
            let open = ps.back_mut().filter(|&&mut (_, e)| e > cycle);
            if q == 0 {
                if let Some(last) = open {
                    last.1 = last.1.min(cycle + 1);
                }
                continue;
            }
            let end = cycle + 1 + rtl_model::link::pfc::pause_cycles(rate, q);
            match open {
                Some(last) => last.1 = end,
                None => ps.push_back((cycle, end)),
            }
        }
    }

    /// The switch sent a PFC pause frame at `port`: counted (whether it paused in time is what
    /// [`Kind::PfcOverrun`] checks, at the packets that come in).
    pub fn tx_pause(&mut self, cycle: u64, port: usize) -> Result<(), Violation> {
        self.advance(cycle)?;
        if port < self.n {
            self.pauses_out += 1;
        }
        Ok(())
    }

    /// Whether a frame starting in `cycle` on lane `k` started while paused (the pause older than the
    /// response bound); the pause interval if so. Intervals long over are dropped (frames of a port are
    /// handed in in the order of their first bytes; arbitration windows close before).
    fn paused_at(&mut self, k: usize, cycle: u64) -> Option<(u64, u64)> {
        let keep_from = cycle.saturating_sub(
            2 * self.bounds.arb_window + self.bounds.arb_settle + self.bounds.pause_response,
        );
        let ps = &mut self.tx[k].pauses;
        while ps.front().is_some_and(|&(_, e)| e < keep_from) {
            ps.pop_front();
        }
        let resp = self.bounds.pause_response;
        ps.iter()
            .find(|&&(a, e)| a.saturating_add(resp) <= cycle && cycle < e)
            .copied()
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
        if port >= self.n
            || fc.vl >= self.cfg.ports[port].data_vls
            || self.link(port) == LinkKind::RoceV2
        {
            // Ports and VLs the switch lacks (an RTL larger than the configuration) have no link partner; a
            // RoCEv2 port's partner reads pause frames only.
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
        let link = self.link(port);
        let roce = link == LinkKind::RoceV2;
        let Some(h) = hdr_of(link, bytes) else {
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
        self.last_out_vl = Some(ovl);
        if p.hdr.link == LinkKind::RoceV2 {
            let ki = self.k(p.port, p.hdr.vl);
            self.rx[ki].held = self.rx[ki].held.saturating_sub(blocks_of(p.len));
        }
        if !roce && h.vl != ovl {
            return self.report(v(
                Kind::WrongVl,
                format!(
                    "SL {} in at port {} on VL {}, out on VL {}",
                    p.hdr.sl, p.port, p.hdr.vl, h.vl
                ),
                format!("SL2VL({}, {port}) maps SL {} to VL {ovl}", p.port, p.hdr.sl),
            ));
        }
        if roce && !ip_checksum_ok(bytes, &h) {
            let sum = ip_checksum_of(bytes);
            return self.report(v(
                Kind::BadIpChecksum,
                format!(
                    "IPv4 header checksum {:02x}{:02x} (ToS {:02x})",
                    bytes[ETH_LEN + 10],
                    bytes[ETH_LEN + 11],
                    bytes[ETH_LEN + 1]
                ),
                format!("{sum:04x} over the header out"),
            ));
        }
        if !roce && !verify_vcrc(bytes) {
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
        // FECN (IB) or ECN CE (RoCEv2): which mark came in, which went out.
        let (was, now, ineligible) = if roce {
            if p.hdr.ecn == 3 && h.ecn != 3 {
                return self.report(v(
                    Kind::CeCleared,
                    format!("ECN {:02b}", h.ecn),
                    "it came in with ECN CE (11)".into(),
                ));
            }
            if h.ecn != 3 && h.ecn != p.hdr.ecn {
                return self.report(v(
                    Kind::BytesChanged,
                    format!("ECN {:02b}", h.ecn),
                    format!(
                        "ECN {:02b} as it came in, or CE (11) when marked",
                        p.hdr.ecn
                    ),
                ));
            }
            if h.ecn == 3 && p.hdr.ecn == 0 {
                return self.report(v(
                    Kind::CeIneligible,
                    "ECN CE (11) set".into(),
                    "it came in not ECN-capable (00): never marked".into(),
                ));
            }
            (p.hdr.ecn == 3, h.ecn == 3, Kind::CeIneligible)
        } else {
            if p.hdr.fecn && !h.fecn {
                return self.report(v(
                    Kind::FecnCleared,
                    "FECN clear".into(),
                    "it came in with FECN set".into(),
                ));
            }
            (p.hdr.fecn, h.fecn, Kind::FecnIneligible)
        };
        let cc = &self.cfg.ports[port].cc;
        let size_ok = cc.packet_size == 0 || bytes.len() >= usize::from(cc.packet_size) * 64;
        let slack = self.bounds.fecn_slack;
        let eligible =
            size_ok && self.marking_in(kin, p.cycle.saturating_sub(slack), cycle + slack);
        if eligible {
            self.tx[kin].eligible += 1;
        }
        if now && !was {
            self.tx[kin].marked += 1;
            if !eligible {
                let state = self.tx[kin]
                    .mark_state
                    .iter()
                    .rev()
                    .find(|&&(c, _)| c <= cycle + slack)
                    .copied();
                return self.report(v(
                    ineligible,
                    format!(
                        "{} set on a {}-byte packet in at cycle {}",
                        if roce { "ECN CE" } else { "FECN" },
                        bytes.len(),
                        p.cycle
                    ),
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
        let blocks = blocks_of(bytes.len());
        if roce {
            // PFC: no frame starts on a priority the partner paused (after the response bound).
            if let Some((a, e)) = self.paused_at(kin, cycle) {
                return self.report(v(
                    Kind::PauseIgnored,
                    format!("a {}-byte frame started on priority {ovl}", bytes.len()),
                    format!(
                        "the link partner paused priority {ovl} from cycle {a} to {e} (a start is allowed within {} cycles of the pause)",
                        self.bounds.pause_response
                    ),
                ));
            }
            self.tx[kin].win_bytes += bytes.len() as u64;
            return self.latency(cycle, port, id, bytes, p.golden_out);
        }
        // Credit: the packet's blocks within the partner's FCCL.
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
        self.latency(cycle, port, id, bytes, p.golden_out)
    }

    /// Latency against the golden model.
    fn latency(
        &mut self,
        cycle: u64,
        port: usize,
        id: usize,
        bytes: &[u8],
        golden_out: Option<(u64, usize, u8, bool)>,
    ) -> Result<(), Violation> {
        if let Some((g, ..)) = golden_out {
            if cycle > g.saturating_add(self.bounds.max_extra_latency) {
                return self.report(Violation {
                    kind: Kind::Latency,
                    cycle,
                    port,
                    packet: Some(id),
                    rtl: format!("out at cycle {cycle}"),
                    golden: format!(
                        "golden sent it at cycle {g}; the bound is {} cycles later",
                        self.bounds.max_extra_latency
                    ),
                    bytes: bytes.to_vec(),
                });
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
        let icrc_at = icrc_range(h.link, bytes.len());
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
