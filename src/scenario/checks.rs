//! Checks of `[hca_cc]`, `[settings]` and a flow's arrival pattern after parsing: each error names the key,
//! its value and why, at the value's line.

use std::ops::Range;

use super::file::{File, FlowEntry};
use super::{key_span, ports, rate_mbps, FlowPattern, HcaCc, ScenarioError, Settings};

/// Checks `[hca_cc]` values (also after a per-HCA override): the failing key, its value and why.
pub(super) fn check_hca_cc(v: &HcaCc) -> Result<(), (&'static str, String, &'static str)> {
    let bad = |field: &'static str, value: String, why: &'static str| Err((field, value, why));
    if v.ccti_limit > 127 {
        return bad("ccti_limit", v.ccti_limit.to_string(), "is above 127");
    }
    if u16::from(v.ccti_min) > v.ccti_limit {
        return bad("ccti_min", v.ccti_min.to_string(), "is above ccti_limit");
    }
    if v.ccti_timer == 0 {
        return bad("ccti_timer", "0".into(), "must be above 0");
    }
    if v.cct_shift > 3 {
        return bad("cct_shift", v.cct_shift.to_string(), "is above 3");
    }
    if u32::from(v.cct_multiplier_step) * u32::from(v.ccti_limit) > 0x3FFF {
        return bad(
            "cct_multiplier_step",
            v.cct_multiplier_step.to_string(),
            "times ccti_limit exceeds the 14-bit CCT_Multiplier",
        );
    }
    if v.rrcc_period_ns == 0 {
        return bad("rrcc_period_ns", "0".into(), "must be above 0");
    }
    if !(1..=1024).contains(&v.rrcc_d_q10) {
        return bad(
            "rrcc_d_q10",
            v.rrcc_d_q10.to_string(),
            "is not in 1..=1024 (d above 0, at most 1.0)",
        );
    }
    if !(1..=100).contains(&v.rrcc_fecn_pct) {
        return bad(
            "rrcc_fecn_pct",
            v.rrcc_fecn_pct.to_string(),
            "is not in 1..=100",
        );
    }
    if v.rrcc_consecutive == 0 {
        return bad("rrcc_consecutive", "0".into(), "must be above 0");
    }
    if v.rrcc_min_rate_mbps == 0 {
        return bad("rrcc_min_rate_mbps", "0".into(), "must be above 0");
    }
    Ok(())
}

/// The arrival pattern of flow `i` from its `pattern`, `rate` and `scv` keys.
pub(super) fn flow_pattern(
    i: usize,
    f: &FlowEntry,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<FlowPattern, ScenarioError> {
    let Some(p) = &f.pattern else {
        if let Some(r) = &f.rate {
            return Err(at(
                r.span(),
                format!("flow[{i}].rate: needs a pattern (constant, poisson or ge)"),
            ));
        }
        return Ok(FlowPattern::Saturating);
    };
    let rate = || -> Result<u64, ScenarioError> {
        let r = f.rate.as_ref().ok_or_else(|| {
            at(
                p.span(),
                format!("flow[{i}].pattern: {:?} needs a rate", p.get_ref()),
            )
        })?;
        match rate_mbps(r.get_ref()) {
            Some(v) if v > 0 => Ok(v),
            _ => Err(at(
                r.span(),
                format!(
                    "flow[{i}].rate: {:?} is not a rate above 0 (<n>Mbps, <n>Gbps or a link name)",
                    r.get_ref()
                ),
            )),
        }
    };
    let pattern = match p.get_ref().as_str() {
        "saturating" => FlowPattern::Saturating,
        "constant" => FlowPattern::Constant { rate_mbps: rate()? },
        "poisson" => FlowPattern::Poisson { rate_mbps: rate()? },
        "ge" => {
            let rate_mbps = rate()?;
            let s = f
                .scv
                .as_ref()
                .ok_or_else(|| at(p.span(), format!("flow[{i}].pattern: \"ge\" needs scv")))?;
            let v = *s.get_ref();
            if !(1.0..=1.0e6).contains(&v) {
                return Err(at(
                    s.span(),
                    format!("flow[{i}].scv: {v} is not in 1 ..= 1e6 (GE needs C^2 >= 1)"),
                ));
            }
            FlowPattern::Ge {
                rate_mbps,
                scv_milli: (v * 1000.0).round() as u32,
            }
        }
        other => {
            return Err(at(
                p.span(),
                format!("flow[{i}].pattern: {other:?} is not saturating, constant, poisson or ge"),
            ))
        }
    };
    if let (Some(s), false) = (&f.scv, matches!(pattern, FlowPattern::Ge { .. })) {
        return Err(at(
            s.span(),
            format!("flow[{i}].scv: only the \"ge\" pattern takes scv"),
        ));
    }
    if let (Some(r), FlowPattern::Saturating) = (&f.rate, pattern) {
        return Err(at(
            r.span(),
            format!("flow[{i}].rate: a saturating flow takes no rate"),
        ));
    }
    Ok(pattern)
}

pub(super) fn check_settings(
    file: &File,
    text: &str,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<Settings, ScenarioError> {
    let Some(sp) = &file.settings else {
        return Ok(Settings::default());
    };
    let s = sp.get_ref();
    let bad = |field: &str, value: String, why: &str| {
        Err(at(
            key_span(text, sp.span(), field),
            format!("settings.{field}: {value} {why}"),
        ))
    };
    if s.clock_mhz == 0 || s.clock_mhz > 8192 {
        return bad("clock_mhz", s.clock_mhz.to_string(), "is not in 1..=8192");
    }
    if s.sample_interval_us == 0 {
        return bad("sample_interval_us", "0".into(), "must be above 0");
    }
    if !(1..=15).contains(&s.data_vls) {
        return bad("data_vls", s.data_vls.to_string(), "is not in 1..=15");
    }
    if !(66..=2047).contains(&s.switch_vl_buf_blocks) {
        return bad(
            "switch_vl_buf_blocks",
            s.switch_vl_buf_blocks.to_string(),
            "is not in 66..=2047 (one 4096-byte packet .. the 12-bit credit space)",
        );
    }
    if !(66..=2047).contains(&s.hca_vl_buf_blocks) {
        return bad(
            "hca_vl_buf_blocks",
            s.hca_vl_buf_blocks.to_string(),
            "is not in 66..=2047 (one 4096-byte packet .. the 12-bit credit space)",
        );
    }
    if !(1..=64).contains(&s.switch_speedup) {
        return bad(
            "switch_speedup",
            s.switch_speedup.to_string(),
            "is not in 1..=64",
        );
    }
    if s.fc_interval_cycles == 0 {
        return bad("fc_interval_cycles", "0".into(), "must be above 0");
    }
    if s.max_queued_messages == 0 {
        return bad("max_queued_messages", "0".into(), "must be above 0");
    }
    if let Some(t) = &s.sl2vl {
        if let Err(why) = ports::check_sl2vl(t, s.data_vls) {
            return Err(at(
                key_span(text, sp.span(), "sl2vl"),
                format!("settings.sl2vl: {why}"),
            ));
        }
    }
    if let Some(a) = &s.vl_arb {
        if let Err(why) = a.check(s.data_vls) {
            return Err(at(
                key_span(text, sp.span(), "vl_arb"),
                format!("settings.vl_arb.{why}"),
            ));
        }
    }
    Ok(s.clone())
}
