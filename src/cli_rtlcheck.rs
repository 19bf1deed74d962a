//! `ibcycle rtl-check`: a user's switch RTL under the transaction-level scoreboard, through a port map
//! (root feature `cosim`; Verilator at run time). See docs/rtl-check.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use cosim::portmap::PortMap;
use cosim::rtlcheck::{
    check, default_random_config_for, traffic_of_trace, CheckOpts, CheckOutcome,
};
use cosim::scoreboard::bench::{random_roce_traffic, random_traffic};
use cosim::scoreboard::LinkKind;

/// Arguments of `ibcycle rtl-check`.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// The port map (TOML; see docs/rtl-check.md).
    #[arg(long, value_name = "MAP.toml")]
    map: PathBuf,
    /// Traffic of a shipped or user scenario at one switch (with --switch): the packets the fabric hands
    /// that switch over the first --cycles cycles, and the switch's own configuration as the golden one.
    #[arg(long, value_name = "SCENARIO.toml", conflicts_with_all = ["random", "trace"], requires = "switch")]
    traffic: Option<PathBuf>,
    /// The switch of --traffic.
    #[arg(long, value_name = "NAME")]
    switch: Option<String>,
    /// Cycles of the scenario recorded for --traffic.
    #[arg(long, default_value_t = 100_000)]
    cycles: u64,
    /// N random packets (a third to one hot output), on the configuration of --switch-config or the
    /// default one (docs/rtl-check.md).
    #[arg(long, value_name = "N", conflicts_with = "trace")]
    random: Option<usize>,
    /// Seed of --random.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A switch configuration (TOML, a `SwitchConfig`) for --random.
    #[arg(long = "switch-config", value_name = "FILE")]
    switch_config: Option<PathBuf>,
    /// A switch port trace (`ibcycle run FILE --port-trace SWITCH`): its packets and its configuration.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Where to write the VCD around a violation.
    #[arg(long, default_value = "rtl-check.vcd")]
    vcd: PathBuf,
    /// Build cache directory (default: the system's temporary directory).
    #[arg(long = "build-dir", value_name = "DIR")]
    build_dir: Option<PathBuf>,
    /// Extra Verilator defines (NAME or NAME=VALUE), e.g. a fault variant's.
    #[arg(long = "define", value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Run-time plusargs of the simulation (+NAME or +NAME=VALUE; repeat for more), read by the RTL's
    /// $test$plusargs: a fault turned on in a build with every fault in, say. They change no build.
    #[arg(
        long = "plusarg",
        value_name = "+NAME[=VALUE]",
        allow_hyphen_values = true
    )]
    plusarg: Vec<String>,
    /// Compile the model's C++ at -Og instead of -Os: a quicker build, a slower run (for a fault variant
    /// run until its first violation, say).
    #[arg(long = "quick-build")]
    quick_build: bool,
}

/// Runs the command: exit 0 with "N packets checked on P ports, no violation", 1 on a violation, 2 when it
/// could not run.
pub fn run(a: Args) -> ExitCode {
    match go(a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("ibcycle rtl-check: {e}");
            ExitCode::from(2)
        }
    }
}

fn go(a: Args) -> Result<bool, String> {
    let map = PortMap::load(&a.map).map_err(|e| e.to_string())?;
    let (cfg, traffic) = if let Some(sc) = &a.traffic {
        let sc = ibcycle::scenario::load(sc).map_err(|e| e.to_string())?;
        let name = a.switch.as_deref().unwrap_or_default();
        let (t, _) =
            ibcycle::run::port_trace::trace_of(&sc, name, a.cycles).map_err(|e| e.to_string())?;
        (t.config.clone(), traffic_of_trace(&t))
    } else if let Some(f) = &a.trace {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let t = cosim::switch_trace::SwitchTrace::parse(&text)
            .map_err(|e| format!("{}: {e}", f.display()))?;
        (t.config.clone(), traffic_of_trace(&t))
    } else {
        let n = a
            .random
            .ok_or("give one of --traffic SCENARIO --switch NAME, --random N or --trace FILE")?;
        let cfg = match &a.switch_config {
            Some(f) => {
                let text =
                    std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
                toml::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?
            }
            None => default_random_config_for(map.ports.len(), map.link),
        };
        let t = match map.link {
            LinkKind::Ib => random_traffic(&cfg, n, a.seed, 10),
            LinkKind::RoceV2 => random_roce_traffic(&cfg, n, a.seed, 10),
        };
        (cfg, t)
    };
    let mut opts = CheckOpts {
        defines: a.define.clone(),
        plusargs: a.plusarg.clone(),
        vcd: Some(a.vcd.clone()),
        quick: a.quick_build,
        ..CheckOpts::default()
    };
    if let Some(d) = a.build_dir {
        opts.build_root = d;
    }
    match check(&map, &cfg, traffic, &opts).map_err(|e| e.to_string())? {
        CheckOutcome::Passed(o) => {
            println!(
                "{} packets checked on {} ports, no violation ({} cycles; {} marked of {} eligible)",
                o.packets, o.ports, o.cycles, o.marked, o.eligible
            );
            if map.link == LinkKind::RoceV2 {
                println!(
                    "pause frames: {} from the link partners, {} from the switch",
                    o.pauses_in, o.pauses_out
                );
            }
            // The fill tap beside the golden model's fill, per port-VL that held anything.
            for f in o.fill.iter().filter(|f| f.rtl_max > 0 || f.golden_max > 0) {
                println!(
                    "fill port {} VL {}: RTL max {}, golden max {}, largest difference {} at cycle {} (64-byte blocks)",
                    f.port, f.vl, f.rtl_max, f.golden_max, f.max_diff, f.max_diff_cycle
                );
            }
            // The marking-state tap beside the golden model's state, per port-VL either showed on.
            for m in o
                .mark_state
                .iter()
                .filter(|m| m.rtl_on > 0 || m.golden_on > 0)
            {
                let first = m
                    .first_differ
                    .map_or(String::new(), |c| format!(", first at cycle {c}"));
                println!(
                    "marking state port {} VL {}: on {} cycles in the RTL, {} in the golden model, {} cycles apart{first}",
                    m.port, m.vl, m.rtl_on, m.golden_on, m.differ
                );
            }
            if o.golden_notes > 0 {
                println!(
                    "note: the golden model refused or overflowed {} hand-ins (the RTL gave credit it would not have): its view is approximate",
                    o.golden_notes
                );
            }
            Ok(true)
        }
        CheckOutcome::Violation { v, vcd } => {
            println!("{v}");
            if let Some((p, from, to)) = vcd {
                println!(
                    "waveform: {} (cycles {from} to {to} after reset, at 10 time units per cycle plus the reset)",
                    p.display()
                );
            }
            Ok(false)
        }
    }
}
