//! `ibcycle run`: steps a scenario's fabric for its duration, samples per-flow throughput, drains the fabric
//! and checks integrity, and writes `summary.json`, `throughput.csv` and `throughput.png` (DESIGN.md, Outputs),
//! and `cnp.csv` (`time_us,flow,cnp_rx`: CNPs each flow's source received per sampling interval, whose sum
//! is the summary's `becn_rx`).
//!
//! Throughput counts payload bytes whose packet's last byte reached the destination HCA. After the run time
//! every source stops and the fabric runs on until nothing is in flight and flow-control packets have
//! resynchronised every link; only then are loss and credits checked. What arrives during that drain is not
//! part of the flows' figures.

pub mod capture;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod memory;
pub mod observe;
pub mod output;
mod plot;
pub mod port_trace;
pub mod summary;
pub mod trace;
pub mod vcd;

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use crate::fabric::{Fabric, FabricError, Fault};
use crate::scenario::Scenario;
pub use observe::{ObserveError, ObserveOpts, Observers};
pub use summary::{FlowSummary, Invariants, PortSummary, Summary};

/// A run's results.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The summary (what `summary.json` holds).
    pub summary: Summary,
    /// Per sampling interval: its end in microseconds and each flow's payload throughput in Gbit/s.
    pub samples: Vec<(u64, Vec<f64>)>,
    /// Per sampling interval (same ends as `samples`): CNPs (BECN) each flow's source received in it, so
    /// that CNPs can be counted in any window of whole intervals (`cnp.csv`).
    pub cnp_samples: Vec<(u64, Vec<u64>)>,
}

/// Rounds a statistic to three decimals so that reports print the same everywhere.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Delivered payload bytes of every flow so far.
fn delivered(fab: &Fabric, sc: &Scenario) -> Vec<u64> {
    sc.flows
        .iter()
        .enumerate()
        .map(|(i, f)| fab.hcas[f.dst].per_flow[i].rx.payload_bytes)
        .collect()
}

/// CNPs (BECN) received so far by every flow's source.
fn becn_received(fab: &Fabric, sc: &Scenario) -> Vec<u64> {
    sc.flows
        .iter()
        .enumerate()
        .map(|(i, f)| fab.hcas[f.src].per_flow[i].becn_rx)
        .collect()
}

/// Runs `sc`; `progress` shows a bar on stderr.
pub fn run(sc: &Scenario, progress: bool) -> Result<RunResult, FabricError> {
    run_threads(sc, progress, 1)
}

/// [`run`] stepping the fabric on `threads` threads (the results do not depend on it).
pub fn run_threads(
    sc: &Scenario,
    progress: bool,
    threads: usize,
) -> Result<RunResult, FabricError> {
    run_with(sc, progress, None, threads, None).map(|(r, _)| r)
}

/// Test hook: [`run`] with `fault` injected as the run ends (see [`Fabric::inject_fault`]), to show that
/// the integrity check reports it. Panics when the fabric gives the fault nothing to act on.
#[doc(hidden)]
pub fn run_with_fault(sc: &Scenario, fault: Fault) -> Result<RunResult, FabricError> {
    run_with(sc, false, None, 1, Some(fault)).map(|(r, _)| r)
}

/// Runs `sc` with observation outputs: `obs` sees every cycle of the run time (not the drain after it) and
/// is finished (its files flushed) before the drain; the second result is its first write error, if any.
pub fn run_observed(
    sc: &Scenario,
    progress: bool,
    obs: Observers,
) -> Result<(RunResult, Result<(), ObserveError>), FabricError> {
    run_with(sc, progress, Some(obs), 1, None)
}

fn run_with(
    sc: &Scenario,
    progress: bool,
    mut obs: Option<Observers>,
    threads: usize,
    fault: Option<Fault>,
) -> Result<(RunResult, Result<(), ObserveError>), FabricError> {
    let mut fab = Fabric::new(sc)?;
    fab.set_threads(threads);
    if let Some(o) = &obs {
        o.attach(&mut fab);
    }
    let cpu = fab.cycles_per_us;
    let total = sc.duration_us * cpu;
    let interval_us = sc.settings.sample_interval_us;
    let interval = interval_us.saturating_mul(cpu).max(1);
    let bar = progress.then(|| {
        let b = indicatif::ProgressBar::new(sc.duration_us);
        b.set_message("simulated us");
        b
    });
    let mut last = vec![0u64; sc.flows.len()];
    let mut samples = Vec::new();
    let mut last_cnp = vec![0u64; sc.flows.len()];
    let mut cnp_samples = Vec::new();
    let mut latencies = vec![Vec::new(); sc.flows.len()];
    while fab.now() < total {
        let begin = fab.now();
        let end = (begin + interval).min(total);
        match obs.as_mut() {
            // Event-driven: blocks step only when due (identical results).
            None => fab.run_until(end),
            // Observers read every cycle.
            Some(o) => {
                while fab.now() < end {
                    fab.step();
                    o.after_step(&mut fab);
                }
            }
        }
        fab.collect_messages(sc, &mut latencies);
        let now_bytes = delivered(&fab, sc);
        let span_ns = (end - begin) as f64 * 1000.0 / cpu as f64;
        let gbps = now_bytes
            .iter()
            .zip(&last)
            .map(|(n, l)| round3((n - l) as f64 * 8.0 / span_ns))
            .collect();
        samples.push((end / cpu, gbps));
        last = now_bytes;
        let cnp = becn_received(&fab, sc);
        let d = cnp.iter().zip(&last_cnp).map(|(n, l)| n - l).collect();
        cnp_samples.push((end / cpu, d));
        last_cnp = cnp;
        if let Some(b) = &bar {
            b.set_position(end / cpu);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut flows = summary::flows(&fab, sc, &last);
    for (f, l) in flows.iter_mut().zip(&latencies) {
        f.msg_latency_us = crate::fabric::traffic::LatencyStats::of(l, cpu);
    }
    let ports = summary::ports(&fab, sc);
    let observed = obs.map_or(Ok(()), |o| o.finish(&mut fab));
    fab.set_tap(&[]);
    let invariants = drain(&mut fab, sc, fault);
    let r = RunResult {
        summary: Summary {
            scenario: sc.name.clone(),
            sim_time_us: sc.duration_us,
            cycles: total,
            clock_mhz: sc.settings.clock_mhz,
            flows,
            ports,
            invariants,
            warnings: sc.warnings.clone(),
        },
        samples,
        cnp_samples,
    };
    Ok((r, observed))
}

/// Stops every source, runs until the fabric is quiet and flow control has settled, and checks integrity.
/// `fault` (tests only) is injected on the way.
fn drain(fab: &mut Fabric, sc: &Scenario, fault: Option<Fault>) -> Invariants {
    let now = fab.now();
    let expect = "the fabric gives the fault something to act on";
    for h in &mut fab.hcas {
        h.stop_all(now);
    }
    let limit = now.saturating_add(sc.settings.drain_limit_us.saturating_mul(fab.cycles_per_us));
    let mut resend = None;
    if let Some(f @ (Fault::DropPacket | Fault::DuplicatePacket | Fault::CorruptPacket)) = fault {
        // Stepped until a packet head is on a wire to an HCA.
        resend = loop {
            match fab.inject_fault(f) {
                Ok(r) => break r,
                Err(_) if !fab.quiet() => fab.step(),
                Err(e) => panic!("{expect}: {e}"),
            }
        };
    }
    while !fab.quiet() && fab.now() < limit {
        fab.step();
    }
    if let Some((h, p)) = resend {
        fab.fault_resend(h, p);
        while !fab.quiet() && fab.now() < limit {
            fab.step();
        }
    }
    let drained = fab.quiet();
    // Two flow-control periods plus the longest wire let every receiver's latest FCCL reach its sender.
    let settle = 2 * u64::from(sc.settings.fc_interval_cycles) + fab.max_latency() + 2;
    fab.run_until(fab.now() + settle);
    if let Some(f @ (Fault::LeakCredit | Fault::ExtraCredit)) = fault {
        fab.inject_fault(f).expect(expect);
        fab.run_until(fab.now() + settle);
    }
    // Each side counted on its own: the sources' injections against the destinations' deliveries and what
    // is still in flight, so that a duplicate shows as well as a loss.
    let injected: u64 = fab
        .hcas
        .iter()
        .map(|h| h.per_flow.iter().map(|c| c.injected).sum::<u64>() + h.ctl_injected)
        .sum();
    let delivered: u64 = fab
        .hcas
        .iter()
        .map(|h| h.per_flow.iter().map(|c| c.rx.packets).sum::<u64>() + h.ctl_delivered)
        .sum();
    let in_flight = fab.packets_in_flight();
    let mut lost = injected.saturating_sub(delivered + in_flight);
    let mut duplicated = (delivered + in_flight).saturating_sub(injected);
    if drained {
        // Nothing in flight: every flow's own count must balance, so a loss in one flow and a duplicate in
        // another do not cancel out.
        let (mut l, mut d) = (0u64, 0u64);
        for (i, f) in sc.flows.iter().enumerate() {
            let sent = fab.hcas[f.src].per_flow[i].injected;
            let got = fab.hcas[f.dst].per_flow[i].rx.packets;
            l += sent.saturating_sub(got);
            d += got.saturating_sub(sent);
        }
        let ctl_sent: u64 = fab.hcas.iter().map(|h| h.ctl_injected).sum();
        let ctl_got: u64 = fab.hcas.iter().map(|h| h.ctl_delivered).sum();
        lost = lost.max(l + ctl_sent.saturating_sub(ctl_got));
        duplicated = duplicated.max(d + ctl_got.saturating_sub(ctl_sent));
    }
    let sink = fab.sink_errors();
    Invariants {
        packets_injected: injected,
        packets_delivered: delivered,
        packets_in_flight: in_flight,
        packets_lost: lost,
        packets_duplicated: duplicated,
        credits_leaked: fab.credits_leaked(),
        credits_gained: fab.credits_gained(),
        violations: fab.violations(),
        icrc_errors: sink.icrc,
        psn_order_errors: sink.psn_order,
        drained,
        drain_cycles: fab.now() - now,
    }
}

/// Writes the outputs of `r` into `out` (created if missing).
pub fn write_outputs(r: &RunResult, sc: &Scenario, out: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let json = serde_json::to_string_pretty(&r.summary).map_err(std::io::Error::other)?;
    std::fs::write(out.join("summary.json"), json + "\n")?;
    let mut csv = String::from("time_us,flow,gbps\n");
    for (t, g) in &r.samples {
        for (f, v) in sc.flows.iter().zip(g) {
            csv.push_str(&format!("{t},{},{v:.3}\n", f.id));
        }
    }
    std::fs::write(out.join("throughput.csv"), csv)?;
    let mut cnp = String::from("time_us,flow,cnp_rx\n");
    for (t, n) in &r.cnp_samples {
        for (f, v) in sc.flows.iter().zip(n) {
            cnp.push_str(&format!("{t},{},{v}\n", f.id));
        }
    }
    std::fs::write(out.join("cnp.csv"), cnp)?;
    plot::throughput_png(&out.join("throughput.png"), r, sc).map_err(std::io::Error::other)
}

/// The `run` subcommand: loads `file`, runs it, writes into `out`, prints a one-line result per flow.
/// Fails (exit status 1) on a bad scenario, an output error, or a broken invariant.
pub fn cli(file: &Path, out: &Path) -> ExitCode {
    cli_with(file, out, &ObserveOpts::default(), 1)
}

/// [`cli`] stepping on `threads` threads.
pub fn cli_threads(file: &Path, out: &Path, threads: usize) -> ExitCode {
    cli_with(file, out, &ObserveOpts::default(), threads)
}

/// [`cli`] with the observation outputs `opts` (`--pcap`, `--vcd`, `--trace`) on `threads` threads; a name
/// that is not in the scenario fails before the run.
pub fn cli_with(file: &Path, out: &Path, opts: &ObserveOpts, threads: usize) -> ExitCode {
    cli_full(file, out, opts, threads, None, None)
}

/// [`cli_with`] and, with `port_trace` (`--port-trace SWITCH`), the port trace of that
/// switch recorded by a second run after a successful first one. Every option is checked against the
/// scenario before anything runs; the outputs are written into a staging directory beside `out` and
/// renamed into place when all are complete (see [`output`]), so a failure leaves the previous outputs or
/// none. A run whose estimated memory ([`memory`]) exceeds `max_memory` (default
/// [`memory::default_limit`]) is refused before the fabric is built.
pub fn cli_full(
    file: &Path,
    out: &Path,
    opts: &ObserveOpts,
    threads: usize,
    port_trace: Option<&str>,
    max_memory: Option<u64>,
) -> ExitCode {
    // A queueing model file (thesis models, `[tandem]` / `[ge_queue]`) runs in its own mode.
    if let Some(code) = crate::queueing::cli(file, out) {
        return code;
    }
    let sc = match crate::scenario::load(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ibcycle run: {e}");
            return ExitCode::FAILURE;
        }
    };
    for w in &sc.warnings {
        eprintln!("ibcycle run: warning: {w}");
    }
    for n in &sc.notes {
        eprintln!("ibcycle run: note: {n}");
    }
    if let Some(name) = port_trace {
        if let Err(e) = port_trace::switch_index(&sc, name) {
            eprintln!("ibcycle run: {e}");
            return ExitCode::FAILURE;
        }
    }
    if let Err(e) = memory::check(&sc, max_memory.unwrap_or_else(memory::default_limit)) {
        eprintln!("ibcycle run: {}: {e}", file.display());
        return ExitCode::FAILURE;
    }
    // Under `mpirun` with more than one rank: the fabric split across the ranks (same outputs).
    #[cfg(feature = "mpi")]
    if let Some(u) = dist::universe() {
        return dist::cli(&sc, file, out, opts, &u);
    }
    let staging = match output::Staging::new(out) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ibcycle run: {e}");
            return ExitCode::FAILURE;
        }
    };
    let obs = if opts.is_empty() {
        None
    } else {
        match Observers::open(opts, &sc, staging.dir()) {
            Ok(o) => Some(o),
            Err(e) => {
                eprintln!("ibcycle run: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let r = match run_with(&sc, std::io::stderr().is_terminal(), obs, threads, None) {
        Ok((r, Ok(()))) => r,
        Ok((_, Err(e))) => {
            eprintln!("ibcycle run: writing {e}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("ibcycle run: {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = write_outputs(&r, &sc, staging.dir()) {
        eprintln!("ibcycle run: writing {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let inv = &r.summary.invariants;
    let mut traced = None;
    if let (Some(name), None) = (port_trace, inv.broken()) {
        match port_trace::record_into(&sc, name, staging.dir()) {
            Ok(line) => traced = Some(line),
            Err(e) => {
                eprintln!("ibcycle run: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Err(e) = staging.commit() {
        eprintln!(
            "ibcycle run: moving the outputs into {}: {e}",
            out.display()
        );
        return ExitCode::FAILURE;
    }
    print_flows(&r.summary.flows);
    if let Some(why) = inv.broken() {
        eprintln!(
            "ibcycle run: {}: integrity check failed: {why} (outputs kept in {})",
            file.display(),
            out.display()
        );
        return ExitCode::FAILURE;
    }
    let mut so = std::io::stdout().lock();
    if let Some(line) = traced {
        let _ = writeln!(so, "{line}");
    }
    let _ = writeln!(so, "wrote {}", out.display());
    ExitCode::SUCCESS
}

/// Flows listed one per line on stdout before the rest are summed up: a fabric of thousands of flows
/// reports their spread, and summary.json has every one.
const FLOWS_LISTED: usize = 32;

/// The run's report on stdout: each flow's average rate, or for a large scenario the first
/// [`FLOWS_LISTED`] and the spread of all. A courtesy: a closed stdout (`ibcycle run ... | head -1`) must
/// not fail a finished run.
pub(crate) fn print_flows(flows: &[summary::FlowSummary]) {
    let mut so = std::io::stdout().lock();
    for f in flows.iter().take(FLOWS_LISTED) {
        let _ = writeln!(
            so,
            "{} {}->{}: {:.3} Gbit/s",
            f.id, f.src, f.dst, f.avg_gbps
        );
    }
    if flows.len() > FLOWS_LISTED {
        let mut g: Vec<f64> = flows.iter().map(|f| f.avg_gbps).collect();
        g.sort_by(f64::total_cmp);
        let _ = writeln!(
            so,
            "... and {} more flows (summary.json lists all); over all {}: min {:.3}, median {:.3}, max {:.3} Gbit/s",
            flows.len() - FLOWS_LISTED,
            flows.len(),
            g[0],
            g[g.len() / 2],
            g[g.len() - 1]
        );
    }
}
