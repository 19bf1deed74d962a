//! The RTL twins pass `verilator --lint-only -Wall` and synthesise with Yosys (`synth -top`); the cell count
//! of each is printed (run with `--nocapture` to record it).
//! Needs Verilator and Yosys: compiled only with the `verilator` feature (on in the README's test command).
#![cfg(feature = "verilator")]

use cosim::registry;
use std::path::PathBuf;
use std::process::Command;

fn hdl(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../hdl/{name}.sv"))
}

fn tool(cmd: &mut Command, name: &str) -> std::process::Output {
    cmd.output().unwrap_or_else(|e| {
        panic!("{name} not found ({e}): `apt-get install {name}`, or run ./scripts/test, which installs it")
    })
}

#[test]
fn twins_lint_clean_with_wall() {
    for m in registry::blocks() {
        let o = tool(
            Command::new("verilator")
                .args(["--lint-only", "-Wall"])
                .arg(hdl(m.name)),
            "verilator",
        );
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{}: {}",
            m.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn twins_synthesise_with_yosys() {
    for m in registry::blocks() {
        let script = format!(
            "read_verilog -sv {}; synth -top {}; stat",
            hdl(m.name).display(),
            m.name
        );
        let o = tool(Command::new("yosys").args(["-p", &script]), "yosys");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{}: {}{}",
            m.name,
            text,
            String::from_utf8_lossy(&o.stderr)
        );
        let cells: u64 = text
            .lines()
            .rev()
            .filter_map(|l| l.trim().strip_prefix("Number of cells:"))
            .find_map(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: no cell count in yosys output:\n{text}", m.name));
        println!("{}: {cells} cells", m.name);
        assert!(
            cells > 10,
            "{}: only {cells} cells, synthesis removed the logic",
            m.name
        );
    }
}
