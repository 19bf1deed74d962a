//! `ibcycle run` under `mpirun` (feature `mpi`): every rank builds the whole fabric, steps only its part
//! (`crate::fabric::dist`), and the figures of the run are each rank's blocks' shares summed over the ranks;
//! rank 0 writes the outputs, which are byte-identical to a single-process run's.
//!
//! The run is the single-process [`run`](super::run) step for step: the same sampling intervals, the same
//! drain (one cycle at a time until no packet is in flight anywhere, a collective check per cycle) and the same
//! settling. Message latencies pair a completion at the destination HCA with the send at the source HCA, which
//! may live on different ranks: the destinations' completions of each interval are gathered to every rank and
//! the source's rank pairs them.

use std::path::Path;
use std::process::ExitCode;

use mpi::environment::Universe;
use mpi::topology::Communicator;

use super::summary::{FlowSummary, Invariants, PortSummary, Summary};
use super::{round3, write_outputs, ObserveOpts, RunResult};
use crate::fabric::traffic::LatencyStats;
use crate::fabric::{Fabric, FabricError};
use crate::scenario::Scenario;

/// The MPI world when this process was started by `mpirun` with more than one rank (`None`: run as one
/// process, without initialising MPI, so that a binary built with the feature behaves as before).
pub fn universe() -> Option<Universe> {
    // OpenMPI's launcher sets this in every rank; a plain start has no MPI world to join.
    let size: usize = std::env::var("OMPI_COMM_WORLD_SIZE").ok()?.parse().ok()?;
    if size < 2 {
        return None;
    }
    let universe = mpi::initialize()?;
    // A rank that panics takes the others down with it: unwinding reaches MPI_Finalize, which waits for
    // ranks that wait in their next collective for this one, for ever.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        mpi::topology::SimpleCommunicator::world().abort(101);
    }));
    Some(universe)
}

/// Sums `v` over the ranks (every rank gets the sums).
fn sum(fab: &mut Fabric, v: &mut [u64]) {
    fab.dist_mut().expect("split fabric").sum(v);
}

/// Delivered payload bytes (destination's rank) and CNPs received (source's rank) of every flow so far.
fn progress(fab: &mut Fabric, sc: &Scenario) -> (Vec<u64>, Vec<u64>) {
    let n = sc.flows.len();
    let mut v = vec![0u64; 2 * n];
    for (i, f) in sc.flows.iter().enumerate() {
        if fab.owns_hca(f.dst) {
            v[i] = fab.hcas[f.dst].per_flow[i].rx.payload_bytes;
        }
        if fab.owns_hca(f.src) {
            v[n + i] = fab.hcas[f.src].per_flow[i].becn_rx;
        }
    }
    sum(fab, &mut v);
    let b = v.split_off(n);
    (v, b)
}

/// `Fabric::collect_messages` across ranks: the destinations' completions go to every rank, the source's
/// rank pairs each with its send. (A completion with no send, which cannot happen, ends the flow's pairing
/// for the interval and is dropped, as in one process.)
fn collect_messages(fab: &mut Fabric, sc: &Scenario, out: &mut [Vec<u64>]) {
    let mut mine = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        if fab.owns_hca(f.dst) && !fab.hcas[f.dst].per_flow[i].done.is_empty() {
            let d = &mut fab.hcas[f.dst].per_flow[i].done;
            mine.push(i as u64);
            mine.push(d.len() as u64);
            mine.extend(d.drain(..));
        }
    }
    let all = fab.dist_mut().expect("split fabric").gather(&mine);
    for v in all {
        let mut k = 0;
        while k < v.len() {
            let (i, len) = (v[k] as usize, v[k + 1] as usize);
            let src = sc.flows[i].src;
            if fab.owns_hca(src) {
                for &done in &v[k + 2..k + 2 + len] {
                    match fab.hcas[src].flow_source(i).and_then(|s| s.pop_sent()) {
                        Some(arrived) => out[i].push(done.saturating_sub(arrived)),
                        None => break,
                    }
                }
            }
            k += 2 + len;
        }
    }
}

/// The ranks' latencies of every flow (each flow's all come from its source's rank, in order).
fn gather_latencies(fab: &mut Fabric, lat: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let mut mine = Vec::new();
    for (i, l) in lat.iter().enumerate() {
        if !l.is_empty() {
            mine.extend([i as u64, l.len() as u64]);
            mine.extend_from_slice(l);
        }
    }
    let mut out = vec![Vec::new(); lat.len()];
    for v in fab.dist_mut().expect("split fabric").gather(&mine) {
        let mut k = 0;
        while k < v.len() {
            let (i, len) = (v[k] as usize, v[k + 1] as usize);
            out[i].extend_from_slice(&v[k + 2..k + 2 + len]);
            k += 2 + len;
        }
    }
    out
}

/// `summary::flows` from the ranks' shares.
fn flows(fab: &mut Fabric, sc: &Scenario, delivered: &[u64]) -> Vec<FlowSummary> {
    const K: usize = 8;
    let mut v = vec![0u64; K * sc.flows.len()];
    for (i, f) in sc.flows.iter().enumerate() {
        let c = &mut v[K * i..K * i + K];
        if fab.owns_hca(f.dst) {
            let d = &fab.hcas[f.dst];
            let rx = d.per_flow[i].rx;
            c[..4].copy_from_slice(&[rx.packets, rx.fecn, rx.ecn_ce, d.per_flow[i].cnp_sent]);
            c[6] = d.per_flow[i].acks_sent;
        }
        if fab.owns_hca(f.src) {
            let s = &fab.hcas[f.src];
            c[4] = s.per_flow[i].becn_rx;
            c[5] = s.refused().find(|&(g, _)| g == i).map_or(0, |(_, n)| n);
            c[7] = s.per_flow[i].acks_rx;
        }
    }
    sum(fab, &mut v);
    let names = &sc.topology.hcas;
    sc.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let c = &v[K * i..K * i + K];
            // The same figures as `summary::flows` (compared byte for byte by tests/mpi.rs).
            let avg = super::summary::avg_gbps(sc, i, delivered[i]);
            FlowSummary {
                id: f.id.clone(),
                src: names[f.src].name.clone(),
                dst: names[f.dst].name.clone(),
                avg_gbps: round3(avg),
                delivered_bytes: delivered[i],
                delivered_packets: c[0],
                fecn_marked_rx: c[1],
                ecn_marked_rx: c[2],
                cnp_sent: c[3],
                becn_rx: c[4],
                acks_sent: c[6],
                acks_rx: c[7],
                messages_refused: c[5],
                msg_latency_us: None,
            }
        })
        .collect()
}

/// `summary::ports` from the ranks' shares.
fn ports(fab: &mut Fabric, sc: &Scenario) -> Vec<PortSummary> {
    let vls = usize::from(sc.settings.data_vls);
    let mut keys = Vec::new();
    let mut v = Vec::new();
    for (s, links) in sc.topology.switch_port_link.iter().enumerate() {
        for (p, link) in links.iter().enumerate() {
            if link.is_none() {
                continue;
            }
            for vl in 0..vls {
                keys.push((s, p, vl));
                if fab.owns_sw(s) {
                    let c = fab.switches[s].counters(p, vl);
                    v.extend([c.xmit_pkts, c.cong_cycles, c.marked, c.xmit_wait]);
                } else {
                    v.extend([0; 4]);
                }
            }
        }
    }
    sum(fab, &mut v);
    keys.iter()
        .zip(v.chunks_exact(4))
        .map(|(&(s, p, vl), c)| PortSummary {
            switch: fab.switch_names[s].clone(),
            port: p as u8 + 1,
            vl: vl as u8,
            xmit_packets: c[0],
            congested_cycles: c[1],
            packets_marked: c[2],
            credit_wait_cycles: c[3],
        })
        .collect()
}

/// `run::drain` across ranks.
fn drain(fab: &mut Fabric, sc: &Scenario) -> Invariants {
    let now = fab.now();
    for h in 0..fab.hcas.len() {
        if fab.owns_hca(h) {
            fab.hcas[h].stop_all(now);
        }
    }
    let limit = now + sc.settings.drain_limit_us * fab.cycles_per_us;
    // One process stops at the first cycle with nothing in flight (or at the limit), then settles. Here each
    // rank runs to the next synchronisation point recording its share at every cycle (one cycle at a time
    // within its part, `run_counting_in_flight`); one sum per window finds that first cycle. Stepping past it
    // is harmless: the settling steps the same cycles, and it is longer than a window (settle > max latency
    // >= lookahead).
    let mut shares = Vec::new();
    let mut t = now;
    let (stop, drained) = loop {
        let sync = fab.dist().expect("split fabric").next_sync(t);
        let last = limit.min(sync - 1);
        shares.clear();
        fab.run_counting_in_flight(last + 1, &mut shares);
        sum(fab, &mut shares);
        if let Some(k) = shares.iter().position(|&x| x == 0) {
            break (t + k as u64, true);
        }
        if last == limit {
            break (limit, false);
        }
        t = sync;
    };
    let settle = 2 * u64::from(sc.settings.fc_interval_cycles) + fab.max_latency() + 2;
    fab.run_until(stop + settle);
    let mut v = [0u64; 8];
    for h in 0..fab.hcas.len() {
        if fab.owns_hca(h) {
            let h = &fab.hcas[h];
            v[0] += h.per_flow.iter().map(|c| c.injected).sum::<u64>() + h.ctl_injected;
            v[1] += h.per_flow.iter().map(|c| c.rx.packets).sum::<u64>() + h.ctl_delivered;
        }
    }
    // Shares can be negative; u64 sums wrap, so the total is exact.
    v[2] = fab.owned_packets_in_flight() as u64;
    v[3] = fab.credits_leaked();
    v[4] = fab.violations();
    v[5] = fab.credits_gained();
    let sink = fab.sink_errors();
    v[6] = sink.icrc;
    v[7] = sink.psn_order;
    sum(fab, &mut v);
    let [injected, delivered, in_flight, credits_leaked, violations, credits_gained, icrc_errors, psn_order_errors] =
        v;
    Invariants {
        packets_injected: injected,
        packets_delivered: delivered,
        packets_in_flight: in_flight,
        packets_lost: injected.saturating_sub(delivered + in_flight),
        packets_duplicated: (delivered + in_flight).saturating_sub(injected),
        credits_leaked,
        credits_gained,
        violations,
        icrc_errors,
        psn_order_errors,
        drained,
        drain_cycles: fab.now() - now,
    }
}

/// Runs `sc` split across the ranks of `universe`; every rank gets the whole result, and the seconds it
/// spent in collective calls.
pub fn run(sc: &Scenario, universe: &Universe) -> Result<(RunResult, f64), FabricError> {
    let mut fab = Fabric::new(sc)?;
    fab.split_mpi(universe.world());
    let cpu = fab.cycles_per_us;
    let total = sc.duration_us * cpu;
    let interval = sc.settings.sample_interval_us * cpu;
    let mut last = vec![0u64; sc.flows.len()];
    let mut samples = Vec::new();
    let mut last_cnp = vec![0u64; sc.flows.len()];
    let mut cnp_samples = Vec::new();
    let mut latencies = vec![Vec::new(); sc.flows.len()];
    while fab.now() < total {
        let begin = fab.now();
        let end = (begin + interval).min(total);
        fab.run_until(end);
        collect_messages(&mut fab, sc, &mut latencies);
        let (now_bytes, cnp) = progress(&mut fab, sc);
        let span_ns = (end - begin) as f64 * 1000.0 / cpu as f64;
        let gbps = now_bytes
            .iter()
            .zip(&last)
            .map(|(n, l)| round3((n - l) as f64 * 8.0 / span_ns))
            .collect();
        samples.push((end / cpu, gbps));
        last = now_bytes;
        let d = cnp.iter().zip(&last_cnp).map(|(n, l)| n - l).collect();
        cnp_samples.push((end / cpu, d));
        last_cnp = cnp;
    }
    let mut flows = flows(&mut fab, sc, &last);
    let latencies = gather_latencies(&mut fab, &latencies);
    for (f, l) in flows.iter_mut().zip(&latencies) {
        f.msg_latency_us = LatencyStats::of(l, cpu);
    }
    let ports = ports(&mut fab, sc);
    let invariants = drain(&mut fab, sc);
    let wait = fab.dist().map_or(0.0, |d| d.sync_wait_seconds());
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
    Ok((r, wait))
}

/// The `run` subcommand under `mpirun`: rank 0 writes the outputs and prints what `run` prints; every rank
/// fails (exit status 1) on a broken invariant. Observation outputs need every cycle in one place and are
/// refused.
pub fn cli(sc: &Scenario, file: &Path, out: &Path, opts: &ObserveOpts, u: &Universe) -> ExitCode {
    let rank = u.world().rank();
    if !opts.is_empty() {
        if rank == 0 {
            eprintln!(
                "ibcycle run: --pcap, --vcd and --trace need one process (not mpirun -np > 1)"
            );
        }
        return ExitCode::FAILURE;
    }
    let r = match run(sc, u) {
        Ok((r, _)) => r,
        Err(e) => {
            eprintln!("ibcycle run: {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let inv = &r.summary.invariants;
    if rank != 0 {
        return if inv.broken().is_some() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    // Staged beside `out` and renamed into place, as a one-process run does.
    let written = super::output::Staging::new(out).and_then(|s| {
        write_outputs(&r, sc, s.dir()).map_err(|e| e.to_string())?;
        s.commit().map_err(|e| e.to_string())
    });
    if let Err(e) = written {
        eprintln!("ibcycle run: writing {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    super::print_flows(&r.summary.flows);
    if let Some(why) = inv.broken() {
        eprintln!(
            "ibcycle run: {}: integrity check failed: {why} (outputs kept in {})",
            file.display(),
            out.display()
        );
        return ExitCode::FAILURE;
    }
    println!("wrote {} ({} MPI ranks)", out.display(), u.world().size());
    ExitCode::SUCCESS
}
