//! Validation target R1 (receiver-driven CC, seed 002): `scenarios/rrcc-ib-cc.toml` against
//! `scenarios/rrcc-rr-cc.toml`, the same fabric and traffic with IB CC and with RR-CC.
//!
//! F1 (H1->R1) and F2 (H2->R2) are long-lived; F3..F17 burst short messages to R1 from 500 to 1500 us and
//! congest P0 (S2 -> R1) together with F1. F2 is the victim: it shares only the S1->S2 link with F1 and is
//! held up by head-of-line blocking in S2's input buffer. What the model reproduces of the paper's claims:
//! - RR-CC frees the victim sooner (F2 back to 90% of its rate before the burst, in 50 us windows).
//! - The victim keeps more of its rate over the burst with RR-CC.
//! - After the burst F1 converges back towards its line rate sooner with RR-CC (on average over seeds:
//!   per seed this is decided by one CNP more or less, see the second test).
//!
//! Not reproduced: the paper's "better short-message latency". In this model the burst messages' mean
//! latency is higher with RR-CC (the test prints both; docs/validation.md gives the figures). The switches mark only a part
//! of F1's packets (42 of 875 in the RR-CC run: P0 is in the root state only part of the time), so F1 rarely
//! reaches the 95% FECN share and is seldom cut by a BECN; a burst flow has one or two packets per period,
//! and one marked packet makes 100%, so the burst flows get the BECNs and are paced at `d` times a
//! receive rate that is their own offered load. The latencies are in `summary.json` (`msg_latency_us`).

use std::path::Path;

use ibcycle::run::{run, RunResult};
use ibcycle::scenario::load;

mod common;
use common::mean;

fn run_file(name: &str) -> RunResult {
    run_seed(name, None)
}

/// A shipped scenario run as shipped, or with its seed replaced (the burst messages' sizes and arrivals).
fn run_seed(name: &str, seed: Option<u64>) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let mut sc = load(&path).expect("shipped scenario loads");
    if let Some(s) = seed {
        sc.seed = s;
    }
    let r = run(&sc, false).expect("fabric builds");
    assert_eq!(r.summary.invariants.broken(), None, "{name} seed {seed:?}");
    r
}

/// The end of the first 50 us window after the burst starts (500 us) in which F2 is back to 90% of its rate
/// before the burst. Five 10 us samples smooth out single-packet granularity (a 2 KiB packet is 1.6 Gbit/s
/// of a 10 us sample); 90% leaves room for the flow-control packets and the sampling noise.
fn victim_recovered_at(r: &RunResult) -> u64 {
    let before = mean(r, 1, 100, 500);
    (550..=2000)
        .step_by(50)
        .find(|&t| mean(r, 1, t - 50, t) >= 0.9 * before)
        .unwrap_or(u64::MAX)
}

fn burst_latency_us(r: &RunResult) -> f64 {
    let l: Vec<f64> = r.summary.flows[2..]
        .iter()
        .map(|f| {
            f.msg_latency_us
                .as_ref()
                .expect("burst messages complete")
                .mean
        })
        .collect();
    l.iter().sum::<f64>() / l.len() as f64
}

#[test]
fn rr_cc_frees_the_victim_sooner_than_ib_cc() {
    let ib = run_file("rrcc-ib-cc");
    let rr = run_file("rrcc-rr-cc");
    let (ib_at, rr_at) = (victim_recovered_at(&ib), victim_recovered_at(&rr));
    let (ib_f2, rr_f2) = (mean(&ib, 1, 500, 1500), mean(&rr, 1, 500, 1500));
    let (ib_f1, rr_f1) = (mean(&ib, 0, 1700, 2000), mean(&rr, 0, 1700, 2000));
    eprintln!(
        "victim back at: IB {ib_at} us, RR {rr_at} us; F2 over the burst: IB {ib_f2:.2}, RR {rr_f2:.2} \
         Gbit/s; F1 1700-2000 us: IB {ib_f1:.2}, RR {rr_f1:.2}; burst message latency: IB {:.1} us, RR \
         {:.1} us",
        burst_latency_us(&ib),
        burst_latency_us(&rr)
    );
    // Both runs see the congestion: F2 falls well below its rate at first (HOL blocking).
    for r in [&ib, &rr] {
        assert!(mean(r, 1, 500, 600) < 0.5 * mean(r, 1, 100, 500));
    }
    // Measured: RR-CC frees F2 400 us sooner. Requiring 100 us (two windows) leaves room for seeds and
    // small model changes while still failing if the two CCs behave alike.
    assert!(rr_at + 100 <= ib_at, "RR {rr_at} us, IB {ib_at} us");
    // Measured: about 13 against 10 Gbit/s over the burst. 15% more is well outside the run-to-run
    // difference of two equal CCs (a window mean of 100 samples moves by a few tenths of a Gbit/s).
    assert!(rr_f2 >= 1.15 * ib_f2, "RR {rr_f2:.2}, IB {ib_f2:.2}");
    // Victims are not slowed once RR-CC has settled: F2 within 5% of its rate before the burst.
    assert!(mean(&rr, 1, 900, 1500) >= 0.95 * mean(&rr, 1, 100, 500));
    // The victim is FECN-marked in the RR-CC run (its backlog behind the HOL blocking sits above the
    // threshold of its own output port S2:2, which then looks like a root), yet it kept its rate above:
    // RR-CC's 95% rule ignores partial marking. With IB CC each mark is a CNP and a rate cut.
    let f2 = &rr.summary.flows[1];
    assert!(f2.fecn_marked_rx > 0 && f2.fecn_marked_rx < f2.delivered_packets);
    let ib_f2 = &ib.summary.flows[1];
    assert_eq!(
        ib_f2.cnp_sent, ib_f2.fecn_marked_rx,
        "IB CC: one CNP per mark"
    );
}

/// F1 climbs back towards its line rate after the burst sooner with RR-CC: F1's mean over 1700-2000 us, in
/// pairs of runs (IB CC, RR-CC) on the same burst traffic, for seeds 1 to 40.
///
/// One seed does not decide this claim. F1's recovery ends when its CCTI has timed back to 0, and the linear
/// CCT's last few indices hold most of the rate, so one CNP more or less before the burst ends moves the
/// window's mean by about a Gbit/s: over seeds 1-40 F1's window mean has a standard deviation near 4 Gbit/s
/// under either CC, and RR-CC is ahead by 1 Gbit/s at only 23-25 of the 40 seeds (and behind at some).
/// Measured over the 40 pairs: RR-CC ahead by 1.5-1.8 Gbit/s on average, 2.4-2.9 standard errors of the
/// paired mean. The test asks for a mean difference above twice its standard error (a one-sided paired test
/// at about 97.5%): it fails if the two CCs recover alike, without resting on one seed's CNP timing.
#[test]
fn rr_cc_brings_f1_back_sooner_over_forty_seeds() {
    let d: Vec<f64> = (1..=40)
        .map(|seed| {
            let ib = run_seed("rrcc-ib-cc", Some(seed));
            let rr = run_seed("rrcc-rr-cc", Some(seed));
            mean(&rr, 0, 1700, 2000) - mean(&ib, 0, 1700, 2000)
        })
        .collect();
    let n = d.len() as f64;
    let m = d.iter().sum::<f64>() / n;
    let sd = (d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt();
    let se = sd / n.sqrt();
    let ahead = d.iter().filter(|&&x| x > 0.0).count();
    eprintln!(
        "F1 1700-2000 us, RR-CC minus IB CC over 40 seeds: mean {m:.2} Gbit/s, sd {sd:.2}, standard error \
         {se:.2}; RR-CC ahead at {ahead} seeds"
    );
    assert!(m > 2.0 * se, "mean {m:.2}, standard error {se:.2}");
}
