//! Determinism: the same scenario and seed give byte-identical outputs on every run, and a sweep gives
//! byte-identical point summaries and `sweep.csv` whatever its thread count or sharding.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Two hosts into one (a hot spot) with IB CC on both sides, so marking, CNPs and rate changes all happen.
const HOTSPOT: &str = r#"name = "hotspot"
duration_us = 40
seed = 7
[settings]
sample_interval_us = 5
# Room for a queue above threshold 8 beyond one packet (a 128-block buffer holds under three 2 KiB packets
# behind the one leaving, and threshold 8 is 81 blocks there).
switch_vl_buf_blocks = 512
[switch_cc]
threshold = 8
marking_rate = 2
[hca_cc]
ccti_increase = 2
ccti_timer = 5
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
dst = "H3"
start_us = 10
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibcycle-det-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ibcycle(args: &[&str]) -> String {
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    String::from_utf8_lossy(&r.stdout).into_owned()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn two_runs_give_identical_summaries() {
    let d = tmp("run");
    let file = d.join("hotspot.toml");
    std::fs::write(&file, HOTSPOT).unwrap();
    let f = file.to_str().unwrap();
    for o in ["a", "b"] {
        ibcycle(&["run", f, "--out", d.join(o).to_str().unwrap()]);
    }
    let (a, b) = (
        read(&d.join("a/summary.json")),
        read(&d.join("b/summary.json")),
    );
    assert_eq!(a, b);
    assert_eq!(
        read(&d.join("a/throughput.csv")),
        read(&d.join("b/throughput.csv"))
    );
    // The run is not trivially empty: CC acted.
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert!(v["flows"][0]["cnp_sent"].as_u64().unwrap() > 0, "{v}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn sweeps_are_identical_for_any_thread_count_and_sharding() {
    let d = tmp("sweep");
    let file = d.join("hotspot.toml");
    std::fs::write(&file, HOTSPOT).unwrap();
    let f = file.to_str().unwrap();
    let sets = [
        "--set",
        "switch_cc.threshold=0,8",
        "--set",
        "hca_cc.ccti_increase=1,4",
    ];
    let run = |out: &str, extra: &[&str]| {
        let o = d.join(out);
        let mut args = vec!["sweep", f];
        args.extend(sets);
        args.extend(["--out", o.to_str().unwrap()]);
        args.extend(extra);
        ibcycle(&args)
    };
    run("j1", &["--jobs", "1"]);
    run("j2", &["--jobs", "2"]);
    run("sh", &["--shard", "1/2", "--jobs", "1"]);
    run("sh", &["--shard", "0/2", "--jobs", "2"]);
    let csv = read(&d.join("j1/sweep.csv"));
    assert_eq!(csv, read(&d.join("j2/sweep.csv")));
    assert_eq!(csv, read(&d.join("sh/sweep.csv")));
    let mut ids: Vec<_> = std::fs::read_dir(d.join("j1/points"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    ids.sort();
    assert_eq!(ids.len(), 4);
    for id in &ids {
        let s = |o: &str| read(&d.join(o).join("points").join(id).join("summary.json"));
        assert_eq!(s("j1"), s("j2"), "{id:?}");
        assert_eq!(s("j1"), s("sh"), "{id:?}");
    }
    // The thread count and sharding are invisible; the swept values are not.
    let text = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    // fecn_marked (column 5): threshold 0 marks nothing, threshold 8 marks at the hot spot.
    assert_eq!(rows[0].split(',').nth(5), Some("0"), "{text}");
    assert_ne!(rows[2].split(',').nth(5), Some("0"), "{text}");
    std::fs::remove_dir_all(&d).ok();
}
