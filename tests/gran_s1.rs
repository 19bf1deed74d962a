//! Validation target G1 (Gran & Reinemo scenario 1), congestion control off: the victim flow.
//!
//! Runs `scenarios/gran-s1-cc-off.toml` for 1200 us (F1 alone from 0, F2 from 400 us, F3 from 800 us) and
//! checks the qualitative outcome of validation-targets.md G1 "CC off": once F3 joins, F1 (H1->H4, which does
//! not use the congested H5 link) is held down to about half of the bottleneck rate, like F2 and F3, by
//! head-of-line blocking in the S1->S2 input buffer at S2. Also integrity (no loss, no credit leak) and
//! determinism (two runs give byte-identical summary.json). Then `gran-s1-cc-on.toml` in full: G1 "CC on".

use std::path::{Path, PathBuf};

use ibcycle::run::{run, write_outputs, RunResult};
use ibcycle::scenario::{load, Scenario};

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    load(&path).expect("shipped scenario loads")
}

/// Payload rate of a 4x DDR host link: 16 Gbit/s data, 2048-byte payload in a 2074-byte packet (LRH 8,
/// BTH 12, ICRC 4, VCRC 2) gives 15.80 Gbit/s: the bottleneck (H5's link) and F1's own limit.
const BOTTLENECK: f64 = 16.0 * 2048.0 / 2074.0;

/// Mean of flow `f`'s samples whose interval ends in `(from, to]` microseconds.
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

#[test]
fn f1_keeps_its_rate_with_cc_on_and_the_parking_lot_is_evened_out() {
    let on = run(&scenario("gran-s1-cc-on"), false).expect("fabric builds");
    let mut off_sc = scenario("gran-s1-cc-off");
    off_sc.duration_us = 2000;
    let off = run(&off_sc, false).expect("fabric builds");
    // The last phase (all five flows), after 100 us of settling: CC oscillates, so the window is 300 us
    // (30 samples) to average over several CCTI rise-and-decay cycles (CCTI_Timer 10.24 us).
    let w = |r: &RunResult, f: usize| mean(r, f, 1700, 2000);
    let f1_on = w(&on, 0);
    let f1_off = w(&off, 0);
    let others: Vec<f64> = (1..5).map(|f| w(&on, f)).collect();
    eprintln!("last phase: F1 on {f1_on:.3} off {f1_off:.3}; F2-F5 on {others:.3?}");
    // F1 at its full rate (within 5%: sampling granularity), independent of the others; with CC off it is
    // held to about 1/6 of it (HOL behind F2 and F3, which get 1/3 of H5's link together).
    assert!((f1_on - BOTTLENECK).abs() < 0.05 * BOTTLENECK, "{f1_on}");
    assert!(f1_off < 0.25 * BOTTLENECK, "{f1_off}");
    // CC off, the parking lot (G1): H5's link splits about 1/3 to {F2 + F3} (through the S1-S2 link), 1/3
    // to F4 and 1/3 to F5 (each an input of S2); the switch's round robin among inputs makes it exact up to
    // sampling (10% tolerance).
    let third = BOTTLENECK / 3.0;
    let (f23, f4, f5) = (w(&off, 1) + w(&off, 2), w(&off, 3), w(&off, 4));
    for (name, v) in [("F2+F3", f23), ("F4", f4), ("F5", f5)] {
        assert!(
            (v - third).abs() < 0.1 * third,
            "CC off {name} {v:.3} not about {third:.3}"
        );
    }
    // F2-F5 each about 1/4 of the bottleneck. The paper shows oscillation around it; the model's shares
    // over 300 us lie within 0.15..0.35 of the link (stated tolerance: +-40% of 1/4 for an oscillating
    // share), and together they keep H5's link at least 75% busy (CC costs some utilisation).
    let quarter = BOTTLENECK / 4.0;
    for (i, v) in others.iter().enumerate() {
        assert!((v - quarter).abs() < 0.4 * quarter, "F{} {v:.3}", i + 2);
    }
    assert!(others.iter().sum::<f64>() > 0.75 * BOTTLENECK);
    // Fairness among F2-F5 (Jain's index) clearly better with CC on than off (figure 9).
    let jain = |v: &[f64]| {
        let s: f64 = v.iter().sum();
        s * s / (v.len() as f64 * v.iter().map(|x| x * x).sum::<f64>())
    };
    let others_off: Vec<f64> = (1..5).map(|f| w(&off, f)).collect();
    assert!(
        jain(&others) > jain(&others_off) + 0.05,
        "{others:?} vs {others_off:?}"
    );
    // The congestion notifications flowed: FECN marks at H5 came back as CNPs to the sources.
    for f in &on.summary.flows[1..] {
        assert!(
            f.fecn_marked_rx > 0 && f.cnp_sent == f.fecn_marked_rx,
            "{f:?}"
        );
        assert_eq!(f.becn_rx, f.cnp_sent, "{f:?}");
    }
    let inv = &on.summary.invariants;
    assert!(inv.broken().is_none(), "{inv:?}");
}
