//! The `ibcycle run` command: writes the three outputs for a good scenario (quiet when stderr is not a
//! terminal), and fails with the file, line and field for a bad one.

use std::process::Command;

fn ibcycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
}

const CHAIN: &str = r#"name = "two-hops"
duration_us = 50
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
dst = "H3"
start_us = 20
"#;

#[test]
fn run_writes_summary_csv_and_plot() {
    let dir = std::env::temp_dir().join(format!("ibcycle-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chain.toml");
    std::fs::write(&file, CHAIN).unwrap();
    let out = ibcycle()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.is_empty(),
        "no progress bar off a terminal: {stderr:?}"
    );
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(v["scenario"], "two-hops");
    assert_eq!(
        (v["sim_time_us"].as_u64(), v["cycles"].as_u64()),
        (Some(50), Some(50_000))
    );
    assert_eq!(v["flows"][1]["id"], "B");
    assert_eq!(v["flows"][1]["src"], "H1");
    // A and B share H3's link from 20 us on: A is alone for 20 of its 50 us.
    let (a, b) = (
        v["flows"][0]["avg_gbps"].as_f64().unwrap(),
        v["flows"][1]["avg_gbps"].as_f64().unwrap(),
    );
    // B gets a real share of the link over its own 30 us (fair: 8 Gbit/s; a B that delivers nothing, or
    // only a packet or two, fails), A more than B, and together they fit the 16 Gbit/s link.
    assert!(b > 4.0, "B delivers its share: {b}");
    assert!(a > b && a + b * 30.0 / 50.0 < 16.0, "{a} {b}");
    assert_eq!(v["invariants"]["packets_lost"], 0);
    assert_eq!(v["invariants"]["credits_leaked"], 0);
    let csv = std::fs::read_to_string(dir.join("o/throughput.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "time_us,flow,gbps");
    assert_eq!(lines.len(), 1 + 10 * 2, "ten 5-us samples of two flows");
    assert!(
        lines[1].starts_with("5,A,") && lines[2] == "5,B,0.000",
        "{:?}",
        &lines[..3]
    );
    assert!(
        std::fs::metadata(dir.join("o/throughput.png"))
            .unwrap()
            .len()
            > 1000
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_names_the_file_line_and_field_of_a_bad_scenario() {
    let dir = std::env::temp_dir().join(format!("ibcycle-cli-run-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        CHAIN.replace("sample_interval_us = 5", "sample_interval_us = 0"),
    )
    .unwrap();
    let out = ibcycle()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("bad.toml:4: ") && stderr.contains("settings.sample_interval_us: 0"),
        "{stderr}"
    );
    assert!(!dir.join("o").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A reader that goes away (`ibcycle run ... | head -1`) does not turn a finished run into a panic.
#[test]
fn a_closed_stdout_is_not_a_failure() {
    let dir = std::env::temp_dir().join(format!("ibcycle-cli-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chain.toml");
    std::fs::write(&file, CHAIN).unwrap();
    let mut child = ibcycle()
        .args(["run", file.to_str().unwrap(), "--out"])
        .arg(dir.join("out"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
    assert!(dir.join("out/summary.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
