//! Validation target C1 (Cao et al., seed 004): four senders to one receiver over two 4x SDR switches.
//!
//! `scenarios/cao-cc-off.toml` (flows 2 ms apart: CC off settles within microseconds) and `cao-cc-on.toml`
//! (the paper's CC settings, flows 40 ms apart) run in full. H1 alone, then H3, then H2, then H5, all to H4.
//! Checks:
//! - CC off: with all four active, near senders H3 and H5 (inputs of S2) each get about 1/3 of H4's link and
//!   the far senders H1 and H2 (sharing the S1-S2 input) share the last 1/3: near twice far.
//! - CC on, in the last third of every phase: the active flows get fair shares (the paper: "the network
//!   treats every flow fairly", figure 5 and section 4.1) and H4's link stays well used; H1 alone runs
//!   unmarked; FECN marks (one CNP each) are spread evenly over the four flows (figure 6).
//! - Not reproduced, recorded (an ignored test states the paper's claim): right after congestion sets in,
//!   the flow holding more bandwidth receives more CNPs (H1 25 against H2 10 within about 330 us, section
//!   4.2). See docs/cc-fidelity.md.

use ibcycle::run::run;

mod common;
use common::{cnps, jain, last_third, mean, min_over_max, scenario};

/// Payload rate of a 4x SDR link: 8 Gbit/s data, 2048-byte payload in a 2074-byte packet.
const LINK: f64 = 8.0 * 2048.0 / 2074.0;

/// Flow order in the scenario files.
const H1: usize = 0;
const H3: usize = 1;
const H2: usize = 2;
const H5: usize = 3;

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

/// Phases of `cao-cc-on.toml`: H1 from 0, H3, H2, H5 joining 40 ms apart.
const PHASE_US: u64 = 40_000;

#[test]
fn cc_on_shares_fairly_at_steady_state_and_spreads_the_marks() {
    let r = run(&scenario("cao-cc-on"), false).expect("fabric builds");
    assert!(
        r.summary.invariants.broken().is_none(),
        "{:?}",
        r.summary.invariants
    );
    // H1 alone is not marked and runs at its link's rate (2%: flow-control packets share the wire).
    let (a, b) = last_third(0, PHASE_US);
    let alone = mean(&r, H1, a, b);
    assert!((alone - LINK).abs() < 0.02 * LINK, "{alone}");
    assert_eq!(cnps(&r, H1, 0, PHASE_US), 0);
    // Every phase with contributors: fair (Jain at least 0.9 and none below half of another: "fair" with
    // the regular oscillation of figure 5, over a third of a phase, 13 ms, about ninety CCTI steps) and H4's
    // link at least 70% used (the validation target's bound; figure 5 shows the four summing to about the link).
    let order = [H1, H3, H2, H5];
    let mut last = Vec::new();
    for phase in 1..4u64 {
        let (a, b) = last_third(phase, PHASE_US);
        let v: Vec<f64> = order[..=phase as usize]
            .iter()
            .map(|&f| mean(&r, f, a, b))
            .collect();
        let (j, m, u) = (jain(&v), min_over_max(&v), v.iter().sum::<f64>() / LINK);
        eprintln!("phase {phase}: (H1 H3 H2 H5) {v:.3?} jain {j:.3} min/max {m:.2} use {u:.2}");
        assert!(j >= 0.9, "phase {phase}: Jain {j:.3} of {v:?}");
        assert!(m >= 0.5, "phase {phase}: min/max {m:.2} of {v:?}");
        assert!(u >= 0.7, "phase {phase}: H4's link {u:.2} used");
        last = v;
    }
    // Near senders no longer get twice the far ones (CC off: 2.0, tested above): within 0.75..1.33.
    let near_over_far = (last[1] + last[3]) / (last[0] + last[2]);
    assert!((0.75..1.33).contains(&near_over_far), "{near_over_far}");
    let off = run(&scenario("cao-cc-off"), false).expect("fabric builds");
    let off_last: Vec<f64> = order.iter().map(|&f| mean(&off, f, 7000, 8000)).collect();
    assert!(
        jain(&last) > jain(&off_last) + 0.05,
        "{last:?} vs {off_last:?}"
    );
    // The throughput oscillates: the 100 us samples of one flow in the last third are not all the same.
    let (a, b) = last_third(3, PHASE_US);
    let h1: Vec<f64> = r
        .samples
        .iter()
        .filter(|(t, _)| *t > a && *t <= b)
        .map(|(_, g)| g[H1])
        .collect();
    assert!(h1.iter().any(|&v| v != h1[0]), "{h1:?}");
    // FECN marks spread evenly once all four are active (figure 6): every CNP answers one mark; over the
    // last third each flow's count is within a factor of 2 of every other's and their Jain index is above
    // 0.9.
    let marks: Vec<f64> = order.iter().map(|&f| cnps(&r, f, a, b) as f64).collect();
    eprintln!("marks in the last third (H1 H3 H2 H5): {marks:?}");
    assert!(min_over_max(&marks) > 0.5, "{marks:?}");
    assert!(jain(&marks) > 0.9, "{marks:?}");
    for (i, f) in r.summary.flows.iter().enumerate() {
        assert!(f.fecn_marked_rx > 0, "{f:?}");
        assert_eq!(f.cnp_sent, f.fecn_marked_rx, "{f:?}");
        assert_eq!(f.becn_rx, f.cnp_sent, "{f:?}");
        assert_eq!(cnps(&r, i, 0, u64::MAX), f.becn_rx, "{f:?}");
    }
}

/// The paper's onset observation (section 4.2): H1 sends alone, H2 (also on S1) joins; "within about 330 us,
/// H1 received 25 CNPs and H2 received 10". Not reproduced with the default (enqueue) marking: from H2's
/// first packet S1's round robin splits the S1-S2 link evenly, so neither flow holds more bandwidth while the
/// first CNPs come back, and they split about evenly, with counter and with LFSR marking (docs/cc-fidelity.md
/// gives the counts). Ignored so that CI stays green; run it with `--ignored` to see the gap.
#[test]
#[ignore = "not reproduced by the model: see the test's documentation and docs/cc-fidelity.md"]
fn onset_the_flow_holding_more_bandwidth_gets_more_cnps() {
    for mode in ["counter", "lfsr"] {
        let mut sc = scenario("cao-cc-on");
        sc.flows.retain(|f| f.id == "H1" || f.id == "H2");
        sc.flows[1].start_us = PHASE_US;
        sc.duration_us = PHASE_US + 2000;
        sc.settings.sample_interval_us = 10;
        sc.switch_cc.mark_mode = match mode {
            "counter" => switch_asic::config::MarkMode::Counter,
            _ => switch_asic::config::MarkMode::Lfsr,
        };
        let r = run(&sc, false).expect("fabric builds");
        let (c1, c2) = (
            cnps(&r, 0, PHASE_US, PHASE_US + 330),
            cnps(&r, 1, PHASE_US, PHASE_US + 330),
        );
        eprintln!("{mode}: onset CNPs in 330 us: H1 {c1}, H2 {c2} (paper: 25, 10)");
        assert!(c1 >= c2 + 5, "{mode}: H1 {c1}, H2 {c2}");
    }
}
