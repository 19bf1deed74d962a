//! The golden model's view for the scoreboard: `switch_asic::Switch` run on the same packets and flow-control
//! packets the RTL gets, in the same cycles. Each packet is handed in as a descriptor read from its bytes
//! (the switch reads no payload), tagged with its scoreboard index; the switch's packets out and its marking
//! state per output port-VL go to the scoreboard ([`Scoreboard::golden_tx`], [`Scoreboard::golden_mark_state`]).

use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
use switch_asic::{ConfigError, Switch, SwitchConfig};

use super::{hdr_of, LinkKind, Scoreboard};

/// The descriptor of an IB packet (LRH through VCRC), tagged `tag`; `None` when too short for its headers.
pub fn desc_of_bytes(b: &[u8], tag: u32) -> Option<PacketDesc> {
    desc_of(LinkKind::Ib, b, tag)
}

/// The descriptor of a packet of link kind `link` (IB: LRH through VCRC; RoCEv2: an Ethernet frame read
/// by [`super::roce_hdr`], its priority as SL and input VL, its ECN field), tagged `tag`; `None` when it is
/// not one.
pub fn desc_of(link: LinkKind, b: &[u8], tag: u32) -> Option<PacketDesc> {
    let h = hdr_of(link, b)?;
    let t = &b[h.bth_at..];
    // After the payload: the ICRC, and on IB the VCRC.
    let trailer = match link {
        LinkKind::Ib => 4 + 2,
        LinkKind::RoceV2 => 4,
    };
    Some(PacketDesc {
        dlid: h.dlid,
        slid: h.slid,
        sl: h.sl,
        vl: h.vl,
        fecn: h.fecn,
        becn: t[4] & 0x40 != 0,
        ecn: h.ecn,
        opcode: t[0],
        dest_qp: u32::from_be_bytes([0, t[5], t[6], t[7]]),
        psn: u32::from_be_bytes([0, t[9], t[10], t[11]]),
        payload_len: b.len().saturating_sub(h.bth_at + 12 + trailer) as u16,
        wire_len: b.len().min(usize::from(u16::MAX)) as u16,
        payload_seed: 0,
        tag,
        icrc: 0,
    })
}

/// `switch_asic::Switch` stepped beside the RTL.
#[derive(Debug)]
pub struct GoldenRun {
    sw: Switch,
    n: usize,
    links: Vec<LinkKind>,
    nvl: Vec<u8>,
    /// Per output port, per VL, after the last step: the VoQ fill summed over inputs, in blocks, and the
    /// marking state.
    view: Vec<Vec<(u32, bool)>>,
    /// Hand-ins refused by the golden model (two heads in a cycle and the like: a driver bug, not the RTL's).
    pub refused: u64,
}

impl GoldenRun {
    /// A golden switch with configuration `cfg`.
    pub fn new(cfg: &SwitchConfig) -> Result<Self, ConfigError> {
        let sw = Switch::new(cfg.clone())?;
        Ok(GoldenRun {
            n: cfg.ports.len(),
            links: (0..cfg.ports.len()).map(|p| LinkKind::of(cfg, p)).collect(),
            nvl: cfg.ports.iter().map(|p| p.data_vls).collect(),
            view: cfg
                .ports
                .iter()
                .map(|p| vec![(0, false); usize::from(p.data_vls)])
                .collect(),
            sw,
            refused: 0,
        })
    }

    /// The cycle the next [`GoldenRun::step`] simulates.
    pub fn now(&self) -> u64 {
        self.sw.now()
    }

    /// Packet `id` (the scoreboard's index) starts arriving at `port` in the current cycle.
    pub fn rx_packet(&mut self, port: usize, id: usize, bytes: &[u8]) {
        let link = self.links.get(port).copied().unwrap_or_default();
        let Some(desc) = desc_of(link, bytes, id as u32) else {
            self.refused += 1;
            return;
        };
        if self
            .sw
            .rx_packet(port, PacketStart { desc, offset: 0 })
            .is_err()
        {
            self.refused += 1;
        }
    }

    /// A flow-control packet reaches `port` in the current cycle.
    pub fn rx_fc(&mut self, port: usize, fc: FcPacket) {
        if self.sw.rx_fc(port, fc).is_err() {
            self.refused += 1;
        }
    }

    /// A PFC pause frame reaches `port` (a RoCEv2 port) in the current cycle.
    pub fn rx_pause(&mut self, port: usize, frame: rtl_model::wire::pfc::Repr) {
        if self.sw.rx_pause(port, frame).is_err() {
            self.refused += 1;
        }
    }

    /// Steps one cycle and reports its packets out and the marking states to `sb`.
    pub fn step(&mut self, sb: &mut Scoreboard) {
        let t = self.sw.now();
        for ev in self.sw.step() {
            if let TxEvent::Packet { port, start } = ev {
                sb.golden_tx(
                    t,
                    start.desc.tag as usize,
                    usize::from(*port),
                    start.desc.vl,
                    start.desc.fecn || start.desc.ecn == 3,
                );
            }
        }
        for p in 0..self.n {
            for vl in 0..self.nvl[p] {
                let s = self.sw.observe(p, usize::from(vl));
                // A RoCEv2 port may decide by RCM-1b, whose state no block shows: the switch's own view.
                let m = match self.links[p] {
                    LinkKind::Ib => s.mark_state,
                    LinkKind::RoceV2 => self.sw.dequeue_mark_state(p, usize::from(vl)),
                };
                sb.golden_mark_state(t + 1, p, vl, m);
                self.view[p][usize::from(vl)] = (s.voq_fill, m);
            }
        }
    }

    /// Output `port`'s VoQ fill of `vl` summed over inputs after the last step, in 64-byte blocks.
    pub fn voq_fill(&self, port: usize, vl: u8) -> u32 {
        self.view_of(port, vl).0
    }

    /// Output `port`'s marking state of `vl` after the last step.
    pub fn mark_state(&self, port: usize, vl: u8) -> bool {
        self.view_of(port, vl).1
    }

    fn view_of(&self, port: usize, vl: u8) -> (u32, bool) {
        self.view
            .get(port)
            .and_then(|f| f.get(usize::from(vl)))
            .copied()
            .unwrap_or((0, false))
    }

    /// Counters of (port, VL) of the golden switch (its overflows say the RTL's credit ran ahead of it).
    pub fn counters(&self, port: usize, vl: usize) -> switch_asic::PortVlCounters {
        self.sw.counters(port, vl)
    }
}
