//! The run's `--vcd` and `--trace` outputs on `scenarios/cao-cc-on-quick.toml` shortened to the onset of
//! congestion (H1 alone until 2000 us, then H3 joins; run to 2400 us), and the `run` command's checks of
//! the observation options.
//!
//! Shows: both files parse (the `vcd` crate's parser, the `csv` crate), and their values change when
//! congestion sets in and not before: S2 port 2 (towards H4) is never congested while H1 is alone, becomes
//! congested after H3 joins, and H1's CCTI leaves 0 only then. The trace's cumulative marks end at the
//! summary's count for that port, and observing changes no result.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ibcycle::run::{run, run_observed, ObserveOpts, Observers};
use ibcycle::scenario::{load, Scenario};

fn scenario() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cao-cc-on-quick.toml");
    let mut sc = load(&path).unwrap();
    sc.duration_us = 2400;
    sc
}

fn tmp(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ibcycle-observe-{}-{tag}", std::process::id()))
}

/// H3 starts at 2000 us: cycle 500 000 at the scenario's 250 MHz.
const ONSET_CYCLE: u64 = 2000 * 250;

fn vector_value(v: &vcd::Vector) -> u64 {
    v.iter()
        .fold(0, |acc, b| (acc << 1) | u64::from(b == vcd::Value::V1))
}

#[test]
fn vcd_and_trace_parse_and_change_when_congestion_sets_in() {
    let sc = scenario();
    let out = tmp("a");
    let opts = ObserveOpts {
        vcd: vec!["S2:2".into(), "H1".into()],
        trace: vec!["S2:2:0".into()],
        ..ObserveOpts::default()
    };
    let obs = Observers::open(&opts, &sc, &out).unwrap();
    let (r, written) = run_observed(&sc, false, obs).unwrap();
    written.unwrap();
    // Observing changes nothing.
    assert_eq!(run(&sc, false).unwrap().summary, r.summary);

    // The VCD: declared signals, and their changes.
    let text = std::fs::read(out.join("waves.vcd")).unwrap();
    let mut p = vcd::Parser::new(&text[..]);
    let header = p.parse_header().unwrap();
    let ps_per_cycle = 4000; // 250 MHz
    assert_eq!(header.timescale, Some((1, vcd::TimescaleUnit::PS)));
    let code = |path: &[&str]| {
        header
            .find_var(path)
            .unwrap_or_else(|| panic!("{path:?} declared"))
            .code
    };
    let cong = code(&["ibcycle", "S2_2", "vl0", "cong"]);
    let fill = code(&["ibcycle", "S2_2", "vl0", "voq_fill"]);
    let ccti = code(&["ibcycle", "H1", "ccti_H1"]);
    let _ = code(&["ibcycle", "H1", "credits_avail_vl0"]);
    let mut now = 0u64;
    let mut changes: HashMap<vcd::IdCode, Vec<(u64, u64)>> = HashMap::new();
    let mut last_time = None;
    for cmd in p {
        match cmd.unwrap() {
            vcd::Command::Timestamp(t) => {
                assert!(last_time.is_none_or(|l| t > l), "time goes forward");
                last_time = Some(t);
                now = t / ps_per_cycle;
            }
            vcd::Command::ChangeScalar(id, v) => changes
                .entry(id)
                .or_default()
                .push((now, u64::from(v == vcd::Value::V1))),
            vcd::Command::ChangeVector(id, v) => {
                changes.entry(id).or_default().push((now, vector_value(&v)))
            }
            _ => {}
        }
    }
    // Value changes only: no signal repeats its value.
    for (id, ch) in &changes {
        assert!(ch.windows(2).all(|w| w[0].1 != w[1].1), "{id:?} repeats");
    }
    let first_on = |id| changes[&id].iter().find(|(_, v)| *v != 0).map(|(t, _)| *t);
    let cong_on = first_on(cong).expect("S2 port 2 gets congested");
    let ccti_on = first_on(ccti).expect("H1's CCTI rises");
    eprintln!("congested from cycle {cong_on}, CCTI from {ccti_on}");
    assert!(cong_on > ONSET_CYCLE, "{cong_on}");
    assert!(ccti_on > cong_on, "marks, then CNPs, then CCTI");
    // VoQ fill changes with every packet, long before congestion.
    assert!(first_on(fill).unwrap() < ONSET_CYCLE);

    // The trace: a header, rows in cycle order, each differing from the one before in some value.
    let mut rd = csv::Reader::from_path(out.join("trace-S2_2-vl0.csv")).unwrap();
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        ibcycle::run::trace::COLUMNS
    );
    let rows: Vec<Vec<u64>> = rd.deserialize().map(|r| r.expect("numeric row")).collect();
    assert!(rows.len() > 100);
    for w in rows.windows(2) {
        assert!(w[1][0] > w[0][0], "cycles increase");
        assert_ne!(w[0][1..], w[1][1..], "a row per change");
        assert!(w[1][7] >= w[0][7] && w[1][8] >= w[0][8], "cumulative");
    }
    let congested: Vec<u64> = rows.iter().filter(|r| r[1] == 1).map(|r| r[0]).collect();
    assert!(!congested.is_empty(), "congestion shows in the trace");
    assert!(congested[0] > ONSET_CYCLE, "{}", congested[0]);
    assert_eq!(congested[0], cong_on, "trace and VCD agree");
    // Marks appear only with congestion, and end at the summary's count for the port.
    let first_mark = rows.iter().find(|r| r[7] > 0).expect("marks")[0];
    assert!(first_mark >= cong_on);
    let port = r
        .summary
        .ports
        .iter()
        .find(|p| p.switch == "S2" && p.port == 2 && p.vl == 0)
        .unwrap();
    let last = rows.last().unwrap();
    assert_eq!(last[7], port.packets_marked);
    assert_eq!(last[8], port.xmit_packets);
    let _ = std::fs::remove_dir_all(&out);
}

fn ibcycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
}

#[test]
fn run_names_an_observation_option_that_matches_nothing_and_writes_nothing() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cao-cc-on-quick.toml");
    for (opt, val, says) in [
        (
            "--pcap",
            "S1:8-S9:1",
            "--pcap S1:8-S9:1: no switch \"S9\" (switches: S1, S2)",
        ),
        ("--pcap", "S1:5", "--pcap S1:5: no link on this port"),
        ("--vcd", "H7", "--vcd H7: no HCA \"H7\""),
        ("--trace", "S2:2:3", "--trace S2:2:3: VL must be 0..1"),
        ("--trace", "S2:2", "--trace S2:2: expected SWITCH:PORT:VL"),
    ] {
        let out_dir = tmp("bad");
        let out = ibcycle()
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(&out_dir)
            .args([opt, val])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{opt} {val}: {err}");
        assert!(err.contains(says), "{opt} {val}: {err}");
        assert!(!out_dir.exists(), "nothing written for {opt} {val}");
    }
}

#[test]
fn run_help_explains_the_observation_options() {
    let out = ibcycle().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for want in [
        "--pcap <LINK>",
        "--vcd <BLOCK>",
        "--trace <PORT:VL>",
        "ERF",
        "row per change",
    ] {
        assert!(help.contains(want), "{want} in {help}");
    }
}

/// The capture without tshark (that decode is `tests/cao_capture.rs`): the S1-S2 link's pcap holds both
/// directions in time order, data packets whose CRCs verify, flow-control link records, and two runs write
/// the same bytes.
#[test]
fn trunk_capture_is_ordered_verified_and_deterministic() {
    use pcap_file::pcap::PcapReader;
    use rtl_model::crc::icrc::{ib_covered, verify_icrc};
    use rtl_model::crc::vcrc::verify_vcrc;

    let sc = scenario();
    let opts = ObserveOpts {
        pcap: vec!["S2:8-S1:8".into()],
        ..ObserveOpts::default()
    };
    let mut files = Vec::new();
    for tag in ["p1", "p2"] {
        let out = tmp(tag);
        let obs = Observers::open(&opts, &sc, &out).unwrap();
        let (r, written) = run_observed(&sc, false, obs).unwrap();
        written.unwrap();
        if tag == "p1" {
            // The tap changes no result.
            assert_eq!(r.summary, run(&sc, false).unwrap().summary);
        }
        files.push(std::fs::read(out.join("S1_8-S2_8.pcap")).unwrap());
        let _ = std::fs::remove_dir_all(&out);
    }
    assert_eq!(files[0], files[1], "deterministic capture");
    let mut rd = PcapReader::new(&files[0][..]).unwrap();
    let (mut data, mut fc, mut last) = (0u64, 0u64, std::time::Duration::ZERO);
    let mut slids = std::collections::BTreeSet::new();
    while let Some(p) = rd.next_packet() {
        let p = p.unwrap();
        assert!(p.timestamp >= last, "time order");
        last = p.timestamp;
        let bytes = &p.data[16..];
        match p.data[8] & 0x7F {
            21 => {
                let (kind, covered) = ib_covered(bytes).unwrap();
                assert!(verify_icrc(kind, covered).unwrap() && verify_vcrc(bytes));
                slids.insert(u16::from_be_bytes([bytes[6], bytes[7]]));
                data += 1;
            }
            25 => fc += 1,
            t => panic!("ERF type {t}"),
        }
    }
    // Data crosses S1->S2 from H1 (LID 1); CNPs to H1 cross S2->S1 from H4 (LID 4). Flow-control packets
    // go both ways every 256 cycles: about 2 x 2400 us x 250 MHz / 256 = 4688 of them.
    assert_eq!(slids.into_iter().collect::<Vec<_>>(), vec![1, 4]);
    assert!(data > 1000, "{data}");
    assert!((4600..4700).contains(&fc), "{fc}");
    assert!(last <= std::time::Duration::from_micros(2400));
}
