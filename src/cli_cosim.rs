//! `ibcycle cosim`: co-simulate one RTL block against its Rust model (root feature `cosim`).

use clap::{Args, Subcommand};
use cosim::blocks::RunOpts;
use std::path::PathBuf;

/// Subcommands that need the co-simulation.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Co-simulate an RTL block (hdl/) against its Rust model, clock by clock.
    Cosim(CosimArgs),
}

/// Arguments of `ibcycle cosim`.
#[derive(Args, Debug)]
pub struct CosimArgs {
    /// Print one line per block: its name, then its bug variants, separated by spaces.
    #[arg(long)]
    list: bool,
    /// The block to co-simulate (see --list).
    #[arg(required_unless_present = "list")]
    block: Option<String>,
    /// Cycles to compare at most (over all the configurations of the run).
    #[arg(long, default_value_t = cosim::blocks::DEFAULT_CYCLES)]
    cycles: u64,
    /// Write the coverage report (per cover point: kind, hits, meaning, the bug variants it exposes) as JSON to
    /// this file. The table is printed on stderr after every run.
    #[arg(long)]
    coverage: Option<PathBuf>,
    /// Stop as soon as every cover point was hit (else at --cycles); the report lists the points left.
    #[arg(long = "until-covered")]
    until_covered: bool,
    /// Seed of the random configuration and stimulus.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write a VCD of the RTL around the first mismatch (64 cycles before to 8 after) to this file.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Run this bug variant of the RTL instead of the clean RTL (fault injection; see --list).
    #[arg(long = "rtl-bug")]
    rtl_bug: Option<String>,
    /// Replay the inputs of this port-trace file (format in cosim::trace) instead of random stimulus; the
    /// trace names its block, which must be BLOCK.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Threads: 2 runs the stimulus and the Rust model on a second thread, batches ahead of the RTL (same
    /// results; with a core to spare, faster for most blocks); 1 runs all on one. Default: 2 when the machine
    /// has two CPUs or more.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    threads: Option<u8>,
}

/// Cycles between two updates of the progress bar (a fifth of a second for the slowest block).
const PROGRESS_EVERY: u64 = 1 << 17;

/// The progress bar of this run (one per process: `RunOpts::progress` takes a plain function).
static BAR: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();

fn tick(done: u64) {
    if let Some(b) = BAR.get() {
        b.set_position(done);
    }
}

/// The default of `--threads`: 2 when the machine has a second CPU.
fn default_threads() -> u8 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        2
    } else {
        1
    }
}

/// Runs the command; returns the process exit status: 0 when every cycle matched, 1 on the first mismatch
/// (or when the RTL ran $finish/$stop/$fatal), 2 when the run could not be set up.
pub fn run(cmd: Command) -> i32 {
    let Command::Cosim(a) = cmd;
    if a.list {
        for line in cosim::registry::list_lines() {
            println!("{line}");
        }
        return 0;
    }
    let block = a.block.unwrap_or_default();
    // A bar on a terminal for runs of more than a few stretches (a replay may end before `--cycles`).
    use std::io::IsTerminal;
    let progress = (std::io::stderr().is_terminal() && a.cycles > 4 * PROGRESS_EVERY).then(|| {
        let b = BAR.get_or_init(|| indicatif::ProgressBar::new(a.cycles));
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} {wide_bar} {human_pos}/{human_len} cycles matched, ETA {eta}",
        ) {
            b.set_style(st);
        }
        (PROGRESS_EVERY, tick as fn(u64))
    });
    let mut cycles = a.cycles;
    if let Some(cap) = ibcycle::scenario::short_run_us().map(|us| us.saturating_mul(1000)) {
        if cycles > cap {
            eprintln!(
                "ibcycle cosim: --cycles {cycles} cut to {cap} by {}",
                ibcycle::scenario::SHORT_RUN_ENV
            );
            cycles = cap;
        }
    }
    let opts = RunOpts {
        bug: a.rtl_bug,
        vcd: a.vcd,
        pipelined: a.threads.unwrap_or_else(default_threads) == 2,
        progress,
        until_covered: a.until_covered,
        ..RunOpts::new(cycles)
    };
    if let Some(path) = &a.replay {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.starts_with(cosim::switch_trace::HEADER) {
                return replay_switch(&block, &text, path, &opts);
            }
        }
    }
    if block == "ib_switch" && a.replay.is_none() {
        eprintln!(
            "error: ib_switch is co-simulated from switch port traces: record one with `ibcycle run SCENARIO \
             --port-trace SWITCH` and pass it with --replay FILE"
        );
        return 2;
    }
    let result = match &a.replay {
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|err| cosim::CosimError::Io {
                path: path.clone(),
                err,
            })
            .and_then(|t| Ok(cosim::trace::block_name(&t)?))
        {
            Ok(name) if name != block => {
                eprintln!(
                    "error: {} is a trace of block `{name}`, not `{block}`",
                    path.display()
                );
                return 2;
            }
            Ok(_) => cosim::registry::run_trace_file_covered(path, &opts),
            Err(e) => Err(e),
        },
        None => cosim::registry::run_covered(&block, a.seed, &opts),
    };
    if let Some(b) = BAR.get() {
        b.finish_and_clear();
    }
    let result = match result {
        Ok((result, cov)) => {
            eprintln!("{}", cov.table());
            if let Some(path) = &a.coverage {
                let json = serde_json::to_string_pretty(&cov.to_json()).unwrap_or_default();
                if let Err(e) = std::fs::write(path, json + "\n") {
                    eprintln!("error: {}: {e}", path.display());
                    return 2;
                }
            }
            result
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(m) => {
            println!("{m}");
            0
        }
        Err(e) if e.is_failure() => {
            println!("{e}");
            1
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// `ibcycle cosim ib_switch --replay FILE` with a switch port trace (`ibcycle run --port-trace`): the
/// switch RTL against `switch_asic::Switch`, every port's events every cycle (cosim::switch).
fn replay_switch(block: &str, text: &str, path: &std::path::Path, opts: &RunOpts) -> i32 {
    if block != "ib_switch" {
        eprintln!(
            "error: {} is a switch port trace (block `ib_switch`), not a trace of `{block}`",
            path.display()
        );
        return 2;
    }
    let trace = match cosim::switch_trace::SwitchTrace::parse(text) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return 2;
        }
    };
    let ro = cosim::switch::ReplayOpts {
        cycles: Some(opts.cycles),
        bug: opts.bug.clone(),
        vcd: opts.vcd.clone(),
        build: cosim::switch::CleanBuild::default(),
    };
    match cosim::switch::replay(&trace, &ro) {
        Ok(cosim::switch::SwitchReplay::Matched {
            cycles,
            packets,
            fcs,
            marked,
        }) => {
            println!(
                "ib_switch: {cycles} cycles matched on {} ports ({packets} packet heads, {marked} with FECN, \
                 {fcs} flow-control packets sent)",
                trace.config.ports.len()
            );
            0
        }
        Ok(cosim::switch::SwitchReplay::Mismatch(m)) => {
            println!("{m}");
            1
        }
        Err(e) if e.is_failure() => {
            println!("{e}");
            1
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        c: Command,
    }

    fn status(args: &[&str]) -> i32 {
        let argv = ["ibcycle", "cosim"].iter().chain(args);
        run(T::try_parse_from(argv).expect("arguments parse").c)
    }

    #[test]
    fn exit_status_is_0_on_match_1_on_mismatch_2_on_bad_input() {
        assert_eq!(status(&["--list"]), 0);
        assert_eq!(
            status(&["credit_rx", "--cycles", "20000", "--seed", "4"]),
            0
        );
        assert_eq!(
            status(&[
                "credit_tx",
                "--cycles",
                "20000",
                "--rtl-bug",
                "BUG_FC_ORDER"
            ]),
            1
        );
        assert_eq!(status(&["credit_tx", "--rtl-bug", "BUG_NONE"]), 2);
        // The blocks with wide ports and the parameterised streaming rewriter run from the CLI too.
        assert_eq!(status(&["cong_detect", "--cycles", "20000"]), 0);
        assert_eq!(
            status(&["cct_shaper", "--cycles", "20000", "--threads", "2"]),
            0
        );
        assert_eq!(
            status(&[
                "fecn_rewrite_b8",
                "--cycles",
                "20000",
                "--rtl-bug",
                "BUG_FECN_BIT"
            ]),
            1
        );
        assert_eq!(
            status(&[
                "credit_tx",
                "--cycles",
                "20000",
                "--threads",
                "1",
                "--rtl-bug",
                "BUG_FC_ORDER"
            ]),
            1
        );
        assert!(
            T::try_parse_from(["ibcycle", "cosim", "credit_tx", "--threads", "3"]).is_err(),
            "--threads is 1 or 2"
        );
        assert_eq!(status(&["no_such_block", "--cycles", "10"]), 2);
        assert!(
            T::try_parse_from(["ibcycle", "cosim"]).is_err(),
            "BLOCK is required without --list"
        );
    }

    #[test]
    fn coverage_goes_to_json_and_until_covered_stops_when_every_point_is_hit() {
        let dir = std::env::temp_dir().join(format!("ibcycle-cov-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cov.json");
        let p = path.to_str().unwrap();
        assert_eq!(
            status(&["credit_tx", "--cycles", "40000", "--coverage", p]),
            0
        );
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(j["block"], "credit_tx");
        assert_eq!(j["cycles"], 40000);
        use cosim::blocks::{credit_tx::CreditTxBlock, Block};
        assert_eq!(
            j["configurations"],
            40_000u64.div_ceil(CreditTxBlock::SEGMENT),
            "{} cycles a configuration",
            CreditTxBlock::SEGMENT
        );
        let points = j["points"].as_array().unwrap();
        let wrap = points
            .iter()
            .find(|p| p["name"] == "credit_window_wraps")
            .unwrap();
        assert!(wrap["hits"].as_u64().unwrap() > 0);
        assert_eq!(wrap["exposes"][0], "BUG_CREDIT_WRAP");
        // Until covered: every point hit, fewer cycles than the limit.
        assert_eq!(
            status(&["credit_tx", "--until-covered", "--coverage", p]),
            0
        );
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(j["complete"], true);
        assert!(j["missed"].as_array().unwrap().is_empty());
        assert!(j["cycles"].as_u64().unwrap() < cosim::blocks::DEFAULT_CYCLES);
        // A mismatch still writes the coverage up to it.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            status(&["credit_tx", "--rtl-bug", "BUG_FC_ORDER", "--coverage", p]),
            1
        );
        assert!(path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn replay_checks_the_trace_names_the_block() {
        let dir = std::env::temp_dir().join(format!("ibcycle-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tx.csv");
        use cosim::blocks::{credit_tx::CreditTxBlock, Block};
        let (cfg, stim) = CreditTxBlock::random(5);
        let inputs: Vec<_> = stim.take(3000).collect();
        cosim::trace::write::<CreditTxBlock>(std::fs::File::create(&path).unwrap(), &cfg, &inputs)
            .unwrap();
        let p = path.to_str().unwrap();
        assert_eq!(status(&["credit_tx", "--replay", p]), 0);
        assert_eq!(status(&["credit_rx", "--replay", p]), 2);
        assert_eq!(
            status(&["credit_tx", "--replay", p, "--rtl-bug", "BUG_CREDIT_WRAP"]),
            1
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
