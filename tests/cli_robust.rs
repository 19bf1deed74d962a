//! `ibcycle run` against careless or hostile input: files that are not scenario files, names that try to
//! leave the output directory, options that name nothing, runs that fail after an earlier one succeeded,
//! and values that are allowed but probably not meant. Each must fail cleanly before anything is written,
//! or succeed with outputs that keep to the model's limits.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TWO_HOSTS: &str = r#"name = "robust"
duration_us = 40
[settings]
sample_interval_us = 10
[[switch]]
name = "S1"
ports = 4
[[hca]]
name = "H1"
[[hca]]
name = "H2"
[[link]]
ends = ["H1", "S1:1"]
rate = "4xDDR"
latency_ns = 100
[[link]]
ends = ["H2", "S1:2"]
rate = "4xDDR"
latency_ns = 100
[[flow]]
id = "F1"
src = "H1"
dst = "H2"
"#;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibcycle-robust-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `ibcycle run FILE --out OUT EXTRA...`.
fn ibcycle_run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![file.as_os_str(), OsStr::new("--out"), out.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    run(&args)
}

#[test]
fn devices_fifos_and_directories_are_not_read() {
    let d = dir("inputs");
    let fifo = d.join("fifo.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for input in [Path::new("/dev/zero"), &fifo, &d] {
        let out = d.join("o");
        let o = run(&[input, Path::new("--out"), &out]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{}: {e}", input.display());
        assert!(e.contains("not a regular file"), "{}: {e}", input.display());
        assert!(!out.exists());
    }
    // A file above the size limit is refused without being read.
    let big = d.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(17 << 20).unwrap();
    let o = run(&[&big, Path::new("--out"), &d.join("o")]);
    assert!(
        stderr(&o).contains("a scenario file has at most 16777216"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_name_cannot_write_outside_the_output_directory() {
    let d = dir("evil");
    let deep = d.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    let file = deep.join("s.toml");
    std::fs::write(&file, TWO_HOSTS.replace("\"H1\"", "\"../../evil\"")).unwrap();
    let out = deep.join("out");
    let o = ibcycle_run(
        &file,
        &out,
        &["--pcap", "../../evil", "--vcd", "../../evil"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join(".._.._evil.pcap").is_file());
    assert!(!d.join("evil.pcap").exists() && !d.join("a/evil.pcap").exists());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn outputs_are_replaced_whole_or_not_at_all() {
    let d = dir("atomic");
    let file = d.join("s.toml");
    std::fs::write(&file, TWO_HOSTS).unwrap();
    let out = d.join("o");
    let pcap = |l: &str| ibcycle_run(&file, &out, &["--pcap", l]);
    assert!(pcap("H1").status.success());
    assert!(out.join("H1.pcap").is_file());
    // A later run does not leave the earlier run's capture behind.
    assert!(pcap("H2").status.success());
    assert!(out.join("H2.pcap").is_file() && !out.join("H1.pcap").exists());
    // A run that fails (a switch that does not exist) fails before running and leaves the outputs alone.
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let o = ibcycle_run(&file, &out, &["--port-trace", "S9"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--port-trace S9: no switch \"S9\" (switches: S1)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    assert!(out.join("H2.pcap").is_file());
    // Nothing is left beside the output directory.
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // A directory holding files a run does not write is the user's: refused, untouched.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run(&[&file, Path::new("--out"), &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("\"notes.txt\""), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn doubtful_values_are_warned_about_on_stderr_and_in_the_summary() {
    let d = dir("warn");
    let file = d.join("s.toml");
    std::fs::write(&file, format!("{TWO_HOSTS}start_us = 40\n")).unwrap();
    let out = d.join("o");
    let o = run(&[&file, Path::new("--out"), &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = "s.toml:24: flow[0].start_us: 40 is not before duration_us (40)";
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(v["warnings"][0].as_str().unwrap().contains(want), "{v}");
    // A constant 1 Mbit/s flow of 1 MiB messages: its one message counts in full, far above the rate.
    std::fs::write(
        &file,
        format!("{TWO_HOSTS}pattern = \"constant\"\nrate = \"1Mbps\"\n"),
    )
    .unwrap();
    let o = run(&[&file, Path::new("--out"), &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = "s.toml:25: flow[0].rate: 1 Mbit/s offers one 1048576-byte message per 8388608.000 us, longer than the flow is active (40 us)";
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(v["warnings"][0].as_str().unwrap().contains(want), "{v}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_short_flow_never_reports_more_than_its_link_carries() {
    let d = dir("rate");
    let file = d.join("s.toml");
    // Active for 1 us, but the packet it starts in that microsecond arrives whole after it.
    std::fs::write(&file, format!("{TWO_HOSTS}stop_us = 1\n")).unwrap();
    let out = d.join("o");
    let o = run(&[&file, Path::new("--out"), &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let gbps = v["flows"][0]["avg_gbps"].as_f64().unwrap();
    let bytes = v["flows"][0]["delivered_bytes"].as_u64().unwrap();
    // More than 1 us of the 16 Gbit/s link was delivered: the rate is the link's, not above it.
    assert!(bytes * 8 > 16_000, "{bytes}");
    assert!(gbps > 15.0 && gbps <= 16.0, "{gbps}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_fabric_above_the_memory_limit_is_refused_before_it_is_built() {
    let d = dir("mem");
    let file = d.join("s.toml");
    std::fs::write(&file, TWO_HOSTS).unwrap();
    let out = d.join("o");
    let o = ibcycle_run(&file, &out, &["--max-memory", "1M"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("more than --max-memory 1.0 MiB"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bench_refuses_a_duration_that_would_wrap() {
    let o = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(["bench", "idle", "--sim-us", "18446744073709552"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("18446744073709552"), "{}", stderr(&o));
}

#[test]
fn two_captures_that_would_share_a_file_are_refused() {
    let d = dir("collide");
    let file = d.join("s.toml");
    // "H/1" and "H_1" both become H_1.pcap.
    std::fs::write(
        &file,
        TWO_HOSTS
            .replace("\"H1\"", "\"H/1\"")
            .replace("\"H2\"", "\"H_1\""),
    )
    .unwrap();
    let out = d.join("o");
    let o = ibcycle_run(&file, &out, &["--pcap", "all"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("would both be written to H_1.pcap"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&d).ok();
}
