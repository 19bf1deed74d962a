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
//! - CNPs queue with IB CC's CNPs (ahead of data, [`hca_model::hca::CNP_QUEUE`] at most).

use crate::scenario::HcaCc;
use hca_model::np::rrcc::{RrccReceiver, RrccReceiverConfig};
use hca_model::rate::rrcc::{RrccSender, RrccSenderConfig};
use hca_model::units::{CoreClock, Mtu};

pub use hca_model::hca::rrcc::cnp_info;
pub use hca_model::rate::flow::FlowCc;

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

#[cfg(test)]
mod tests {
    use super::*;
    use hca_model::rate::{Feedback, RateController};
    use rtl_model::link::PacketDesc;
    use rtl_model::wire::bth::Opcode;

    fn rrcc() -> HcaCc {
        HcaCc {
            algorithm: crate::scenario::CcAlgorithm::Rrcc,
            rrcc_period_ns: 1000,
            ..HcaCc::default()
        }
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
