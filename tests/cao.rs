//! Validation target C1 (Cao et al., seed 004): four senders to one receiver over two 4x SDR switches.
//!
//! `scenarios/cao-cc-off.toml` and `cao-cc-on.toml` run in full (8 ms of simulated time each, about a second
//! in a debug build). Flows start 2 ms apart: H1 alone, then H3, then H2, then H5, all to H4. Checks:
//! - CC off: with all four active, near senders H3 and H5 (inputs of S2) each get about 1/3 of H4's link and
//!   the far senders H1 and H2 (sharing the S1-S2 input) share the last 1/3: near twice far.
//! - CC on: the four get fair shares; right after congestion sets in (H3 joining H1), the flow holding more
//!   bandwidth (H1) receives more CNPs than the newcomer within about 330 us; FECN marks (one CNP each) are
//!   spread evenly over the four flows once all are active.

use std::path::Path;

use ibcycle::run::{run, RunResult};
use ibcycle::scenario::{load, Scenario};

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    load(&path).expect("shipped scenario loads")
}

/// Payload rate of a 4x SDR link: 8 Gbit/s data, 2048-byte payload in a 2074-byte packet.
const LINK: f64 = 8.0 * 2048.0 / 2074.0;

/// Flow order in the scenario files.
const H1: usize = 0;
const H3: usize = 1;
const H2: usize = 2;
const H5: usize = 3;

/// Mean of flow `f`'s throughput samples whose interval ends in `(from, to]` microseconds.
fn mean(r: &RunResult, f: usize, from: u64, to: u64) -> f64 {
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
fn cnps(r: &RunResult, f: usize, from: u64, to: u64) -> u64 {
    r.cnp_samples
        .iter()
        .filter(|(t, _)| *t > from && *t <= to)
        .map(|(_, n)| n[f])
        .sum()
}

fn jain(v: &[f64]) -> f64 {
    let s: f64 = v.iter().sum();
    s * s / (v.len() as f64 * v.iter().map(|x| x * x).sum::<f64>())
}

#[test]
fn cc_off_near_senders_get_twice_the_far_ones() {
    let r = run(&scenario("cao-cc-off"), false).expect("fabric builds");
    // Each phase is steady within tens of microseconds; the windows skip the first 500 us after a start.
    let alone = mean(&r, H1, 500, 2000);
    let (a1, a3) = (mean(&r, H1, 2500, 4000), mean(&r, H3, 2500, 4000));
    let last: Vec<f64> = [H1, H3, H2, H5]
        .iter()
        .map(|&f| mean(&r, f, 6500, 8000))
        .collect();
    eprintln!("H1 alone {alone:.3}; H1+H3 {a1:.3} {a3:.3}; all four (H1 H3 H2 H5) {last:.3?}");
    // Alone, H1 runs at its link's payload rate (2%: flow-control packets share the wire, and 50 us samples
    // count whole packets).
    assert!((alone - LINK).abs() < 0.02 * LINK, "{alone}");
    // H1 and H3 split H4's link in two (S2's round robin between its two inputs; 5%).
    for v in [a1, a3] {
        assert!((v - LINK / 2.0).abs() < 0.05 * LINK / 2.0, "{a1} {a3}");
    }
    // All four: H3 and H5 each 1/3 of the link, H1 and H2 1/6 each (the S1-S2 input's third, split at S1).
    // The model's round robin makes it exact up to sampling; 5% covers the packet granularity of a 50 us
    // sample (one 2 KiB packet is 0.33 Gbit/s of it) averaged over 30 samples.
    let third = LINK / 3.0;
    let (h1, h3, h2, h5) = (last[0], last[1], last[2], last[3]);
    for (name, v, want) in [
        ("H3", h3, third),
        ("H5", h5, third),
        ("H1", h1, third / 2.0),
        ("H2", h2, third / 2.0),
    ] {
        assert!(
            (v - want).abs() < 0.05 * want,
            "{name} {v:.3}, want {want:.3}"
        );
    }
    let near_over_far = (h3 + h5) / (h1 + h2);
    assert!((near_over_far - 2.0).abs() < 0.1, "{near_over_far}");
    // No CC: no marks, no CNPs.
    assert!(r
        .summary
        .flows
        .iter()
        .all(|f| f.fecn_marked_rx == 0 && f.becn_rx == 0));
    assert!(r.summary.invariants.broken().is_none());
}

#[test]
fn cc_on_shares_fairly_and_the_larger_flow_gets_more_cnps_at_onset() {
    let r = run(&scenario("cao-cc-on"), false).expect("fabric builds");
    let off = run(&scenario("cao-cc-off"), false).expect("fabric builds");
    // H1 alone is not marked: a lone flow at line rate never queues more than one packet, under Threshold
    // 15's fill threshold (1/16 of the 1024-block buffer = 64 blocks; a packet is 33).
    let alone = mean(&r, H1, 500, 2000);
    assert!((alone - LINK).abs() < 0.02 * LINK, "{alone}");
    assert_eq!(cnps(&r, H1, 0, 2000), 0);

    // All four active, the last 1 ms (CCTIs have settled from H5's start; CCTI_Timer 150 us gives several
    // recovery steps per window).
    let order = [H1, H3, H2, H5];
    let on: Vec<f64> = order.iter().map(|&f| mean(&r, f, 7000, 8000)).collect();
    let off_last: Vec<f64> = order.iter().map(|&f| mean(&off, f, 7000, 8000)).collect();
    eprintln!("all four (H1 H3 H2 H5): CC on {on:.3?}, off {off_last:.3?}");
    // Fair shares: every flow within 25% of the four's mean (the shares oscillate with CCTI steps of 1/8
    // of the line rate: one step is 12% of a quarter share), Jain's index above 0.97, and near senders no
    // longer get twice the far ones (their ratio within 0.75..1.33 against 2.0 with CC off).
    let m = on.iter().sum::<f64>() / 4.0;
    for (v, name) in on.iter().zip(["H1", "H3", "H2", "H5"]) {
        assert!((v - m).abs() < 0.25 * m, "{name} {v:.3} vs mean {m:.3}");
    }
    assert!(jain(&on) > 0.97, "{on:?}");
    assert!(jain(&on) > jain(&off_last) + 0.05);
    let near_over_far = (on[1] + on[3]) / (on[0] + on[2]);
    assert!((0.75..1.33).contains(&near_over_far), "{near_over_far}");
    // The throughput oscillates: the samples of one flow in the window are not all the same.
    let h1: Vec<f64> = r
        .samples
        .iter()
        .filter(|(t, _)| (6000..8000).contains(t))
        .map(|(_, g)| g[H1])
        .collect();
    assert!(h1.iter().any(|&v| v != h1[0]), "{h1:?}");

    // Onset: H3 joins at 2000 us while H1 holds the whole link. In the 350 us after (the paper's "about
    // 330 us", rounded up to whole 50 us samples) H1 receives more CNPs than H3 (paper: 25 vs 10). The
    // model's ratio depends on the switch buffer and the CCT, which the paper does not give, so the check
    // is the sign with a margin of 5 CNPs (several sampling intervals' worth), not the paper's numbers.
    let (c1, c3) = (cnps(&r, H1, 2000, 2350), cnps(&r, H3, 2000, 2350));
    eprintln!("onset CNPs in 350 us: H1 {c1}, H3 {c3}");
    assert!(c1 >= c3 + 5, "H1 {c1} H3 {c3}");
    assert!(c3 > 0);
    // FECN marks spread evenly once all four are active: every CNP answers one mark; over the 2 ms of the
    // last phase each flow's count is within a factor of 2 of every other's and Jain's index of the counts
    // is above 0.9 (the newcomer H5 starts at line rate and collects somewhat more at first).
    let marks: Vec<f64> = order
        .iter()
        .map(|&f| cnps(&r, f, 6000, 8000) as f64)
        .collect();
    eprintln!("marks in the last phase (H1 H3 H2 H5): {marks:?}");
    let (lo, hi) = marks
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(lo > 0.0 && hi < 2.0 * lo, "{marks:?}");
    assert!(jain(&marks) > 0.9, "{marks:?}");
    // Every mark came back as one CNP, and the per-interval CNP counts add up to the summary's.
    for (i, f) in r.summary.flows.iter().enumerate() {
        assert!(f.fecn_marked_rx > 0, "{f:?}");
        assert_eq!(f.cnp_sent, f.fecn_marked_rx, "{f:?}");
        assert_eq!(f.becn_rx, f.cnp_sent, "{f:?}");
        assert_eq!(cnps(&r, i, 0, u64::MAX), f.becn_rx, "{f:?}");
    }
    assert!(r.summary.invariants.broken().is_none());
}
