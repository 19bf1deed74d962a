//! The IB CC reaction point of one port: CACongestionSetting (Port_Control, Control_Map, one entry per SL)
//! and the CongestionControlTable, with one [`CctController`] per CC context, made on first use: per QP in
//! QP-based mode, per SL in SL-based mode ([`cc_context`]). A flow on an SL that Control_Map does not select
//! gets no controller (no congestion control). The SL's entry (CCTI_Timer, CCTI_Increase, Trigger_Threshold,
//! CCTI_Min) applies in both modes.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use rtl_model::mad::ca_cong::{CaCongestionSetting, CcMode};
use rtl_model::mad::cct::Cct;

use super::cct::{cc_context, CcContext, CctController, CctParams, CctSettings};
use crate::error::CcError;
use crate::units::{CoreClock, LinkRate, Mtu};

/// The reaction point of one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbPortReactionPoint {
    mode: CcMode,
    params: [Option<CctParams>; 16],
    ctrls: BTreeMap<CcContext, CctController>,
}

impl IbPortReactionPoint {
    /// Builds the port from the two attributes; every selected SL's settings are validated against the
    /// table up front (errors name the SL), so making a controller later cannot fail.
    pub fn from_mads(
        setting: &CaCongestionSetting,
        cct: &Cct,
        mtu: Mtu,
        packet_overhead: u32,
        link: LinkRate,
        clock: CoreClock,
    ) -> Result<Self, CcError> {
        setting.check_against_cct(cct)?;
        let mut params: [Option<CctParams>; 16] = Default::default();
        for (sl, p) in params.iter_mut().enumerate() {
            if let Some(settings) = CctSettings::from_mads(setting, cct, sl as u8)? {
                let cp = CctParams {
                    settings,
                    mtu,
                    packet_overhead,
                    link,
                    clock,
                };
                // Validates the table and the timebase once per SL.
                CctController::new(&cp)?;
                *p = Some(cp);
            }
        }
        Ok(IbPortReactionPoint {
            mode: setting.port_control,
            params,
            ctrls: BTreeMap::new(),
        })
    }

    /// The context a flow on `sl` with QP `qp` belongs to.
    pub fn context(&self, sl: u8, qp: u32) -> CcContext {
        cc_context(self.mode, sl, qp)
    }

    /// The controller of the flow, or `None` if its SL has no congestion control.
    pub fn controller(&mut self, sl: u8, qp: u32) -> Option<&mut CctController> {
        let p = self.params.get(usize::from(sl))?.as_ref()?;
        match self.ctrls.entry(cc_context(self.mode, sl, qp)) {
            Entry::Occupied(e) => Some(e.into_mut()),
            // Validated in from_mads: cannot fail.
            Entry::Vacant(v) => Some(v.insert(CctController::new(p).ok()?)),
        }
    }

    /// Contexts made so far.
    pub fn contexts(&self) -> usize {
        self.ctrls.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::{CnpInfo, Feedback, RateController};
    use rtl_model::mad::ca_cong::CaCongestionEntry;
    use rtl_model::mad::cct::CctEntry;

    fn port(mode: CcMode, min: u8) -> Result<IbPortReactionPoint, CcError> {
        let clock = CoreClock::from_khz(1_000_000).unwrap();
        let mut s = CaCongestionSetting::all_sls(
            mode,
            CaCongestionEntry {
                ccti_timer: 0,
                ccti_increase: 2,
                trigger_threshold: 0,
                ccti_min: 0,
            },
        );
        s.entries[4].ccti_min = min;
        s.select_sl(7, false);
        let cct =
            Cct::from_entries((0..6).map(|i| CctEntry::new(0, i).unwrap()).collect()).unwrap();
        IbPortReactionPoint::from_mads(
            &s,
            &cct,
            Mtu::new(1024).unwrap(),
            26,
            LinkRate::from_mbps(8000, clock).unwrap(),
            clock,
        )
    }

    const CNP: Feedback = Feedback::Cnp(CnpInfo::BECN);

    #[test]
    fn sl_based_shares_qp_based_separates() {
        let mut p = port(CcMode::SlBased, 0).unwrap();
        p.controller(1, 10).unwrap().on_feedback(0, CNP);
        assert_eq!(p.controller(1, 11).unwrap().ccti(), 2, "same SL, same CCTI");
        assert_eq!(p.controller(2, 10).unwrap().ccti(), 0);
        assert_eq!(p.contexts(), 2);
        let mut p = port(CcMode::QpBased, 0).unwrap();
        p.controller(1, 10).unwrap().on_feedback(0, CNP);
        assert_eq!(p.controller(1, 11).unwrap().ccti(), 0, "another QP");
        assert_eq!(p.controller(1, 10).unwrap().ccti(), 2);
        assert!(p.controller(7, 10).is_none(), "SL 7 not in Control_Map");
        assert!(p.controller(16, 10).is_none());
    }

    #[test]
    fn bad_sl_entry_is_named() {
        // CCTI_Limit = 5; SL 4 asks for CCTI_Min 9.
        assert_eq!(
            port(CcMode::SlBased, 9).unwrap_err().to_string(),
            "CACongestionSetting: ccti_min[4] = 9: expected at most 5"
        );
    }
}
