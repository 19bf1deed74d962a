//! Validation target G2 (Gran & Reinemo scenario 2): no victim. F1 H1->H4, F2 H2->H5, F3 H3->H6 share the
//! S1->S2 link (4x QDR, 32 Gbit/s data); each host link (16 Gbit/s) is below it, so only the trunk limits.

use std::path::Path;

use ibcycle::run::{run, RunResult};
use ibcycle::scenario::load;

mod common;
use common::mean;

fn run_file(name: &str) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    run(&load(&path).expect("shipped scenario loads"), false).expect("fabric builds")
}

#[test]
fn three_flows_share_the_trunk_fairly_and_cc_costs_throughput() {
    let off = run_file("gran-s2-cc-off");
    let on = run_file("gran-s2-cc-on");
    // The trunk's payload rate split three ways: 32 Gbit/s x 2048 / 2074 / 3 = 10.53 Gbit/s (the hardware's
    // 11.4 Gbit/s reflects its real QDR data rate and PCIe limits; the shape is what is checked).
    let share = 32.0 * 2048.0 / 2074.0 / 3.0;
    // CC off settles within microseconds: after F3 joins at 800 us, 100 us of settling, 30 samples. CC on
    // (the hardware's settings, 20 ms phases): the last third of the three-flow phase.
    let w_off = |f: usize| mean(&off, f, 900, 1200);
    let w_on = |f: usize| mean(&on, f, 40_000 + 40_000 / 3, 60_000);
    let off_v: Vec<f64> = (0..3).map(w_off).collect();
    let on_v: Vec<f64> = (0..3).map(w_on).collect();
    eprintln!("CC off {off_v:.3?}, CC on {on_v:.3?}");
    // CC off: fair and stable, each within 3% of a third (sampling granularity).
    for v in &off_v {
        assert!((v - share).abs() < 0.03 * share, "{off_v:?}");
    }
    // Stable: no 10 us sample of F1 strays more than two packets (3.3 Gbit/s) from its share.
    assert!(off
        .samples
        .iter()
        .filter(|(t, _)| *t > 900)
        .all(|(_, g)| (g[0] - share).abs() < 3.3));
    // CC on: the average drops (hardware: 11.4 -> 9, a 21% loss); the model must show the same sign and a
    // comparable size: between 3% and 35% less in total. Recorded gap: the model loses a fraction of the
    // hardware's loss at the hardware's settings (docs/cc-fidelity.md gives the figures).
    let (s_off, s_on) = (off_v.iter().sum::<f64>(), on_v.iter().sum::<f64>());
    eprintln!("loss with CC on: {:.1}%", 100.0 * (1.0 - s_on / s_off));
    assert!(
        s_on < 0.97 * s_off && s_on > 0.65 * s_off,
        "{s_on} vs {s_off}"
    );
    // The three still share alike (the hardware's about 9 Gbit/s each): Jain at least 0.9, none below half
    // of another, as in scenario 1.
    let jain = on_v.iter().sum::<f64>().powi(2) / (3.0 * on_v.iter().map(|x| x * x).sum::<f64>());
    let (lo, hi) = on_v
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(jain >= 0.9 && lo >= 0.5 * hi, "{on_v:?}");
    // It marks and throttles: every flow got CNPs.
    assert!(on.summary.flows.iter().all(|f| f.becn_rx > 0));
    assert!(off.summary.flows.iter().all(|f| f.fecn_marked_rx == 0));
    for r in [&off, &on] {
        let inv = &r.summary.invariants;
        assert!(inv.broken().is_none(), "{inv:?}");
    }
}
