//! One fabric split across MPI ranks (feature `mpi`; ./scripts/test installs Debian's OpenMPI and turns it
//! on): `mpirun -np 2` and `-np 4` runs of a shortened `scenarios/gran-s1-cc-on-quick.toml` (2 switches: with 4
//! ranks two own nothing and still take part in every exchange), of `scenarios/ft72.toml` (12 switches) and of
//! `scenarios/ft3-16-a2a-cc.toml` (a three-level fat tree, 20 switches) write outputs byte-identical to a
//! single-process run of the same file.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn ibcycle() -> &'static str {
    env!("CARGO_BIN_EXE_ibcycle")
}

/// A scratch directory for this test.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `scenarios/FILE` with its `duration_us` set to `us` (debug builds are slow; the shipped files keep theirs).
fn shortened(dir: &Path, file: &str, us: u64) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(file),
    )
    .unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("duration_us"))
        .expect("a duration");
    let out = dir.join(file);
    std::fs::write(&out, text.replacen(line, &format!("duration_us = {us}"), 1)).unwrap();
    out
}

/// Runs `ibcycle run FILE --out DIR` in one process or under `mpirun -np ranks`; returns stdout.
fn run(file: &Path, out: &Path, ranks: Option<usize>) -> String {
    let mut c = match ranks {
        None => Command::new(ibcycle()),
        Some(n) => {
            let mut c = Command::new("mpirun");
            c.args(["--allow-run-as-root", "--oversubscribe", "-np"])
                .arg(n.to_string())
                .arg(ibcycle());
            c
        }
    };
    let o = c
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{ranks:?} ranks: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// The single-process run and the 2- and 4-rank runs of `file` write the same bytes.
fn same_outputs(name: &str, file: &str, us: u64) {
    let dir = scratch(name);
    let sc = shortened(&dir, file, us);
    let one = dir.join("one");
    let stdout = run(&sc, &one, None);
    assert!(
        !stdout.contains("MPI ranks"),
        "a plain start is one process"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(one.join("summary.json")).unwrap()).unwrap();
    // The comparison means something only if packets moved and congestion control acted on them.
    let total = |k: &str| -> u64 {
        summary["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[k].as_u64().unwrap())
            .sum()
    };
    // (Shortened ft72 delivers about 480 packets, gran-s1 thousands: 100 only rules out an idle fabric.)
    let (pkts, becn) = (total("delivered_packets"), total("becn_rx"));
    assert!(pkts > 100 && becn > 0, "{pkts} packets, {becn} BECNs");
    for n in [2, 4] {
        let out = dir.join(format!("np{n}"));
        let stdout = run(&sc, &out, Some(n));
        // Rank 0 alone prints, and says the run was split.
        assert_eq!(
            stdout.matches(&format!("({n} MPI ranks)")).count(),
            1,
            "{stdout}"
        );
        for f in ["summary.json", "throughput.csv", "cnp.csv"] {
            let a = std::fs::read(one.join(f)).unwrap();
            let b = std::fs::read(out.join(f)).unwrap();
            assert!(a == b, "{name}: {f} differs with {n} ranks");
        }
    }
}

#[test]
fn gran_s1_cc_on_split_across_ranks_is_bit_identical() {
    // F1..F3 started (400 us apart): congestion, marking and rate control all act.
    same_outputs("gran-s1", "gran-s1-cc-on-quick.toml", 900);
}

#[test]
fn fat_tree_72_split_across_ranks_is_bit_identical() {
    same_outputs("ft72", "ft72.toml", 40);
}

#[test]
fn three_level_fat_tree_split_across_ranks_is_bit_identical() {
    same_outputs("ft3", "ft3-16-a2a-cc.toml", 40);
}
