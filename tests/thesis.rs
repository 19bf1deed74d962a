//! Validation target T1 (seed 003, thesis-003-digest.md): the queueing mode against the thesis' models.
//!
//! - `scenarios/thesis-ctmc.toml`: the credit-based flow control tandem (one VL, per-packet credits, zero
//!   credit latency, exponential service, lambda 5, mu1 6, mu2 8, n 12, m 2..11). The simulation is a sample
//!   of exactly the CTMC, so L1, L2 and T must fall within statistical error of the CTMC's solution (which a
//!   unit test checks against the digest's numbers). Statistical error: 20 batch means give a standard error
//!   SE per metric; each of the 21 checks allows 3.88 SE (Student t, 19 degrees of freedom, two-sided
//!   99.9%), so a correct model fails a check by chance with probability 0.1% each (the seed is fixed, so
//!   the outcome is reproducible either way). A wrong service rule (e.g. node 1 serving without a credit)
//!   moves L1 and L2 by far more (m = 2: L2 would no longer be bounded by 2).
//! - `scenarios/thesis-ge.toml`: GE/GE/1/8 (mu 8, Ca^2 5, Cs^2 7) against the maximum-entropy formulas. ME is
//!   an approximation that the thesis finds 5-10% off simulation; the check allows 10% on U, L and P(N).

use std::path::Path;

use ibcycle::queueing::stats::Estimate;
use ibcycle::queueing::{parse, run};

fn summary(name: &str) -> ibcycle::queueing::QueueingSummary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let text = std::fs::read_to_string(&path).expect("shipped file");
    run(&parse(&path, &text).expect("shipped file parses"))
}

/// Within 3.88 standard errors (see the module documentation).
fn within(what: &str, e: &Estimate, exact: f64) {
    let z = (e.mean - exact).abs() / e.se;
    eprintln!(
        "{what}: {:.4} ± {:.4} (95%), exact {exact:.4}, {z:.2} SE",
        e.mean, e.ci95
    );
    assert!(
        z <= 3.88,
        "{what}: {:.4} is {z:.2} SE from {exact:.4}",
        e.mean
    );
}

#[test]
fn the_credit_tandem_matches_the_ctmc_within_statistical_error() {
    let s = summary("thesis-ctmc");
    assert_eq!(
        s.tandem.iter().map(|t| t.m).collect::<Vec<_>>(),
        [2, 3, 4, 5, 6, 8, 11]
    );
    for t in &s.tandem {
        within(&format!("m={} L1", t.m), &t.simulated.l1, t.exact.l1);
        within(&format!("m={} L2", t.m), &t.simulated.l2, t.exact.l2);
        within(&format!("m={} T", t.m), &t.simulated.t, t.exact.t);
        // Per-packet credits bound node 2 by m, so L2 < m; and more credits mean less blocking.
        assert!(t.simulated.l2.mean < f64::from(t.m));
    }
    let l1: Vec<f64> = s.tandem.iter().map(|t| t.simulated.l1.mean).collect();
    assert!(
        l1.windows(2).all(|w| w[1] < w[0] + 0.05),
        "L1 falls as m grows: {l1:?}"
    );
}

#[test]
fn the_ge_queue_is_within_the_thesis_me_error() {
    let s = summary("thesis-ge");
    assert_eq!(s.ge_queue.len(), 3);
    for g in &s.ge_queue {
        let (a, me) = (&g.simulated, &g.max_entropy);
        for (what, sim, m) in [
            ("U", a.u.mean, me.u),
            ("L", a.l.mean, me.l),
            ("P(N)", a.p_full.mean, me.p_full),
        ] {
            let rel = (sim - m).abs() / m;
            eprintln!(
                "lambda {}: {what} {sim:.4} vs ME {m:.4} ({:.1}%)",
                g.lambda,
                rel * 100.0
            );
            assert!(
                rel <= 0.10,
                "lambda {}: {what} {sim:.4} vs ME {m:.4}",
                g.lambda
            );
        }
    }
}
