//! RoCEv2 mode of the fabric (`[roce]`): PFC settings per port, RoCEv2 descriptors for the HCAs' packets and
//! CNPs, and the sources' RCM / DCQCN reaction points.
//!
//! Every port gets the same PFC settings except the headroom, which (unless the scenario fixes it) is computed
//! for the port's own link latency and the largest frame the scenario sends (`rtl_model::link::pfc`).

use hca_model::rate::dcqcn::{DcqcnConfig, DcqcnController};
use hca_model::rate::rcm::{RcmConfig, RcmController};
use hca_model::units::{CoreClock, Mtu};
use rtl_model::link::pfc::{headroom_blocks, PfcConfig};
use switch_asic::config::RoceDetect;
use switch_asic::LinkRate;

use crate::scenario::roce::{DcqcnPreset, Detection, Reaction, RoceSettings};
use hca_model::rate::flow::FlowCc;

pub use hca_model::hca::roce::{cnp_for, frame_bytes, to_roce, CNP_PAYLOAD};

/// PFC settings of a port on a link of `rate` and `delay` cycles, for frames of up to `max_frame_blocks`.
pub fn pfc_config(
    r: &RoceSettings,
    rate: LinkRate,
    delay: u64,
    max_frame_blocks: u16,
    clock_mhz: u32,
) -> PfcConfig {
    let link_delay = u32::try_from(delay).unwrap_or(u32::MAX);
    let computed = headroom_blocks(rate, link_delay, max_frame_blocks);
    PfcConfig {
        link_delay,
        headroom_blocks: Some(
            r.headroom_blocks
                .unwrap_or(u16::try_from(computed).unwrap_or(u16::MAX)),
        ),
        xon_blocks: r.xon_blocks,
        pause_quanta: r.pause_quanta,
        victim_hold: u32::try_from((r.victim_hold_ns * u64::from(clock_mhz)).div_ceil(1000))
            .unwrap_or(u32::MAX),
    }
}

/// A nonzero LFSR seed for the marker of switch `switch`, port `port`, from the scenario `seed`: ports get
/// different sequences, and the same scenario the same ones.
pub fn lfsr_seed(seed: u64, switch: usize, port: usize) -> u16 {
    // SplitMix64's finaliser spreads neighbouring inputs over all bits.
    let z = rtl_model::rng::mix64(
        seed ^ ((switch as u64) << 32 | port as u64).wrapping_mul(rtl_model::rng::GOLDEN),
    );
    (z as u16).max(1)
}

/// The switch detection setting of `r`.
pub fn detect(r: &RoceSettings) -> RoceDetect {
    match r.detection {
        Detection::RootVictim => RoceDetect::IbRootVictim,
        Detection::Oversubscribed => RoceDetect::Oversubscribed {
            in_buf_blocks: r.in_buf_threshold_blocks,
        },
    }
}

/// The reaction point of a flow of `mtu` payload bytes on a link of `rate_mbps` at `clock_mhz`, or `None`
/// when the scenario chooses no reaction.
pub fn reaction_point(
    r: &RoceSettings,
    mtu: u16,
    rate_mbps: u64,
    clock_mhz: u32,
) -> Result<Option<FlowCc>, String> {
    let clock = CoreClock::from_khz(clock_mhz * 1000).map_err(|e| e.to_string())?;
    let link = LinkRate::from_mbps(rate_mbps, clock.khz()).map_err(|e| e.to_string())?;
    match r.reaction {
        Reaction::None => Ok(None),
        Reaction::Rcm => {
            // T is the wire time of a whole MTU frame, framing included.
            let overhead = u32::from(frame_bytes(mtu, r.frame_overhead_bytes) - mtu);
            let cfg = RcmConfig {
                mtu: Mtu::new(mtu).map_err(|e| e.to_string())?,
                packet_overhead: overhead,
                link,
                recovery_cycles: r.rcm_recovery_us.map(|u| u * u64::from(clock_mhz)),
                recovery_bytes: r.rcm_recovery_bytes,
                combine: r.rcm_recovery_combine,
                max_level: r.rcm_max_level,
                clock,
            };
            Ok(Some(FlowCc::Rcm(
                RcmController::new(cfg).map_err(|e| e.to_string())?,
            )))
        }
        Reaction::Dcqcn => {
            let max = link.bps(clock.hz());
            let cfg = match r.dcqcn_preset {
                DcqcnPreset::Ns3 => DcqcnConfig::ns3_defaults(clock, max),
                DcqcnPreset::Paper => DcqcnConfig::paper_defaults(clock, max),
            };
            Ok(Some(FlowCc::Dcqcn(
                DcqcnController::new(cfg).map_err(|e| e.to_string())?,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hca_model::rate::{CnpInfo, Feedback, RateController, Sent};

    #[test]
    fn headroom_follows_the_link_unless_fixed() {
        let rate = LinkRate::new(5, 1).unwrap();
        let s = RoceSettings::default();
        let near = pfc_config(&s, rate, 10, 34, 1000).headroom_blocks.unwrap();
        let far = pfc_config(&s, rate, 1000, 34, 1000)
            .headroom_blocks
            .unwrap();
        // 2 x 34 x 64 + 64 + (2 x 10 + 2) x 5 = 4526 bytes: 71 blocks, plus one for rounding.
        assert_eq!(near, 72);
        assert!(far > near + 150, "{far}: 2000 more cycles at 5 bytes each");
        let fixed = RoceSettings {
            headroom_blocks: Some(50),
            victim_hold_ns: 1500,
            ..s
        };
        let c = pfc_config(&fixed, rate, 1000, 34, 1000);
        assert_eq!((c.headroom_blocks, c.victim_hold), (Some(50), 1500));
    }

    #[test]
    fn rcm_reaction_spaces_packets_by_n_plus_one_t() {
        let s = RoceSettings {
            reaction: Reaction::Rcm,
            rcm_recovery_us: Some(10),
            ..RoceSettings::default()
        };
        // 40 Gbit/s at 1 GHz: 5 bytes a cycle; T = 2130 / 5 = 426 cycles.
        let mut c = reaction_point(&s, 2048, 40_000, 1000).unwrap().unwrap();
        c.on_sent(Sent {
            start: 0,
            end: 425,
            bytes: 2130,
        });
        assert_eq!(c.next_send(), 0, "level 0: no limit");
        c.on_feedback(500, Feedback::Cnp(CnpInfo::BECN));
        c.on_feedback(501, Feedback::Cnp(CnpInfo::BECN));
        c.on_sent(Sent {
            start: 600,
            end: 1025,
            bytes: 2130,
        });
        assert_eq!(c.next_send(), 600 + 3 * 426, "two CNPs: 3T");
        // 10 us after the last change one level is recovered: 2T.
        c.advance(501 + 10_000);
        assert_eq!(c.next_send(), 600 + 2 * 426);
        let none = RoceSettings::default();
        assert!(reaction_point(&none, 2048, 40_000, 1000).unwrap().is_none());
        let d = RoceSettings {
            reaction: Reaction::Dcqcn,
            ..none
        };
        let mut c = reaction_point(&d, 2048, 40_000, 1000).unwrap().unwrap();
        let r0 = c.rate_bps();
        c.on_feedback(100, Feedback::Cnp(CnpInfo::BECN));
        assert!(c.rate_bps() < r0, "a CNP cuts the DCQCN rate");
    }
}
