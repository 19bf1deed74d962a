//! `ibcycle bench`: fixed fabrics and traffic that measure the simulator's speed (docs/performance.md).
//!
//! A bench builds its scenario in code (no file), steps the fabric for `--sim-us` simulated microseconds
//! with [`Fabric::run_until`], and reports wall time, simulated seconds per wall second, port-cycles per
//! wall second and peak memory. A port-cycle is one port over the wire time of one 64-byte block at that
//! port's rate (both ends of every link are ports), so the figure compares with BookSim2's flit cycles
//! whatever the model's core clock is.
//!
//! # Benches
//! - `clos648-shift`: 36 leaf + 18 spine 36-port switches, 648 HCAs, 4x QDR everywhere, 100 ns wires; HCA
//!   `k` sends saturating 1 MiB messages (2048-byte MTU) to HCA `k + 18` (always the next leaf). CC off.
//! - `clos648-shift-cc`: the same with IB CC on at the settings of the shipped `gran-s1-cc-on-quick` scenario
//!   ([`validation_cc`]).
//! - `ft18x2-uniform`: BookSim2's 18-ary 2-tree (18 leaf + 18 spine routers, 324 nodes), 4x QDR, one VL, IB
//!   credits; every node injects 2048-byte packets at 0.4 of its link rate to uniformly random other nodes
//!   ([`uniform`]).
//! - `ft11664-shift-cc`: the full three-level fat tree of 36-port switches ([`topology::fat_tree3`] radix 36:
//!   36 pods, 648 edge, 648 aggregation and 324 core switches, 11,664 HCAs), 4x QDR everywhere, 100 ns
//!   wires, IB CC on at [`validation_cc`]; HCA `k` sends saturating 1 MiB messages to HCA `k + 324` (always
//!   the next pod, so every packet crosses the core).
//! - `ft11664-uniform`: the same fabric, CC off, the `ft18x2-uniform` traffic (0.4 load, uniformly random
//!   destinations).
//! - `idle`: the `clos648-shift` fabric with no traffic (only periodic flow-control packets).

pub mod uniform;

use std::time::Instant;

use serde::Serialize;

use crate::fabric::event::Prefetch;
use crate::fabric::{Fabric, FabricError};
use crate::scenario::{Flow, HcaCc, Scenario, Settings, SwitchCc};
use crate::topology::{self, Topology};

/// 4x QDR data rate in Mbit/s.
const QDR_MBPS: u64 = 32_000;
/// Wire latency of every bench link (the validation scenarios' 100 ns).
const LATENCY_NS: u64 = 100;

/// The benches, by CLI name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchName {
    /// 648-port two-level Clos, shift-by-18 traffic at full load, CC off.
    #[value(name = "clos648-shift")]
    Clos648Shift,
    /// The same with IB CC on.
    #[value(name = "clos648-shift-cc")]
    Clos648ShiftCc,
    /// BookSim2's 18-ary 2-tree, uniform random traffic at 0.4 load.
    #[value(name = "ft18x2-uniform")]
    Ft18x2Uniform,
    /// The 11,664-node three-level fat tree, shift-by-one-pod traffic at full load, IB CC on.
    #[value(name = "ft11664-shift-cc")]
    Ft11664ShiftCc,
    /// The 11,664-node three-level fat tree, uniform random traffic at 0.4 load.
    #[value(name = "ft11664-uniform")]
    Ft11664Uniform,
    /// The 648-port Clos with no traffic.
    #[value(name = "idle")]
    Idle,
}

impl BenchName {
    /// The CLI name.
    pub fn as_str(self) -> &'static str {
        match self {
            BenchName::Clos648Shift => "clos648-shift",
            BenchName::Clos648ShiftCc => "clos648-shift-cc",
            BenchName::Ft18x2Uniform => "ft18x2-uniform",
            BenchName::Ft11664ShiftCc => "ft11664-shift-cc",
            BenchName::Ft11664Uniform => "ft11664-uniform",
            BenchName::Idle => "idle",
        }
    }

    /// Simulated microseconds when `--sim-us` is not given: long enough that start-up is a small part, short
    /// enough for a quick run; `idle` runs one simulated second, the span its goal is stated for.
    pub fn default_sim_us(self) -> u64 {
        match self {
            BenchName::Idle => 1_000_000,
            BenchName::Ft11664ShiftCc | BenchName::Ft11664Uniform => 20,
            _ => 200,
        }
    }
}

/// What `ibcycle bench --json` prints (one object).
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// Bench name.
    pub bench: String,
    /// Simulated seconds.
    pub sim_seconds: f64,
    /// Wall-clock seconds of building the scenario and assembling the fabric.
    pub build_seconds: f64,
    /// Wall-clock seconds of the stepping (fabric assembly excluded).
    pub wall_seconds: f64,
    /// `sim_seconds / wall_seconds`.
    pub sim_s_per_wall_s: f64,
    /// CPU seconds (user and system, every thread) of the stepping: on a shared machine, where other jobs
    /// take the cores away for whole time slices, this moves less between runs than `wall_seconds`.
    pub cpu_seconds: f64,
    /// Port-cycles simulated (see the module documentation).
    pub port_cycles: f64,
    /// Port-cycles per wall second.
    pub port_cycles_per_s: f64,
    /// Peak resident memory of the process (VmHWM) in MiB.
    pub peak_rss_mib: f64,
    /// Threads used for stepping.
    pub threads: usize,
    /// The prefetch mode of the stepping (`auto` turns it on for a fabric much larger than the cache).
    pub prefetch: Prefetch,
    /// Data packets delivered to HCAs (a sanity figure: a bench that moved nothing measures nothing).
    pub packets_delivered: u64,
    /// MPI ranks the fabric was split across (1: one process; see `fabric::dist`).
    pub mpi_ranks: usize,
    /// Seconds this rank spent in MPI collective calls (waiting for the slowest rank, plus the transfers).
    pub sync_wait_seconds: f64,
    /// Under MPI, where each rank's stepping wall time went, in rank order (empty in one process).
    pub ranks: Vec<RankTime>,
    /// With threads: per thread, where the stepping's wall time went.
    pub thread_times: Vec<crate::fabric::event::ThreadTime>,
    /// What the event-driven stepping did (this rank's share under MPI): the counts the wall time follows.
    pub work: crate::fabric::event::StepWork,
    /// This process's MPI rank (only rank 0 reports).
    #[serde(skip)]
    pub mpi_rank: usize,
}

/// Where one MPI rank's wall time of the stepping went.
#[derive(Debug, Clone, Serialize)]
pub struct RankTime {
    /// The rank.
    pub rank: usize,
    /// Stepping its part: the wall time less the three below.
    pub stepping_seconds: f64,
    /// Waiting for the other ranks at each exchange (the opening all-to-all of item counts, which returns
    /// when the slowest rank arrives).
    pub waiting_seconds: f64,
    /// Transferring the items between ranks.
    pub transfer_seconds: f64,
    /// Sorting, encoding and decoding them.
    pub pack_seconds: f64,
}

/// The IB CC settings of the shipped `gran-s1-cc-on-quick` scenario (switch side, HCA side).
pub fn validation_cc() -> (SwitchCc, HcaCc) {
    (
        SwitchCc {
            threshold: 12,
            marking_rate: 1,
            packet_size: 8,
            victim_mask: false,
            ..SwitchCc::default()
        },
        HcaCc {
            ccti_increase: 3,
            ccti_limit: 127,
            ccti_min: 0,
            ccti_timer: 10,
            cct_shift: 3,
            cct_multiplier_step: 1,
            ..HcaCc::default()
        },
    )
}

fn ft11664() -> Topology {
    let shape = topology::FatTree3 {
        radix: 36,
        pods: 36,
    };
    topology::fat_tree3(shape, QDR_MBPS, QDR_MBPS, LATENCY_NS)
        .expect("the 36-port three-level fat tree is valid")
}

fn clos648() -> Topology {
    topology::fat_tree(36, 18, 18, 1, QDR_MBPS, QDR_MBPS, LATENCY_NS)
        .expect("the 648-port Clos is a valid fat tree")
}

fn flow(i: usize, src: usize, dst: usize, message_bytes: u64) -> Flow {
    Flow {
        id: format!("F{i}"),
        src,
        dst,
        sl: 0,
        mtu: 2048,
        message_bytes,
        start_us: 0,
        stop_us: None,
        pattern: Default::default(),
    }
}

/// The scenario of bench `b` for `sim_us` microseconds (for `ft18x2-uniform`, the flows' first destinations;
/// [`uniform::retarget`] gives them their later ones).
pub fn scenario(b: BenchName, sim_us: u64) -> Scenario {
    let settings = Settings {
        switch_vl_buf_blocks: 512,
        ..Settings::default()
    };
    let mut sc = Scenario {
        name: b.as_str().to_string(),
        seed: 1,
        duration_us: sim_us,
        topology: clos648(),
        flows: Vec::new(),
        settings,
        switch_cc: SwitchCc::default(),
        hca_cc: None,
        roce: None,
        overrides: Default::default(),
        warnings: Vec::new(),
        notes: Vec::new(),
    };
    match b {
        BenchName::Clos648Shift | BenchName::Clos648ShiftCc => {
            let n = sc.topology.hcas.len();
            sc.flows = (0..n).map(|k| flow(k, k, (k + 18) % n, 1 << 20)).collect();
            if b == BenchName::Clos648ShiftCc {
                let (s, h) = validation_cc();
                sc.switch_cc = s;
                sc.hca_cc = Some(h);
            }
        }
        BenchName::Ft18x2Uniform => {
            sc.topology = topology::fat_tree(18, 18, 18, 1, QDR_MBPS, QDR_MBPS, LATENCY_NS)
                .expect("the 18-ary 2-tree is a valid fat tree");
            sc.flows = uniform::flows(sc.topology.hcas.len(), sc.seed);
        }
        BenchName::Ft11664ShiftCc => {
            sc.topology = ft11664();
            let n = sc.topology.hcas.len();
            sc.flows = (0..n).map(|k| flow(k, k, (k + 324) % n, 1 << 20)).collect();
            let (s, h) = validation_cc();
            sc.switch_cc = s;
            sc.hca_cc = Some(h);
        }
        BenchName::Ft11664Uniform => {
            sc.topology = ft11664();
            sc.flows = uniform::flows(sc.topology.hcas.len(), sc.seed);
        }
        BenchName::Idle => {}
    }
    sc
}

/// Port-cycles of `cycles` core cycles of `sc`'s fabric: per link end, cycles times bytes per cycle / 64.
pub fn port_cycles(sc: &Scenario, cycles: u64) -> f64 {
    let ns = cycles as f64 * 1000.0 / f64::from(sc.settings.clock_mhz);
    // rate Mbit/s = rate / 8 bytes per us; a block takes 64 * 8 / rate us.
    sc.topology
        .links
        .iter()
        .map(|l| 2.0 * ns / 1000.0 * l.rate_mbps as f64 / 512.0)
        .sum()
}

/// Peak resident set of this process in MiB (VmHWM), 0 where /proc is missing.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// CPU time of this process so far (user plus system, all threads, ended ones included), seconds.
fn process_cpu_seconds() -> f64 {
    // SAFETY: an all-zero `rusage` is a valid value to write into; RUSAGE_SELF exists on every Linux.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Runs bench `b` for `sim_us` microseconds on `threads` threads, prefetching as `prefetch` says.
pub fn run(
    b: BenchName,
    sim_us: u64,
    threads: usize,
    prefetch: Prefetch,
) -> Result<BenchResult, FabricError> {
    let t_build = Instant::now();
    let sc = scenario(b, sim_us);
    let mut fab = Fabric::new(&sc)?;
    // Part of the build: with threads, the partition and the re-allocation of the state part by part.
    fab.set_threads(threads);
    fab.set_prefetch(prefetch);
    let build_seconds = t_build.elapsed().as_secs_f64();
    // Under `mpirun` with more than one rank: the fabric split across the ranks.
    #[cfg(feature = "mpi")]
    let universe = crate::run::dist::universe();
    #[cfg(feature = "mpi")]
    if let Some(u) = &universe {
        use mpi::traits::CommunicatorCollectives;
        u.world().barrier();
        fab.split_mpi(u.world());
    }
    let end = sim_us * fab.cycles_per_us;
    let (t0, c0) = (Instant::now(), process_cpu_seconds());
    if matches!(b, BenchName::Ft18x2Uniform | BenchName::Ft11664Uniform) {
        uniform::retarget(&sc, &mut fab);
    }
    fab.run_until(end);
    let wall = t0.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - c0;
    let sim = sim_us as f64 * 1e-6;
    let pc = port_cycles(&sc, end);
    #[allow(unused_mut)]
    let mut delivered = (0..fab.hcas.len())
        .filter(|&h| fab.owns_hca(h))
        .map(|h| {
            fab.hcas[h]
                .per_flow
                .iter()
                .map(|c| c.rx.packets)
                .sum::<u64>()
        })
        .sum();
    #[allow(unused_mut)]
    let (mut mpi_ranks, mut mpi_rank, mut sync_wait_seconds) = (1, 0, 0.0);
    #[allow(unused_mut)]
    let mut ranks = Vec::new();
    #[cfg(feature = "mpi")]
    if let Some(d) = fab.dist_mut() {
        sync_wait_seconds = d.sync_wait_seconds();
        let (waiting, transfer, pack) = d.exchange_seconds();
        let ns = |s: f64| (s * 1e9) as u64;
        let mine = [ns(wall), ns(waiting), ns(transfer), ns(pack)];
        let all = d.gather(&mine);
        let mut v = [delivered];
        d.sum(&mut v);
        delivered = v[0];
        (mpi_ranks, mpi_rank) = (d.size(), d.rank() as usize);
        let s = |n: u64| n as f64 * 1e-9;
        ranks = all
            .iter()
            .enumerate()
            .map(|(rank, t)| RankTime {
                rank,
                stepping_seconds: s(t[0].saturating_sub(t[1] + t[2] + t[3])),
                waiting_seconds: s(t[1]),
                transfer_seconds: s(t[2]),
                pack_seconds: s(t[3]),
            })
            .collect();
    }
    Ok(BenchResult {
        bench: b.as_str().to_string(),
        sim_seconds: sim,
        build_seconds,
        wall_seconds: wall,
        sim_s_per_wall_s: sim / wall,
        cpu_seconds: cpu,
        port_cycles: pc,
        port_cycles_per_s: pc / wall,
        peak_rss_mib: peak_rss_mib(),
        threads: fab.threads(),
        prefetch,
        packets_delivered: delivered,
        mpi_ranks,
        sync_wait_seconds,
        ranks,
        thread_times: fab.thread_times().to_vec(),
        work: fab.step_work(),
        mpi_rank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clos648_has_2592_ports_and_shift_goes_to_the_next_leaf() {
        let sc = scenario(BenchName::Clos648Shift, 1);
        assert_eq!(sc.topology.switches.len(), 54);
        assert_eq!(sc.topology.hcas.len(), 648);
        assert_eq!(sc.topology.links.len() * 2, 2592);
        assert!(sc.flows.iter().all(|f| f.dst / 18 == (f.src / 18 + 1) % 36));
        // 4x QDR moves 4 bytes per ns: a 64-byte block is 16 ns, 62.5 M block-times per port per second.
        let pc = port_cycles(&sc, 1_000_000_000);
        assert!((pc - 2592.0 * 62.5e6).abs() < 1.0, "{pc}");
    }

    #[test]
    fn ft18x2_is_booksims_configuration() {
        let sc = scenario(BenchName::Ft18x2Uniform, 1);
        assert_eq!(sc.topology.switches.len(), 36);
        assert_eq!(sc.topology.hcas.len(), 324);
        assert_eq!(sc.settings.data_vls, 1);
        assert!(sc.flows.iter().all(|f| f.src != f.dst));
    }

    #[test]
    fn the_cc_bench_uses_the_validation_settings() {
        let sc = scenario(BenchName::Clos648ShiftCc, 1);
        assert_eq!(sc.switch_cc.threshold, 12);
        assert!(sc.hca_cc.is_some());
        assert!(scenario(BenchName::Clos648Shift, 1).hca_cc.is_none());
        assert!(scenario(BenchName::Idle, 1).flows.is_empty());
    }
}
