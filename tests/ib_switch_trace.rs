//! Switch port traces recorded from every shipped InfiniBand scenario replay through the switch RTL
//! (`hdl/ib_switch.sv`) against the fabric's own switch (`switch_asic::Switch`) with no mismatch on any port
//! in any cycle, and every bug variant of the RTL is caught on them. Needs Verilator (feature `cosim`).
//!
//! Each scenario is shortened for a debug build: its flows start 2 us apart (cycling over five start times)
//! instead of their own times, so queues build and congestion control marks within the first
//! [`CYCLES`] cycles, which are recorded. Every switch's hand-ins are logged in one run; the busiest switch
//! (most packet heads handed in) is replayed. RoCEv2 scenarios (PFC ports, which the RTL does not have)
//! and queueing-model files are not fabric IB scenarios and are left out.
//!
//! Each trace replays through the smallest build of the clean RTL that holds its ports
//! ([`CleanBuild::Smallest`]): the 8-port build (the fault hunt's control) for the switches of 8 ports or
//! fewer, the full 18-port build for RR-CC's 18-port switch. The same source elaborated at another `NPorts`;
//! an 8-port trace ran about twenty times slower through the 18-port build, its ten idle ports included.
#![cfg(feature = "cosim")]

use cosim::switch::{replay, CleanBuild, ReplayOpts, SwitchReplay};
use cosim::switch_trace::{HandIn, SwitchTrace};
use ibcycle::run::port_trace;
use rtl_model::blocks::fecn_marker::MarkMode;
use switch_asic::config::MarkPoint;

mod common;

/// Cycles recorded per scenario.
const CYCLES: u64 = 30_000;

/// The busiest switch's trace of each scenario: (scenario, switch, trace). Recorded once per test process
/// (nextest runs each test in its own, so the four tests below replay in parallel).
fn traces() -> &'static [(String, String, SwitchTrace)] {
    static TRACES: std::sync::OnceLock<Vec<(String, String, SwitchTrace)>> =
        std::sync::OnceLock::new();
    TRACES.get_or_init(record)
}

fn record() -> Vec<(String, String, SwitchTrace)> {
    let mut out = Vec::new();
    for sc in common::shipped_ib_scenarios_staggered() {
        let all: Vec<usize> = (0..sc.topology.switches.len()).collect();
        let ts = port_trace::traces_of(&sc, &all, CYCLES).unwrap();
        let (k, (t, rec)) = ts
            .into_iter()
            .enumerate()
            .max_by_key(|(_, (_, r))| r.packets)
            .unwrap();
        assert!(rec.packets > 0, "{}: no packet reached a switch", sc.name);
        out.push((sc.name.clone(), sc.topology.switches[k].name.clone(), t));
    }
    out
}

/// Every bug variant of the switch RTL. `BUG_VL_MIX` (the LRH carries the input VL) and `BUG_SL2VL_INDEX`
/// (SL2VL read at the (output, input) pair) change nothing where a port has one data VL: they are seen on
/// `gran-s1-cc-on-2vl`, whose flows share ports over two VLs.
fn bugs() -> Vec<&'static str> {
    cosim::table::module("ib_switch").unwrap().bugs.to_vec()
}

#[test]
fn every_ib_scenario_replays_exactly() {
    for (sc, sw, t) in traces() {
        let r = replay(t, &ReplayOpts::default()).unwrap();
        match r {
            SwitchReplay::Matched {
                cycles,
                packets,
                fcs,
                marked,
            } => {
                assert_eq!(cycles, CYCLES);
                println!(
                    "{sc} {sw}: {cycles} cycles, {} ports, {packets} packets sent ({marked} with FECN), {fcs} FC packets",
                    t.config.ports.len()
                );
            }
            SwitchReplay::Mismatch(m) => {
                // The trace, for `ibcycle cosim ib_switch --replay FILE --vcd W.vcd`.
                let path = std::env::temp_dir().join(format!("switch-trace-{sc}-{sw}.txt"));
                t.write(std::fs::File::create(&path).unwrap(), &[]).unwrap();
                panic!("{sc} {sw}: {m} (trace in {})", path.display())
            }
        }
    }
}

#[test]
fn every_bug_variant_is_caught() {
    // Each bug variant runs through the traces until one shows it: the richest first (most data VLs, then
    // most packet heads), since a trace that cannot show a fault (one data VL for a VL mix-up) is replayed whole
    // before the next is tried. The bug variants are built at 8 ports (`table::Module::bug_params`): the
    // traces of larger switches are left out of the hunt, and the control (the clean RTL built as they are)
    // replays each trace a variant was caught on, past the cycle it was caught at, so each catch is the
    // bug's and not the smaller build's.
    let ports = |t: &SwitchTrace| t.config.ports.len();
    let bug_ports = cosim::table::module("ib_switch")
        .unwrap()
        .bug_params
        .iter()
        .find(|(k, _)| *k == "NPorts")
        .map_or(usize::MAX, |&(_, v)| v as usize);
    let mut hunt: Vec<&(String, String, SwitchTrace)> = traces()
        .iter()
        .filter(|(_, _, t)| ports(t) <= bug_ports)
        .collect();
    assert!(
        hunt.len() >= 5,
        "{} traces of switches of at most {bug_ports} ports",
        hunt.len()
    );
    hunt.sort_by_cached_key(|(_, _, t)| {
        let vls = t.config.ports.iter().map(|p| p.data_vls).max().unwrap_or(0);
        let heads = t
            .events
            .iter()
            .filter(|e| matches!(e.what, HandIn::Packet(_)))
            .count();
        std::cmp::Reverse((vls, heads))
    });
    // The last cycle each trace showed a fault at, by its index in the hunt.
    let mut caught_on: Vec<Option<u64>> = vec![None; hunt.len()];
    for bug in bugs() {
        let by = hunt.iter().enumerate().find_map(|(i, (sc, sw, t))| {
            let o = ReplayOpts {
                bug: Some(bug.into()),
                ..ReplayOpts::default()
            };
            match replay(t, &o).unwrap() {
                SwitchReplay::Mismatch(m) => {
                    Some((i, format!("{sc} {sw} at cycle {}", m.cycle), m.cycle))
                }
                SwitchReplay::Matched { .. } => None,
            }
        });
        match by {
            Some((i, w, cycle)) => {
                println!("{bug}: caught on {w}");
                caught_on[i] = caught_on[i].max(Some(cycle));
            }
            None => panic!("{bug} went unseen on every scenario's trace"),
        }
    }
    for ((sc, sw, t), last) in hunt.iter().zip(caught_on) {
        let Some(last) = last else { continue };
        let o = ReplayOpts {
            build: CleanBuild::Reduced,
            cycles: Some(last + 1),
            ..ReplayOpts::default()
        };
        match replay(t, &o).unwrap() {
            SwitchReplay::Matched { cycles, .. } => {
                println!("control: {sc} {sw} exact to cycle {cycles}")
            }
            SwitchReplay::Mismatch(m) => {
                panic!("the control differs from the model: {sc} {sw}: {m}")
            }
        }
    }
}

#[test]
fn marking_at_enqueue_with_the_counter_replays_exactly() {
    marking_at_enqueue_replays_exactly(traces(), MarkMode::Counter);
}

#[test]
fn marking_at_enqueue_with_the_lfsr_replays_exactly() {
    marking_at_enqueue_replays_exactly(traces(), MarkMode::Lfsr);
}

#[test]
fn every_root_rule_replays_exactly() {
    stall_window_rule_replays_exactly(traces());
}

/// Cycles in which packet heads on two or more input ports are routed to one output (by the LFT; the output
/// VL is not told apart): with cut-through they join that output's VoQs in the same cycle, the case where
/// the RTL's FECN decisions at enqueue (`hdl/mark_enq.sv`, a parallel prefix) stand in for a chain.
fn same_cycle_heads_to_one_output(t: &SwitchTrace) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < t.events.len() {
        let c = t.events[i].cycle;
        let mut outs = Vec::new();
        while i < t.events.len() && t.events[i].cycle == c {
            if let HandIn::Packet(ps) = &t.events[i].what {
                if let Some(Some(o)) = t.config.lft.get(usize::from(ps.desc.dlid)) {
                    outs.push(*o);
                }
            }
            i += 1;
        }
        outs.sort_unstable();
        if outs.windows(2).any(|w| w[0] == w[1]) {
            n += 1;
        }
    }
    n
}

/// The shipped scenarios mark at enqueue with the counter (Marking_Rate 10) or at dequeue, never with the
/// LFSR: the traces with the most same-cycle heads to one output are replayed again with every output
/// marking at enqueue, Threshold 15 and Victim_Mask set (the marking state as often as the detector gives
/// it), in both modes, at Marking_Rates that wrap the counter several times in a cycle's decisions (0, 2)
/// or not (10), with and without the Packet_Size check excluding short packets. The hand-ins are the same
/// (marking changes no timing), so each replay is a valid trace of a switch so configured. `only`: the mode
/// replayed (one test per mode, so the two run in parallel).
fn marking_at_enqueue_replays_exactly(traces: &[(String, String, SwitchTrace)], only: MarkMode) {
    let mut by: Vec<(usize, &(String, String, SwitchTrace))> = traces
        .iter()
        .map(|x| (same_cycle_heads_to_one_output(&x.2), x))
        .collect();
    by.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let variants = [
        (MarkMode::Counter, 0u16, 0u8),
        (MarkMode::Counter, 2, 1),
        (MarkMode::Lfsr, 1, 0),
        (MarkMode::Lfsr, 10, 1),
    ];
    for (pairs, (sc, sw, t)) in by.into_iter().take(2) {
        assert!(
            pairs > 0,
            "{sc} {sw}: no cycle with two heads to one output"
        );
        for (mode, rate, size) in variants.into_iter().filter(|v| v.0 == only) {
            let mut t = t.clone();
            for (p, pc) in t.config.ports.iter_mut().enumerate() {
                pc.cc.mark_point = MarkPoint::Enqueue;
                pc.cc.mark_mode = mode;
                pc.cc.marking_rate = rate;
                pc.cc.packet_size = size;
                pc.cc.threshold = 15;
                pc.cc.victim_mask = true;
                pc.cc.lfsr_seed = 0x1D0F ^ (p as u16);
            }
            match replay(&t, &ReplayOpts::default()).unwrap() {
                SwitchReplay::Matched { cycles, marked, .. } => {
                    assert_eq!(cycles, CYCLES);
                    assert!(marked > 0, "{sc} {sw} {mode:?} {rate}: nothing marked");
                    println!(
                        "{sc} {sw}, {pairs} cycles with heads of two inputs to one output: {mode:?} Marking_Rate {rate} \
                         Packet_Size {size}: {marked} packets with FECN, exact"
                    );
                }
                SwitchReplay::Mismatch(m) => {
                    let path = std::env::temp_dir()
                        .join(format!("switch-trace-{sc}-{sw}-{mode:?}-{rate}.txt"));
                    t.write(std::fs::File::create(&path).unwrap(), &[]).unwrap();
                    panic!(
                        "{sc} {sw} {mode:?} {rate}: {m} (trace in {})",
                        path.display()
                    )
                }
            }
        }
    }
}

/// The root rules: the shipped scenarios run on the default, the stall window (`RootRule::StallWindow`,
/// which reads each output VL's XmitWait condition: the RTL computes it from its own request state,
/// `ib_switch`'s `cd_stall`); here the traces of Gran's scenario 1 at the hardware's settings and of RR-CC
/// with IB CC (where root and victim differ; the scenarios' other files share their fabrics and traffic)
/// are replayed with every output on the credit rule, and on the stall window at 1 cycle (the registered
/// stall alone) and 37 (ends between a victim's stalls), Threshold 15, Victim_Mask clear (only roots
/// mark). The root rule changes which packets are marked, not the switch's timing, so each replay is a
/// valid trace of a switch so configured.
fn stall_window_rule_replays_exactly(traces: &[(String, String, SwitchTrace)]) {
    use switch_asic::config::RootRule;
    let mut n = 0;
    for (sc, sw, t) in traces
        .iter()
        .filter(|(sc, _, _)| sc == "gran-s1-cc-on-hw" || sc == "rrcc-ib-cc")
    {
        for (rule, window) in [
            (RootRule::Credit, 0u16),
            (RootRule::StallWindow, 1),
            (RootRule::StallWindow, 37),
        ] {
            let mut t = t.clone();
            for pc in t.config.ports.iter_mut() {
                pc.cc.root_rule = rule;
                pc.cc.stall_window = window;
                pc.cc.threshold = 15;
                pc.cc.victim_mask = false;
            }
            match replay(&t, &ReplayOpts::default()).unwrap() {
                SwitchReplay::Matched { cycles, marked, .. } => {
                    assert_eq!(cycles, CYCLES);
                    println!("{sc} {sw}, {rule:?} {window}: {marked} packets with FECN, exact");
                    n += 1;
                }
                SwitchReplay::Mismatch(m) => {
                    let path = std::env::temp_dir()
                        .join(format!("switch-trace-{sc}-{sw}-{rule:?}-{window}.txt"));
                    t.write(std::fs::File::create(&path).unwrap(), &[]).unwrap();
                    panic!(
                        "{sc} {sw} {rule:?} {window}: {m} (trace in {})",
                        path.display()
                    )
                }
            }
        }
    }
    assert_eq!(
        n, 6,
        "the Gran scenario 1 and RR-CC traces, three rules each"
    );
}

/// `IBCYCLE_SWITCH_TRACE=FILE [IBCYCLE_SWITCH_VCD=W.vcd]`: replays one switch trace (for looking into a
/// mismatch; nothing without the variable).
#[test]
fn replay_a_trace_file_from_the_environment() {
    let Some(f) = std::env::var_os("IBCYCLE_SWITCH_TRACE") else {
        return;
    };
    let t = SwitchTrace::parse(&std::fs::read_to_string(f).unwrap()).unwrap();
    let o = ReplayOpts {
        vcd: std::env::var_os("IBCYCLE_SWITCH_VCD").map(Into::into),
        ..ReplayOpts::default()
    };
    println!("{:?}", replay(&t, &o).unwrap());
}
