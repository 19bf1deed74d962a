//! Helpers shared by the integration tests: window means of the throughput samples, CNP counts, Jain's index,
//! the phases of a scenario whose flows join one by one, and a hand-written ring fabric.

#![allow(dead_code)]

use std::path::Path;

use ibcycle::run::RunResult;
use ibcycle::scenario::{load, Scenario};

/// The shipped IB fabric scenarios (not the queueing ones, not RoCEv2), with their flows started 0 to 8 us
/// apart (flow `i` at `2 * (i mod 5)` us) so that a few tens of thousands of recorded cycles see every flow
/// under way: what the switch-trace replays and the RTL checker run on.
pub fn shipped_ib_scenarios_staggered() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains("[tandem]") || text.contains("[ge_queue]") {
            continue;
        }
        let mut sc = load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if sc.roce.is_some() {
            continue;
        }
        for (i, fl) in sc.flows.iter_mut().enumerate() {
            fl.start_us = 2 * (i as u64 % 5);
        }
        out.push(sc);
    }
    assert!(out.len() >= 10, "{} IB scenarios", out.len());
    out
}

/// A shipped scenario file by name (without `.toml`).
pub fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    load(&path).unwrap_or_else(|e| panic!("shipped scenario {name} loads: {e}"))
}

/// Mean of flow `f`'s throughput samples whose interval ends in `(from, to]` microseconds.
pub fn mean(r: &RunResult, f: usize, from: u64, to: u64) -> f64 {
    let v: Vec<f64> = r
        .samples
        .iter()
        .filter(|(t, _)| *t > from && *t <= to)
        .map(|(_, g)| g[f])
        .collect();
    assert!(!v.is_empty(), "no samples in ({from}, {to}]");
    v.iter().sum::<f64>() / v.len() as f64
}

/// CNPs flow `f`'s source received in the sampling intervals ending in `(from, to]` microseconds.
pub fn cnps(r: &RunResult, f: usize, from: u64, to: u64) -> u64 {
    r.cnp_samples
        .iter()
        .filter(|(t, _)| *t > from && *t <= to)
        .map(|(_, n)| n[f])
        .sum()
}

/// Jain's fairness index of `v`: 1 when all are equal, 1/n when one takes everything.
pub fn jain(v: &[f64]) -> f64 {
    let s: f64 = v.iter().sum();
    s * s / (v.len() as f64 * v.iter().map(|x| x * x).sum::<f64>())
}

/// The smallest of `v` over the largest.
pub fn min_over_max(v: &[f64]) -> f64 {
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    lo / hi
}

/// The last third of phase `i` of a scenario whose phases last `len_us` each: `(from, to)` in microseconds.
/// The validation targets read each phase there, after several CCTI recovery times.
pub fn last_third(i: u64, len_us: u64) -> (u64, u64) {
    let end = (i + 1) * len_us;
    (end - len_us / 3, end)
}

/// Payload throughput of a saturating IB flow of 2048-byte packets on a link of `data_gbps`: LRH 8, BTH 12,
/// ICRC 4 and VCRC 2 bytes ride with every 2048 payload bytes.
pub fn ib_payload_gbps(data_gbps: f64) -> f64 {
    data_gbps * 2048.0 / 2074.0
}

/// A scenario of five switches in a ring, each with one HCA, written out link by link (every two-hop
/// min-hop route goes one way round, so the channel dependencies close the ring), lasting `duration_us`.
pub fn ring_scenario(duration_us: u32) -> String {
    let mut t = format!("name = \"ring\"\nduration_us = {duration_us}\n");
    for i in 0..5 {
        t += &format!("[[switch]]\nname = \"R{i}\"\nports = 3\n[[hca]]\nname = \"H{i}\"\n");
    }
    for i in 0..5 {
        t += &format!(
            "[[link]]\nends = [\"R{i}:1\", \"R{}:2\"]\nrate = \"4xQDR\"\n[[link]]\nends = [\"H{i}\", \"R{i}:3\"]\nrate = \"4xQDR\"\n",
            (i + 1) % 5
        );
    }
    t
}

/// Runs `sc`, checks it drained with nothing lost, leaked or violated, and returns its summary.
pub fn run_lossless(sc: &Scenario) -> ibcycle::run::Summary {
    let r = ibcycle::run::run(sc, false).unwrap();
    let inv = &r.summary.invariants;
    assert!(inv.drained, "{inv:?}");
    assert_eq!(
        (inv.packets_lost, inv.credits_leaked, inv.violations),
        (0, 0, 0),
        "{inv:?}"
    );
    assert_eq!(inv.packets_injected, inv.packets_delivered);
    r.summary
}
