//! The `[roce]` section of a scenario: RoCEv2 mode for the whole fabric (seed 001, sections III and IV).
//!
//! With `[roce]` present every port (switch ports and HCAs) runs Priority Flow Control instead of IB credits,
//! packets are RoCEv2-over-IPv4 frames (ECT(0)), switches mark ECN CE instead of FECN (with the `[switch_cc]`
//! Threshold / Marking_Rate / Packet_Size / Victim_Mask and the detection chosen here), and, when a reaction
//! is chosen, destinations answer CE-marked packets with RoCEv2 CNPs (opcode 0x81) and sources slow down.
//!
//! ```toml
//! [roce]
//! detection = "root_victim"      # RCM-1a; or "oversubscribed" (RCM-1b) with in_buf_threshold_blocks
//! reaction = "rcm"               # "none" (PFC only), "rcm" or "dcqcn"
//! rcm_recovery_us = 20           # and/or rcm_recovery_bytes
//! ```

use serde::Deserialize;

use hca_model::rate::rcm::RecoveryCombine;

/// How a switch decides that a RoCEv2 output port is congested (seed 001, section IV.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detection {
    /// RCM-1a: the IB root/victim detector in 64-byte units (Threshold from `[switch_cc]`; Victim_Mask chooses
    /// marking at the root only or also at victims).
    #[default]
    RootVictim,
    /// RCM-1b: at least two inputs compete for the output and an input buffer holds more than
    /// `in_buf_threshold_blocks`.
    Oversubscribed,
}

/// What a source does with RoCEv2 CNPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    /// No CNPs are sent and sources are limited by PFC alone.
    #[default]
    None,
    /// Liu et al.'s RCM reaction: after `n` CNPs consecutive packets start `(n + 1) T` apart
    /// (hca-model `RcmController`).
    Rcm,
    /// DCQCN (hca-model `DcqcnController`) with the preset `dcqcn_preset`.
    Dcqcn,
}

/// Which published DCQCN parameter set a `dcqcn` reaction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnPreset {
    /// The DCQCN authors' ns-3 defaults (`DcqcnConfig::ns3_defaults`).
    #[default]
    Ns3,
    /// The DCQCN paper's evaluation settings (`DcqcnConfig::paper_defaults`).
    Paper,
}

/// RoCEv2 settings (`[roce]`); every key is optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoceSettings {
    /// PFC headroom of every priority buffer in blocks; absent: computed per port from its link's latency
    /// (`rtl_model::link::pfc::headroom_blocks`), so XOFF = buffer - headroom.
    pub headroom_blocks: Option<u16>,
    /// XON level in blocks used; absent: half of XOFF.
    pub xon_blocks: Option<u16>,
    /// Quanta (512 bit times) of an XOFF frame.
    pub pause_quanta: u16,
    /// RCM-1a: nanoseconds after a pause ends during which a priority still counts as without credit (see
    /// `rtl_model::link::pfc::PfcConfig::victim_hold`).
    pub victim_hold_ns: u64,
    /// Bytes each frame occupies on the wire besides what the descriptor counts (Ethernet header through
    /// ICRC): FCS 4 + preamble and SFD 8 + inter-frame gap 12 = 24. They stretch serialisation (a 40 Gbit/s
    /// link carries at most 2048 x 40 / 2130 = 38.46 Gbit/s of 2048-byte payloads) and count in the buffers
    /// too (a 20-byte overestimate of each frame's buffer use: the designer's choice, one block at most).
    pub frame_overhead_bytes: u16,
    /// Congestion detection of the switches.
    pub detection: Detection,
    /// RCM-1b input-buffer threshold in blocks.
    pub in_buf_threshold_blocks: u16,
    /// The sources' reaction to CNPs.
    pub reaction: Reaction,
    /// RCM: recover one level this many microseconds after the last level change; absent: no time condition.
    pub rcm_recovery_us: Option<u64>,
    /// RCM: recover one level after this many bytes sent since the last level change; absent: none.
    pub rcm_recovery_bytes: Option<u64>,
    /// RCM: how the two recovery conditions combine (the paper's "and/or").
    pub rcm_recovery_combine: RecoveryCombine,
    /// RCM: highest level (the paper sets none; this bounds the arithmetic).
    pub rcm_max_level: u32,
    /// DCQCN parameter set.
    pub dcqcn_preset: DcqcnPreset,
    /// Least microseconds between two CNPs a destination sends for one flow; 0 answers every CE-marked
    /// packet (Liu et al.'s RCM). DCQCN's notification point uses 50.
    pub cnp_interval_us: u64,
}

impl Default for RoceSettings {
    fn default() -> Self {
        RoceSettings {
            headroom_blocks: None,
            xon_blocks: None,
            pause_quanta: 0xFFFF,
            victim_hold_ns: 0,
            frame_overhead_bytes: 24,
            detection: Detection::RootVictim,
            in_buf_threshold_blocks: 64,
            reaction: Reaction::None,
            rcm_recovery_us: None,
            rcm_recovery_bytes: None,
            rcm_recovery_combine: RecoveryCombine::Either,
            rcm_max_level: 64,
            dcqcn_preset: DcqcnPreset::Ns3,
            cnp_interval_us: 0,
        }
    }
}

impl RoceSettings {
    /// Checks what the fabric cannot check later; the error names the field and says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.pause_quanta == 0 {
            return Err("roce.pause_quanta: 0 pauses nothing; use 1..=65535".into());
        }
        if self.frame_overhead_bytes > 1024 {
            return Err(format!(
                "roce.frame_overhead_bytes: {} is above 1024",
                self.frame_overhead_bytes
            ));
        }
        if self.detection == Detection::Oversubscribed && self.in_buf_threshold_blocks == 0 {
            return Err("roce.in_buf_threshold_blocks: 0 would mark every competing packet; must be above 0".into());
        }
        if self.reaction == Reaction::Rcm {
            if self.rcm_recovery_us.is_none() && self.rcm_recovery_bytes.is_none() {
                return Err(
                    "roce.reaction: \"rcm\" needs rcm_recovery_us and/or rcm_recovery_bytes (else the rate never recovers)"
                        .into(),
                );
            }
            if self.rcm_recovery_us == Some(0) {
                return Err("roce.rcm_recovery_us: must be above 0".into());
            }
            if self.rcm_recovery_bytes == Some(0) {
                return Err("roce.rcm_recovery_bytes: must be above 0".into());
            }
            if self.rcm_max_level == 0 {
                return Err("roce.rcm_max_level: must be above 0".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RoceSettings, String> {
        let s: RoceSettings = toml::from_str(text).map_err(|e| e.message().to_string())?;
        s.check().map(|_| s)
    }

    #[test]
    fn defaults_and_names() {
        let s = parse("").unwrap();
        assert_eq!(s, RoceSettings::default());
        assert_eq!(s.reaction, Reaction::None);
        let s = parse(
            "detection = \"oversubscribed\"\nin_buf_threshold_blocks = 40\nreaction = \"rcm\"\nrcm_recovery_bytes = 4096\nrcm_recovery_combine = \"both\"",
        )
        .unwrap();
        assert_eq!(
            (s.detection, s.reaction, s.rcm_recovery_combine),
            (
                Detection::Oversubscribed,
                Reaction::Rcm,
                RecoveryCombine::Both
            )
        );
    }

    const TOPO: &str = "duration_us = 10\n[[switch]]\nname = \"S\"\nports = 2\n[[hca]]\nname = \"A\"\n[[hca]]\nname = \"B\"\n[[link]]\nends = [\"A\", \"S:1\"]\nrate = \"40GbE\"\n[[link]]\nends = [\"B\", \"S:2\"]\nrate = \"40GbE\"\n";

    #[test]
    fn scenario_errors_name_file_and_line() {
        let p = std::path::Path::new("x.toml");
        let ok =
            crate::scenario::parse(p, &format!("{TOPO}[roce]\nreaction = \"none\"\n")).unwrap();
        assert_eq!(ok.roce, Some(RoceSettings::default()));
        assert_eq!(crate::scenario::parse(p, TOPO).unwrap().roce, None);
        // TOPO has 14 lines: [roce] is line 15, its bad key line 16.
        let e = crate::scenario::parse(p, &format!("{TOPO}[roce]\nreaction = \"rcm\"\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.toml:15: roce.reaction"), "{e}");
        let e = crate::scenario::parse(p, &format!("{TOPO}[roce]\nheadroom = 3\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.toml:16: unknown field `headroom`"), "{e}");
        let e = crate::scenario::parse(p, &format!("{TOPO}[hca_cc]\nccti_increase = 1\n[roce]\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.toml:15: hca_cc: IB CC"), "{e}");
        let e = crate::scenario::parse(p, &format!("{TOPO}[settings]\ndata_vls = 9\n[roce]\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("x.toml:15: settings.data_vls: 9 priorities"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_field() {
        for (text, want) in [
            ("reaction = \"rcm\"", "roce.reaction"),
            (
                "reaction = \"rcm\"\nrcm_recovery_us = 0",
                "roce.rcm_recovery_us",
            ),
            (
                "reaction = \"rcm\"\nrcm_recovery_us = 5\nrcm_max_level = 0",
                "roce.rcm_max_level",
            ),
            ("pause_quanta = 0", "roce.pause_quanta"),
            (
                "detection = \"oversubscribed\"\nin_buf_threshold_blocks = 0",
                "roce.in_buf_threshold_blocks",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
        }
        assert!(parse("reaction = \"ecn\"")
            .unwrap_err()
            .contains("unknown variant"));
        assert!(parse("pfc = 1").unwrap_err().contains("unknown field"));
    }
}
