//! A tap on chosen wires of the fabric: every packet head and flow-control packet put on a tapped wire is
//! recorded with its cycle, for a capture to turn into bytes later (`crate::run::capture`). Untapped fabrics
//! carry no tap at all, so a run without captures pays one `Option` test per wire push.

use switch_asic::{FcPacket, PacketStart};

/// One end of a wire direction: the receiver (each wire has exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireEnd {
    /// Switch `0`, port `1` (0-based).
    Switch(usize, usize),
    /// HCA `0`.
    Hca(usize),
}

/// What was put on a tapped wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapEvent {
    /// A packet head (the descriptor as it left: output VL, FECN/BECN).
    Packet(PacketStart),
    /// A link flow-control packet.
    Fc(FcPacket),
    /// A PFC pause frame (a RoCEv2 port).
    Pause(rtl_model::wire::pfc::Repr),
}

/// One recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tapped {
    /// The cycle in which it was put on the wire.
    pub cycle: u64,
    /// The wire, named by its receiver.
    pub to: WireEnd,
    /// What.
    pub event: TapEvent,
}

/// Which wires are tapped, and what they carried since the last [`Tap::take`].
#[derive(Debug, Clone, Default)]
pub struct Tap {
    switch: Vec<Vec<bool>>,
    hca: Vec<bool>,
    events: Vec<Tapped>,
}

impl Tap {
    /// A tap on the wires into `ends`.
    pub fn new(ends: &[WireEnd]) -> Self {
        let mut t = Tap::default();
        for &e in ends {
            match e {
                WireEnd::Switch(s, p) => {
                    if t.switch.len() <= s {
                        t.switch.resize(s + 1, Vec::new());
                    }
                    if t.switch[s].len() <= p {
                        t.switch[s].resize(p + 1, false);
                    }
                    t.switch[s][p] = true;
                }
                WireEnd::Hca(h) => {
                    if t.hca.len() <= h {
                        t.hca.resize(h + 1, false);
                    }
                    t.hca[h] = true;
                }
            }
        }
        t
    }

    /// Whether the wire into `to` is tapped.
    pub fn taps(&self, to: WireEnd) -> bool {
        match to {
            WireEnd::Switch(s, p) => self
                .switch
                .get(s)
                .and_then(|v| v.get(p))
                .copied()
                .unwrap_or(false),
            WireEnd::Hca(h) => self.hca.get(h).copied().unwrap_or(false),
        }
    }

    /// Records `event` put on the wire into `to` at `cycle`, if that wire is tapped.
    pub fn record(&mut self, cycle: u64, to: WireEnd, event: TapEvent) {
        if self.taps(to) {
            self.events.push(Tapped { cycle, to, event });
        }
    }

    /// The events recorded so far, oldest first; the tap keeps its buffer for the next ones.
    pub fn take(&mut self, into: &mut Vec<Tapped>) {
        into.append(&mut self.events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tapped_wires_are_recorded() {
        let mut t = Tap::new(&[WireEnd::Switch(1, 7), WireEnd::Hca(3)]);
        let fc = TapEvent::Fc(FcPacket::default());
        t.record(5, WireEnd::Switch(1, 7), fc);
        t.record(6, WireEnd::Switch(1, 6), fc);
        t.record(7, WireEnd::Switch(0, 7), fc);
        t.record(8, WireEnd::Hca(3), fc);
        t.record(9, WireEnd::Hca(2), fc);
        t.record(9, WireEnd::Hca(30), fc);
        let mut got = Vec::new();
        t.take(&mut got);
        assert_eq!(
            got.iter().map(|e| (e.cycle, e.to)).collect::<Vec<_>>(),
            vec![(5, WireEnd::Switch(1, 7)), (8, WireEnd::Hca(3))]
        );
        t.take(&mut got);
        assert_eq!(got.len(), 2, "taken events are not repeated");
    }
}
