//! `Fabric::run_until` (event-driven: idle blocks are skipped) must leave the fabric in exactly the state
//! that cycle-by-cycle `Fabric::step` gives, for any split of the run into `run_until` calls, and the
//! fabric must go on identically with `step` afterwards.

use ibcycle::fabric::Fabric;
use ibcycle::scenario::{self, Scenario};
use proptest::prelude::*;

/// Everything observable of a fabric: HCA counters and credit state, every switch port's and VL's
/// signals and counters, packets in flight, violations.
fn digest(f: &Fabric) -> String {
    let mut s = format!(
        "now {} inflight {} viol {}\n",
        f.now(),
        f.packets_in_flight(),
        f.violations()
    );
    for h in &f.hcas {
        s += &format!(
            "{:?} {:?} {:?} {:?} {} {} {} {} ",
            h.rx,
            h.injected,
            h.cnp_sent,
            h.becn_rx,
            h.cnp_dropped,
            h.ctl_injected,
            h.ctl_delivered,
            h.receiving()
        );
        s += &format!("{} {}\n", h.credits_avail(0), h.rx_free(0));
    }
    for sw in &f.switches {
        s += &format!("held {} err {}\n", sw.packets_held(), sw.rx_errors());
        for p in 0..sw.ports() {
            s += &format!("{:?} {:?}\n", sw.observe(p, 0), sw.counters(p, 0));
        }
    }
    s
}

fn chain(
    cc: bool,
    fc_interval: u16,
    latency_ns: u64,
    flows: &[(usize, usize, u64, u64)],
) -> Scenario {
    let mut text = format!(
        "duration_us = 30\n[settings]\nfc_interval_cycles = {fc_interval}\n[chain]\nswitches = 3\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = {latency_ns}\n"
    );
    if cc {
        text += "[switch_cc]\nthreshold = 15\nmarking_rate = 1\npacket_size = 1\n[hca_cc]\nccti_increase = 4\nccti_timer = 2\n";
    }
    for (i, &(src, dst, start, stop)) in flows.iter().enumerate() {
        text += &format!(
            "[[flow]]\nid = \"F{i}\"\nsrc = \"H{src}\"\ndst = \"H{dst}\"\nmtu = 256\nmessage_bytes = 1000\nstart_us = {start}\nstop_us = {stop}\n"
        );
    }
    scenario::parse(std::path::Path::new("t.toml"), &text).unwrap()
}

/// Runs `sc` to `end` both ways (`run_until` in `chunks`), compares, then steps both on and compares again;
/// returns the event-driven fabric.
fn same_both_ways(sc: &Scenario, end: u64, chunks: &[u64]) -> Fabric {
    let mut a = Fabric::new(sc).unwrap();
    let mut b = Fabric::new(sc).unwrap();
    for _ in 0..end {
        a.step();
    }
    let mut i = 0;
    while b.now() < end {
        let to = (b.now() + chunks[i % chunks.len()]).min(end);
        b.run_until(to);
        i += 1;
    }
    assert_eq!(digest(&a), digest(&b));
    for _ in 0..300 {
        a.step();
        b.step();
    }
    assert_eq!(digest(&a), digest(&b));
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn run_until_equals_single_steps(
        cc in any::<bool>(),
        fc_interval in 8u16..400,
        latency_ns in 1u64..300,
        flows in prop::collection::vec((0usize..6, 0usize..6, 0u64..10, 1u64..20), 1..5),
        chunks in prop::collection::vec(1u64..5000, 1..4),
    ) {
        let flows: Vec<_> = flows
            .into_iter()
            .filter(|f| f.0 != f.1)
            .map(|(s, d, start, dur)| (s, d, start, start + dur))
            .collect();
        prop_assume!(!flows.is_empty());
        let sc = chain(cc, fc_interval, latency_ns, &flows);
        same_both_ways(&sc, 20_000, &chunks);
    }
}

#[test]
fn shipped_cc_scenario_is_identical_event_driven() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on.toml");
    let mut sc = scenario::load(&path).unwrap();
    // Shortened (the file runs 2 ms): F1 alone, then F2 from 400 us; flows start every 400 us, so the
    // 3 us offsets below bring all five into the first 20 us.
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = 3 * i as u64;
    }
    let f = same_both_ways(&sc, 30_000, &[997, 1, 4096]);
    // The comparison covered congestion control at work: marks, CNPs and rate changes.
    let becn: u64 = f.hcas.iter().flat_map(|h| h.becn_rx.iter()).sum();
    assert!(becn > 0, "no CNP reached a source");
}

#[test]
fn an_idle_fabric_only_exchanges_flow_control_and_stays_identical() {
    let sc = chain(false, 256, 100, &[(0, 5, 100, 101)]);
    let f = same_both_ways(&sc, 50_000, &[50_000]);
    assert_eq!(
        f.hcas[5].rx[0].packets, 0,
        "the flow's window is after the run"
    );
}

/// A small fat tree (4 leaves, 2 spines, 2 hosts each) with crossing flows and CC on.
fn small_tree() -> Scenario {
    let mut text = String::from(
        "duration_us = 20\n[fat_tree]\nleaves = 4\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"4xDDR\"\nfabric_rate = \"4xDDR\"\nlatency_ns = 37\n[switch_cc]\nthreshold = 15\nmarking_rate = 1\npacket_size = 1\n[hca_cc]\nccti_increase = 4\nccti_timer = 2\n",
    );
    for (i, (s, d)) in [(0, 7), (1, 7), (2, 7), (3, 5), (6, 0), (4, 1)]
        .iter()
        .enumerate()
    {
        text += &format!(
            "[[flow]]\nid = \"F{i}\"\nsrc = \"H{s}\"\ndst = \"H{d}\"\nmtu = 512\nstart_us = {}\n",
            i % 3
        );
    }
    scenario::parse(std::path::Path::new("tree.toml"), &text).unwrap()
}

#[test]
fn any_thread_count_gives_the_single_step_state() {
    let sc = small_tree();
    let mut a = Fabric::new(&sc).unwrap();
    for _ in 0..20_000 {
        a.step();
    }
    let want = digest(&a);
    for threads in [2, 3, 6, 7] {
        let mut b = Fabric::new(&sc).unwrap();
        b.set_threads(threads);
        for end in [1, 555, 5_000, 20_000] {
            b.run_until(end);
        }
        assert_eq!(digest(&b), want, "{threads} threads");
    }
    let becn: u64 = a.hcas.iter().flat_map(|h| h.becn_rx.iter()).sum();
    assert!(becn > 0 && a.violations() == 0);
}

#[test]
fn summary_json_is_identical_for_one_and_two_threads() {
    let sc = small_tree();
    let one = ibcycle::run::run_threads(&sc, false, 1).unwrap();
    let two = ibcycle::run::run_threads(&sc, false, 2).unwrap();
    let j = |r: &ibcycle::run::RunResult| serde_json::to_string(&r.summary).unwrap();
    assert_eq!(j(&one), j(&two));
    assert!(one.summary.invariants.broken().is_none());
}
