//! `ibcycle bench NAME [--sim-us N] [--threads T] [--prefetch auto|on|off] [--json]`: runs one of [`ibcycle::bench`]'s benches and
//! prints its figures (one JSON object with `--json`).

use std::process::ExitCode;

use ibcycle::bench::{self, BenchName};

/// The subcommand's arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The bench.
    #[arg(value_enum)]
    name: BenchName,
    /// Simulated microseconds (default: 200; idle: 1 000 000; at most 100 000 000, the scenarios' limit).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=ibcycle::scenario::limits::MAX_DURATION_US))]
    sim_us: Option<u64>,
    /// Threads for stepping the fabric.
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    /// Whether the stepping prefetches the state of the blocks it visits next (auto: for a fabric much
    /// larger than the last-level cache). Results do not depend on it.
    #[arg(long, value_enum, default_value_t = ibcycle::fabric::event::Prefetch::Auto)]
    prefetch: ibcycle::fabric::event::Prefetch,
    /// Print one JSON object instead of a line of text.
    #[arg(long)]
    json: bool,
}

/// Runs the bench of `a`.
pub fn run(a: Args) -> ExitCode {
    let mut sim_us = a.sim_us.unwrap_or(a.name.default_sim_us());
    if let Some(cap) = ibcycle::scenario::short_run_us() {
        if sim_us > cap {
            eprintln!(
                "ibcycle bench: --sim-us {sim_us} cut to {cap} by {}",
                ibcycle::scenario::SHORT_RUN_ENV
            );
            sim_us = cap;
        }
    }
    let r = match bench::run(a.name, sim_us, a.threads as usize, a.prefetch) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ibcycle bench {}: {e}", a.name.as_str());
            return ExitCode::FAILURE;
        }
    };
    if r.mpi_rank != 0 {
        // Under mpirun rank 0 reports for all.
        return ExitCode::SUCCESS;
    }
    if a.json {
        match serde_json::to_string(&r) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("ibcycle bench: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        println!(
            "{}: built in {:.2} s; {:.3e} simulated s in {:.3} s ({:.3} s of CPU): {:.3e} sim s/s, {:.3e} port-cycles/s, peak {:.1} MiB, {} thread(s), {} packets",
            r.bench,
            r.build_seconds,
            r.sim_seconds,
            r.wall_seconds,
            r.cpu_seconds,
            r.sim_s_per_wall_s,
            r.port_cycles_per_s,
            r.peak_rss_mib,
            r.threads,
            r.packets_delivered
        );
        if r.mpi_ranks > 1 {
            println!(
                "{} MPI ranks, {:.3} s in collective calls (rank 0); per rank, of the stepping wall time:",
                r.mpi_ranks, r.sync_wait_seconds
            );
            for t in &r.ranks {
                println!(
                    "  rank {}: stepping {:.3} s, waiting for the others {:.3} s, transfer {:.3} s, packing {:.3} s",
                    t.rank, t.stepping_seconds, t.waiting_seconds, t.transfer_seconds, t.pack_seconds
                );
            }
        }
        if !r.thread_times.is_empty() {
            println!("per thread, of the stepping wall time:");
            for (k, t) in r.thread_times.iter().enumerate() {
                println!(
                    "  thread {k}: stepping {:.3} s, exchange {:.3} s, waiting at the barrier {:.3} s, {} windows",
                    t.stepping_seconds, t.exchange_seconds, t.waiting_seconds, t.windows
                );
            }
        }
    }
    ExitCode::SUCCESS
}
