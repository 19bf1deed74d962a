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
        .expect("the credit blocks take the settings")
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
        assert_eq!(t.credit_violations, 0, "m={}", t.m);
        within(&format!("m={} L1", t.m), &t.simulated.l1, t.exact.l1);
        within(&format!("m={} L2", t.m), &t.simulated.l2, t.exact.l2);
        within(&format!("m={} T", t.m), &t.simulated.t, t.exact.t);
        // Per-packet credits bound node 2 by m, so L2 < m; and more credits mean less blocking.
        assert!(t.simulated.l2.mean < f64::from(t.m));
    }
    // The check can tell neighbouring models apart: each run is many SE from the solution for the next m
    // (m = 2 against m = 3: L1 differs by 1.9, about 90 SE).
    for w in s.tandem.windows(2) {
        let (a, next) = (&w[0].simulated.l1, w[1].exact.l1);
        assert!(
            (a.mean - next).abs() / a.se > 3.88,
            "m={} vs m={}",
            w[0].m,
            w[1].m
        );
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

/// `ibcycle run` on a queueing file writes summary.json; a bad one exits 1 naming file, line and field.
#[test]
fn ibcycle_run_takes_queueing_files() {
    let dir = std::env::temp_dir().join(format!("ibcycle-thesis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("q.toml");
    let text = "warmup_units = 10\nduration_units = 200\nbatches = 4\n[ge_queue]\nlambda = [4.0]\nmu = 8.0\nca2 = 1.0\ncs2 = 1.0\ncapacity = 8\n";
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["ge_queue"][0]["lambda"], 4.0);
    assert!(
        json["ge_queue"][0]["simulated"]["u"]["ci95"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    std::fs::write(&file, text.replace("capacity = 8", "capacity = 0")).unwrap();
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert_eq!(st.status.code(), Some(1));
    assert!(err.contains("q.toml:4: ge_queue.capacity: 0"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
