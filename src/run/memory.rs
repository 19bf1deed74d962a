//! The memory a run will need, estimated from the scenario before the fabric is built, so that a fabric or
//! a run that would not fit is refused with the estimate and the limit (`ibcycle run --max-memory`) instead
//! of aborting on an allocation or pushing the machine into swap.
//!
//! The per-block figures are fitted to measured peaks of `ibcycle run` (release build, one data VL): chains
//! of 400 switches with 2 and with 62 hosts each (62 KB and 1,023 KB per switch and its hosts), of 100
//! switches with 30 hosts (553 KB), of 24,575 switches with one host (3.4 GB: every switch holds a route to
//! every HCA), and a 64-leaf, 32-spine fat tree of 64-port switches with 2,048 HCAs (82 MB). They give about
//! 8 KB a switch, 13 KB a port, 4 KB an HCA and 4 bytes a route; per-VL state is most of a port's, so the
//! port and HCA figures are counted per VL. Wires preallocate at most `rtl_model::link::serial::WIRE_PREALLOC_ITEMS` items and
//! grow only with what is in flight (bounded by credits), so a long link costs no more than a short one.
//! What a run collects grows with its length: the samples of `throughput.csv` and `cnp.csv` (per interval
//! and flow) and every completed message's latency.

use crate::fabric::WIRE_ITEM_BYTES;
use crate::scenario::{limits, Scenario};

/// Bytes of a switch, besides its ports and routes.
const SWITCH_BYTES: u64 = 8 << 10;
/// Bytes of a switch port per data VL.
const PORT_VL_BYTES: u64 = 13 << 10;
/// Bytes of an HCA per data VL.
const HCA_VL_BYTES: u64 = 4 << 10;
/// Bytes of one switch's route to one HCA (the routing tables and the switch's forwarding table).
const ROUTE_BYTES: u64 = 4;
/// Bytes of a flow at its source and destination (counters, send queue of a saturating flow).
const FLOW_BYTES: u64 = 2 << 10;
/// The process before any fabric: code, allocator, the plot's fonts and image.
const BASE_BYTES: u64 = 32 << 20;
/// Bytes per flow and sampling interval: the throughput and CNP samples, and their CSV rows.
const SAMPLE_BYTES: u64 = 16 + 64;
/// Bytes per completed message: its latency.
const MESSAGE_BYTES: u64 = 8;

/// An estimate and what it is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// Total bytes.
    pub bytes: u64,
    /// `(what, bytes)`, largest first.
    pub parts: Vec<(&'static str, u64)>,
}

/// Estimates the peak memory of running `sc` (see the module documentation). Saturating: a result of
/// `u64::MAX` means "more than any machine".
pub fn estimate(sc: &Scenario) -> Estimate {
    let topo = &sc.topology;
    let vls = u64::from(sc.settings.data_vls.max(1));
    let clock = sc.settings.clock_mhz;
    let switches = topo.switches.iter().fold(0u64, |a, s| {
        a.saturating_add(SWITCH_BYTES + u64::from(s.ports) * vls * PORT_VL_BYTES)
    });
    let hcas = (topo.hcas.len() as u64).saturating_mul(vls * HCA_VL_BYTES);
    let routes = (topo.switches.len() as u64)
        .saturating_mul(topo.hcas.len() as u64)
        .saturating_mul(ROUTE_BYTES);
    let per_wire = |ns: u64| {
        let cycles = limits::ns_to_cycles(ns, clock).unwrap_or(u64::MAX).max(1);
        cycles
            .saturating_mul(2)
            .saturating_add(4)
            .min(rtl_model::link::serial::WIRE_PREALLOC_ITEMS as u64)
            .saturating_mul(WIRE_ITEM_BYTES as u64)
    };
    let wires = topo
        .links
        .iter()
        .fold(0u64, |a, l| a.saturating_add(2 * per_wire(l.latency_ns)));
    let flows = sc.flows.len() as u64;
    let intervals = sc
        .duration_us
        .div_ceil(sc.settings.sample_interval_us.max(1));
    let samples = intervals.saturating_mul(flows).saturating_mul(SAMPLE_BYTES);
    // A flow completes at most what its source's link carries in its active time, in whole messages.
    let messages = sc.flows.iter().fold(0u64, |a, f| {
        let end = f.stop_us.unwrap_or(sc.duration_us).min(sc.duration_us);
        let active = end.saturating_sub(f.start_us);
        let rate = topo.links[topo.hca_link[f.src]].rate_mbps;
        let bytes = u128::from(rate) * u128::from(active) / 8;
        let n = bytes / u128::from(f.message_bytes.max(1)) + 1;
        a.saturating_add(u64::try_from(n).unwrap_or(u64::MAX))
    });
    let mut parts = vec![
        ("switches", switches),
        ("HCAs", hcas),
        ("routes", routes),
        ("wires", wires),
        ("flows", flows.saturating_mul(FLOW_BYTES)),
        ("samples", samples),
        ("message latencies", messages.saturating_mul(MESSAGE_BYTES)),
        ("process", BASE_BYTES),
    ];
    let bytes = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    Estimate { bytes, parts }
}

/// The default `--max-memory`: half of the machine's memory (`MemTotal` in /proc/meminfo), or 8 GiB where
/// that cannot be read.
pub fn default_limit() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .map_or(8 << 30, |kb| kb.saturating_mul(1024) / 2)
}

/// A size as `--max-memory` takes it: bytes, or a number with `K`, `M`, `G` or `T` (powers of 1024;
/// `KiB`, `MB` and the like read the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 4G, 512M, 1000000)"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B') {
        "" => 0,
        "K" | "KI" => 10,
        "M" | "MI" => 20,
        "G" | "GI" => 30,
        "T" | "TI" => 40,
        _ => return Err(format!("{s:?}: unknown unit (K, M, G or T)")),
    };
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("{s:?} is not a size above 0 that fits in 64 bits"))
}

/// Shows `bytes` in MiB or GiB.
pub fn shown(bytes: u64) -> String {
    if bytes == u64::MAX {
        "more than 16 EiB".into()
    } else if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

/// Refuses `sc` when its estimate exceeds `limit` bytes, with the estimate, its largest parts and the limit.
pub fn check(sc: &Scenario, limit: u64) -> Result<Estimate, String> {
    let e = estimate(sc);
    if e.bytes > limit {
        let parts: Vec<String> = e
            .parts
            .iter()
            .take(3)
            .map(|(w, b)| format!("{w} {}", shown(*b)))
            .collect();
        return Err(format!(
            "the run would need about {} ({}), more than --max-memory {}; shorten the run, raise settings.sample_interval_us, use fewer or larger messages or a smaller fabric, or raise --max-memory",
            shown(e.bytes),
            parts.join(", "),
            shown(limit)
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn chain(switches: u32, extra: &str) -> Scenario {
        let text = format!(
            "duration_us = 10\n[chain]\nswitches = {switches}\nhosts_per_switch = 62\nhost_rate = \"4xQDR\"\ntrunk_rate = \"4xQDR\"\n{extra}"
        );
        crate::scenario::parse(Path::new("m.toml"), &text).unwrap()
    }

    #[test]
    fn estimates_grow_with_the_fabric_not_with_latency() {
        let small = estimate(&chain(10, "")).bytes;
        let big = estimate(&chain(400, "")).bytes;
        // The measured peak of 400 such switches was 427 MB: the estimate is above it, and not far.
        assert!(big > 427 << 20 && big < 800 << 20, "{}", shown(big));
        assert!(small < big / 10);
        // A wire's preallocation stops growing with latency: 1 ms and 10 ms cost the same.
        let ms = estimate(&chain(10, "latency_ns = 1000000\n")).bytes;
        let ten_ms = estimate(&chain(10, "latency_ns = 10000000\n")).bytes;
        assert_eq!(ms, ten_ms, "{} {}", shown(ms), shown(ten_ms));
        assert!(ms > small);
    }

    #[test]
    fn samples_and_messages_count() {
        let flow = "[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\nmessage_bytes = 256\n";
        let text = format!(
            "duration_us = 100000000\n[settings]\nsample_interval_us = 1\n[chain]\nswitches = 1\nhosts_per_switch = 2\nhost_rate = \"4xQDR\"\ntrunk_rate = \"4xQDR\"\n{flow}"
        );
        let sc = crate::scenario::parse(Path::new("m.toml"), &text).unwrap();
        let e = check(&sc, 8 << 30).unwrap_err();
        assert!(
            e.contains("message latencies") && e.contains("more than --max-memory 8.0 GiB"),
            "{e}"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert!(default_limit() > 0);
    }
}
