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
/// variant lints clean. Every variant of every twin, through Verilator as the co-simulation's build runs it.
#[test]
fn fault_variant_without_the_enable_fails_to_build() {
    for m in registry::blocks() {
        for bug in m.bugs {
            let mac = cosim::table::fault_macro(bug);
            let lint = |enable: bool| {
                let mut c = Command::new("verilator");
                c.args(["--lint-only", "-Wall", "-y"])
                    .arg(hdl(m.top).parent().unwrap())
                    .args(m.params.iter().map(|(k, v)| format!("-G{k}={v}")));
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
}

/// The modules synthesise on two threads, alternating in table order so the slow ones (`cong_detect` with
/// its 64-lane carry-save sums and compares; `cct_shaper` and `fecn_rewrite_b32`) are split between them.
///
/// The switch (`ib_switch`, not a block of the registry) is synthesised by `hdl/synth.sh` in the test command.
#[test]
fn twins_synthesise_with_yosys() {
    let mods: Vec<_> = registry::blocks().collect();
    let outputs: Vec<_> = (0..2)
        .map(|t| {
            let part: Vec<_> = mods.iter().copied().skip(t).step_by(2).collect();
            std::thread::spawn(move || part.into_iter().map(|m| (m, synth(m))).collect::<Vec<_>>())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().expect("synthesis thread"))
        .collect();
    assert_eq!(outputs.len(), mods.len());
    for (m, o) in outputs {
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

/// Yosys `synth` of one module (with its parameters), then `stat`.
fn synth(m: &cosim::table::Module) -> std::process::Output {
    let chparam: String = m
        .params
        .iter()
        .map(|(k, v)| format!("chparam -set {k} {v} {}; ", m.top))
        .collect();
    // The modules this one instantiates (a line starting with the module's name), as hdl/synth.sh picks
    // them: not every file, as Yosys spends minutes reading the switch (`ib_switch.sv`) whoever needs it.
    let dir = hdl(m.top).parent().unwrap().to_path_buf();
    let own = std::fs::read_to_string(hdl(m.top)).unwrap();
    let instantiates = |d: &str| {
        own.lines().any(|l| {
            l.trim_start()
                .strip_prefix(d)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        })
    };
    let mut deps: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "sv"
                && !stem.starts_with("test_")
                && stem != m.top
                && instantiates(&stem))
            .then(|| p.display().to_string())
        })
        .collect();
    deps.sort();
    let script = format!(
        "read_verilog -sv {} {}; {chparam}synth -top {}; stat",
        deps.join(" "),
        hdl(m.top).display(),
        m.top
    );
    tool(Command::new("yosys").args(["-p", &script]), "yosys")
}
