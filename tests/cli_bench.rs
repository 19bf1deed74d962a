//! `ibcycle bench`: one JSON object with the documented keys, and clear errors for bad arguments.

use std::process::Command;

fn ibcycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
}

#[test]
fn idle_bench_prints_one_json_object_with_every_key() {
    let out = ibcycle()
        .args(["bench", "idle", "--sim-us", "3000", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for k in [
        "bench",
        "sim_seconds",
        "wall_seconds",
        "sim_s_per_wall_s",
        "cpu_seconds",
        "port_cycles",
        "port_cycles_per_s",
        "peak_rss_mib",
        "threads",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {text}");
    }
    assert_eq!(v["bench"], "idle");
    assert_eq!(v["threads"], 1);
    assert!((v["sim_seconds"].as_f64().unwrap() - 0.003).abs() < 1e-12);
    // 2592 ports x 3 ms / 16 ns per block at 4x QDR.
    assert!((v["port_cycles"].as_f64().unwrap() - 2592.0 * 187_500.0).abs() < 1.0);
    assert!(v["peak_rss_mib"].as_f64().unwrap() > 0.0);
    // One thread cannot use more CPU than wall time (plus the 1-10 ms granularity of the two clocks' reads);
    // seconds, not microseconds, and the assembly is not counted.
    let (cpu, wall) = (
        v["cpu_seconds"].as_f64().unwrap(),
        v["wall_seconds"].as_f64().unwrap(),
    );
    assert!(cpu >= 0.0 && cpu <= wall + 0.01, "cpu {cpu} wall {wall}");
}

#[test]
fn bad_bench_arguments_are_named() {
    let out = ibcycle().args(["bench", "warp"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warp") && err.contains("clos648-shift-cc"),
        "{err}"
    );
    let out = ibcycle()
        .args(["bench", "idle", "--sim-us", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sim-us"));
    let out = ibcycle()
        .args(["bench", "idle", "--threads", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads"));
}

#[test]
fn a_threaded_bench_says_where_each_threads_time_went() {
    let out = ibcycle()
        .args([
            "bench",
            "clos648-shift-cc",
            "--sim-us",
            "2",
            "--threads",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let times = v["thread_times"].as_array().expect("thread_times");
    assert_eq!(times.len(), 2, "{v}");
    let wall = v["wall_seconds"].as_f64().unwrap();
    for t in times {
        let secs = ["stepping_seconds", "exchange_seconds", "waiting_seconds"]
            .map(|k| t[k].as_f64().unwrap());
        assert!(secs.iter().all(|&s| s >= 0.0), "{t}");
        // Each thread's three parts are laps of one clock inside the stepping that `wall_seconds` times.
        assert!(
            secs.iter().sum::<f64>() <= wall + 1e-3,
            "{t} against wall {wall}"
        );
        // Every thread runs every window (a barrier ends each).
        assert_eq!(t["windows"], times[0]["windows"]);
        assert!(t["windows"].as_u64().unwrap() > 0);
    }
    // One thread: nothing to split.
    let out = ibcycle()
        .args(["bench", "idle", "--sim-us", "10", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["thread_times"].as_array().map(Vec::len), Some(0), "{v}");
}
