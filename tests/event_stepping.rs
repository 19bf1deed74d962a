//! `Fabric::run_until` (event-driven: idle blocks are skipped) must leave the fabric in exactly the state
//! that cycle-by-cycle `Fabric::step` gives, for any split of the run into `run_until` calls, and the
//! fabric must go on identically with `step` afterwards.

use ibcycle::fabric::event::Prefetch;
use ibcycle::fabric::Fabric;
use ibcycle::scenario::{self, Scenario};
use proptest::prelude::*;

/// Everything observable of a fabric: HCA counters, message completion cycles (a tail counted at the wrong
/// cycle shows here) and every VL's credit state, every switch port's and VL's signals and counters,
/// packets in flight, violations.
fn digest(f: &Fabric) -> String {
    let mut s = format!(
        "now {} inflight {} viol {}\n",
        f.now(),
        f.packets_in_flight(),
        f.violations()
    );
    for h in &f.hcas {
        s += &format!(
            "{:?} {:?} {} {} {} {} ",
            h.per_flow,
            h.sink_errors,
            h.cnp_dropped,
            h.ctl_injected,
            h.ctl_delivered,
            h.receiving()
        );
        for vl in 0..VLS_MAX {
            s += &format!("{} {} ", h.credits_avail(vl), h.rx_free(vl));
        }
        s += "\n";
    }
    for sw in &f.switches {
        s += &format!("held {} err {}\n", sw.packets_held(), sw.rx_errors());
        for p in 0..sw.ports() {
            // Every VL (a VL the port lacks reads as zeros).
            for vl in 0..VLS_MAX {
                s += &format!("{vl}: {:?} {:?}\n", sw.observe(p, vl), sw.counters(p, vl));
            }
        }
    }
    s
}

/// Data VLs the digest covers: every VL a scenario here can have.
const VLS_MAX: usize = 15;

/// The flow-control state of every port (FCTBS, FCCL, ABR, the limit latched from the peer). Blocks absorb
/// arriving data lazily between event-driven steps, so this is compared only after both fabrics were
/// stepped cycle by cycle past the longest wire; a flow-control packet left off wrongly (see
/// `rtl_model::link::fc::FcLast`) shows here.
fn fc_state(f: &Fabric) -> String {
    let mut s = String::new();
    for h in &f.hcas {
        s += &format!("{:?}\n", h.fc_sync());
    }
    for sw in &f.switches {
        for p in 0..sw.ports() {
            s += &format!("{:?}\n", sw.fc_sync(p));
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
    let flows: Vec<_> = flows.iter().map(|&(s, d, a, b)| (s, d, a, b, 0)).collect();
    chain_vls(1, cc, fc_interval, latency_ns, &flows, "none")
}

/// The 3-switch chain with `vls` data VLs; each flow `(src, dst, start_us, stop_us, sl)` on its SL (the
/// default SL-to-VL map puts SL s on VL s mod `vls`); destinations send RC ACKs as `acks` says.
fn chain_vls(
    vls: u8,
    cc: bool,
    fc_interval: u16,
    latency_ns: u64,
    flows: &[(usize, usize, u64, u64, u8)],
    acks: &str,
) -> Scenario {
    let mut text = format!(
        "duration_us = 30\n[settings]\ndata_vls = {vls}\nfc_interval_cycles = {fc_interval}\nacks = \"{acks}\"\n[chain]\nswitches = 3\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = {latency_ns}\n"
    );
    if cc {
        text += "[switch_cc]\nthreshold = 15\nmarking_rate = 1\npacket_size = 1\n[hca_cc]\nccti_increase = 4\nccti_timer = 2\n";
    }
    for (i, &(src, dst, start, stop, sl)) in flows.iter().enumerate() {
        text += &format!(
            "[[flow]]\nid = \"F{i}\"\nsrc = \"H{src}\"\ndst = \"H{dst}\"\nsl = {sl}\nmtu = 256\nmessage_bytes = 1000\nstart_us = {start}\nstop_us = {stop}\n"
        );
    }
    scenario::parse(std::path::Path::new("t.toml"), &text).unwrap()
}

/// Runs `sc` to `end` both ways (`run_until` in `chunks`), compares, then steps both on and compares again;
/// returns the event-driven fabric.
/// Asserts `got == want`, naming the first line that differs (the digests are thousands of lines).
#[track_caller]
fn same(want: &str, got: &str, what: &str) {
    if want != got {
        let (w, g): (Vec<_>, Vec<_>) = (want.lines().collect(), got.lines().collect());
        let i = (0..w.len().max(g.len()))
            .find(|&i| w.get(i) != g.get(i))
            .unwrap_or(0);
        panic!(
            "{what}: line {i} differs\n want {:?}\n  got {:?}",
            w.get(i),
            g.get(i)
        );
    }
}

/// The all-eager reference: every switch and HCA stepped, and every block clocked, in every cycle.
fn reference(sc: &Scenario) -> Fabric {
    let mut a = Fabric::new(sc).unwrap();
    a.set_eager(true);
    a
}

fn same_both_ways(sc: &Scenario, end: u64, chunks: &[u64]) -> Fabric {
    let mut a = reference(sc);
    let mut b = Fabric::new(sc).unwrap();
    // Prefetching is off for fabrics this small unless asked for: on, every case also shows that it
    // changes nothing (and never reads past a table).
    b.set_prefetch(Prefetch::On);
    for _ in 0..end {
        a.step();
    }
    let mut i = 0;
    while b.now() < end {
        let to = (b.now() + chunks[i % chunks.len()]).min(end);
        b.run_until(to);
        i += 1;
    }
    same(&digest(&a), &digest(&b), "digest at the end");
    // Once the longest wire has passed, what is in flight must be the same item for item and cycle for
    // cycle (this pins down the timing of every port's periodic flow-control packets after an idle
    // stretch jumped in whole periods).
    for _ in 0..=a.max_latency() {
        a.step();
        b.step();
    }
    same(&digest(&a), &digest(&b), "digest, stepped on");
    same(
        &fc_state(&a),
        &fc_state(&b),
        "flow-control state, stepped on",
    );
    same(
        &a.wires_fingerprint(),
        &b.wires_fingerprint(),
        "wires, stepped on",
    );
    b
}

/// The property test's cases: `EVENT_STEPPING_CASES` of them (default 12), drawn from `EVENT_STEPPING_SEED`
/// when it is set (scripts/test sets it from the commit, so every commit runs other cases and a failure is
/// reproduced by setting the seed it prints), else from proptest's own seed (`PROPTEST_RNG_SEED`, or a
/// fresh one).
fn stepping_config() -> ProptestConfig {
    let cases = std::env::var("EVENT_STEPPING_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut c = ProptestConfig::with_cases(cases);
    if let Some(seed) = std::env::var("EVENT_STEPPING_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        eprintln!("run_until_equals_single_steps: {cases} cases from EVENT_STEPPING_SEED={seed}");
        c.rng_seed = proptest::test_runner::RngSeed::Fixed(seed);
    }
    c
}

/// The drawn flows as (source, destination, start, end), a flow to itself left out.
fn spans(flows: Vec<(usize, usize, u64, u64)>) -> Vec<(usize, usize, u64, u64)> {
    flows
        .into_iter()
        .filter(|f| f.0 != f.1)
        .map(|(s, d, start, dur)| (s, d, start, start + dur))
        .collect()
}

proptest! {
    #![proptest_config(stepping_config())]

    #[test]
    fn run_until_equals_single_steps(
        cc in any::<bool>(),
        fc_interval in 8u16..400,
        latency_ns in 1u64..300,
        flows in prop::collection::vec((0usize..6, 0usize..6, 0u64..10, 1u64..20), 1..5),
        chunks in prop::collection::vec(1u64..5000, 1..4),
    ) {
        let flows = spans(flows);
        prop_assume!(!flows.is_empty());
        let sc = chain(cc, fc_interval, latency_ns, &flows);
        same_both_ways(&sc, 20_000, &chunks);
    }

    /// The same under the stall window root rule, whose detector moves between its inputs' changes (the
    /// countdown): windows short enough to run out within a run, and long ones.
    #[test]
    fn run_until_equals_single_steps_under_the_stall_window_rule(
        fc_interval in 8u16..400,
        latency_ns in 1u64..300,
        flows in prop::collection::vec((0usize..6, 0usize..6, 0u64..10, 1u64..20), 1..5),
        chunks in prop::collection::vec(1u64..5000, 1..4),
        window in prop_oneof![1u32..40, 40u32..2000],
    ) {
        let flows = spans(flows);
        prop_assume!(!flows.is_empty());
        let mut sc = chain(true, fc_interval, latency_ns, &flows);
        sc.switch_cc.root_rule = switch_asic::config::RootRule::StallWindow;
        sc.switch_cc.stall_window = window;
        same_both_ways(&sc, 20_000, &chunks);
    }
}

proptest! {
    #![proptest_config(stepping_config())]

    /// The same with two to four data VLs, flows spread over them (so VL arbitration, per-VL credits and
    /// congestion state, and flow-control packets of several VLs on one wire are all compared), and RC
    /// ACKs off, per message or per packet.
    #[test]
    fn run_until_equals_single_steps_with_several_vls(
        vls in 2u8..=4,
        acks in prop::sample::select(vec!["none", "message", "packet"]),
        cc in any::<bool>(),
        fc_interval in 8u16..400,
        latency_ns in 1u64..300,
        flows in prop::collection::vec((0usize..6, 0usize..6, 0u64..10, 1u64..20, 0u8..4), 2..6),
        chunks in prop::collection::vec(1u64..5000, 1..4),
    ) {
        let flows: Vec<_> = flows
            .into_iter()
            .filter(|f| f.0 != f.1)
            .map(|(s, d, start, dur, sl)| (s, d, start, start + dur, sl % vls))
            .collect();
        prop_assume!(!flows.is_empty());
        // The parser refuses an interval that the flow-control packets of every VL would fill (3 cycles
        // each on the 4x DDR links here).
        let fc_interval = fc_interval.max(4 * u16::from(vls));
        let sc = chain_vls(vls, cc, fc_interval, latency_ns, &flows, acks);
        same_both_ways(&sc, 20_000, &chunks);
    }
}

/// Two VLs sharing the congested trunks, with CC on: every flow-control packet, mark and CNP of both VLs
/// compared, through quiet stretches and a restart, on a deterministic case that is certain to congest.
#[test]
fn two_vls_under_congestion_are_identical_event_driven() {
    let flows = [
        (0, 5, 0, 8, 0),
        (1, 5, 0, 8, 1),
        (2, 5, 1, 9, 1),
        (3, 4, 2, 6, 0),
        (4, 0, 14, 18, 1),
        (5, 1, 15, 17, 0),
    ];
    for (vls, acks) in [(2, "none"), (4, "none"), (2, "packet")] {
        let sc = chain_vls(vls, true, 100, 80, &flows, acks);
        let f = same_both_ways(&sc, 25_000, &[997, 1, 4096]);
        let delivered = |vl: u8| -> u64 {
            f.switches
                .iter()
                .flat_map(|sw| {
                    (0..sw.ports()).map(move |p| sw.counters(p, usize::from(vl)).xmit_pkts)
                })
                .sum()
        };
        assert!(
            delivered(0) > 0 && delivered(1) > 0,
            "{vls} VLs: both VLs carried traffic"
        );
        let becn: u64 = f
            .hcas
            .iter()
            .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
            .sum();
        assert!(becn > 0, "{vls} VLs: no CNP reached a source");
        let acked: u64 = f
            .hcas
            .iter()
            .flat_map(|h| h.per_flow.iter().map(|c| c.acks_rx))
            .sum();
        assert_eq!(
            acked > 0,
            acks != "none",
            "{vls} VLs, acks {acks}: {acked} ACKs in"
        );
    }
}

/// A receiver whose host drains slower than its link (`drain_cap`: its port releases blocks at that rate
/// every cycle, and its credit holds the flows into it back), with CC on (Victim_Mask set) and ACKs per
/// packet.
#[test]
fn a_drain_capped_receiver_is_identical_event_driven() {
    let mut text = String::from(
        "duration_us = 30\n[settings]\nacks = \"packet\"\n[chain]\nswitches = 2\nhosts_per_switch = 2\n\
         host_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = 40\n[switch_cc]\nthreshold = 15\n\
         marking_rate = 1\npacket_size = 1\nvictim_mask = true\n[hca_cc]\nccti_increase = 4\nccti_timer = 2\n\
         [[hca]]\nname = \"H3\"\ndrain_cap = \"5000Mbps\"\n",
    );
    for (i, (src, start)) in [(0, 0), (1, 2), (2, 5)].iter().enumerate() {
        text += &format!(
            "[[flow]]\nid = \"F{i}\"\nsrc = \"H{src}\"\ndst = \"H3\"\nmtu = 256\nmessage_bytes = 1000\nstart_us = {start}\nstop_us = 15\n"
        );
    }
    let sc = scenario::parse(std::path::Path::new("d.toml"), &text).unwrap();
    let f = same_both_ways(&sc, 25_000, &[1, 333, 4096]);
    let becn: u64 = f
        .hcas
        .iter()
        .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
        .sum();
    // The port into the slow receiver lacks credit: a victim, which marks only under Victim_Mask.
    assert!(becn > 0, "the slow receiver's port congested and marked");
}

#[test]
fn shipped_cc_scenario_is_identical_event_driven() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on-quick.toml");
    let mut sc = scenario::load(&path).unwrap();
    // Shortened (the file runs 2 ms): F1 alone, then F2 from 400 us; flows start every 400 us, so the
    // 3 us offsets below bring all five into the first 20 us.
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = 3 * i as u64;
    }
    let f = same_both_ways(&sc, 30_000, &[997, 1, 4096]);
    // The comparison covered flow-control packets left off as repeats by the sender (fewer items put on
    // wires than when every one is sent).
    let mut all = Fabric::new(&sc).unwrap();
    all.leave_off_fc_repeats(false);
    all.run_until(30_000);
    let (w, fw) = (f.step_work(), all.step_work());
    assert!(w.wire_items < fw.wire_items, "{w:?} {fw:?}");
    // The comparison covered congestion control at work: marks, CNPs and rate changes.
    let becn: u64 = f
        .hcas
        .iter()
        .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
        .sum();
    assert!(becn > 0, "no CNP reached a source");
}

#[test]
fn an_idle_fabric_only_exchanges_flow_control_and_stays_identical() {
    let sc = chain(false, 256, 100, &[(0, 5, 100, 101)]);
    let f = same_both_ways(&sc, 50_000, &[50_000]);
    assert_eq!(
        f.hcas[5].per_flow[0].rx.packets, 0,
        "the flow's window is after the run"
    );
    // After the first flow-control exchanges the fabric is quiet: every port's timers fire only repeats,
    // which its own skip jumps in whole periods, so almost no cycle is visited.
    let w = f.step_work();
    assert!(w.cycles_visited < 100, "{w:?}");
}

#[test]
fn traffic_after_a_quiet_stretch_is_identical() {
    // Two bursts 12 us apart; between them the fabric drains, settles and its timers are jumped.
    for cc in [false, true] {
        let sc = chain(
            cc,
            100,
            80,
            &[(0, 5, 0, 2), (4, 1, 1, 3), (2, 5, 14, 16), (3, 0, 15, 17)],
        );
        let f = same_both_ways(&sc, 25_000, &[25_000]);
        // The 10 us between the bursts cost almost nothing.
        let w = f.step_work();
        assert!(w.cycles_visited < 5_000, "cc {cc}: {w:?}");
        assert!(f.hcas[5].per_flow[2].rx.packets > 0 && f.hcas[0].per_flow[3].rx.packets > 0);
        // Ends at arbitrary cycles (not jump boundaries) too.
        let g = same_both_ways(&sc, 25_000, &[3_001, 777]);
        assert_eq!(digest(&f), digest(&g));
    }
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
            "[[flow]]\nid = \"F{i}\"\nsrc = \"H{s}\"\ndst = \"H{d}\"\nmtu = 512\nstart_us = {}\nstop_us = 20\n",
            i % 3
        );
    }
    scenario::parse(std::path::Path::new("tree.toml"), &text).unwrap()
}

#[test]
fn any_thread_count_gives_the_single_step_state() {
    let sc = small_tree();
    let mut a = reference(&sc);
    // 20 us of traffic, then quiet until 60 us (flows stop at 20 us).
    for _ in 0..60_000 {
        a.step();
    }
    let want = digest(&a);
    let ends = [1, 555, 5_000, 20_000, 60_000];
    let mut one = Fabric::new(&sc).unwrap();
    for end in ends {
        one.run_until(end);
    }
    for threads in [2, 3, 6, 7] {
        let mut b = Fabric::new(&sc).unwrap();
        b.set_threads(threads);
        for end in ends {
            b.run_until(end);
        }
        assert_eq!(digest(&b), want, "{threads} threads");
        // Every block is stepped at the cycles one thread steps it at: the same work, idle end included.
        let (wb, w1) = (b.step_work(), one.step_work());
        assert_eq!(
            (wb.switch_steps, wb.hca_steps, wb.wire_items),
            (w1.switch_steps, w1.hca_steps, w1.wire_items),
            "{threads} threads"
        );
    }
    let becn: u64 = a
        .hcas
        .iter()
        .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
        .sum();
    assert!(becn > 0 && a.violations() == 0);
}

#[test]
fn prefetching_changes_nothing() {
    let sc = small_tree();
    let mut want = Fabric::new(&sc).unwrap();
    want.set_prefetch(Prefetch::Off);
    want.run_until(30_000);
    for threads in [1, 2] {
        let mut b = Fabric::new(&sc).unwrap();
        b.set_threads(threads);
        b.set_prefetch(Prefetch::On);
        for end in [1, 777, 30_000] {
            b.run_until(end);
        }
        same(&digest(&want), &digest(&b), "prefetching");
        let (wb, w) = (b.step_work(), want.step_work());
        assert_eq!(
            (wb.switch_steps, wb.hca_steps, wb.wire_items),
            (w.switch_steps, w.hca_steps, w.wire_items),
            "{threads} threads"
        );
    }
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

#[test]
fn an_idle_stretch_ending_at_any_phase_of_the_flow_control_timers_is_exact() {
    // Every end cycle over one flow-control period (so every port's last timer fire falls at each offset
    // before the end, including the last cycle, where its packet is still pending) and with a flow-control
    // packet long enough to overlap the following cycles (4x SDR trunk: 1 byte per cycle).
    let interval = 40u64;
    let text = format!(
        "duration_us = 10\n[settings]\nfc_interval_cycles = {interval}\n[chain]\nswitches = 2\nhosts_per_switch = 1\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xSDR\"\nlatency_ns = 7\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\nmtu = 256\nmessage_bytes = 256\nstart_us = 1\nstop_us = 2\n"
    );
    let sc = scenario::parse(std::path::Path::new("p.toml"), &text).unwrap();
    let first = 6_000u64;
    let lat = Fabric::new(&sc).unwrap().max_latency();
    // Every wire here has the same latency: an item due at `d` was sent at `d - lat`.
    let sent_from = |f: &Fabric, from: u64| -> String {
        f.wires_fingerprint()
            .split(['\n', ';'])
            .filter(|item| {
                item.split(':')
                    .next()
                    .and_then(|d| d.parse::<u64>().ok())
                    .is_some_and(|d| d >= from + lat)
            })
            .collect::<Vec<_>>()
            .join(";")
    };
    // From the end of the jump on, cycle by cycle: the same state, and on the wires the same items sent
    // since the end (a flow-control packet sent at another cycle, left out or carrying other values shows).
    // Twice: with every flow-control packet sent (so each one's timing shows on the wires), and with the
    // repeats left off as by default (the same ones left off whichever way the fabric was stepped).
    for leave_off in [false, true] {
        let mut seen = 0;
        for end in first..first + interval {
            let mut r = reference(&sc);
            let mut b = Fabric::new(&sc).unwrap();
            r.leave_off_fc_repeats(leave_off);
            b.leave_off_fc_repeats(leave_off);
            for _ in 0..end {
                r.step();
            }
            b.run_until(end);
            if leave_off {
                // The idle stretch from the flow's end was jumped in whole periods.
                let w = b.step_work();
                assert!(w.cycles_visited < 1_000, "end {end}: {w:?}");
            }
            for k in 0..=lat + 1 {
                assert_eq!(digest(&b), digest(&r), "end {end}, {k} cycles after");
                assert_eq!(
                    sent_from(&b, end),
                    sent_from(&r, end),
                    "end {end}, {k} cycles after"
                );
                seen += usize::from(!sent_from(&r, end).is_empty());
                r.step();
                b.step();
            }
        }
        // The reference does send flow-control packets in this window (the comparison is not vacuous).
        if !leave_off {
            assert!(seen > interval as usize, "{seen}");
        }
    }
}

#[test]
fn traffic_starting_right_after_an_idle_stretch_keeps_its_timing() {
    // The idle stretch ends where a flow starts; with a flow-control interval of 19 cycles and flows starting on
    // whole microseconds (1000 = 12 mod 19), the start falls at every phase of every port's timers,
    // including the cycles in which a 6-cycle flow-control packet still occupies the 4x SDR trunk: with
    // 1-cycle wires a packet from H0 reaches that trunk 2 cycles after its start.
    let interval = 19u64;
    let mut seen_jump = 0;
    for k in 7u64..26 {
        let text = format!(
            "duration_us = 30\n[settings]\nfc_interval_cycles = {interval}\n[chain]\nswitches = 2\nhosts_per_switch = 1\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xSDR\"\nlatency_ns = 1\n[[flow]]\nid = \"A\"\nsrc = \"H1\"\ndst = \"H0\"\nmtu = 256\nmessage_bytes = 256\nstart_us = 1\nstop_us = 2\n[[flow]]\nid = \"B\"\nsrc = \"H0\"\ndst = \"H1\"\nmtu = 256\nmessage_bytes = 256\nstart_us = {k}\nstop_us = {}\n",
            k + 1
        );
        let sc = scenario::parse(std::path::Path::new("k.toml"), &text).unwrap();
        let start = k * 1000;
        let mut r = reference(&sc);
        for _ in 0..start + 2 {
            r.step();
        }
        let mut b = Fabric::new(&sc).unwrap();
        b.run_until(start + 2);
        let w = b.step_work();
        seen_jump += usize::from(w.cycles_visited < start / 4);
        // From 2 cycles after the start (the jump ends at the start; 1-cycle wires) every item on a wire was
        // sent after the jump; compare them cycle by cycle while the first packets cross the fabric, from the
        // first cycle whose items both fabrics put on with `step`.
        for c in 0..700 {
            r.step();
            b.step();
            assert_eq!(
                b.wires_fingerprint(),
                r.wires_fingerprint(),
                "start {k} us + {c}"
            );
        }
        assert_eq!(digest(&b), digest(&r), "start {k} us");
        assert!(r.hcas[1].per_flow[1].rx.packets > 0);
    }
    assert!(seen_jump > 15, "{seen_jump}");
}

/// Every shipped fabric scenario (RoCEv2 with PFC and RCM/DCQCN, RR-CC, patterned flows, IB CC), shortened:
/// flows start within the first microseconds and the run is cut to 40 000 cycles, so each file's mechanisms
/// are active while the two ways are compared.
#[test]
fn every_shipped_fabric_scenario_is_identical_event_driven() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    let mut compared = 0;
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("[tandem]") || text.contains("[ge_queue]") {
            continue; // queueing mode: no fabric
        }
        let mut sc = scenario::load(&path).unwrap();
        for (i, f) in sc.flows.iter_mut().enumerate() {
            f.start_us = f.start_us.min(2 * i as u64);
            f.stop_us = None;
        }
        let f = same_both_ways(&sc, 40_000, &[997, 1, 4096]);
        let delivered: u64 = f
            .hcas
            .iter()
            .flat_map(|h| h.per_flow.iter())
            .map(|c| c.rx.packets)
            .sum();
        assert!(delivered > 0, "{}: nothing delivered", path.display());
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} scenarios compared");
}

/// DCQCN has no shipped scenario: `liu-rcm-1a` with the DCQCN reaction instead, shortened like the others,
/// compared both ways (the HCAs sleep until their pacer lets the next packet go, see `FlowCc::wake_for_send`).
#[test]
fn dcqcn_is_identical_event_driven() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/liu-rcm-1a.toml");
    let mut sc = scenario::load(&path).unwrap();
    sc.roce.as_mut().expect("a RoCEv2 scenario").reaction =
        ibcycle::scenario::roce::Reaction::Dcqcn;
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = f.start_us.min(2 * i as u64);
        f.stop_us = None;
    }
    let f = same_both_ways(&sc, 40_000, &[997, 1, 4096]);
    // The comparison covered the reaction at work: CNPs reached the sources.
    let cnps: u64 = f
        .hcas
        .iter()
        .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
        .sum();
    assert!(cnps > 0, "no CNP reached a source");
}

/// RCM recovers a level at a deadline, which can let a waiting source send sooner: the HCA must wake then
/// (`FlowCc::wake_for_send`). `liu-rcm-1a` with a 2 us recovery time, so that recoveries fall inside the
/// shortened run, compared both ways.
#[test]
fn rcm_recovery_deadlines_are_identical_event_driven() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/liu-rcm-1a.toml");
    let mut sc = scenario::load(&path).unwrap();
    sc.roce.as_mut().expect("a RoCEv2 scenario").rcm_recovery_us = Some(2);
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = f.start_us.min(2 * i as u64);
        f.stop_us = None;
    }
    let f = same_both_ways(&sc, 60_000, &[997, 1, 4096]);
    let cnps: u64 = f
        .hcas
        .iter()
        .flat_map(|h| h.per_flow.iter().map(|c| c.becn_rx))
        .sum();
    assert!(cnps > 0, "no CNP reached a source");
}

/// Switches leave off the timer-fired flow-control packets that repeat the last one on their wire (the
/// default; `Fabric::leave_off_fc_repeats`). That may change the wires' contents and nothing else: every
/// counter, message completion, credit and flow-control register equals a fabric that sends every one,
/// through traffic that starts and stops (the wire time of a left-off packet still delays the next packet
/// on its wire), idle stretches and a thread split; and it leaves some off.
#[test]
fn leaving_off_flow_control_repeats_changes_nothing_but_the_wires() {
    let flows = [
        (0, 5, 1, 4),
        (1, 4, 2, 3),
        (2, 3, 5, 9),
        (5, 0, 6, 7),
        (3, 1, 11, 30),
        (4, 2, 12, 13),
    ];
    let on_vls: Vec<_> = flows
        .iter()
        .enumerate()
        .map(|(i, &(s, d, a, b))| (s, d, a, b, (i % 3) as u8))
        .collect();
    let cases = [
        (chain(false, 40, 7, &flows), 1),
        (chain(true, 256, 100, &flows), 1),
        (chain(false, 97, 37, &flows), 2),
        (small_tree(), 2),
        (chain_vls(3, true, 120, 50, &on_vls, "none"), 1),
        (chain_vls(2, false, 64, 9, &on_vls, "none"), 2),
        (chain_vls(2, true, 64, 9, &on_vls, "packet"), 2),
    ];
    for (i, (sc, threads)) in cases.iter().enumerate() {
        let mut on = Fabric::new(sc).unwrap();
        let mut off = Fabric::new(sc).unwrap();
        off.leave_off_fc_repeats(false);
        on.set_threads(*threads);
        off.set_threads(*threads);
        for end in [997u64, 4_000, 9_001, 16_000, 24_000] {
            on.run_until(end);
            off.run_until(end);
            assert_eq!(digest(&on), digest(&off), "case {i}, cycle {end}");
        }
        for _ in 0..=on.max_latency() {
            on.step();
            off.step();
        }
        assert_eq!(digest(&on), digest(&off), "case {i}, stepped on");
        assert_eq!(fc_state(&on), fc_state(&off), "case {i}, stepped on");
        let (a, b) = (on.step_work().wire_items, off.step_work().wire_items);
        assert!(
            a < b,
            "case {i}: {a} wire items with repeats left off, {b} without"
        );
    }
}
