//! Validation target L1 (Liu et al., seed 001 section V, figure 3 and Table II): the RoCEv2 parking lot.
//!
//! A, B, C on S1, D and the receiver R on S2, every link 40 Gbit/s, 2048-byte payloads, one priority, PFC on
//! every port. One test per shipped scenario:
//! - `liu-pfc.toml` (no RCM): A, B, C about 6.3 Gbit/s, D about 18.9 (parking-lot unfairness under PFC);
//! - `liu-rcm-1a.toml` (RCM with root/victim detection): near 9.37 / 9.42 / 9.51 / 9.72;
//! - `liu-rcm-1b.toml` (RCM with oversubscription detection): near 9.29 / 9.35 / 9.43 / 9.69.
//!
//! Every run must also be lossless: PFC never lets a buffer overflow, nothing is lost, nothing is left in a
//! buffer after the drain.
//!
//! Throughput counts payload bytes of 2048-byte packets. The paper's maximum payload rate is "about 38
//! Gbit/s"; here each frame carries Ethernet/IPv4/UDP/BTH/ICRC (2106 bytes) plus FCS, preamble and gap (24):
//! 2048 x 40 / 2130 = 38.46 Gbit/s, 1.2% above the paper's 38.

use ibcycle::run::{run, RunResult};

mod common;
use common::{mean, scenario};

/// Payload rate of R's link: the most the four flows can share.
const CAPACITY: f64 = 2048.0 * 40.0 / 2130.0;

fn assert_lossless(r: &RunResult) {
    let inv = &r.summary.invariants;
    assert_eq!(inv.broken(), None, "{inv:?}");
    assert!(inv.packets_injected > 0);
}

#[test]
fn pfc_only_gives_the_parking_lot_shares() {
    let mut sc = scenario("liu-pfc");
    // PFC reaches its steady state within tens of microseconds (a 512-block buffer fills in 6.6 us at 5
    // bytes per cycle); 600 us after a 100 us warm-up is 1400 packets at R.
    sc.duration_us = 700;
    let r = run(&sc, false).expect("fabric builds");
    assert_lossless(&r);
    let g: Vec<f64> = (0..4).map(|f| mean(&r, f, 100, 700)).collect();
    eprintln!(
        "PFC only: A {:.3} B {:.3} C {:.3} D {:.3}",
        g[0], g[1], g[2], g[3]
    );
    // The paper: 6.3 / 6.3 / 6.3 / 18.9 Gbit/s, and its simulation matched hardware within 3%. The model's
    // framing puts the total 1.2% above the paper's 38 Gbit/s; 3% covers that plus 10 us sampling of whole
    // packets (a 600 us window counts each flow to 0.1%).
    for (f, want) in [(0, 6.3), (1, 6.3), (2, 6.3), (3, 18.9)] {
        assert!(
            (g[f] - want).abs() < 0.03 * want,
            "flow {} at {:.3} Gbit/s, the paper has {want}",
            sc.flows[f].id,
            g[f]
        );
    }
    // The mechanism: S2 halves R's link between D and the S1 link, S1 splits its half three ways, so D gets
    // three times each of A, B, C (2% for sampling) and R's link is full (1%).
    for f in 0..3 {
        assert!(
            (g[3] / g[f] - 3.0).abs() < 0.06,
            "D / {} = {}",
            f,
            g[3] / g[f]
        );
    }
    let total: f64 = g.iter().sum();
    assert!((total - CAPACITY).abs() < 0.01 * CAPACITY, "total {total}");
    // PFC, not loss, holds the sources back: S1's port to S2 waited on pauses, nothing was marked or
    // answered (no RCM).
    let s1_up = r
        .summary
        .ports
        .iter()
        .find(|p| p.switch == "S1" && p.port == 4)
        .unwrap();
    assert!(s1_up.credit_wait_cycles > 100_000, "{s1_up:?}");
    assert!(r
        .summary
        .flows
        .iter()
        .all(|f| f.cnp_sent == 0 && f.ecn_marked_rx == 0));
}

/// Runs an RCM scenario for `duration_us` and checks it against the paper's Table II column `want`.
///
/// Tolerances. Each CNP moves a flow by a whole RCM level (level 3, a quarter of the link, is the fair
/// share; level 2 or 4 is 33% more or 20% less), so with 1a the shares do not settle: they drift between
/// flows over milliseconds. Measured with 1a-like settings (`ibcycle run` of 50 ms, means of 10 ms windows),
/// A, B and C scatter with a standard deviation of 0.2-0.4 Gbit/s around their long-run means, D with
/// 0.1-0.2. The band is +-0.8 Gbit/s (2 to 4 standard deviations of a 30 ms mean; 8.5% of 9.4) for each
/// flow. (1b, with the shipped settings, locks into a periodic pattern in which each flow is marked once
/// every 31 of its packets, and sits within 0.3 Gbit/s of the paper; the same band applies.) The total must
/// fill R's link within 3% (the paper's totals are 38.02 and 37.76 of its about-38 maximum). The paper's
/// small ordering A < B < C < D (0.35 Gbit/s from A to D) is inside the 1a scatter and is not asserted.
fn check_rcm(name: &str, duration_us: u64, want: [f64; 4]) {
    let mut sc = scenario(name);
    sc.duration_us = duration_us;
    let r = run(&sc, false).expect("fabric builds");
    assert_lossless(&r);
    // The first millisecond is the transient from all flows at line rate to the shared state.
    let g: Vec<f64> = (0..4).map(|f| mean(&r, f, 1000, duration_us)).collect();
    eprintln!(
        "{name}: A {:.3} B {:.3} C {:.3} D {:.3} (paper {want:?})",
        g[0], g[1], g[2], g[3]
    );
    for f in 0..4 {
        assert!(
            (g[f] - want[f]).abs() < 0.8,
            "{name}: flow {} at {:.3} Gbit/s, the paper has {}",
            sc.flows[f].id,
            g[f],
            want[f]
        );
    }
    let total: f64 = g.iter().sum();
    assert!((total - CAPACITY).abs() < 0.03 * CAPACITY, "total {total}");
    // RCM did it: R answered every CE-marked packet with a CNP, each source received them, and D no longer
    // takes the half of R's link PFC alone gives it. The counts are taken when the run time ends: a CNP for a
    // packet marked in the last cycles may still wait at R or be on its way (one at most: a flow's packets
    // are at least 426 cycles apart, a CNP is out and back within about 250).
    for f in &r.summary.flows {
        assert!(
            f.ecn_marked_rx > 0 && f.ecn_marked_rx - f.cnp_sent <= 1 && f.cnp_sent - f.becn_rx <= 1,
            "{f:?}"
        );
    }
    assert!(g[3] < 0.3 * CAPACITY, "D at {}", g[3]);
}

#[test]
fn rcm_1a_shares_r_link_nearly_equally() {
    check_rcm("liu-rcm-1a", 30_000, [9.37, 9.42, 9.51, 9.72]);
}

#[test]
fn rcm_1b_shares_r_link_nearly_equally() {
    check_rcm("liu-rcm-1b", 30_000, [9.29, 9.35, 9.43, 9.69]);
}

/// Not in the paper: the same parking lot with DCQCN at the sources instead of RCM (the DCQCN authors' ns-3
/// parameters, a CNP per flow at most every 50 us as DCQCN's notification point sends them, switches marking
/// every packet of a congested root, RCM-1a detection). DCQCN's rate cuts are proportional to the marked
/// fraction each source sees, so it too removes the parking-lot unfairness PFC alone leaves.
#[test]
fn dcqcn_also_evens_out_the_parking_lot() {
    use ibcycle::scenario::roce::{DcqcnPreset, Reaction};
    let mut sc = scenario("liu-pfc");
    sc.duration_us = 5000;
    sc.switch_cc.threshold = 8;
    sc.switch_cc.marking_rate = 0;
    let mut ro = sc.roce.expect("liu-pfc is RoCEv2");
    ro.reaction = Reaction::Dcqcn;
    ro.dcqcn_preset = DcqcnPreset::Ns3;
    ro.cnp_interval_us = 50;
    sc.roce = Some(ro);
    let r = run(&sc, false).expect("fabric builds");
    assert_lossless(&r);
    let g: Vec<f64> = (0..4).map(|f| mean(&r, f, 1000, 5000)).collect();
    eprintln!(
        "DCQCN: A {:.3} B {:.3} C {:.3} D {:.3}",
        g[0], g[1], g[2], g[3]
    );
    // A fair share is a quarter of R's link. Each source oscillates around it (cuts by alpha / 2, recovery
    // in steps); the 4 ms window averages dozens of those cycles, so +-10% of the fair share, and D, which PFC
    // alone gives three times the others, must be within 10% of A, B and C's mean.
    let fair = CAPACITY / 4.0;
    for (f, v) in sc.flows.iter().zip(&g) {
        assert!((v - fair).abs() < 0.1 * fair, "flow {} at {v:.3}", f.id);
    }
    let abc = (g[0] + g[1] + g[2]) / 3.0;
    assert!((g[3] / abc - 1.0).abs() < 0.1, "D {} vs {abc}", g[3]);
    // At most one CNP per flow per 50 us: 100 in the 5 ms run, and some were sent.
    for f in &r.summary.flows {
        assert!(f.cnp_sent > 0 && f.cnp_sent <= 100, "{f:?}");
    }
}
