//! A port trace recorded from the fabric run of scenarios/gran-s1-cc-on.toml drives the `switch_core`
//! co-simulation: the clean RTL matches its Rust twin on every cycle, and a bug variant is caught.
//! Needs Verilator (feature `cosim`).
#![cfg(feature = "cosim")]

use cosim::blocks::RunOpts;
use cosim::check::CosimError;
use cosim::registry;
use ibcycle::run::port_trace;
use std::path::Path;

/// The scenario shortened for a debug build: the five flows start 5 us apart instead of 400 us (so S1's
/// trunk to S2 is shared by F1-F3 within the trace) and 60 us are recorded.
fn record(dir: &Path) -> std::path::PathBuf {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on.toml");
    let mut sc = ibcycle::scenario::load(&file).unwrap();
    for (i, f) in sc.flows.iter_mut().enumerate() {
        f.start_us = 5 * i as u64;
    }
    let cycles = 60 * u64::from(sc.settings.clock_mhz);
    let path = port_trace::file_name(dir, "S1");
    port_trace::record(&sc, "S1", cycles, &path).unwrap();
    path
}

#[test]
fn gran_s1_trace_replays_without_a_mismatch_and_catches_a_bug() {
    let dir = std::env::temp_dir().join(format!("ibcycle-port-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = record(&dir);
    let text = std::fs::read_to_string(&path).unwrap();
    // The trace carries traffic: packet starts on at least three core ports and flow-control packets.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 60_000);
    let mut ports = 0u8;
    let mut fc = 0;
    for r in &rows {
        ports |= r[2].parse::<u8>().unwrap();
        fc += usize::from(r[6] != "0");
    }
    assert!(ports.count_ones() >= 3, "packets on ports {ports:#b}");
    assert!(fc > 100, "{fc} flow-control packets");

    let m = registry::run_trace_file(&path, &RunOpts::new(u64::MAX)).unwrap();
    assert_eq!(m.cycles, 60_000);

    let bug = RunOpts {
        bug: Some("BUG_CREDIT_BYPASS".into()),
        ..RunOpts::new(u64::MAX)
    };
    match registry::run_trace_file(&path, &bug) {
        Err(CosimError::Mismatch(mm)) => assert!(mm.cycle < 60_000),
        other => panic!("BUG_CREDIT_BYPASS went unseen on the fabric trace: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_switch_is_named() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on.toml");
    let sc = ibcycle::scenario::load(&file).unwrap();
    let e = port_trace::record(&sc, "S9", 10, Path::new("/nonexistent/x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--port-trace S9: no switch \"S9\" (switches: S1, S2)"
    );
}
