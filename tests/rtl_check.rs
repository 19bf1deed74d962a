//! `ibcycle rtl-check` on RTL that is not the twin: the second switch implementation (hdl/alt/alt_switch.sv,
//! through its port map hdl/alt/alt_switch.map.toml) passes the transaction-level scoreboard on every shipped
//! InfiniBand scenario's traffic at its busiest switch and on random traffic, and each of its bug variants is
//! caught with the violation it causes. Needs Verilator (feature `cosim`).
//!
//! Scenarios checked: the shipped IB ones (`common::shipped_ib_scenarios_staggered`: cao-*, ft3-16-a2a-cc,
//! ft72, gran-s1-*, gran-s2-*, rrcc-*). The RoCEv2 ones (liu-pfc, liu-rcm-1a, liu-rcm-1b) go through the
//! checker's RoCEv2 mode twice: with the golden switch as the switch under test, and with the second switch's
//! RoCEv2 mode (hdl/alt/alt_roce_switch.sv, a 4-port build, and its five bug variants). Not checked:
//! thesis-ctmc and thesis-ge (queueing models with no switch to trace).
//!
//! The scenarios are shortened as in tests/ib_switch_trace.rs (flows start 2 us apart, cycling over five start
//! times), so queues build and the switches mark within the recorded cycles. One RTL build (8 ports: a
//! scenario's busiest switch of at most 8 ports) serves every scenario and the random traffic; each bug variant
//! is a 4-port build of its own. (An 18-port build, which also takes rrcc's 18-port switches, passes too but
//! takes minutes more to compile.) No build writes waveforms (a VCD is asked for only on a violation, and these runs ask for none).
#![cfg(feature = "cosim")]

use std::path::PathBuf;
use std::time::Instant;

use cosim::portmap::PortMap;
use cosim::rtlcheck::{
    build, check, default_random_config, traffic_of_trace, CheckOpts, CheckOutcome,
};
use cosim::scoreboard::bench::{random_traffic, TrafficPacket};
use cosim::scoreboard::Kind;
use ibcycle::run::port_trace;
use switch_asic::config::FillCompare;
use switch_asic::SwitchConfig;

mod common;

/// Cycles of each scenario recorded.
const CYCLES: u64 = 30_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn map() -> PortMap {
    PortMap::load(&root().join("hdl/alt/alt_switch.map.toml")).unwrap()
}

/// The same RTL at 4 ports (smaller, so quicker to compile) through the map's other options: byte enables
/// (`keep`) instead of byte counts, the transmit `ready` mapped, and the most significant byte first (the RTL's
/// `MsbFirst`). The bug variants' builds, and one clean build.
fn map4() -> PortMap {
    let path = root().join("hdl/alt/alt_switch.map.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut t = text.clone();
    for (a, b) in [
        ("\nports = 8\n", "\nports = 4\n"),
        ("\nNPorts = 8\n", "\nNPorts = 4\n"),
        ("\nSlotMax = 2048\n", "\nSlotMax = 1024\nMsbFirst = true\n"),
        (
            "\nties = { \"out_ready\" = 255 }\n",
            "\nbyte_order = \"msb_first\"\n",
        ),
        (
            "\nbytes = \"in_nbytes[{p*5+4}:{p*5}]\"\n",
            "\nkeep = \"in_keep[{p*16+15}:{p*16}]\"\n",
        ),
        (
            "\nbytes = \"out_nbytes[{p*5+4}:{p*5}]\"\n",
            "\nkeep = \"out_keep[{p*16+15}:{p*16}]\"\nready = \"out_ready[{p}]\"\n",
        ),
    ] {
        assert!(t.contains(a), "{a}");
        t = t.replace(a, b);
    }
    PortMap::parse(&path, &t).unwrap()
}

/// `traffic`'s packets to its busiest output alone: every VL of that output stays backlogged, so VL
/// arbitration decides each VL's share through whole windows.
fn hot_only(cfg: &SwitchConfig, traffic: &[TrafficPacket]) -> Vec<TrafficPacket> {
    let out_of = |b: &[u8]| cfg.lft[usize::from(u16::from_be_bytes([b[2], b[3]]))];
    let mut n = vec![0usize; cfg.ports.len()];
    for p in traffic {
        if let Some(o) = out_of(&p.bytes) {
            n[usize::from(o)] += 1;
        }
    }
    let hot = (0..n.len()).max_by_key(|&o| n[o]).unwrap() as u8;
    traffic
        .iter()
        .filter(|p| out_of(&p.bytes) == Some(hot))
        .cloned()
        .collect()
}

/// The defines of the build with every fault variant in, each turned on at run time by its plusarg
/// (`IBCYCLE_FAULTS_SELECT` in hdl/alt): one model per top serves every fault hunt, where a build per
/// variant took a dozen builds (each variant's own define is linted by the test command; its flag is the
/// same expression, a constant there).
const ALL_FAULTS: [&str; 2] = ["IBCYCLE_FAULTS_ENABLE", "IBCYCLE_FAULTS_SELECT"];

/// The options of a check: the clean build, or with `fault` that fault turned on in the build with every
/// fault in, compiled quickly (`-Og`), as it runs only until its first violation.
fn opts(fault: Option<&str>) -> CheckOpts {
    match fault {
        None => CheckOpts::default(),
        Some(f) => CheckOpts {
            defines: ALL_FAULTS.iter().map(|s| s.to_string()).collect(),
            plusargs: vec![format!("+IBCYCLE_FAULT_{f}")],
            quick: true,
            ..CheckOpts::default()
        },
    }
}

/// Builds `m`'s clean model (with `clean`) and its model with every fault in, as the checks ask for them, in
/// a thread beside the first runs, so the C++ compiles overlap simulations; each check later finds its model
/// in the cache or waits on its build lock. A build that fails here fails again, with its error, in the
/// check that needs it.
fn prebuild(m: PortMap, clean: bool) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let root = CheckOpts::default().build_root;
        if clean {
            let _ = build(&m, &[], &root, false, false);
        }
        let all: Vec<String> = ALL_FAULTS.iter().map(|s| s.to_string()).collect();
        let _ = build(&m, &all, &root, false, true);
    })
}

/// Output 0's two VLs kept backlogged: VL 0 from inputs 1 and 3 (twice what the link carries), VL 1 from
/// input 2, full-MTU packets all ready at once. With the two VLs' equal weights, each must get half of the
/// link through every arbitration window; an arbiter that ignores the weights serves VL 0 alone, as its queue
/// never empties. (Traffic from one input per VL does not show it: a packet's successor arrives at the pace
/// it leaves, so at each packet end the first VL's queue is often empty and the other VL is served anyway.)
fn two_vl_backlog(cfg: &SwitchConfig, per_input: usize) -> Vec<TrafficPacket> {
    use rtl_model::link::packet::PacketDesc;
    use rtl_model::wire::bth::Opcode;
    let mut out = Vec::new();
    // DLID 1 is routed to port 0; SL 0 leaves on VL 0 and SL 2 on VL 1 (SL2VL: (SL / 2) mod 2).
    for (inp, sl) in [(1usize, 0u8), (3, 0), (2, 2)] {
        for i in 0..per_input {
            let mut d = PacketDesc::local(1, 0x100 + inp as u16, sl, Opcode::RcSendOnly, 2048);
            d.vl = sl % cfg.ports[inp].data_vls.max(1);
            d.psn = i as u32;
            d.payload_seed = (inp * 100_000 + i) as u32;
            let mut bytes = Vec::new();
            d.materialise(&mut bytes).unwrap();
            out.push(TrafficPacket {
                cycle: 10,
                port: inp,
                bytes,
            });
        }
    }
    out
}

#[test]
fn alt_switch_passes_on_shipped_and_random_traffic_and_every_bug_is_caught() {
    let m = map();
    let t0 = Instant::now();
    // The 4-port models (the clean one and the one with every fault) are built while the 8-port runs below
    // simulate.
    let prebuilt = prebuild(map4(), true);
    // Every shipped IB scenario's busiest switch.
    let mut total = 0;
    for sc in common::shipped_ib_scenarios_staggered() {
        let all: Vec<usize> = (0..sc.topology.switches.len()).collect();
        let ts = port_trace::traces_of(&sc, &all, CYCLES).unwrap();
        // The busiest switch the 8-port build can be (rrcc's busiest has 18 ports: one of its 4-port
        // switches is taken there).
        let (k, (t, _)) = ts
            .into_iter()
            .enumerate()
            .filter(|(_, (t, _))| t.config.ports.len() <= m.ports.len())
            .max_by_key(|(_, (_, r))| r.packets)
            .unwrap();
        let name = &sc.topology.switches[k].name;
        match check(&m, &t.config, traffic_of_trace(&t), &opts(None)).unwrap() {
            CheckOutcome::Passed(o) => {
                eprintln!("{} {name}: {o:?}", sc.name);
                assert!(o.packets > 0, "{}", sc.name);
                assert_eq!(o.golden_notes, 0, "{}", sc.name);
                total += o.packets;
            }
            CheckOutcome::Violation { v, .. } => panic!("{} {name}: {v}", sc.name),
        }
    }
    eprintln!(
        "shipped scenarios: {total} packets checked, {:?}",
        t0.elapsed()
    );
    // Random traffic on 4 of the 8 ports, congesting one output on two VLs.
    let cfg = default_random_config(4);
    let traffic = random_traffic(&cfg, 600, 11, 10);
    let t1 = Instant::now();
    match check(&m, &cfg, traffic.clone(), &opts(None)).unwrap() {
        CheckOutcome::Passed(o) => {
            eprintln!("random: {o:?} {:?}", t1.elapsed());
            assert!(o.packets > 400 && o.marked > 0, "{o:?}");
            // The map's fill tap, read every cycle beside the golden fill: every port-VL of the
            // configuration, and the hot output's queues seen on both sides.
            assert_eq!(o.fill.len(), 4 * 2, "{:?}", o.fill);
            assert!(
                o.fill.iter().any(|f| f.rtl_max > 0 && f.golden_max > 0),
                "{:?}",
                o.fill
            );
            // The marking-state tap likewise: the hot output's state on in both views (its own decision
            // and the golden model's, not cycle for cycle the same).
            assert_eq!(o.mark_state.len(), 4 * 2, "{:?}", o.mark_state);
            assert!(
                o.mark_state
                    .iter()
                    .any(|m| m.rtl_on > 0 && m.golden_on > 0 && m.differ < o.cycles),
                "{:?}",
                o.mark_state
            );
        }
        CheckOutcome::Violation { v, .. } => panic!("random: {v}"),
    }
    // The 4-port build through keep, ready and the most significant byte first: the same random traffic, and
    // traffic to one output alone (its VLs backlogged: their shares are checked window by window).
    let m4 = map4();
    assert_eq!(m4.ports.len(), 4);
    let hot = hot_only(&cfg, &random_traffic(&cfg, 1500, 11, 10));
    let backlog = two_vl_backlog(&cfg, 60);
    for (what, t) in [
        ("random", &traffic),
        ("one output", &hot),
        ("two VLs backlogged", &backlog),
    ] {
        let t3 = Instant::now();
        match check(&m4, &cfg, t.clone(), &opts(None)).unwrap() {
            CheckOutcome::Passed(o) => {
                eprintln!(
                    "4 ports, keep, ready, msb_first, {what}: {o:?} {:?}",
                    t3.elapsed()
                );
                assert_eq!(o.packets, t.len(), "{what}: every packet checked");
            }
            CheckOutcome::Violation { v, .. } => panic!("4 ports, {what}: {v}"),
        }
    }
    // Every bug variant in that build: on the random traffic, the arbitration bug on the two backlogged VLs.
    for (bug, kinds) in [
        ("ALT_CREDIT_DROP", &[Kind::CreditLost][..]),
        // Marking_Rate's counter reloaded one short: at the random configuration's Marking_Rate 1 it marks
        // every eligible packet, twice what the rate allows.
        ("ALT_MARK_RATE", &[Kind::MarkRate][..]),
        ("ALT_DUP", &[Kind::Duplicate][..]),
        ("ALT_VL_MIX", &[Kind::WrongVl][..]),
        ("ALT_VCRC", &[Kind::BadVcrc][..]),
        ("ALT_ARB", &[Kind::ArbShare][..]),
    ] {
        // The arbitration bug on the two backlogged VLs (the arbitration-share check must see it).
        let t = if bug == "ALT_ARB" { &backlog } else { &traffic };
        let v = caught(bug, kinds, &m4, &cfg, t);
        // The report shows the port's fill tap beside the golden model's fill.
        assert!(
            v.rtl.contains("fill tap of port") && v.golden.contains("VoQ fill of output"),
            "{bug}: {v}"
        );
    }
    prebuilt.join().unwrap();
    eprintln!("total {:?}", t0.elapsed());
}

/// Checks `m`'s build with every fault in, fault variant `bug` turned on, on `traffic`: it must fail with a
/// violation of one of `kinds`, which is returned.
fn caught(
    bug: &str,
    kinds: &[Kind],
    m: &PortMap,
    cfg: &SwitchConfig,
    traffic: &[TrafficPacket],
) -> cosim::scoreboard::Violation {
    let t = Instant::now();
    match check(m, cfg, traffic.to_vec(), &opts(Some(bug))).unwrap() {
        CheckOutcome::Passed(o) => panic!("{bug} not caught: {o:?}"),
        CheckOutcome::Violation { v, .. } => {
            eprintln!(
                "{bug}: {:?} at cycle {} ({:?})",
                v.kind,
                v.cycle,
                t.elapsed()
            );
            assert!(kinds.contains(&v.kind), "{bug}: {v}");
            v
        }
    }
}

/// A marking setting of the grid: Threshold, compare mode, Marking_Rate, Packet_Size (64-byte units),
/// Victim_Mask, on every port of the default random configuration (4 ports).
#[derive(Debug, Clone, Copy)]
struct Marking {
    threshold: u8,
    compare: FillCompare,
    rate: u16,
    size: u8,
    victim: bool,
}

impl Marking {
    fn config(&self) -> SwitchConfig {
        let mut c = default_random_config(4);
        for p in &mut c.ports {
            p.cc.threshold = self.threshold;
            p.cc.compare = self.compare;
            p.cc.marking_rate = self.rate;
            p.cc.packet_size = self.size;
            p.cc.victim_mask = self.victim;
        }
        c
    }
}

/// The grid's columns, each a (map, traffic) pair on the 4-port build: the random traffic (a third to one hot
/// output), its hot output's packets alone (of 1,500 drawn), and the random traffic with link partners of 48
/// blocks per VL, below the root rule's 66 blocks of credit, so that every congested port-VL is a victim
/// (marking there needs Victim_Mask; with the partners' 256 blocks no port-VL ever is one).
fn marking_columns(m4: &PortMap) -> Vec<(&'static str, PortMap, Vec<TrafficPacket>)> {
    let cfg = default_random_config(4);
    let random = random_traffic(&cfg, 600, 11, 10);
    let hot = hot_only(&cfg, &random_traffic(&cfg, 1500, 11, 10));
    let mut small = m4.clone();
    small.bench.partner_buf_blocks = 48;
    vec![
        ("random", m4.clone(), random.clone()),
        ("one output", m4.clone(), hot),
        ("random, partners of 48 blocks", small, random),
    ]
}

/// One cell of one column: `Ok((marked, eligible))` or the violation.
fn marking_cell(
    m: &PortMap,
    mk: &Marking,
    traffic: &[TrafficPacket],
    fault: Option<&str>,
) -> Result<(u64, u64), cosim::scoreboard::Violation> {
    match check(m, &mk.config(), traffic.to_vec(), &opts(fault)).unwrap() {
        CheckOutcome::Passed(o) => {
            assert_eq!(o.packets, traffic.len(), "{mk:?}: every packet checked");
            Ok((o.marked, o.eligible))
        }
        CheckOutcome::Violation { v, .. } => Err(v),
    }
}

/// The whole marking grid, measured once (docs/rtl-check.md has its results): Threshold 1, 4, 8, 10, 15 x
/// the three compare modes x Marking_Rate 0, 1, 7 x Packet_Size 0, 8 x Victim_Mask off, on, each on the three
/// columns, one table row per setting (marked / eligible, or the violation). About 10 minutes: run by hand,
/// `cargo test --release --features cosim --test rtl_check -- --ignored marking_grid --nocapture`.
#[test]
#[ignore = "the whole grid takes about 10 minutes; run by hand"]
fn marking_grid() {
    let m4 = map4();
    let cols = marking_columns(&m4);
    let mut fails = 0;
    for threshold in [1u8, 4, 8, 10, 15] {
        for compare in [
            FillCompare::PerVoq,
            FillCompare::SumVoqs,
            FillCompare::SumPerContributor,
        ] {
            for rate in [0u16, 1, 7] {
                for size in [0u8, 8] {
                    for victim in [false, true] {
                        let mk = Marking {
                            threshold,
                            compare,
                            rate,
                            size,
                            victim,
                        };
                        let mut line = format!(
                            "| {threshold} | {compare:?} | {rate} | {size} | {} |",
                            if victim { "on" } else { "off" }
                        );
                        for (_, m, t) in &cols {
                            match marking_cell(m, &mk, t, None) {
                                Ok((marked, elig)) => line += &format!(" {marked} / {elig} |"),
                                Err(v) => {
                                    fails += 1;
                                    line += &format!(" **{:?}** at {} |", v.kind, v.cycle);
                                    eprintln!("{mk:?}: {v}");
                                }
                            }
                        }
                        println!("{line}");
                    }
                }
            }
        }
    }
    assert_eq!(fails, 0, "cells failed");
}

/// A subset of the marking grid (docs/rtl-check.md): every threshold and compare mode, each Marking_Rate,
/// Packet_Size and Victim_Mask value at least twice. The clean build passes each cell on the three columns
/// with its marks within what the golden model made eligible (and marks where it can: the random column
/// marks whenever its setting does in the whole grid), and the build whose FECN is the inverse of its
/// decision (`ALT_FECN_WRONG`) is caught on the random column of each cell.
#[test]
fn alt_switch_marking_settings_subset() {
    use FillCompare::{PerVoq, SumPerContributor, SumVoqs};
    let t0 = Instant::now();
    let m4 = map4();
    let cols = marking_columns(&m4);
    let subset = [
        (1, SumVoqs, 0, 0, true),
        (4, PerVoq, 1, 8, false),
        (8, SumPerContributor, 7, 0, true),
        (10, PerVoq, 0, 0, true),
        (15, SumVoqs, 1, 8, false),
        (15, SumPerContributor, 0, 8, false),
    ];
    for (threshold, compare, rate, size, victim) in subset {
        let mk = Marking {
            threshold,
            compare,
            rate,
            size,
            victim,
        };
        for (what, m, t) in &cols {
            match marking_cell(m, &mk, t, None) {
                Ok((marked, elig)) => {
                    eprintln!("{mk:?} {what}: {marked} marked of {elig} eligible");
                    assert!(marked <= elig, "{mk:?} {what}");
                    if *what == "random" {
                        assert!(marked > 0, "{mk:?} {what}: no mark");
                    }
                }
                Err(v) => panic!("{mk:?} {what}: {v}"),
            }
        }
        match marking_cell(&cols[0].1, &mk, &cols[0].2, Some("ALT_FECN_WRONG")) {
            Ok(r) => panic!("{mk:?}: ALT_FECN_WRONG not caught ({r:?})"),
            Err(v) => assert!(
                [Kind::FecnIneligible, Kind::FecnCleared].contains(&v.kind),
                "{mk:?}: ALT_FECN_WRONG: {v}"
            ),
        }
    }
    eprintln!("marking subset: {:?}", t0.elapsed());
}

/// The RoCEv2 mode of the checker on the shipped RoCEv2 scenarios (liu-pfc, liu-rcm-1a, liu-rcm-1b), flows
/// staggered as the IB ones are, at each one's busiest switch: with no RoCEv2 RTL in `hdl/` yet, the
/// golden switch itself is the switch under test (`SwitchDut`, frames as the golden model makes them, ECN CE
/// with the IPv4 checksum updated, pause frames both ways). It passes every check, with marks and pauses
/// on the traffic that has them; with its partners' pauses dropped before they reach it (a switch that
/// ignores pause), the check fails with `PauseIgnored` where the partners paused.
/// A RoCEv2 scenario's busiest switch (by packets) and its port trace, its flows staggered as the IB ones
/// are.
fn liu_busiest(name: &str) -> (String, cosim::switch_trace::SwitchTrace) {
    let mut sc = common::scenario(name);
    for (i, fl) in sc.flows.iter_mut().enumerate() {
        fl.start_us = 2 * (i as u64 % 5);
    }
    let all: Vec<usize> = (0..sc.topology.switches.len()).collect();
    let ts = port_trace::traces_of(&sc, &all, CYCLES).unwrap();
    let (k, (t, _)) = ts
        .into_iter()
        .enumerate()
        .max_by_key(|(_, (_, r))| r.packets)
        .unwrap();
    (sc.topology.switches[k].name.clone(), t)
}

#[test]
fn roce_checker_passes_the_golden_switch_on_the_liu_scenarios() {
    use cosim::scoreboard::bench::{run, BenchConfig, RunError, SwitchDut};
    use cosim::scoreboard::Bounds;
    for name in ["liu-pfc", "liu-rcm-1a", "liu-rcm-1b"] {
        let (sw, t) = liu_busiest(name);
        let pfc: Vec<bool> = t.config.ports.iter().map(|p| p.pfc.is_some()).collect();
        // A port of the switch with no link attached has no PFC setting; the linked ones all do.
        assert!(
            pfc.iter().filter(|&&x| x).count() >= 2,
            "{name} {sw}: PFC per port {pfc:?}"
        );
        let traffic = traffic_of_trace(&t);
        let n_in = traffic.len();
        let bench = map().bench;
        let mut dut = SwitchDut::new(&t.config).unwrap();
        let o = run(
            &mut dut,
            &t.config,
            traffic.clone(),
            bench,
            Bounds::default(),
        )
        .unwrap_or_else(|e| panic!("{name} {sw}: {e}"));
        eprintln!("{name} {sw}: {o:?}");
        // Every frame of the recorded window delivered (a Lost would have failed the run).
        assert!(
            o.packets > 0 && o.packets == n_in,
            "{name}: {n_in} in, {o:?}"
        );
        assert_eq!(o.golden_notes, 0, "{name}");
        // The map's partners (256 blocks, freed after 100 cycles) never pause this traffic; slow partners
        // (160 blocks, held 3,000 cycles) do: the golden switch passes under them too, and with their
        // pauses dropped before they reach it, it starts a frame on a paused priority.
        let slow = BenchConfig {
            partner_buf_blocks: 160,
            partner_hold: 3_000,
            ..bench
        };
        let mut dut = SwitchDut::new(&t.config).unwrap();
        let o = run(
            &mut dut,
            &t.config,
            traffic.clone(),
            slow,
            Bounds::default(),
        )
        .unwrap_or_else(|e| panic!("{name} {sw}, slow partners: {e}"));
        eprintln!("{name} {sw}, slow partners: {o:?}");
        assert!(o.pauses_in > 0 && o.packets == n_in, "{name}: {o:?}");
        let mut dut = SwitchDut::new(&t.config).unwrap();
        dut.ignore_pause = true;
        match run(&mut dut, &t.config, traffic, slow, Bounds::default()) {
            Err(RunError::Violation(v)) => assert_eq!(v.kind, Kind::PauseIgnored, "{v}"),
            r => panic!("{name}: {r:?}"),
        }
    }
}

/// The RoCEv2 mode of the second switch implementation (hdl/alt/alt_roce_switch.sv, map
/// hdl/alt/alt_roce_switch.map.toml, a 4-port build) through the Verilated-RTL harness's pause path.
fn roce_map() -> PortMap {
    PortMap::load(&root().join("hdl/alt/alt_roce_switch.map.toml")).unwrap()
}

/// The link partners under which the RoCEv2 runs pause the switch: 160 blocks per priority, each frame held
/// 3,000 cycles (as `roce_checker_passes_the_golden_switch_on_the_liu_scenarios`).
fn slow(m: &PortMap) -> PortMap {
    let mut s = m.clone();
    s.bench.partner_buf_blocks = 160;
    s.bench.partner_hold = 3_000;
    s
}

/// alt_roce_switch passes the checker's RoCEv2 mode on the shipped RoCEv2 scenarios' traffic (liu-pfc,
/// liu-rcm-1a, liu-rcm-1b, flows staggered as the IB ones, at each one's busiest switch: the golden-switch
/// test's traces) with the map's partners and with slow ones (the partners pause it, and it pauses them), and
/// on random RoCEv2 traffic (marks, pauses both ways); each of its bug variants is caught with the violation
/// it causes, on the random traffic under the slow partners.
#[test]
fn alt_roce_switch_passes_on_liu_and_random_traffic_and_every_bug_is_caught() {
    use cosim::rtlcheck::default_random_config_for;
    use cosim::scoreboard::bench::random_roce_traffic;
    use cosim::scoreboard::LinkKind;
    let m = roce_map();
    assert_eq!(m.link, LinkKind::RoceV2);
    let t0 = Instant::now();
    let bugs: [(&str, &[Kind]); 5] = [
        ("ALT_ROCE_PAUSE_IGNORED", &[Kind::PauseIgnored]),
        ("ALT_ROCE_CE_NOT_ECT", &[Kind::CeIneligible]),
        ("ALT_DUP", &[Kind::Duplicate]),
        ("ALT_ROCE_PRIO_MIX", &[Kind::PauseIgnored]),
        ("ALT_ROCE_CSUM", &[Kind::BadIpChecksum]),
    ];
    // The model with every fault in is built while the clean one simulates (as the IB test does).
    let prebuilt = prebuild(m.clone(), false);
    for name in ["liu-pfc", "liu-rcm-1a", "liu-rcm-1b"] {
        let (sw, t) = liu_busiest(name);
        let traffic = traffic_of_trace(&t);
        let n_in = traffic.len();
        // The RTL's ports all run PFC: a port of the switch with no link attached (no PFC setting, and no
        // frame in or out) takes the linked ports' PFC settings.
        let mut cfg = t.config.clone();
        let pfc = cfg.ports.iter().find_map(|p| p.pfc).unwrap();
        for (i, p) in cfg.ports.iter_mut().enumerate() {
            if p.pfc.is_none() {
                assert!(
                    traffic.iter().all(|f| f.port != i),
                    "{name}: port {i} unlinked"
                );
                p.pfc = Some(pfc);
            }
        }
        for (what, mm) in [("map's partners", m.clone()), ("slow partners", slow(&m))] {
            let t1 = Instant::now();
            match check(&mm, &cfg, traffic.clone(), &opts(None)).unwrap() {
                CheckOutcome::Passed(o) => {
                    eprintln!("{name} {sw}, {what}: {o:?} {:?}", t1.elapsed());
                    assert_eq!(o.packets, n_in, "{name} {what}: every frame checked");
                    assert_eq!(o.golden_notes, 0, "{name} {what}");
                    if what == "slow partners" {
                        assert!(o.pauses_in > 0, "{name}: the partners paused it: {o:?}");
                    }
                }
                CheckOutcome::Violation { v, .. } => panic!("{name} {sw}, {what}: {v}"),
            }
        }
    }
    // Random RoCEv2 traffic on the 4 ports (two priorities, a third of the frames to one hot output).
    let cfg = default_random_config_for(4, LinkKind::RoceV2);
    let traffic = random_roce_traffic(&cfg, 600, 11, 10);
    for (what, mm) in [("map's partners", m.clone()), ("slow partners", slow(&m))] {
        let t1 = Instant::now();
        match check(&mm, &cfg, traffic.clone(), &opts(None)).unwrap() {
            CheckOutcome::Passed(o) => {
                eprintln!("random, {what}: {o:?} {:?}", t1.elapsed());
                assert_eq!(
                    o.packets,
                    traffic.len(),
                    "random {what}: every frame checked"
                );
                assert!(o.marked > 0, "random {what}: {o:?}");
                assert!(
                    o.pauses_out > 0,
                    "random {what}: it paused its partners: {o:?}"
                );
                if what == "slow partners" {
                    assert!(o.pauses_in > 0, "random: the partners paused it: {o:?}");
                }
            }
            CheckOutcome::Violation { v, .. } => panic!("random, {what}: {v}"),
        }
    }
    let sm = slow(&m);
    for (bug, kinds) in bugs {
        caught(bug, kinds, &sm, &cfg, &traffic);
    }
    prebuilt.join().unwrap();
    eprintln!("total {:?}", t0.elapsed());
}
