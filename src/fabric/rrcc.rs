//! Receiver-driven CC (seed 002, validation target R1) in the fabric: hca-model's [`RrccSender`] as a flow's
//! reaction point and [`RrccReceiver`] per flow at its destination, and the CNPs between them.
//!
//! The receiver closes a period `T` per flow (`rrcc_period_ns`) and, by algorithm 1, sends a CNP with BECN
//! and the receive rate, or one without BECN, or nothing. Named choices:
//! - The receive rate travels in a 4-byte CNP payload, in Mbit/s (rounded down; the paper only says it is
//!   piggybacked); in the descriptor it is the payload seed, as the wire builder materialises payload bytes
//!   from it. A BECN-less CNP has no payload.
//! - `line_rate` of the receiver is the source's link rate (the most the flow can send).
//! - A period is closed at the first cycle at or after its end (polled by the destination HCA), so a flow
//!   that stops sending still gets the verdict on its last period.
//! - CNPs queue with IB CC's CNPs (ahead of data, [`super::hca::CNP_QUEUE`] at most).

use hca_model::np::rrcc::{Notice, RrccReceiver, RrccReceiverConfig};
use hca_model::rate::rrcc::{RrccSender, RrccSenderConfig};
use hca_model::rate::CnpInfo;
use hca_model::units::{CoreClock, Mtu};
use rtl_model::wire::bth::Opcode;
use switch_asic::PacketDesc;

use super::Hca;
use crate::scenario::HcaCc;

pub use super::flow_cc::FlowCc;

/// What a received CNP tells its flow's sender: BECN as carried, and the receive rate of an RR-CC CNP.
pub fn cnp_info(d: &PacketDesc) -> CnpInfo {
    CnpInfo {
        becn: d.becn,
        receive_rate: (d.payload_len >= 4).then(|| u64::from(d.payload_seed) * 1_000_000),
    }
}

fn clock(clock_mhz: u32) -> Result<CoreClock, String> {
    CoreClock::from_khz(clock_mhz.saturating_mul(1000)).map_err(|e| e.to_string())
}

/// The RR-CC sender of a flow whose source link carries `rate_mbps`.
pub fn sender(cc: &HcaCc, rate_mbps: u64, clock_mhz: u32) -> Result<RrccSender, String> {
    let max_rate = rate_mbps * 1_000_000;
    RrccSender::new(RrccSenderConfig {
        clock: clock(clock_mhz)?,
        max_rate,
        min_rate: (cc.rrcc_min_rate_mbps * 1_000_000).min(max_rate),
        d_q10: u32::from(cc.rrcc_d_q10),
        rate_ai: cc.rrcc_rate_ai_mbps * 1_000_000,
        consecutive: cc.rrcc_consecutive,
    })
    .map_err(|e| e.to_string())
}

/// The RR-CC receiver of a flow of `mtu` whose source link carries `line_mbps`.
pub fn receiver(
    cc: &HcaCc,
    mtu: u16,
    line_mbps: u64,
    clock_mhz: u32,
) -> Result<RrccReceiver, String> {
    let clock = clock(clock_mhz)?;
    RrccReceiver::new(RrccReceiverConfig {
        clock,
        period: clock.ns_to_cycles(cc.rrcc_period_ns).max(1),
        mtu: Mtu::new(mtu).map_err(|e| e.to_string())?,
        line_rate: line_mbps * 1_000_000,
        fecn_num: u32::from(cc.rrcc_fecn_pct),
        fecn_den: 100,
    })
    .map_err(|e| e.to_string())
}

/// An RR-CC receiver and where its CNPs go.
#[derive(Debug, Clone)]
pub struct RrccRx {
    rx: RrccReceiver,
    /// The source's LID, SL and QP (from the flow's packets).
    to: Option<(u16, u8, u32)>,
}

impl Hca {
    /// Makes this HCA the RR-CC notification point of scenario flow `flow`.
    pub fn set_rrcc_receiver(&mut self, flow: usize, rx: RrccReceiver) {
        if self.rrcc.len() < self.rx.limit() {
            self.rrcc.resize(self.rx.limit(), None);
        }
        if let Some(r) = self.rrcc.get_mut(flow) {
            *r = Some(RrccRx { rx, to: None });
        }
    }

    /// A data packet of flow `d.tag` is in at `now`.
    pub(super) fn rrcc_packet(&mut self, now: u64, d: &PacketDesc) {
        let flow = d.tag as usize;
        let Some(Some(r)) = self.rrcc.get_mut(flow) else {
            return;
        };
        r.to = Some((d.slid, d.sl, d.dest_qp));
        let n = r.rx.on_packet(now, d.fecn);
        let end = r.rx.period_end().unwrap_or(u64::MAX);
        self.rrcc_due = self.rrcc_due.min(end);
        if let Some(n) = n {
            self.rrcc_cnp(flow, n);
        }
    }

    /// Closes every period that ended by `now`.
    pub(super) fn rrcc_poll(&mut self, now: u64) {
        let mut due = u64::MAX;
        for flow in 0..self.rrcc.len() {
            let Some(r) = self.rrcc[flow].as_mut() else {
                continue;
            };
            let n = r.rx.poll(now);
            due = due.min(r.rx.period_end().unwrap_or(u64::MAX));
            if let Some(n) = n {
                self.rrcc_cnp(flow, n);
            }
        }
        self.rrcc_due = due;
    }

    fn rrcc_cnp(&mut self, flow: usize, n: Notice) {
        let Some(Some(RrccRx {
            to: Some((slid, sl, qp)),
            ..
        })) = self.rrcc.get(flow)
        else {
            return;
        };
        let (slid, sl, qp) = (*slid, *sl, *qp);
        let payload = if n.cnp.becn { 4 } else { 0 };
        let mut c = PacketDesc::local(slid, self.lid, sl, Opcode::IbCnp, payload);
        c.becn = n.cnp.becn;
        c.payload_seed = n
            .cnp
            .receive_rate
            .map_or(0, |r| u32::try_from(r / 1_000_000).unwrap_or(u32::MAX));
        c.vl = self.vl_of(sl);
        c.dest_qp = qp;
        c.tag = flow as u32;
        self.push_cnp(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hca_model::rate::{Feedback, RateController};
    use switch_asic::{FcPacket, LinkRate};

    fn rrcc() -> HcaCc {
        HcaCc {
            algorithm: crate::scenario::CcAlgorithm::Rrcc,
            rrcc_period_ns: 1000,
            ..HcaCc::default()
        }
    }

    /// 20 of 20 packets marked in a 1 us period (1000 cycles at 1 GHz) of 256-byte MTU: a CNP with BECN and
    /// 20 * 256 * 8 bits / 1 us = 40 960 Mbit/s; then 1 of 2 marked: below 95%, and 4 096 Mbit/s is below the
    /// 32 000 Mbit/s line: a CNP without BECN.
    #[test]
    fn periods_become_cnps_with_and_without_becn() {
        let r = LinkRate::new(4, 1).unwrap();
        let mut h = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        h.set_rrcc_receiver(0, receiver(&rrcc(), 256, 32_000, 1000).unwrap());
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 100,
        });
        let mut d = PacketDesc::local(2, 7, 0, Opcode::RcSendMiddle, 256);
        d.dest_qp = 1;
        for i in 0..20u64 {
            d.fecn = true;
            h.rrcc_packet(10 + i * 40, &d);
        }
        d.fecn = false;
        h.rrcc_packet(1500, &d);
        d.fecn = true;
        h.rrcc_packet(1600, &d);
        let mut cnps = Vec::new();
        for t in 1000..3000 {
            if let Some(p) = h.step(t).pkt {
                cnps.push(p.desc);
            }
        }
        assert_eq!(cnps.len(), 2, "{cnps:?}");
        let (a, b) = (cnps[0], cnps[1]);
        assert_eq!((a.dlid, a.becn, a.payload_len), (7, true, 4));
        assert_eq!(cnp_info(&a).receive_rate, Some(40_960_000_000));
        assert_eq!((b.becn, cnp_info(&b).receive_rate), (false, None));
    }

    #[test]
    fn a_becn_cnp_sets_the_sender_to_d_times_the_receive_rate() {
        let mut s = FlowCc::from(sender(&rrcc(), 32_000, 1000).unwrap());
        assert_eq!(s.rate_bps(), 32_000_000_000);
        let mut c = PacketDesc::local(7, 2, 0, Opcode::IbCnp, 4);
        c.becn = true;
        c.payload_seed = 10_240;
        s.on_feedback(0, Feedback::Cnp(cnp_info(&c)));
        // 10 240 Mbit/s * 973 / 1024 = 9 730 Mbit/s.
        assert_eq!(s.rate_bps(), 9_730_000_000);
    }
}
