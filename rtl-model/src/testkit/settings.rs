//! Strategies for congestion-control settings: the SwitchCongestionSetting attribute as a subnet manager
//! sends it (every value the wire can hold, [`SwitchCongestionSetting::validate`] passing), the marking
//! block's configuration, and CCT entries.

use proptest::prelude::*;

use crate::blocks::fecn_marker::{self, MarkMode};
use crate::mad::cct::CctEntry;
use crate::mad::port_mask::PortMask;
use crate::mad::switch_cong::SwitchCongestionSetting;

fn port_mask() -> impl Strategy<Value = PortMask> {
    any::<[u8; 32]>().prop_map(PortMask::from_bytes)
}

/// A CCT entry: any CCT_Shift (0..=3) and CCT_Multiplier (14 bits).
pub fn cct_entry() -> impl Strategy<Value = CctEntry> {
    (0..=CctEntry::MAX_SHIFT, 0..=CctEntry::MAX_MULTIPLIER)
        .prop_map(|(s, m)| CctEntry::new(s, m).expect("in range"))
}

/// A SwitchCongestionSetting: Control_Map of the five defined bits, any masks, Threshold and CS_Threshold
/// 0..=15, any Packet_Size, Marking_Rate and CS_ReturnDelay.
pub fn switch_congestion_setting() -> impl Strategy<Value = SwitchCongestionSetting> {
    (
        0u32..=SwitchCongestionSetting::CONTROL_MAP_DEFINED,
        port_mask(),
        port_mask(),
        0..=SwitchCongestionSetting::MAX_THRESHOLD,
        any::<u8>(),
        0..=SwitchCongestionSetting::MAX_THRESHOLD,
        cct_entry(),
        any::<u16>(),
    )
        .prop_map(
            |(
                control_map,
                victim_mask,
                credit_mask,
                threshold,
                packet_size,
                cs_threshold,
                cs_return_delay,
                marking_rate,
            )| {
                SwitchCongestionSetting {
                    control_map,
                    victim_mask,
                    credit_mask,
                    threshold,
                    packet_size,
                    cs_threshold,
                    cs_return_delay,
                    marking_rate,
                }
            },
        )
}

/// A valid `fecn_marker` configuration: any Packet_Size and Marking_Rate, either counting method, a
/// nonzero LFSR seed.
pub fn fecn_marker_config() -> impl Strategy<Value = fecn_marker::Config> {
    (any::<u8>(), any::<u16>(), any::<bool>(), 1u16..).prop_map(
        |(packet_size, marking_rate, lfsr, lfsr_seed)| fecn_marker::Config {
            packet_size,
            marking_rate,
            mode: if lfsr {
                MarkMode::Lfsr
            } else {
                MarkMode::Counter
            },
            lfsr_seed,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest! {
        #[test]
        fn drawn_settings_are_valid(s in switch_congestion_setting(), m in fecn_marker_config()) {
            prop_assert!(s.validate().is_ok());
            prop_assert!(m.validate().is_ok());
            let mut buf = [0u8; SwitchCongestionSetting::WIRE_LEN];
            s.emit(&mut buf);
            prop_assert_eq!(SwitchCongestionSetting::parse(&buf).unwrap(), s);
        }
    }
}
