//! `ibcycle sweep`: the grid's rows and columns, overrides reaching the model, resuming, sharding and
//! `--collect`, errors before anything runs, and the Slurm batch script.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A victim flow (A, alone to H2) and two contributors (B, C into H3).
const SCENARIO: &str = r#"name = "sweep-test"
duration_us = 30
[settings]
sample_interval_us = 5
# Room for the hot spot's queue above threshold 15 beyond one packet while the victim's packets share the
# trunk's input buffer.
switch_vl_buf_blocks = 512
[switch_cc]
threshold = 8
marking_rate = 1
[hca_cc]
ccti_increase = 2
[chain]
switches = 2
hosts_per_switch = 2
host_rate = "4xDDR"
trunk_rate = "4xQDR"
[[flow]]
id = "A"
src = "H0"
dst = "H2"
[[flow]]
id = "B"
src = "H1"
dst = "H3"
[[flow]]
id = "C"
src = "H0"
dst = "H3"
start_us = 10
"#;

fn setup(name: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("ibcycle-sweep-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("s.toml");
    std::fs::write(&f, SCENARIO).unwrap();
    (d, f)
}

fn ibcycle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn grid_rows_in_order_with_flows_and_cc_columns() {
    let (d, f) = setup("grid");
    let out = d.join("o");
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "switch_cc.threshold=0,15",
        "--set",
        "flow.C.start_us=5,20",
        "--out",
        s(&out),
        "--jobs",
        "2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "quiet off a terminal: {stderr:?}");
    assert!(
        stdout.contains("4 points: 4 run now, 0 already finished"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "switch_cc.threshold,flow.C.start_us,A_gbps,B_gbps,C_gbps,jain_contributors,fecn_marked,cnp_sent,integrity"
    );
    assert_eq!(lines.len(), 5);
    let cells: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    let keys: Vec<(&str, &str)> = cells.iter().map(|c| (c[0], c[1])).collect();
    assert_eq!(keys, [("0", "5"), ("0", "20"), ("15", "5"), ("15", "20")]);
    for c in &cells {
        assert_eq!(c[8], "ok", "{c:?}");
        let marked: u64 = c[6].parse().unwrap();
        // Threshold 0 turns marking off; 15 marks at the hot spot, so the override reached the switch.
        assert_eq!(marked == 0, c[0] == "0", "{c:?}");
        // Every CNP answers one marked packet.
        assert!(c[7].parse::<u64>().unwrap() <= marked, "{c:?}");
        // Jain's index of the n = 2 contributors B and C, (b + c)^2 / (2 (b^2 + c^2)), from their own
        // columns: a column over the wrong flows, or a wrong formula, differs (the rates are rounded to
        // three decimals, hence the tolerance).
        let (b, cc): (f64, f64) = (c[3].parse().unwrap(), c[4].parse().unwrap());
        assert!(b > 0.0 && cc > 0.0, "{c:?}");
        let want = (b + cc).powi(2) / (2.0 * (b * b + cc * cc));
        let j: f64 = c[5].parse().unwrap();
        assert!(
            (j - want).abs() <= 0.002,
            "{c:?}: Jain's index {j}, want {want:.4}"
        );
    }
    // A point's summary is what `ibcycle run` gives for the scenario it recorded.
    let p = out.join("points/0003-switch_cc.threshold=15,flow.C.start_us=20");
    let recorded = std::fs::read_to_string(p.join("scenario.toml")).unwrap();
    assert!(
        recorded.contains("threshold = 15") && recorded.contains("start_us = 20"),
        "{recorded}"
    );
    let alone = d.join("alone");
    assert!(
        ibcycle(&["run", s(&p.join("scenario.toml")), "--out", s(&alone)])
            .status
            .success()
    );
    assert_eq!(
        std::fs::read(p.join("summary.json")).unwrap(),
        std::fs::read(alone.join("summary.json")).unwrap()
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn reruns_skip_finished_points_and_redo_stale_or_partial_ones() {
    let (d, f) = setup("resume");
    let out = d.join("o");
    let args = [
        "sweep",
        s(&f),
        "--set",
        "seed=1,2,3",
        "--out",
        s(&out),
        "--jobs",
        "1",
    ];
    assert!(ibcycle(&args).status.success());
    let (stdout, _) = text(&ibcycle(&args));
    assert!(
        stdout.contains("3 points: 0 run now, 3 already finished"),
        "{stdout}"
    );
    // A point killed mid-write leaves only its temporary directory; one whose scenario changed is stale.
    let points = out.join("points");
    std::fs::rename(points.join("0001-seed=2"), points.join(".0001-seed=2.tmp")).unwrap();
    std::fs::write(points.join("0002-seed=3/scenario.toml"), "edited").unwrap();
    let (stdout, stderr) = text(&ibcycle(&args));
    assert!(
        stdout.contains("3 points: 2 run now, 1 already finished"),
        "{stdout} {stderr}"
    );
    assert!(!points.join(".0001-seed=2.tmp").exists());
    assert!(points.join("0001-seed=2/summary.json").exists());
    // A point whose summary is corrupt (a full disk, a hand edit) is missing, not an error: it is redone.
    let summary = points.join("0000-seed=1/summary.json");
    std::fs::write(&summary, "{\"flows\": tru").unwrap();
    let (stdout, stderr) = text(&ibcycle(&args));
    assert!(
        stdout.contains("3 points: 1 run now, 2 already finished"),
        "{stdout} {stderr}"
    );
    assert!(std::fs::read_to_string(&summary)
        .unwrap()
        .contains("\"invariants\""));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn shards_then_collect() {
    let (d, f) = setup("shards");
    let out = d.join("o");
    let run = |shard: &str| {
        ibcycle(&[
            "sweep",
            s(&f),
            "--set",
            "hca_cc.ccti_timer=5,50,500",
            "--out",
            s(&out),
            "--shard",
            shard,
        ])
    };
    let (stdout, _) = text(&run("1/2"));
    assert!(
        stdout.contains("1 run now") && stdout.contains("1 of 3 points finished"),
        "{stdout}"
    );
    assert!(!out.join("sweep.csv").exists());
    let o = ibcycle(&["sweep", "--collect", s(&out)]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr.contains("2 of 3 points are not finished (0000-hca_cc.ccti_timer=5, 0002-"),
        "{stderr}"
    );
    let (stdout, _) = text(&run("0/2"));
    assert!(
        stdout.contains("2 run now") && stdout.contains("wrote"),
        "{stdout}"
    );
    let csv = std::fs::read(out.join("sweep.csv")).unwrap();
    std::fs::remove_file(out.join("sweep.csv")).unwrap();
    assert!(ibcycle(&["sweep", "--collect", s(&out)]).status.success());
    assert_eq!(std::fs::read(out.join("sweep.csv")).unwrap(), csv);
    let o = ibcycle(&["sweep", "--collect", s(&d)]);
    assert!(
        text(&o).1.contains("not a sweep output directory"),
        "{:?}",
        text(&o)
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bad_keys_and_values_fail_before_anything_runs() {
    let (d, f) = setup("bad");
    let out = d.join("o");
    for (set, want) in [
        ("switch_cc.threshold=8,16", "--set switch_cc.threshold=16: "),
        (
            "switch_cc.threshold=8,16",
            "s.toml:9: switch_cc.threshold: 16 is above 15",
        ),
        ("switch_cc.threshhold=1", "unknown field `threshhold`"),
        (
            "flow.Z.start_us=1",
            "no [[flow]] with index, id or name \"Z\"",
        ),
        (
            "settings.switch_vl_buf_blocks=12",
            "settings.switch_vl_buf_blocks: 12 is not in",
        ),
        ("duration_us=soon", "--set duration_us=soon: "),
        ("duration_us=soon", "invalid type: string \"soon\""),
        ("seed", "expected KEY=V1,V2"),
    ] {
        let o = ibcycle(&["sweep", s(&f), "--set", set, "--out", s(&out)]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{set}: {stderr}");
        assert!(
            stderr.contains(want) && !stderr.contains("panicked"),
            "{set}: {stderr}"
        );
        assert!(!out.exists(), "{set}: nothing may be written");
    }
    // A combination that is only wrong together names the point.
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "hca_cc.ccti_limit=10,127",
        "--set",
        "hca_cc.ccti_min=0,50",
        "--out",
        s(&out),
    ]);
    let (_, stderr) = text(&o);
    assert!(
        stderr.contains("point 1 (hca_cc.ccti_limit=10 hca_cc.ccti_min=50)")
            && stderr.contains("is above ccti_limit"),
        "{stderr}"
    );
    assert!(!out.exists());
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "seed=1",
        "--out",
        s(&out),
        "--jobs",
        "0",
    ]);
    assert!(text(&o).1.contains("--jobs 0"), "{:?}", text(&o));
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "seed=1",
        "--out",
        s(&out),
        "--slurm-tasks",
        "2",
    ]);
    assert!(
        text(&o).1.contains("need --slurm or --slurm-dry-run"),
        "{:?}",
        text(&o)
    );
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "seed=1",
        "--out",
        s(&out),
        "--shard",
        "2/2",
    ]);
    assert!(text(&o).1.contains("--shard \"2/2\""), "{:?}", text(&o));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn slurm_dry_run_writes_a_job_array_that_reruns_this_sweep() {
    let (d, f) = setup("slurm");
    let out = d.join("o");
    let o = ibcycle(&[
        "sweep",
        s(&f),
        "--set",
        "seed=1,2,3",
        "--set",
        "switch_cc.threshold=0,8",
        "--out",
        s(&out),
        "--slurm-dry-run",
        "--slurm-tasks",
        "4",
        "--slurm-opt=--partition=debug",
        "--slurm-opt",
        "--time=5",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("6 points in 4 array tasks"), "{stdout}");
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    for want in [
        "#SBATCH --array=0-3\n",
        "#SBATCH --partition=debug\n",
        "#SBATCH --time=5\n",
        &format!(
            "sweep '{}' --set 'seed=1,2,3' --set 'switch_cc.threshold=0,8' --out '{}'",
            s(&f),
            s(&out)
        ),
        "--shard \"$SLURM_ARRAY_TASK_ID/4\"",
    ] {
        assert!(script.contains(want), "{want:?} in {script}");
    }
    assert!(
        !out.join("points")
            .read_dir()
            .is_ok_and(|mut r| r.next().is_some()),
        "a dry run runs nothing"
    );
    // Running the script's command by hand, task by task, completes the grid.
    let cmd = script.lines().find(|l| l.starts_with("exec ")).unwrap();
    for task in 0..4 {
        let r = Command::new("bash")
            .arg("-c")
            .arg(&cmd[5..])
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv"))
            .unwrap()
            .lines()
            .count(),
        7
    );
    std::fs::remove_dir_all(&d).ok();
}
