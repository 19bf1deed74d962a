//! The HCA's CCT reaction point from a scenario's `[hca_cc]` settings: hca-model's [`CctController`] with the
//! scenario's CongestionControlTable (an explicit one, or the linear one of `cct_shift` and
//! `cct_multiplier_step`).

use hca_model::rate::cct::{CctController, CctParams, CctSettings};
use hca_model::units::{CoreClock, LinkRate, Mtu, IB_LOCAL_OVERHEAD};
use rtl_model::mad::ca_cong::CaCongestionEntry;
use rtl_model::mad::cct::{Cct, CctEntry};

use crate::scenario::HcaCc;

/// The CCT of `cc`, entries 0..=ccti_limit: its explicit table (`cct`), else the linear one, entry `i` =
/// (cct_shift, i * cct_multiplier_step).
pub fn table(cc: &HcaCc) -> Result<Cct, String> {
    let entries = (0..=cc.ccti_limit)
        .map(|i| {
            let (shift, mult) = match &cc.cct {
                Some(t) => *t
                    .entries()
                    .get(usize::from(i))
                    .ok_or_else(|| format!("ccti_limit {} is beyond the table", cc.ccti_limit))?,
                None => (cc.cct_shift, i * cc.cct_multiplier_step),
            };
            CctEntry::new(shift, mult).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Cct::from_entries(entries).map_err(|e| e.to_string())
}

/// A reaction point for a flow of `mtu` on a link of `rate_mbps` at `clock_mhz`.
pub fn reaction_point(
    cc: &HcaCc,
    mtu: u16,
    rate_mbps: u64,
    clock_mhz: u32,
) -> Result<CctController, String> {
    let clock = CoreClock::from_khz(clock_mhz * 1000).map_err(|e| e.to_string())?;
    let p = CctParams {
        settings: CctSettings {
            entry: CaCongestionEntry {
                ccti_timer: cc.ccti_timer,
                ccti_increase: cc.ccti_increase,
                trigger_threshold: 0,
                ccti_min: cc.ccti_min,
            },
            cct: table(cc)?,
        },
        mtu: Mtu::new(mtu).map_err(|e| e.to_string())?,
        packet_overhead: IB_LOCAL_OVERHEAD,
        link: LinkRate::from_mbps(rate_mbps, clock.khz()).map_err(|e| e.to_string())?,
        clock,
    };
    CctController::new(&p).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hca_model::rate::{CnpInfo, Feedback, RateController, Sent};

    #[test]
    fn a_becn_delays_the_next_packet_by_the_tables_ird() {
        let cc = HcaCc::default();
        let t = table(&cc).unwrap();
        assert_eq!((t.ccti_limit, t.entries.len()), (127, 128));
        assert_eq!(t.entries[5].multiplier(), 5);
        // 4x DDR at 1 GHz: 2 bytes per cycle; T_pkt = (2048 + 26) / 2 = 1037 cycles; shift 3: 129 per CCTI.
        let mut c = reaction_point(&cc, 2048, 16_000, 1000).unwrap();
        c.on_sent(Sent {
            start: 0,
            end: 1036,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 1037, "CCTI 0: no delay");
        c.on_feedback(1100, Feedback::Cnp(CnpInfo::BECN));
        c.on_sent(Sent {
            start: 1100,
            end: 2136,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 2137 + 129, "CCTI 1: one step of T_pkt >> 3");
        assert!(reaction_point(&cc, 1500, 16_000, 1000).is_err());
    }
}
