//! Checks of `[hca_cc]`, `[settings]` and a flow's arrival pattern after parsing: each error names the key,
//! its value and why, at the value's line.

use std::ops::Range;

use super::file::{File, FlowEntry};
use super::{
    key_span, limits, ports, rate_mbps, Flow, FlowPattern, HcaCc, RoceSettings, ScenarioError,
    Settings,
};
use crate::topology::{End, Topology};

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
    if let Some(t) = &v.cct {
        if usize::from(v.ccti_limit) >= t.entries().len() {
            return bad(
                "ccti_limit",
                v.ccti_limit.to_string(),
                "is not an index of the cct table",
            );
        }
    } else if u32::from(v.cct_multiplier_step) * u32::from(v.ccti_limit) > 0x3FFF {
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
    clock_mhz: u32,
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
        // At most the fastest link the model carries, and at most one message per cycle on average (a
        // faster rate only makes arrivals the source refuses, one by one).
        let max = limits::max_rate_mbps(clock_mhz).min(
            f.message_bytes
                .get_ref()
                .saturating_mul(8)
                .saturating_mul(u64::from(clock_mhz)),
        );
        match rate_mbps(r.get_ref()) {
            Some(v) if v > max => Err(at(
                r.span(),
                format!(
                    "flow[{i}].rate: {:?} is {v} Mbit/s, not in 1..={max} Mbit/s (64 bytes per cycle, and one {}-byte message per cycle, at settings.clock_mhz = {clock_mhz})",
                    r.get_ref(),
                    f.message_bytes.get_ref()
                ),
            )),
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
    if s.clock_mhz == 0 || s.clock_mhz > limits::MAX_CLOCK_MHZ {
        return bad(
            "clock_mhz",
            s.clock_mhz.to_string(),
            &format!("is not in 1..={}", limits::MAX_CLOCK_MHZ),
        );
    }
    if s.sample_interval_us == 0 {
        return bad("sample_interval_us", "0".into(), "must be above 0");
    }
    if s.sample_interval_us > limits::MAX_DURATION_US {
        return bad(
            "sample_interval_us",
            s.sample_interval_us.to_string(),
            &format!("is not in 1..={}", limits::MAX_DURATION_US),
        );
    }
    if s.drain_limit_us > limits::MAX_DRAIN_LIMIT_US {
        return bad(
            "drain_limit_us",
            s.drain_limit_us.to_string(),
            &format!("is not in 0..={}", limits::MAX_DRAIN_LIMIT_US),
        );
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
    if s.switch_allocator == Some(switch_asic::config::Allocator::Lookahead) && file.roce.is_some()
    {
        return bad(
            "switch_allocator",
            "\"lookahead\"".into(),
            "is built for IB credit ports only (this scenario has [roce])",
        );
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

/// Checks what depends on the links: flow-control packets must leave the links room for data (IB), and the
/// PFC headroom must cover each link's round trip and fit the buffers (RoCEv2). Errors point at the
/// setting's line, or at the link's when the setting is computed from it.
pub(super) fn check_links(
    topo: &Topology,
    flows: &[Flow],
    settings: &Settings,
    roce: Option<&RoceSettings>,
    file: &File,
    text: &str,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let clock = settings.clock_mhz;
    let settings_span = file.settings.as_ref().map_or(0..0, |s| s.span());
    // A generated link's line is its generator's.
    let link_span = |i: usize| {
        file.link
            .get(i)
            .map(|l| l.rate.span())
            .or_else(|| file.fat_tree.as_ref().map(|g| g.span()))
            .or_else(|| file.fat_tree3.as_ref().map(|g| g.span()))
            .or_else(|| file.chain.as_ref().map(|g| g.span()))
            .unwrap_or(0..0)
    };
    let end_name = |e: End| match e {
        End::Switch { switch, port } => format!("{}:{port}", topo.switches[switch].name),
        End::Hca { hca } => topo.hcas[hca].name.clone(),
    };
    let mtu = flows.iter().map(|f| f.mtu).max().unwrap_or(256);
    for (i, l) in topo.links.iter().enumerate() {
        let rate = crate::fabric::link_rate(l.rate_mbps, clock)
            .map_err(|why| at(link_span(i), format!("link[{i}].rate: {why}")))?;
        let lat = limits::ns_to_cycles(l.latency_ns, clock)
            .ok_or_else(|| {
                at(
                    link_span(i),
                    format!("link[{i}].latency_ns: {} does not fit", l.latency_ns),
                )
            })?
            .max(1);
        let name = format!("link[{i}] ({} - {})", end_name(l.a), end_name(l.b));
        if let Some(r) = roce {
            let fb = crate::fabric::roce::frame_bytes(mtu, r.frame_overhead_bytes).div_ceil(64);
            let pfc = crate::fabric::roce::pfc_config(r, rate, lat, fb, clock);
            let roce_span = file.roce.as_ref().map_or(0..0, |s| s.span());
            let need = rtl_model::link::pfc::headroom_blocks(rate, pfc.link_delay, fb);
            if let Some(h) = r.headroom_blocks {
                if u64::from(h) < need {
                    return Err(at(
                        key_span(text, roce_span, "headroom_blocks"),
                        format!(
                            "roce.headroom_blocks: {h} is below the {need} blocks {name} needs (two frames, a pause frame and its round trip in flight): every pause would overflow; at least {need}"
                        ),
                    ));
                }
            }
            for e in [l.a, l.b] {
                let (buf, key) = match e {
                    End::Switch { .. } => (settings.switch_vl_buf_blocks, "switch_vl_buf_blocks"),
                    End::Hca { .. } => (settings.hca_vl_buf_blocks, "hca_vl_buf_blocks"),
                };
                if let Err(c) = pfc.watermarks(buf, rate, fb, "roce") {
                    let (span, what, value) = if c.setting.ends_with("xon_blocks") {
                        (
                            key_span(text, roce_span, "xon_blocks"),
                            "roce.xon_blocks",
                            c.value,
                        )
                    } else if r.headroom_blocks.is_some() {
                        (
                            key_span(text, roce_span, "headroom_blocks"),
                            "roce.headroom_blocks",
                            c.value,
                        )
                    } else {
                        (
                            link_span(i),
                            "the PFC headroom computed for this link's latency and rate",
                            need.to_string(),
                        )
                    };
                    return Err(at(
                        span,
                        format!(
                            "{what}: {value}: {} at {} ({name}; settings.{key} = {buf})",
                            c.reason,
                            end_name(e)
                        ),
                    ));
                }
            }
        } else {
            // Every VL sends a flow-control packet each interval: if they alone fill the interval, no data
            // packet can start.
            let fc_cycles = (rtl_model::link::packet::FC_PACKET_BYTES * u64::from(rate.den))
                .div_ceil(u64::from(rate.num));
            let need = u64::from(settings.data_vls) * fc_cycles;
            if u64::from(settings.fc_interval_cycles) <= need {
                return Err(at(
                    key_span(text, settings_span, "fc_interval_cycles"),
                    format!(
                        "settings.fc_interval_cycles: {} is not above the {need} cycles that {} flow-control packet(s) take on {name} ({fc_cycles} cycles each): no data could be sent; at least {}",
                        settings.fc_interval_cycles,
                        settings.data_vls,
                        need + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The `[hca_cc]` and `[roce]` values that become cycles or bits per second: their ranges keep the
/// conversions inside 64 bits and the model's cycle horizon (docs/scenario-format.md, "Limits and
/// warnings"). Only checked, never changed.
pub(super) fn check_converted_cc(
    file: &File,
    hca_cc: Option<&HcaCc>,
    roce: Option<&RoceSettings>,
    clock_mhz: u32,
    text: &str,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let max_ns = limits::MAX_DURATION_US * 1000;
    let max_rate = limits::max_rate_mbps(clock_mhz);
    let bad = |span: Range<usize>, key: &str, v: u64, lo: u64, hi: u64| {
        Err(at(span, limits::out_of_range(key, v, lo, hi)))
    };
    if let (Some(c), Some(sp)) = (hca_cc, &file.hca_cc) {
        let span = |k: &str| key_span(text, sp.span(), k);
        if c.rrcc_period_ns > max_ns {
            return bad(
                span("rrcc_period_ns"),
                "hca_cc.rrcc_period_ns",
                c.rrcc_period_ns,
                1,
                max_ns,
            );
        }
        for (k, v) in [
            ("rrcc_rate_ai_mbps", c.rrcc_rate_ai_mbps),
            ("rrcc_min_rate_mbps", c.rrcc_min_rate_mbps),
        ] {
            if v > max_rate {
                return bad(span(k), &format!("hca_cc.{k}"), v, 1, max_rate);
            }
        }
    }
    if let (Some(r), Some(sp)) = (roce, &file.roce) {
        let span = |k: &str| key_span(text, sp.span(), k);
        if r.victim_hold_ns > max_ns {
            return bad(
                span("victim_hold_ns"),
                "roce.victim_hold_ns",
                r.victim_hold_ns,
                0,
                max_ns,
            );
        }
        if let Some(v) = r.rcm_recovery_us.filter(|&v| v > limits::MAX_DURATION_US) {
            return bad(
                span("rcm_recovery_us"),
                "roce.rcm_recovery_us",
                v,
                1,
                limits::MAX_DURATION_US,
            );
        }
        if r.cnp_interval_us > limits::MAX_DURATION_US {
            return bad(
                span("cnp_interval_us"),
                "roce.cnp_interval_us",
                r.cnp_interval_us,
                0,
                limits::MAX_DURATION_US,
            );
        }
    }
    Ok(())
}
