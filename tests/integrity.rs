//! The integrity check that ends every run: a deliberately broken setting must fail it with a message that
//! says what broke, through the library and through `ibcycle run` (exit status 1, outputs still written
//! for inspection).

use std::path::Path;
use std::process::Command;

const CHAIN: &str = r#"name = "integrity"
duration_us = 30
[settings]
sample_interval_us = 5
[chain]
switches = 2
hosts_per_switch = 2
host_rate = "4xDDR"
trunk_rate = "4xQDR"
[[flow]]
id = "A"
src = "H0"
dst = "H3"
[[flow]]
id = "B"
src = "H1"
dst = "H2"
"#;

fn scenario() -> ibcycle::scenario::Scenario {
    ibcycle::scenario::parse(Path::new("integrity.toml"), CHAIN).unwrap()
}

#[test]
fn a_good_run_passes() {
    let r = ibcycle::run::run(&scenario(), false).unwrap();
    assert_eq!(
        r.summary.invariants.broken(),
        None,
        "{:?}",
        r.summary.invariants
    );
    assert!(r.summary.invariants.packets_delivered > 0);
}

#[test]
fn no_drain_leaves_packets_in_flight_and_says_so() {
    let mut sc = scenario();
    // Saturating flows always have packets on the wires when the run ends; with no drain they stay there.
    sc.settings.drain_limit_us = 0;
    let r = ibcycle::run::run(&sc, false).unwrap();
    let inv = &r.summary.invariants;
    assert!(!inv.drained && inv.packets_in_flight > 0, "{inv:?}");
    let why = inv.broken().expect("integrity must fail");
    assert!(
        why.contains(&format!(
            "{} packets still in flight",
            inv.packets_in_flight
        )) && why.contains("settings.drain_limit_us"),
        "{why}"
    );
}

#[test]
fn a_receive_buffer_below_one_packet_deadlocks_and_the_check_says_so() {
    let mut sc = scenario();
    // The parser refuses this (hca_vl_buf_blocks >= 66); through the library a 20-block buffer can never
    // take a 2048-byte packet (34 blocks), so the first packets wait for credit for ever.
    sc.settings.hca_vl_buf_blocks = 20;
    sc.settings.drain_limit_us = 200;
    let r = ibcycle::run::run(&sc, false).unwrap();
    let inv = &r.summary.invariants;
    assert_eq!(inv.packets_delivered, 0, "{inv:?}");
    assert!(
        inv.packets_in_flight > 0 && inv.packets_lost == 0,
        "{inv:?}"
    );
    let why = inv.broken().expect("integrity must fail");
    assert!(
        why.contains("still in flight") && why.contains("stuck"),
        "{why}"
    );
}

#[test]
fn a_switch_buffer_below_one_packet_is_refused_before_the_run() {
    let mut sc = scenario();
    sc.settings.switch_vl_buf_blocks = 20;
    let e = ibcycle::run::run(&sc, false).unwrap_err().to_string();
    assert!(
        e.contains("vl_buf_blocks")
            && e.contains("20")
            && e.contains("smaller than one MTU packet"),
        "{e}"
    );
}

#[test]
fn ibcycle_run_fails_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("ibcycle-integrity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nodrain.toml");
    std::fs::write(
        &file,
        CHAIN.replace(
            "sample_interval_us = 5",
            "sample_interval_us = 5\ndrain_limit_us = 0",
        ),
    )
    .unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("nodrain.toml: integrity check failed: ")
            && stderr.contains("packets still in flight after the drain limit"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).unwrap();
    assert!(summary.contains("\"drained\": false"), "{summary}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A switch that misbehaves in each way the integrity check must see: each fault alone fails the run with
/// a message naming it (`ibcycle run` prints that message and exits 1: `ibcycle_run_fails_with_the_reason`).
#[test]
fn every_injected_fault_is_reported_by_name() {
    use ibcycle::fabric::Fault;
    let sc = scenario();
    for (fault, want) in [
        (Fault::DropPacket, "1 packets lost"),
        (Fault::DuplicatePacket, "1 packets duplicated"),
        (
            Fault::DuplicatePacket,
            "1 packets reached their destination out of PSN order",
        ),
        (
            Fault::CorruptPacket,
            "1 packets failed their destination's ICRC check",
        ),
        (Fault::LeakCredit, "1 credit blocks leaked"),
        (Fault::ExtraCredit, "1 credit blocks leaked (1 gained"),
    ] {
        let r = ibcycle::run::run_with_fault(&sc, fault).unwrap();
        let inv = &r.summary.invariants;
        let why = inv
            .broken()
            .unwrap_or_else(|| panic!("{fault:?} went unseen: {inv:?}"));
        assert!(why.contains(want), "{fault:?}: {why}");
        // The summary says it too: the field is written when not 0.
        let json = serde_json::to_string(&r.summary).unwrap();
        let field = match fault {
            Fault::DropPacket => "\"packets_lost\":1",
            Fault::DuplicatePacket if want.contains("PSN") => "\"psn_order_errors\":1",
            Fault::DuplicatePacket => "\"packets_duplicated\":1",
            Fault::CorruptPacket => "\"icrc_errors\":1",
            Fault::LeakCredit => "\"credits_leaked\":1",
            Fault::ExtraCredit => "\"credits_gained\":1",
        };
        assert!(json.contains(field), "{fault:?}: {json}");
    }
}

/// A good run balances exactly, and writes neither of the fields that appear only when not 0.
#[test]
fn a_good_run_balances_exactly() {
    let r = ibcycle::run::run(&scenario(), false).unwrap();
    let inv = &r.summary.invariants;
    assert_eq!(
        inv.packets_injected,
        inv.packets_delivered + inv.packets_in_flight,
        "{inv:?}"
    );
    let json = serde_json::to_string(&r.summary).unwrap();
    // A good run writes none of the fields that are written only when not 0.
    assert!(
        !json.contains("packets_duplicated")
            && !json.contains("credits_gained")
            && !json.contains("icrc_errors")
            && !json.contains("psn_order_errors"),
        "{json}"
    );
}
