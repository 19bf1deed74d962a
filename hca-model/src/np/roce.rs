//! The RoCEv2 notification point: a data packet whose IP ECN field is CE (0b11) is answered with a RoCEv2
//! CNP (BTH opcode 0x81, BECN set, DestQP = the flow sender's QP, P_Key of the flow), at most one per flow
//! within [`RoceNpConfig::min_interval`] cycles (DCQCN's NP: 50 us in the authors' ns-3 code; Mellanox's
//! `min_time_between_cnps`). The first CE of a flow is always answered; a later one when at least
//! `min_interval` cycles passed since the flow's last CNP (0 answers every CE).
//!
//! As for IB, no CNP answers a CNP, an ACK or a multicast packet ([`Ignored`]). What identifies a flow is the
//! caller's key `K` (e.g. source IP and source QP); the CNP's IP/UDP/Ethernet headers are the caller's too
//! (reversed addresses), built with `rtl_model::wire::builder::roce_cnp`.

use std::collections::BTreeMap;

use rtl_model::wire::bth::{self, Transport};
use rtl_model::wire::ipv4::Ecn;
use rtl_model::wire::roce_cnp;

use super::ib::NpStats;
use super::Ignored;
use crate::units::Cycle;

/// IPv4 multicast: 224.0.0.0/4.
pub fn ipv4_is_multicast(addr: &[u8; 4]) -> bool {
    addr[0] & 0xF0 == 0xE0
}

/// IPv6 multicast: ff00::/8.
pub fn ipv6_is_multicast(addr: &[u8; 16]) -> bool {
    addr[0] == 0xFF
}

/// Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoceNpConfig {
    /// Minimum cycles between two CNPs of one flow.
    pub min_interval: Cycle,
}

/// What the notification point does with one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceNpAction {
    /// Nothing to send.
    Ignore(Ignored),
    /// Send this CNP.
    Cnp(roce_cnp::Repr),
    /// A CNP was due but the flow had one less than `min_interval` ago.
    Suppressed,
}

/// The RoCEv2 rule for one packet, before the interval (pure).
pub fn decide(ecn: Ecn, dst_multicast: bool, bth: &bth::Repr) -> Result<(), Ignored> {
    if ecn != Ecn::Ce {
        return Err(Ignored::NotMarked);
    }
    if dst_multicast {
        return Err(Ignored::Multicast);
    }
    match Transport::of(u8::from(bth.opcode)) {
        Transport::Cnp => Err(Ignored::Cnp),
        _ if bth.opcode.is_ack() => Err(Ignored::Ack),
        Transport::Reserved | Transport::Vendor => Err(Ignored::OtherTransport),
        _ => Ok(()),
    }
}

/// A RoCEv2 notification point with per-flow CNP times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoceNp<K: Ord> {
    cfg: RoceNpConfig,
    last: BTreeMap<K, Cycle>,
    stats: NpStats,
}

impl<K: Ord> RoceNp<K> {
    /// A notification point with no history.
    pub fn new(cfg: RoceNpConfig) -> Self {
        RoceNp {
            cfg,
            last: BTreeMap::new(),
            stats: NpStats::default(),
        }
    }

    /// Counters so far (`becn_acks` stays 0).
    pub fn stats(&self) -> NpStats {
        self.stats
    }

    /// A packet of `flow` arrived at `now` with IP ECN `ecn`, to a multicast address or not, with this BTH;
    /// `src_qp` is the sending QP.
    pub fn on_packet(
        &mut self,
        now: Cycle,
        flow: K,
        ecn: Ecn,
        dst_multicast: bool,
        bth: &bth::Repr,
        src_qp: u32,
    ) -> RoceNpAction {
        self.stats.marked += u64::from(ecn == Ecn::Ce);
        if let Err(why) = decide(ecn, dst_multicast, bth) {
            return RoceNpAction::Ignore(why);
        }
        if let Some(&t) = self.last.get(&flow) {
            if now.saturating_sub(t) < self.cfg.min_interval {
                self.stats.suppressed += 1;
                return RoceNpAction::Suppressed;
            }
        }
        self.last.insert(flow, now);
        self.stats.cnps += 1;
        RoceNpAction::Cnp(roce_cnp::Repr {
            pkey: bth.pkey,
            dest_qp: src_qp & 0x00FF_FFFF,
            fecn: false,
            becn: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rtl_model::wire::bth::Opcode;

    fn bth(op: u8) -> bth::Repr {
        bth::Repr {
            opcode: Opcode::from(op),
            se: false,
            migreq: false,
            pad_cnt: 0,
            tver: 0,
            pkey: 0x8001,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp: 0x42,
            ack_req: false,
            resv7: 0,
            psn: 7,
        }
    }

    /// 50 us at 1 GHz = 50 000 cycles: CE at 0, 10 000, 49 999, 50 000, 60 000, 100 000 -> CNPs at 0,
    /// 50 000 and 100 000; another flow is independent.
    #[test]
    fn minimum_interval_per_flow() {
        let mut n = RoceNp::new(RoceNpConfig {
            min_interval: 50_000,
        });
        let got: Vec<bool> = [0, 10_000, 49_999, 50_000, 60_000, 100_000]
            .iter()
            .map(|&t| {
                matches!(
                    n.on_packet(t, 1u32, Ecn::Ce, false, &bth(0x04), 9),
                    RoceNpAction::Cnp(_)
                )
            })
            .collect();
        assert_eq!(got, [true, false, false, true, false, true]);
        let RoceNpAction::Cnp(c) = n.on_packet(10, 2u32, Ecn::Ce, false, &bth(0x04), 0x0100_0009)
        else {
            panic!("other flow");
        };
        assert_eq!(
            (c.pkey, c.dest_qp, c.becn, c.fecn),
            (0x8001, 9, true, false)
        );
        assert_eq!(
            n.on_packet(10, 2u32, Ecn::Ect0, false, &bth(0x04), 9),
            RoceNpAction::Ignore(Ignored::NotMarked)
        );
        let s = n.stats();
        assert_eq!((s.marked, s.cnps, s.suppressed), (7, 4, 3));
        assert!(ipv4_is_multicast(&[239, 1, 2, 3]) && !ipv4_is_multicast(&[10, 0, 0, 1]));
        assert!(ipv6_is_multicast(&[0xff; 16]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// No CNP for a CNP, an ACK, or a multicast packet; a first CE on a unicast UD/RC data packet always
        /// gets one.
        #[test]
        fn never_for_cnp_ack_multicast(op in any::<u8>(), ecn in 0u8..4, mc in any::<bool>(), now in any::<u64>()) {
            let mut n = RoceNp::new(RoceNpConfig { min_interval: 1000 });
            let b = bth(op);
            let ecn = Ecn::from_bits(ecn);
            let a = n.on_packet(now, 0u8, ecn, mc, &b, 5);
            if b.opcode.is_cnp() || b.opcode.is_ack() || mc || ecn != Ecn::Ce {
                prop_assert!(!matches!(a, RoceNpAction::Cnp(_)));
            }
            if ecn == Ecn::Ce && !mc && !b.opcode.is_ack()
                && matches!(Transport::of(op), Transport::Ud | Transport::Rc | Transport::Uc) {
                prop_assert!(matches!(a, RoceNpAction::Cnp(_)));
            }
        }
    }
}
