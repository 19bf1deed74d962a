//! The IB notification point (Linux hfi1's rules, reference "CNP rules"): a packet arriving with FECN set
//! - is ignored if its DLID is multicast (>= 0xC000, the permissive LID included), if it is a CNP, or if it
//!   is an RC/RD ACK ([`Ignored`]);
//! - is answered, if it is an RC request, by an immediate ACK with BECN (hfi1) or, by the named option
//!   [`RcRequestFecn::Cnp`], by a CNP;
//! - is answered with a CNP ([`ib_cnp::Repr::reply_to`]) otherwise: UD, UC, RD, and RC responses.
//!
//! Optional CNP coalescing ([`CnpCoalescing`]): at most one CNP per destination (DLID, QP) per interval; a
//! suppressed CNP is reported as [`IbNpAction::Coalesced`]. BECNs on ACKs are never coalesced: the ACK goes
//! out anyway and the bit costs nothing.

use std::collections::BTreeMap;

use rtl_model::wire::bth::{self, Transport};
use rtl_model::wire::ib_cnp;
use rtl_model::wire::lrh;

use super::Ignored;
use crate::units::Cycle;

/// Lowest multicast LID (0xC000..=0xFFFE multicast, 0xFFFF permissive).
pub const MULTICAST_LID_BASE: u16 = 0xC000;

/// How an RC request with FECN is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RcRequestFecn {
    /// An immediate ACK with BECN set (hfi1).
    #[default]
    AckWithBecn,
    /// A CNP, as for the other transports.
    Cnp,
}

/// CNP coalescing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CnpCoalescing {
    /// Every marked packet gets its CNP.
    #[default]
    Off,
    /// At most one CNP per (DLID, destination QP) within this many cycles.
    MinInterval(Cycle),
}

/// What the rules say about one packet, before coalescing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// No notification.
    Ignore(Ignored),
    /// Send a CNP.
    Cnp,
    /// Set BECN on the (immediate) ACK.
    BecnOnAck,
}

/// The rule for one received packet (pure).
pub fn decide(lrh: &lrh::Repr, bth: &bth::Repr, rc_request: RcRequestFecn) -> Decision {
    if !bth.fecn {
        return Decision::Ignore(Ignored::NotMarked);
    }
    if lrh.dlid >= MULTICAST_LID_BASE {
        return Decision::Ignore(Ignored::Multicast);
    }
    let op = u8::from(bth.opcode);
    match Transport::of(op) {
        Transport::Cnp => Decision::Ignore(Ignored::Cnp),
        _ if bth.opcode.is_ack() => Decision::Ignore(Ignored::Ack),
        Transport::Reserved | Transport::Vendor => Decision::Ignore(Ignored::OtherTransport),
        // RC responses: read responses 0x0d-0x10, atomic acknowledge 0x12 (0x11, the ACK, is handled above).
        Transport::Rc if !(0x0d..=0x12).contains(&op) => match rc_request {
            RcRequestFecn::AckWithBecn => Decision::BecnOnAck,
            RcRequestFecn::Cnp => Decision::Cnp,
        },
        _ => Decision::Cnp,
    }
}

/// Settings of an IB notification point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IbNpConfig {
    /// This port's LID (the CNP's SLID).
    pub own_lid: u16,
    /// How RC requests with FECN are answered.
    pub rc_request: RcRequestFecn,
    /// CNP coalescing.
    pub coalescing: CnpCoalescing,
}

/// What the notification point does with one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IbNpAction {
    /// Nothing to send.
    Ignore(Ignored),
    /// Send this CNP.
    Cnp(ib_cnp::Repr),
    /// Set BECN on the ACK of this RC request.
    BecnOnAck,
    /// A CNP was due but coalesced away.
    Coalesced,
}

/// Counters of a notification point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NpStats {
    /// FECN/CE-marked packets seen.
    pub marked: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// ACKs sent with BECN.
    pub becn_acks: u64,
    /// CNPs suppressed by coalescing / the minimum interval.
    pub suppressed: u64,
}

/// An IB notification point with its coalescing state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbNp {
    cfg: IbNpConfig,
    last: BTreeMap<(u16, u32), Cycle>,
    stats: NpStats,
}

impl IbNp {
    /// A notification point with no history.
    pub fn new(cfg: IbNpConfig) -> Self {
        IbNp {
            cfg,
            last: BTreeMap::new(),
            stats: NpStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> NpStats {
        self.stats
    }

    /// A packet with these headers arrived at `now`; `src_qp` is its sender's QP (DETH SrcQP for UD, the
    /// connected QP's remote QPN for RC/UC).
    pub fn on_packet(
        &mut self,
        now: Cycle,
        lrh: &lrh::Repr,
        bth: &bth::Repr,
        src_qp: u32,
    ) -> IbNpAction {
        let d = decide(lrh, bth, self.cfg.rc_request);
        self.stats.marked += u64::from(bth.fecn);
        match d {
            Decision::Ignore(why) => IbNpAction::Ignore(why),
            Decision::BecnOnAck => {
                self.stats.becn_acks += 1;
                IbNpAction::BecnOnAck
            }
            Decision::Cnp => {
                let cnp = ib_cnp::Repr::reply_to(lrh, bth, src_qp, self.cfg.own_lid);
                if let CnpCoalescing::MinInterval(iv) = self.cfg.coalescing {
                    let key = (cnp.dlid, cnp.dest_qp);
                    if let Some(&t) = self.last.get(&key) {
                        if now.saturating_sub(t) < iv {
                            self.stats.suppressed += 1;
                            return IbNpAction::Coalesced;
                        }
                    }
                    self.last.insert(key, now);
                }
                self.stats.cnps += 1;
                IbNpAction::Cnp(cnp)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rtl_model::wire::bth::Opcode;
    use rtl_model::wire::lrh::Lnh;

    fn lrh(dlid: u16) -> lrh::Repr {
        lrh::Repr {
            vl: 2,
            lver: 0,
            sl: 3,
            resv2: 0,
            lnh: Lnh::IbaLocal,
            dlid,
            resv5: 0,
            pkt_len: 100,
            slid: 0x0011,
        }
    }

    fn bth(op: u8, fecn: bool) -> bth::Repr {
        bth::Repr {
            opcode: Opcode::from(op),
            se: false,
            migreq: false,
            pad_cnt: 0,
            tver: 0,
            pkey: 0xffff,
            fecn,
            becn: false,
            resv6: 0,
            dest_qp: 0x42,
            ack_req: false,
            resv7: 0,
            psn: 7,
        }
    }

    fn np(coalescing: CnpCoalescing) -> IbNp {
        IbNp::new(IbNpConfig {
            own_lid: 0x0022,
            rc_request: RcRequestFecn::AckWithBecn,
            coalescing,
        })
    }

    #[test]
    fn rules_per_transport() {
        let a = RcRequestFecn::AckWithBecn;
        assert_eq!(
            decide(&lrh(5), &bth(0x64, true), a),
            Decision::Cnp,
            "UD send"
        );
        assert_eq!(
            decide(&lrh(5), &bth(0x24, true), a),
            Decision::Cnp,
            "UC send"
        );
        assert_eq!(decide(&lrh(5), &bth(0x04, true), a), Decision::BecnOnAck);
        assert_eq!(
            decide(&lrh(5), &bth(0x04, true), RcRequestFecn::Cnp),
            Decision::Cnp
        );
        assert_eq!(
            decide(&lrh(5), &bth(0x10, true), a),
            Decision::Cnp,
            "read response"
        );
        assert_eq!(
            decide(&lrh(5), &bth(0x11, true), a),
            Decision::Ignore(Ignored::Ack)
        );
        assert_eq!(
            decide(&lrh(5), &bth(0x80, true), a),
            Decision::Ignore(Ignored::Cnp)
        );
        assert_eq!(
            decide(&lrh(0xC000), &bth(0x64, true), a),
            Decision::Ignore(Ignored::Multicast)
        );
        assert_eq!(
            decide(&lrh(0xFFFF), &bth(0x64, true), a),
            Decision::Ignore(Ignored::Multicast)
        );
        assert_eq!(
            decide(&lrh(5), &bth(0x64, false), a),
            Decision::Ignore(Ignored::NotMarked)
        );
        assert_eq!(
            decide(&lrh(5), &bth(0xE0, true), a),
            Decision::Ignore(Ignored::OtherTransport)
        );
    }

    #[test]
    fn cnp_fields_and_coalescing() {
        let mut n = np(CnpCoalescing::MinInterval(100));
        let IbNpAction::Cnp(c) = n.on_packet(0, &lrh(0x22), &bth(0x64, true), 0x1234) else {
            panic!("expected a CNP");
        };
        assert_eq!(
            (c.dlid, c.slid, c.dest_qp, c.sl, c.pkey),
            (0x11, 0x22, 0x1234, 3, 0xffff)
        );
        assert_eq!(
            n.on_packet(99, &lrh(0x22), &bth(0x64, true), 0x1234),
            IbNpAction::Coalesced
        );
        assert!(
            matches!(
                n.on_packet(99, &lrh(0x22), &bth(0x64, true), 0x99),
                IbNpAction::Cnp(_)
            ),
            "another QP"
        );
        assert!(matches!(
            n.on_packet(100, &lrh(0x22), &bth(0x64, true), 0x1234),
            IbNpAction::Cnp(_)
        ));
        assert_eq!(
            n.on_packet(100, &lrh(0x22), &bth(0x04, true), 1),
            IbNpAction::BecnOnAck
        );
        let s = n.stats();
        assert_eq!((s.marked, s.cnps, s.suppressed, s.becn_acks), (5, 3, 1, 1));
        // Off: every one.
        let mut n = np(CnpCoalescing::Off);
        for t in 0..5 {
            assert!(matches!(
                n.on_packet(t, &lrh(0x22), &bth(0x64, true), 1),
                IbNpAction::Cnp(_)
            ));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// No CNP (and no BECN) ever answers a CNP, an ACK or a multicast packet; every unicast marked UD/UC
        /// packet gets one (without coalescing).
        #[test]
        fn never_for_cnp_ack_multicast(op in any::<u8>(), dlid in any::<u16>(), fecn in any::<bool>(),
                                       qp in any::<u32>(), now in any::<u64>()) {
            let mut n = np(CnpCoalescing::Off);
            let b = bth(op, fecn);
            let a = n.on_packet(now, &lrh(dlid), &b, qp);
            let answered = matches!(a, IbNpAction::Cnp(_) | IbNpAction::BecnOnAck);
            if b.opcode.is_cnp() || b.opcode.is_ack() || dlid >= 0xC000 || !fecn {
                prop_assert!(!answered, "{:?} answered for op {:#x} dlid {:#x}", a, op, dlid);
            }
            if fecn && dlid < 0xC000 && matches!(Transport::of(op), Transport::Ud | Transport::Uc) {
                prop_assert!(matches!(a, IbNpAction::Cnp(c) if c.dest_qp == qp & 0xff_ffff));
            }
        }
    }
}
