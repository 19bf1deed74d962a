//! Validation target G1 (Gran & Reinemo scenario 1), congestion control off: the victim flow.
//!
//! Runs `scenarios/gran-s1-cc-off.toml` for 1200 us (F1 alone from 0, F2 from 400 us, F3 from 800 us) and
//! checks the qualitative outcome of validation-targets.md G1 "CC off": once F3 joins, F1 (H1->H4, which does
//! not use the congested H5 link) is held down to about half of the bottleneck rate, like F2 and F3, by
//! head-of-line blocking in the S1->S2 input buffer at S2. Also integrity (no loss, no credit leak) and
//! determinism (two runs give byte-identical summary.json). Then G1 "CC on" with the hardware's own CC
//! settings (seed 004 table 2) and 100 ms phases: `gran-s1-cc-on.toml` (hosts at their link rate) and
//! `gran-s1-cc-on-hw.toml` (hosts capped by their PCIe slots, as in the testbed), each read in the last third
//! of every phase.
//!
//! Tolerances, from the paper: "the flow F1 is sent through the network independently of the other flows,
//! and all the contributors to congestion each got a fair share of the scarce resources at the root of the
//! congestion tree", "with oscillation" (seed 000 section 6.1, figures 7b and 9). A fair share with
//! oscillation is read as Jain's index of the contributors at least 0.9 and none below half of another over
//! a third of a phase (33 ms: hundreds of CCTI steps, and several of the 10-20 ms swings of the
//! contributors' rates, which a 6.7 ms window sampled as noise); the bottleneck at least 80% used (the hardware's two
//! contributors use 11 of 13 Gbit/s, 85%, the least the paper shows); F1 at least 12 Gbit/s (76% of its
//! link: the paper's own simulation shows F1 dipping while S1 briefly roots congestion with two contributors).

use std::path::PathBuf;

use ibcycle::run::{run, write_outputs, RunResult};

mod common;
use common::{cnps, jain, last_third, mean, min_over_max, scenario};

/// Payload rate of a 4x DDR host link: 16 Gbit/s data, 2048-byte payload in a 2074-byte packet (LRH 8,
/// BTH 12, ICRC 4, VCRC 2) gives 15.80 Gbit/s: the bottleneck (H5's link) and F1's own limit.
const BOTTLENECK: f64 = 16.0 * 2048.0 / 2074.0;

fn tmp(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ibcycle-gran-s1-{}-{tag}", std::process::id()))
}

#[test]
fn f1_is_a_victim_with_cc_off_and_the_run_is_lossless_and_deterministic() {
    let mut sc = scenario("gran-s1-cc-off");
    sc.duration_us = 1200;
    let r = run(&sc, false).expect("fabric builds");
    let bottleneck = BOTTLENECK;
    // Steady state is reached within microseconds of each start (a 512-block buffer fills in about 16 us
    // at 2 bytes per cycle); each window skips the first 30 us after a start. A 10 us sample counts whole
    // packets (1.64 Gbit/s each), so window means of 37 samples are good to about 0.1 Gbit/s.
    let f1_alone = mean(&r, 0, 30, 400);
    let f1_with_f2 = mean(&r, 0, 430, 800);
    let (f1, f2, f3) = (
        mean(&r, 0, 830, 1200),
        mean(&r, 1, 830, 1200),
        mean(&r, 2, 830, 1200),
    );
    eprintln!("F1 alone {f1_alone:.3}, with F2 {f1_with_f2:.3}; after F3: F1 {f1:.3} F2 {f2:.3} F3 {f3:.3}");
    // Alone, and with F2 (the S1->S2 link has room for both, H4 and H5 links are separate), F1 runs near
    // its link's payload rate: within 5% (sampling granularity and flow-control packets on the wire).
    assert!(
        (f1_alone - bottleneck).abs() < 0.05 * bottleneck,
        "{f1_alone}"
    );
    assert!(
        (f1_with_f2 - bottleneck).abs() < 0.05 * bottleneck,
        "{f1_with_f2}"
    );
    // Once F3 joins: F2 and F3 share H5's link, their packets fill the S2 input buffer of the S1->S2 link,
    // and F1's packets wait behind them (one VL, no CC), so F1 falls to about half the bottleneck like F2
    // and F3. The paper shows "about half"; 20% covers the round-robin granularity of three flows sharing
    // one VL and one buffer in the model.
    let half = bottleneck / 2.0;
    for (name, v) in [("F1", f1), ("F2", f2), ("F3", f3)] {
        assert!(
            (v - half).abs() < 0.2 * half,
            "{name} {v:.3} not about {half:.3}"
        );
    }
    assert!(
        f1 < 0.6 * f1_alone,
        "F1 not held down: {f1:.3} vs {f1_alone:.3}"
    );
    // H5's link stays busy: F2 + F3 near the bottleneck (within 10%).
    assert!(
        (f2 + f3 - bottleneck).abs() < 0.1 * bottleneck,
        "{}",
        f2 + f3
    );

    let inv = &r.summary.invariants;
    assert!(inv.drained, "{inv:?}");
    assert_eq!(inv.packets_lost, 0, "{inv:?}");
    assert_eq!(inv.credits_leaked, 0, "{inv:?}");
    assert_eq!(inv.violations, 0, "{inv:?}");
    assert_eq!(inv.packets_injected, inv.packets_delivered);
    assert!(inv.packets_injected > 1500, "{inv:?}");

    // Determinism: a second run writes a byte-identical summary.json.
    let r2 = run(&sc, false).expect("fabric builds");
    let (a, b) = (tmp("a"), tmp("b"));
    write_outputs(&r, &sc, &a).unwrap();
    write_outputs(&r2, &sc, &b).unwrap();
    let ja = std::fs::read(a.join("summary.json")).unwrap();
    let jb = std::fs::read(b.join("summary.json")).unwrap();
    assert_eq!(ja, jb);
    assert!(std::fs::read_to_string(a.join("throughput.csv"))
        .unwrap()
        .starts_with("time_us,flow,gbps\n10,F1,"));
    assert!(std::fs::metadata(a.join("throughput.png")).unwrap().len() > 1000);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// Phases of the CC-on files: F1 from 0, F2..F5 joining 100 ms apart.
const PHASE_US: u64 = 100_000;

/// Checks the contributors of each phase with at least two (F2-F3, F2-F4, F2-F5): fair (Jain at least 0.9,
/// none below half of another) and the bottleneck at least 80% used; returns the phases' shares.
fn contributors_share_fairly(r: &RunResult, bottleneck: f64, what: &str) -> Vec<Vec<f64>> {
    let mut all = Vec::new();
    for phase in 2..5u64 {
        let (a, b) = last_third(phase, PHASE_US);
        let c: Vec<f64> = (1..=phase as usize).map(|f| mean(r, f, a, b)).collect();
        let (j, m, u) = (
            jain(&c),
            min_over_max(&c),
            c.iter().sum::<f64>() / bottleneck,
        );
        eprintln!(
            "{what} phase {phase} ({a}-{b} us): F2.. {c:.3?} jain {j:.3} min/max {m:.2} use {u:.2}"
        );
        assert!(j >= 0.9, "{what} phase {phase}: Jain {j:.3} of {c:?}");
        assert!(m >= 0.5, "{what} phase {phase}: min/max {m:.2} of {c:?}");
        assert!(u >= 0.8, "{what} phase {phase}: bottleneck {u:.2} used");
        all.push(c);
    }
    all
}

#[test]
fn cc_on_at_the_hardware_settings_frees_the_victim_and_shares_the_bottleneck_fairly() {
    let on = run(&scenario("gran-s1-cc-on"), false).expect("fabric builds");
    assert!(
        on.summary.invariants.broken().is_none(),
        "{:?}",
        on.summary.invariants
    );
    // F1 alone and with F2 (no link of either path slower than the source's) runs unmarked at its link's
    // rate: no CNP reaches any source in the first two phases (within 2%: flow-control packets share the
    // wire); H5's link alone carries F2.
    for phase in 0..2u64 {
        let (a, b) = last_third(phase, PHASE_US);
        for f in 0..=phase as usize {
            let v = mean(&on, f, a, b);
            assert!(
                (v - BOTTLENECK).abs() < 0.02 * BOTTLENECK,
                "phase {phase} F{}: {v}",
                f + 1
            );
        }
    }
    for f in 0..5 {
        assert_eq!(
            cnps(&on, f, 0, 2 * PHASE_US),
            0,
            "F{} marked before congestion",
            f + 1
        );
    }
    // The victim is freed in every phase.
    for phase in 0..5u64 {
        let (a, b) = last_third(phase, PHASE_US);
        let f1 = mean(&on, 0, a, b);
        assert!(f1 >= 12.0, "phase {phase}: F1 {f1:.3}");
    }
    let shares = contributors_share_fairly(&on, BOTTLENECK, "CC on");
    // With all four, each about a quarter (figure 9): within the fairness bounds above; and clearly fairer
    // than CC off's parking lot (1/6, 1/6, 1/3, 1/3: Jain 0.9), by the steady CC-off run's own index.
    let mut off_sc = scenario("gran-s1-cc-off");
    off_sc.duration_us = 2000;
    let off = run(&off_sc, false).expect("fabric builds");
    let off_last: Vec<f64> = (1..5).map(|f| mean(&off, f, 1700, 2000)).collect();
    assert!(
        jain(&shares[2]) > jain(&off_last) + 0.05,
        "{:?} vs CC off {off_last:?}",
        shares[2]
    );
    // The notifications flowed: FECN marks at H5 came back as CNPs to every contributor.
    for f in &on.summary.flows[1..] {
        assert!(
            f.fecn_marked_rx > 0 && f.cnp_sent == f.fecn_marked_rx,
            "{f:?}"
        );
        assert_eq!(f.becn_rx, f.cnp_sent, "{f:?}");
    }
}

/// The testbed as it was: every host capped by its PCIe slot at 13.2 Gbit/s on the wire. F1 runs at its
/// host's rate, unmarked, in every phase; the contributors share H5's link fairly.
///
/// Not reproduced, recorded: with only F2 and F3 contributing the hardware left H5's link underused (about
/// 11 of 13 Gbit/s together, section 6.1); the model's capped contributors fill it (about 14.8 Gbit/s).
#[test]
fn cc_on_with_the_testbeds_host_caps() {
    let hw = run(&scenario("gran-s1-cc-on-hw"), false).expect("fabric builds");
    assert!(
        hw.summary.invariants.broken().is_none(),
        "{:?}",
        hw.summary.invariants
    );
    // The cap's payload rate: 13.2 Gbit/s of 2074-byte packets carries 13.03 Gbit/s of payload.
    let cap = 13.2 * 2048.0 / 2074.0;
    for phase in 0..5u64 {
        let (a, b) = last_third(phase, PHASE_US);
        let f1 = mean(&hw, 0, a, b);
        assert!(
            (f1 - cap).abs() < 0.02 * cap,
            "phase {phase}: F1 {f1:.3}, cap {cap:.3}"
        );
    }
    // F1 is marked only in the transients after a contributor joins (the congestion tree reaches back into
    // S1 for a few hundred microseconds before the CNPs slow the newcomer), never at steady state.
    for phase in 0..5u64 {
        let (a, b) = last_third(phase, PHASE_US);
        assert_eq!(
            cnps(&hw, 0, a, b),
            0,
            "phase {phase}: F1 marked at steady state"
        );
    }
    contributors_share_fairly(&hw, BOTTLENECK, "capped");
}
