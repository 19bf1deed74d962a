//! The congestion-control keys of opensm's configuration file (`opensm.conf`), read with opensm's own value
//! syntax, for `[cc] opensm_conf = "FILE"` and the inline `[cc.opensm]` table of a scenario.
//!
//! A line is `key value` (the value is the rest of the line), `#` starts a comment. Numbers are read as
//! opensm reads them (C's `strtoul` with base 0: `0x` hexadecimal, a leading `0` octal, else decimal);
//! booleans are `TRUE` or `FALSE`. The keys:
//!
//! | key | into | form |
//! |---|---|---|
//! | `congestion_control` | CC on or off (off: Threshold 0 at the switches, no `[hca_cc]`) | `TRUE`/`FALSE`, opensm's default `FALSE` |
//! | `cc_sw_cong_setting_threshold` | `[switch_cc] threshold` | 0..=15 |
//! | `cc_sw_cong_setting_marking_rate` | `[switch_cc] marking_rate` | 16 bits |
//! | `cc_sw_cong_setting_packet_size` | `[switch_cc] packet_size` (64-byte units) | 8 bits |
//! | `cc_sw_cong_setting_victim_mask` | Victim_Mask of every switch: bit `p` is port `p` | 256-bit hexadecimal |
//! | `cc_ca_cong_setting_ccti_timer` | `[hca_cc] ccti_timer` | `SL value`, one line per SL |
//! | `cc_ca_cong_setting_ccti_increase` | `[hca_cc] ccti_increase` | `SL value` |
//! | `cc_ca_cong_setting_ccti_min` | `[hca_cc] ccti_min` | `SL value` |
//! | `cc_cct` | the CongestionControlTable, CCTI_Limit its last index | `shift:multiplier,...`, at most 128 |
//!
//! Modelled partly or not at all, and reported as warnings when their value would change what the hardware
//! does (an opensm.conf dump lists every key, most at inert values): `cc_ca_cong_setting_port_control` with
//! SL-based CC (the model's reaction points are per flow, QP-based), a nonzero
//! `cc_ca_cong_setting_trigger_threshold` (it only logs in hardware), a `cc_sw_cong_setting_control_map`
//! without all five field bits, a `cc_ca_cong_setting_control_map` of 0, and credit starvation
//! (`cc_sw_cong_setting_credit_mask`, `..._credit_starvation_threshold`, `..._credit_starvation_return_delay`)
//! when set. `cc_key` and `cc_max_outstanding_mads` only concern management. Keys that are not congestion
//! control's (routing, logging, QoS, ...) are ignored: they do not change what the model computes.

/// The CA settings of one SL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlEntry {
    /// CCTI_Timer, 1.024 us units.
    pub ccti_timer: Option<u16>,
    /// CCTI_Increase.
    pub ccti_increase: Option<u8>,
    /// CCTI_Min.
    pub ccti_min: Option<u8>,
}

/// What an `opensm.conf` (and the inline `[cc.opensm]` keys after it) set; `None`: not given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpensmCc {
    /// `congestion_control`.
    pub congestion_control: Option<bool>,
    /// SwitchCongestionSetting Threshold.
    pub threshold: Option<u8>,
    /// SwitchCongestionSetting Marking_Rate.
    pub marking_rate: Option<u16>,
    /// SwitchCongestionSetting Packet_Size, 64-byte units.
    pub packet_size: Option<u8>,
    /// Victim_Mask, bit `p` for port `p` (256 bits, as the MAD carries them).
    pub victim_mask: Option<[u64; 4]>,
    /// Per SL: CACongestionSetting entries.
    pub sl: [SlEntry; 16],
    /// CongestionControlTable entries `(shift, multiplier)`.
    pub cct: Option<Vec<(u8, u16)>>,
    /// Keys set that the model does not apply, with why.
    pub unmodelled: Vec<String>,
}

/// A number as C's `strtoul(s, NULL, 0)` reads a whole word: `0x` hexadecimal, a leading `0` octal, else
/// decimal; `None` for anything else (a trailing non-digit included).
pub fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

fn bounded(key: &str, v: &str, max: u64) -> Result<u64, String> {
    let n = number(v)
        .ok_or_else(|| format!("{key}: {v:?} is not a number (decimal, 0x hex or 0 octal)"))?;
    if n > max {
        return Err(format!("{key}: {n} is not in 0..={max}"));
    }
    Ok(n)
}

fn boolean(key: &str, v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_uppercase().as_str() {
        "TRUE" => Ok(true),
        "FALSE" => Ok(false),
        _ => Err(format!("{key}: {v:?} is not TRUE or FALSE")),
    }
}

/// opensm's 256-bit mask: up to 64 hexadecimal digits, `0x` optional, a big-endian integer.
fn mask256(key: &str, v: &str) -> Result<[u64; 4], String> {
    let s = v.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{key}: {v:?} is not a 256-bit mask (1 to 64 hexadecimal digits)"
        ));
    }
    let mut words = [0u64; 4];
    for (i, chunk) in s.as_bytes().rchunks(16).enumerate() {
        let text = std::str::from_utf8(chunk).expect("hex digits are ASCII");
        words[i] = u64::from_str_radix(text, 16).expect("checked hex, at most 16 digits");
    }
    Ok(words)
}

/// `SL value`: the SL (0..=15) and the value's text.
fn per_sl<'a>(key: &str, v: &'a str) -> Result<(usize, &'a str), String> {
    let mut it = v.split_whitespace();
    let (Some(sl), Some(val), None) = (it.next(), it.next(), it.next()) else {
        return Err(format!(
            "{key}: {v:?} is not `SL value` (an SL, then the value)"
        ));
    };
    let sl = bounded(key, sl, 15)? as usize;
    Ok((sl, val))
}

fn cct(key: &str, v: &str) -> Result<Vec<(u8, u16)>, String> {
    let mut out = Vec::new();
    for (i, e) in v.split(',').enumerate() {
        let Some((s, m)) = e.split_once(':') else {
            return Err(format!("{key}: entry {i} {e:?} is not shift:multiplier"));
        };
        let shift = bounded(&format!("{key} entry {i} shift"), s, 3)? as u8;
        let mult = bounded(&format!("{key} entry {i} multiplier"), m, 0x3FFF)? as u16;
        out.push((shift, mult));
    }
    if out.len() > 128 {
        return Err(format!(
            "{key}: {} entries; a CongestionControlTable has at most 128",
            out.len()
        ));
    }
    Ok(out)
}

impl OpensmCc {
    /// Applies one key. Keys outside congestion control are ignored; `Err` names the key and what is wrong.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let v = value.trim();
        match key {
            "congestion_control" => self.congestion_control = Some(boolean(key, v)?),
            "cc_sw_cong_setting_threshold" => self.threshold = Some(bounded(key, v, 15)? as u8),
            "cc_sw_cong_setting_marking_rate" => {
                self.marking_rate = Some(bounded(key, v, u16::MAX.into())? as u16)
            }
            "cc_sw_cong_setting_packet_size" => {
                self.packet_size = Some(bounded(key, v, u8::MAX.into())? as u8)
            }
            "cc_sw_cong_setting_victim_mask" => self.victim_mask = Some(mask256(key, v)?),
            "cc_ca_cong_setting_ccti_timer" => {
                let (sl, x) = per_sl(key, v)?;
                self.sl[sl].ccti_timer = Some(bounded(key, x, u16::MAX.into())? as u16);
            }
            "cc_ca_cong_setting_ccti_increase" => {
                let (sl, x) = per_sl(key, v)?;
                self.sl[sl].ccti_increase = Some(bounded(key, x, u8::MAX.into())? as u8);
            }
            "cc_ca_cong_setting_ccti_min" => {
                let (sl, x) = per_sl(key, v)?;
                self.sl[sl].ccti_min = Some(bounded(key, x, u8::MAX.into())? as u8);
            }
            "cc_cct" => self.cct = Some(cct(key, v)?),
            "cc_ca_cong_setting_port_control" => {
                // Bit 0: SL-based. QP-based (0) is what the model does.
                let sl_based = bounded(key, v, u16::MAX.into())? & 1 != 0;
                if sl_based {
                    self.unmodelled.push(format!(
                        "{key} {v}: SL-based CC (one CCTI per SL of a port) is not modelled; every flow has its own reaction point (QP-based)"
                    ));
                }
            }
            // The keys the model does not apply are reported only when they would change what the hardware
            // does (an opensm.conf dump lists every key, most at inert values).
            "cc_ca_cong_setting_trigger_threshold" => {
                let (_, x) = per_sl(key, v)?;
                let acts = bounded(key, x, u8::MAX.into())? != 0;
                self.note(
                    acts,
                    format!("{key} {v}: only logs in hardware; not applied"),
                );
            }
            "cc_sw_cong_setting_control_map" => {
                let acts = bounded(key, v, u32::MAX.into())? & 0x1f != 0x1f;
                self.note(
                    acts,
                    format!("{key} {v}: the model applies every SwitchCongestionSetting field as if all were valid"),
                );
            }
            "cc_ca_cong_setting_control_map" => {
                let acts = bounded(key, v, u16::MAX.into())? == 0;
                self.note(
                    acts,
                    format!("{key} {v}: no SL selected, yet the model applies the CA settings to every flow"),
                );
            }
            "cc_sw_cong_setting_credit_mask" => {
                let acts = mask256(key, v)? != [0; 4];
                self.note(
                    acts,
                    format!("{key}: credit starvation is not modelled; ignored"),
                );
            }
            "cc_sw_cong_setting_credit_starvation_threshold" => {
                let acts = bounded(key, v, 15)? != 0;
                self.note(
                    acts,
                    format!("{key} {v}: credit starvation is not modelled; ignored"),
                );
            }
            "cc_sw_cong_setting_credit_starvation_return_delay" => {
                let acts = v.split(':').any(|p| number(p).is_none_or(|n| n != 0));
                self.note(
                    acts,
                    format!("{key} {v}: credit starvation is not modelled; ignored"),
                );
            }
            // Management only: no effect on what the fabric does.
            "cc_key" | "cc_max_outstanding_mads" => {}
            k if k.starts_with("cc_") => {
                return Err(format!("{k}: not a congestion-control key opensm knows"))
            }
            _ => {}
        }
        Ok(())
    }

    /// Reports `what` as not applied when the key's value `acts` (would change what the hardware does).
    fn note(&mut self, acts: bool, what: String) {
        if acts {
            self.unmodelled.push(what);
        }
    }

    /// Reads an `opensm.conf`'s text; `Err((line, message))` with the 1-based line.
    pub fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut cc = OpensmCc::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            cc.set(key, value).map_err(|m| (n + 1, m))?;
        }
        Ok(cc)
    }

    /// Whether `port` (an IB port number) has its Victim_Mask bit set.
    pub fn victim(&self, port: u8) -> bool {
        self.victim_mask
            .is_some_and(|m| m[usize::from(port / 64)] >> (port % 64) & 1 != 0)
    }
}

/// The scenario's `[switch_cc]` and `[hca_cc]` with what opensm would configure: with `congestion_control`
/// `TRUE`, every switch gets the SwitchCongestionSetting of the file and every HCA the CACongestionSetting
/// of the SLs its flows use and the CongestionControlTable, a value the file does not give being 0 as opensm
/// sends it (a missing Threshold turns marking off; a missing CCTI_Timer or CCT, which would leave CCTI
/// never decreasing or every entry empty, is refused as a probable mistake); otherwise CC is off (Threshold 0,
/// no `[hca_cc]`). The detection choices opensm has no keys for (`fill_comparison`, `threshold_map`,
/// `mark_point`, `mark_mode`, `root_min_credits`) stay as the scenario gives them. `sls` are the SLs the
/// flows use; the model applies one `[hca_cc]` to every flow, so their entries must agree. Warnings are
/// appended to `warnings`.
pub fn apply(
    osm: &OpensmCc,
    mut sw: super::SwitchCc,
    hca: Option<super::HcaCc>,
    sls: &[u8],
    warnings: &mut Vec<String>,
) -> Result<(super::SwitchCc, Option<super::HcaCc>), String> {
    warnings.extend(osm.unmodelled.iter().map(|w| format!("opensm: {w}")));
    if osm.congestion_control != Some(true) {
        sw.threshold = 0;
        sw.victim_ports_all = [0; 4];
        return Ok((sw, None));
    }
    if osm.threshold.is_none() {
        warnings.push(
            "opensm: cc_sw_cong_setting_threshold not given: opensm sends 0, so no switch marks"
                .into(),
        );
    }
    sw.threshold = osm.threshold.unwrap_or(0);
    sw.marking_rate = osm.marking_rate.unwrap_or(0);
    sw.packet_size = osm.packet_size.unwrap_or(0);
    sw.victim_mask = false;
    sw.victim_ports_all = osm.victim_mask.unwrap_or([0; 4]);
    let mut h = hca.unwrap_or_default();
    if h.algorithm != super::CcAlgorithm::Ib {
        return Err("[cc] opensm_conf configures IB CC; [hca_cc] algorithm must be \"ib\"".into());
    }
    let first = usize::from(*sls.first().unwrap_or(&0));
    for &sl in sls {
        if osm.sl[usize::from(sl)] != osm.sl[first] {
            return Err(format!(
                "the CACongestionSetting entries of SL {first} and SL {sl}, both used by flows, differ; the model applies one setting to every flow"
            ));
        }
    }
    let e = osm.sl[first];
    h.ccti_timer = e.ccti_timer.filter(|&t| t != 0).ok_or_else(|| {
        format!("cc_ca_cong_setting_ccti_timer of SL {first}: not given or 0 (opensm would send 0, and CCTI would never decrease)")
    })?;
    h.ccti_increase = e.ccti_increase.unwrap_or(0);
    h.ccti_min = e.ccti_min.unwrap_or(0);
    let t = osm
        .cct
        .as_ref()
        .ok_or("cc_cct: not given (opensm would set CCTI_Limit 0: no rate reduction)")?;
    h.cct = Some(super::CctTable::new(t).map_err(|m| format!("cc_cct: {m}"))?);
    h.ccti_limit = (t.len() - 1) as u16;
    Ok((sw, Some(h)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_strtoul_base_0() {
        assert_eq!(number("15"), Some(15));
        assert_eq!(number("0xf"), Some(15));
        assert_eq!(number("0XF"), Some(15));
        assert_eq!(number("017"), Some(15));
        assert_eq!(number("0"), Some(0));
        assert_eq!(number("1a"), None);
        assert_eq!(number(""), None);
    }

    #[test]
    fn a_file_with_the_hardware_settings() {
        let text = "# opensm.conf\nsm_priority 15\ncongestion_control TRUE\ncc_sw_cong_setting_threshold 0x0f\n\
                    cc_sw_cong_setting_marking_rate 0x0001\ncc_sw_cong_setting_packet_size 8\n\
                    cc_sw_cong_setting_victim_mask 0x000000000000000000000000000000000000000000000000000000000000000e\n\
                    cc_ca_cong_setting_ccti_timer 0 146\ncc_ca_cong_setting_ccti_increase 0 1\n\
                    cc_ca_cong_setting_ccti_min 0 0\ncc_cct 0:0,3:1,3:2\ncc_sw_cong_setting_control_map 0x1f\n";
        let cc = OpensmCc::parse(text).unwrap();
        assert_eq!(cc.congestion_control, Some(true));
        assert_eq!(
            (cc.threshold, cc.marking_rate, cc.packet_size),
            (Some(15), Some(1), Some(8))
        );
        assert!(!cc.victim(0) && cc.victim(1) && cc.victim(3) && !cc.victim(4) && !cc.victim(255));
        assert_eq!(cc.sl[0].ccti_timer, Some(146));
        assert_eq!(cc.sl[0].ccti_increase, Some(1));
        assert_eq!(cc.sl[1], SlEntry::default());
        assert_eq!(cc.cct, Some(vec![(0, 0), (3, 1), (3, 2)]));
        assert!(
            cc.unmodelled.is_empty(),
            "inert values: {:?}",
            cc.unmodelled
        );
        let active = OpensmCc::parse(
            "cc_sw_cong_setting_control_map 0x7\ncc_ca_cong_setting_trigger_threshold 0 2\n\
             cc_sw_cong_setting_credit_starvation_return_delay 1:0\ncc_ca_cong_setting_port_control 1\n",
        )
        .unwrap();
        assert_eq!(active.unmodelled.len(), 4, "{:?}", active.unmodelled);
        // The top port of a 256-bit mask.
        let m = OpensmCc::parse(&format!(
            "cc_sw_cong_setting_victim_mask 8{}\n",
            "0".repeat(63)
        ))
        .unwrap();
        assert!(m.victim(255) && !m.victim(254));
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        for (text, line, want) in [
            (
                "\ncc_sw_cong_setting_threshold 16\n",
                2,
                "cc_sw_cong_setting_threshold: 16 is not in 0..=15",
            ),
            (
                "congestion_control yes\n",
                1,
                "congestion_control: \"yes\" is not TRUE or FALSE",
            ),
            (
                "cc_ca_cong_setting_ccti_timer 150\n",
                1,
                "is not `SL value`",
            ),
            ("cc_ca_cong_setting_ccti_timer 16 150\n", 1, "0..=15"),
            (
                "cc_cct 0:0,4:1\n",
                1,
                "cc_cct entry 1 shift: 4 is not in 0..=3",
            ),
            ("cc_cct 0:0,1\n", 1, "entry 1 \"1\" is not shift:multiplier"),
            (
                "cc_sw_cong_setting_victim_mask 0xg\n",
                1,
                "not a 256-bit mask",
            ),
            (
                "cc_sw_cong_setting_marking_rate 0x10000\n",
                1,
                "65536 is not in 0..=65535",
            ),
            (
                "cc_threshold 3\n",
                1,
                "cc_threshold: not a congestion-control key",
            ),
        ] {
            let (l, m) = OpensmCc::parse(text).unwrap_err();
            assert_eq!(l, line, "{text:?}");
            assert!(m.contains(want), "{text:?}: {m}");
        }
        let long: Vec<String> = (0..129).map(|i| format!("0:{i}")).collect();
        let (_, m) = OpensmCc::parse(&format!("cc_cct {}\n", long.join(","))).unwrap_err();
        assert!(m.contains("129 entries"), "{m}");
    }
}
