//! Port traces recorded from fabric runs of scenarios/gran-s1-cc-on-quick.toml drive the `switch_core`
//! co-simulation: the clean RTL matches its Rust twin on every cycle, and every bug variant of `switch_core`
//! is caught on real traffic, both on the shipped 1-VL scenario and on a 2-VL variant. Needs Verilator
//! (feature `cosim`).
//!
//! On the 1-VL trace `BUG_CONG_VL_INDEX` (VL v's congestion detector fed VL 1-v's fills) shows only because
//! output readiness follows the fabric: with every output always ready the core drains its VoQs at one block
//! a cycle, they never reach the threshold, and the bug went unseen over these 60,000 cycles (measured by
//! replaying the same trace with `out_ready_i` forced to 15).
#![cfg(feature = "cosim")]

use cosim::blocks::RunOpts;
use cosim::check::CosimError;
use cosim::registry;
use ibcycle::run::port_trace;
use std::path::{Path, PathBuf};

/// Cycles recorded: 60 us at the scenario's 1000 MHz.
const CYCLES: u64 = 60_000;

/// The scenario, with `data_vls = 2` and flows F2 and F4 on SL 1 (so VL 1) when `two_vls`; shortened for a
/// debug build: the five flows start 5 us apart instead of 400 us (so S1's trunk to S2 is shared by F1-F3
/// within the trace) and 60 us are recorded.
fn record(dir: &Path, two_vls: bool) -> PathBuf {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on-quick.toml");
    let mut text = std::fs::read_to_string(&file).unwrap();
    if two_vls {
        text = text.replacen("[settings]\n", "[settings]\ndata_vls = 2\n", 1);
        for f in ["F2", "F4"] {
            let id = format!("id = \"{f}\"\n");
            assert!(text.contains(&id), "{f} not in the scenario");
            text = text.replacen(&id, &format!("{id}sl = 1\n"), 1);
        }
    }
    let mut sc = ibcycle::scenario::parse(&file, &text).unwrap();
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = 5 * i as u64;
    }
    assert_eq!(u64::from(sc.settings.clock_mhz), CYCLES / 60);
    let path = port_trace::file_name(dir, "S1");
    let left = port_trace::record(&sc, "S1", CYCLES, &path).unwrap();
    // S1 has four connected ports and the flows use VLs 0 and 1: nothing is folded or left out.
    assert_eq!(left, port_trace::LeftOut::default());
    path
}

/// What the trace carries, summed over its rows.
#[derive(Debug, Default)]
struct Seen {
    /// Core ports with a packet start.
    ports: u8,
    /// Packet starts on VL 1.
    vl1_packets: usize,
    /// Flow-control packets, and those on VL 1.
    fc: usize,
    vl1_fc: usize,
    /// Cycles in which some output is not ready, and in which output 3 (the trunk) is.
    not_ready: usize,
    trunk_ready: usize,
}

fn seen(path: &Path) -> Seen {
    let text = std::fs::read_to_string(path).unwrap();
    let mut s = Seen::default();
    let mut rows = 0;
    for l in text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
    {
        let r: Vec<u8> = [2, 3, 6, 7, 10]
            .iter()
            .map(|&k| l.split(',').nth(k).unwrap().parse().unwrap())
            .collect();
        rows += 1;
        s.ports |= r[0];
        s.vl1_packets += (r[0] & r[1]).count_ones() as usize;
        s.fc += r[2].count_ones() as usize;
        s.vl1_fc += (r[2] & r[3]).count_ones() as usize;
        s.not_ready += usize::from(r[4] != 0b1111);
        s.trunk_ready += usize::from(r[4] & 0b1000 != 0);
    }
    assert_eq!(rows, CYCLES);
    s
}

/// Replays `path` clean, which must match, then with every bug variant of `switch_core` (the `` `ifdef
/// IBCYCLE_FAULT_<NAME> `` lines of its file, variant `BUG_<NAME>`), each of which must be caught. Returns
/// the coverage of the clean replay (printed: which congestion states, arbitration cases and credit
/// corners the scenario's traffic reached).
fn matches_and_catches_every_bug(path: &Path) -> cosim::cover::Coverage {
    let (m, cov) = registry::run_trace_file_covered(path, &RunOpts::new(u64::MAX)).unwrap();
    assert_eq!(m.unwrap().cycles, CYCLES);
    assert_eq!((cov.cycles, cov.configs), (CYCLES, 1));
    println!("{}", cov.table());
    let hdl =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("hdl/switch_core.sv"))
            .unwrap();
    let mut bugs: Vec<String> = hdl
        .lines()
        .filter_map(|l| l.strip_prefix("`ifdef IBCYCLE_FAULT_"))
        .map(|b| format!("BUG_{}", b.trim()))
        .collect();
    bugs.sort();
    bugs.dedup();
    assert!(bugs.len() >= 2, "{bugs:?}");
    for bug in bugs {
        caught(path, &bug);
    }
    cov
}

/// Replays `path` with bug variant `bug`, which must be caught.
fn caught(path: &Path, bug: &str) {
    let opts = RunOpts {
        bug: Some(bug.into()),
        ..RunOpts::new(u64::MAX)
    };
    match registry::run_trace_file(path, &opts) {
        Err(CosimError::Mismatch(mm)) => assert!(mm.cycle < CYCLES),
        other => panic!("{bug} went unseen on the fabric trace: {other:?}"),
    }
}

fn tmp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ibcycle-port-trace-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn gran_s1_trace_replays_without_a_mismatch_and_catches_every_switch_core_bug() {
    let dir = tmp("1vl");
    let path = record(&dir, false);
    let s = seen(&path);
    // Traffic: packet starts on at least three core ports and flow-control packets, all on VL 0.
    assert!(s.ports.count_ones() >= 3, "packets on ports {:#b}", s.ports);
    assert!(s.fc > 100, "{} flow-control packets", s.fc);
    assert_eq!((s.vl1_packets, s.vl1_fc), (0, 0));
    // The trunk out of S1 is busy with the fabric's packets much of the time (F1-F3 share it from 10 us on)
    // and free at times: readiness follows the fabric.
    assert!(s.not_ready > CYCLES as usize / 4, "{s:?}");
    assert!(s.trunk_ready > 100, "{s:?}");

    let cov = matches_and_catches_every_bug(&path);
    // The fabric's traffic reaches congestion, FECN marks, credit exhaustion and flow control.
    for p in [
        "packet_in",
        "packet_out",
        "congested",
        "fecn",
        "credit_short",
        "fc_in",
        "fc_out",
    ] {
        assert!(
            cov.hits_of(p).unwrap() > 0,
            "{p} not reached:\n{}",
            cov.table()
        );
    }
    assert_eq!(cov.hits_of("vl1_out"), Some(0), "one VL");
    // A lossless fabric's traffic is lossless through the core too: its buffer (the fabric's, capped at the
    // descriptor pool) holds whatever the fabric's credit admitted on this trace.
    assert_eq!(cov.hits_of("drop"), Some(0), "drops:\n{}", cov.table());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_vl_gran_s1_trace_replays_and_catches_every_switch_core_bug() {
    let dir = tmp("2vl");
    let path = record(&dir, true);
    let s = seen(&path);
    // Both VLs carry packets and flow-control packets.
    assert!(s.vl1_packets > 20, "{s:?}");
    assert!(s.vl1_fc > 20 && s.fc > s.vl1_fc + 20, "{s:?}");

    let cov = matches_and_catches_every_bug(&path);
    for p in ["vl1_in", "vl1_out", "congested", "vls_decide_apart"] {
        assert!(
            cov.hits_of(p).unwrap() > 0,
            "{p} not reached:\n{}",
            cov.table()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_switch_is_named() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on-quick.toml");
    let sc = ibcycle::scenario::load(&file).unwrap();
    let e = port_trace::record(&sc, "S9", 10, Path::new("/nonexistent/x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--port-trace S9: no switch \"S9\" (switches: S1, S2)"
    );
}
