//! The `ibcycle samples` command: writes both captures, and reports a bad directory with its path.

use std::process::Command;

fn ibcycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
}

#[test]
fn samples_writes_both_captures() {
    let dir = std::env::temp_dir().join(format!("ibcycle-cli-samples-{}", std::process::id()));
    let out = ibcycle()
        .args(["samples", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["ib.pcap", "roce.pcap"] {
        let len = std::fs::metadata(dir.join(f)).unwrap().len();
        assert!(len > 1000, "{f} has {len} bytes");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn samples_names_the_bad_directory() {
    let out = ibcycle()
        .args(["samples", "--out", "/proc/ibcycle-cannot-be-created"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/proc/ibcycle-cannot-be-created"), "{err}");
}
