//! The RTL twins pass `verilator --lint-only -Wall` at the co-simulation's parameters, and a fault variant
//! builds only with its enable. Their synthesis (Yosys `synth`, `check -assert`, cells, memories, depth, at
//! the same parameters) is `hdl/synth.sh`, which the README's test command runs.
//! Needs Verilator: compiled only with the `verilator` feature (on in the README's test command).
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
                .args(["--lint-only", "-Wall", "-y"])
                .arg(hdl(m.top).parent().unwrap())
                .args(m.params.iter().map(|(k, v)| format!("-G{k}={v}")))
                .arg(hdl(m.top)),
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

/// A fault variant's macro builds only with `IBCYCLE_FAULTS_ENABLE` beside it: defined alone (a stray define
/// in a file listed before the module, say) elaboration stops with an error naming it; with the enable the
/// variant lints clean. Every variant of every twin, and the switch's all-faults build, through Verilator
/// as the co-simulation's build runs it.
#[test]
fn fault_variant_without_the_enable_fails_to_build() {
    // Each block's variant macros, and the one that builds every fault in (selected at run time) of a module
    // that has it: the switch's, the model its variants run on (its seven variant guards, the same form, are
    // not linted here: ten seconds of Verilator each).
    let blocks = registry::blocks().flat_map(|m| {
        m.bugs
            .iter()
            .map(move |b| (m, *b, cosim::table::fault_macro(b)))
    });
    let select = cosim::table::MODULES
        .iter()
        .filter(|m| m.fault_select)
        .map(|m| (m, "all faults", "IBCYCLE_FAULTS_SELECT".to_string()));
    for (m, bug, mac) in blocks.chain(select) {
        // At the parameters the variants are built at (the switch's 8 ports: its lint at 18 took 20 CPU-s
        // a run, at 8 about 8).
        let params = if m.bug_params.is_empty() {
            m.params
        } else {
            m.bug_params
        };
        let lint = |enable: bool| {
            let mut c = Command::new("verilator");
            c.args(["--lint-only", "-Wall", "-y"])
                .arg(hdl(m.top).parent().unwrap())
                .args(params.iter().map(|(k, v)| format!("-G{k}={v}")));
            if enable {
                c.arg("-DIBCYCLE_FAULTS_ENABLE");
            }
            tool(c.arg(format!("-D{mac}")).arg(hdl(m.top)), "verilator")
        };
        let o = lint(false);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success()
                && err.contains(&format!("{mac} is defined without IBCYCLE_FAULTS_ENABLE")),
            "{} {bug}: built without the enable: {err}",
            m.name
        );
        let o = lint(true);
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{} {bug} with the enable: {}",
            m.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
