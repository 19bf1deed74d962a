//! Switch port traces recorded from every shipped InfiniBand scenario replay through the switch RTL
//! (`hdl/ib_switch.sv`) against the fabric's own switch (`switch_asic::Switch`) with no mismatch on any port
//! in any cycle, and every bug variant of the RTL is caught on them. Needs Verilator (feature `cosim`).
//!
//! Each scenario is shortened for a debug build: its flows start 2 us apart (cycling over five start times)
//! instead of their own times, so queues build and congestion control marks within the first
//! [`CYCLES`] cycles, which are recorded. Every switch's hand-ins are logged in one run; the busiest switch
//! (most packet heads handed in) is replayed. RoCEv2 scenarios (PFC ports, which the RTL does not have)
//! and queueing-model files are not fabric IB scenarios and are left out.
#![cfg(feature = "cosim")]

use cosim::switch::{replay, ReplayOpts, SwitchReplay};
use cosim::switch_trace::SwitchTrace;
use ibcycle::run::port_trace;

mod common;

/// Cycles recorded per scenario.
const CYCLES: u64 = 30_000;

/// The busiest switch's trace of each scenario: (scenario, switch, trace).
fn traces() -> Vec<(String, String, SwitchTrace)> {
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
fn every_ib_scenario_replays_exactly_and_every_bug_is_caught() {
    let traces = traces();
    for (sc, sw, t) in &traces {
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
    for bug in bugs() {
        let by = traces.iter().find_map(|(sc, sw, t)| {
            let o = ReplayOpts {
                bug: Some(bug.into()),
                ..ReplayOpts::default()
            };
            match replay(t, &o).unwrap() {
                SwitchReplay::Mismatch(m) => Some(format!("{sc} {sw} at cycle {}", m.cycle)),
                SwitchReplay::Matched { .. } => None,
            }
        });
        match by {
            Some(w) => println!("{bug}: caught on {w}"),
            None => panic!("{bug} went unseen on every scenario's trace"),
        }
    }
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
