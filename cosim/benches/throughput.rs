//! Co-simulation throughput, in million cycles per second, per block:
//! - `stimulus`: the seeded stimulus generator alone;
//! - `rust block`: the Rust block alone, on inputs generated beforehand (a window of [`WINDOW`] inputs replayed,
//!   so the inputs come from cache as they do in the lockstep loop, not from a 100 MB array);
//! - `rtl from rust`: the Verilated model alone, driven from Rust through the C ABI (same stimulus);
//! - `lockstep`: the co-simulation on one thread (stimulus, Rust block with its coverage sampler, Verilated
//!   model, compare every output), `check::lockstep`, as `ibcycle cosim` and the tests run it within one
//!   configuration;
//! - `pipelined`: `check::lockstep_pipelined` (stimulus and Rust block batches ahead on a second thread, the
//!   RTL and the comparison on this one; `ibcycle cosim --threads 2`, its default with a second CPU);
//! - `setup`: what a run adds per configuration it applies (a fresh configured RTL model with its reset edge,
//!   the Rust block and its sampler, taken down after), and its share of a configuration's stretch
//!   (`Block::SEGMENT` cycles at the lockstep rate);
//! - `c++ loop`: the same Verilated model stepped by a C++-only loop in the shim (xorshift stimulus on every
//!   non-held input every cycle, rare resets), the baseline the co-simulation is measured against;
//! - `c++ replay`: the same Verilated model stepped by a C++-only loop over the port structs of a window of
//!   [`WINDOW`] inputs of the Rust stimulus, recorded beforehand (no generation cost): a second baseline, the
//!   harness's cost on identical work (the model's own work depends on its inputs).
//!
//! The machine is shared: other jobs take the core away for whole time slices, and its speed changes by up to
//! 2x within a second, so wall-clock rates move by tens of percent between runs. Each loop is therefore timed
//! by this thread's CPU time (what the loop itself costs; cache and core sharing still add noise) and by the
//! wall clock, in rounds. In each round `lockstep`, `c++ loop`, `c++ replay` and `pipelined` run interleaved,
//! in slices of about a tenth of a measurement each, taking turns (see `interleaved`), each with its model
//! built before the first slice, and the ratios are taken within the round. Reported: the median over the rounds of each rate, and the median (and middle half) of the
//! per-round ratios. `pipelined` uses two threads, so it is only timed by the wall clock and compared with the
//! C++ loop's wall-clock rate of the same round. `stimulus`, `rust block` and `rtl from rust` explain where the
//! time goes.
//!
//! ```sh
//! cargo bench -p cosim --features verilator
//! ```
//! Environment: `COSIM_BENCH_MS` (length of one measurement: cycles are calibrated per block so its C++ loop
//! takes this many milliseconds; default 150), `COSIM_BENCH_CYCLES` (a fixed cycle count instead),
//! `COSIM_BENCH_ROUNDS` (default 21), `COSIM_BENCH_BLOCKS` (comma-separated block names, default all),
//! `COSIM_BENCH_ONLY` (`stimulus`, `rust`, `rtl`, `lockstep`, `pipelined`, `cpp` or `replay`: run only that
//! loop, once, and print its rates: for `perf record`).

use cosim::blocks::cct_shaper::CctShaperBlock;
use cosim::blocks::cong_detect::CongDetectBlock;
use cosim::blocks::credit_rx::CreditRxBlock;
use cosim::blocks::credit_tx::CreditTxBlock;
use cosim::blocks::fecn_marker::FecnMarkerBlock;
use cosim::blocks::fecn_rewrite::{FecnRewriteB32Block, FecnRewriteB8Block};
use cosim::blocks::timebase::TimebaseBlock;
use cosim::blocks::vl_arb::VlArbBlock;
use cosim::blocks::{segment, Block};
use cosim::check::{lockstep, lockstep_pipelined};
use cosim::cover::Covered;
use cosim::dut::Dut;
use cosim::ffi::RtlDut;
use rtl_model::clocked::Clocked;
use std::hint::black_box;
use std::time::Instant;

/// Inputs the `rust block` measurement replays (a few hundred KB at most: stays in L2).
const WINDOW: usize = 4096;

/// How the benchmark runs (from the environment).
struct Opts {
    /// Cycles per measurement; `None`: calibrated per block (see [`cycles_for`]).
    cycles: Option<u64>,
    /// Target length of one C++-loop measurement when calibrating, milliseconds.
    ms: f64,
    rounds: usize,
    blocks: Option<Vec<String>>,
    only: Option<String>,
}

/// CPU time this thread has used, seconds.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write; CLOCK_THREAD_CPUTIME_ID exists on every Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Rates of one measurement, cycles per second: by this thread's CPU time and by the wall clock.
fn rate(cycles: u64, f: &mut dyn FnMut() -> u64) -> (f64, f64) {
    let (t, c) = (Instant::now(), thread_cpu());
    let n = f();
    let (wall, cpu) = (t.elapsed().as_secs_f64(), thread_cpu() - c);
    assert_eq!(n, cycles);
    (cycles as f64 / cpu, cycles as f64 / wall)
}

fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The `q` quantile of `v` (nearest rank; `v` non-empty).
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = ((s.len() - 1) as f64 * q).round() as usize;
    s[k]
}

/// Indices into the measurement arrays.
const STIM: usize = 0;
const RUST: usize = 1;
const RTL: usize = 2;
const LOCKSTEP: usize = 3;
const PIPE: usize = 4;
const CPP: usize = 5;
const REPLAY: usize = 6;
const NAMES: [&str; 7] = [
    "stimulus",
    "rust",
    "rtl",
    "lockstep",
    "pipelined",
    "cpp",
    "replay",
];

/// Slices per loop in one round of [`interleaved`].
const SLICES: u64 = 10;

/// Rates (CPU time, wall clock) of the loops `fs`, each run for `cycles` cycles in [`SLICES`] slices that take
/// turns (order reversed every other slice): `f(n)` runs `n` more cycles of its loop, its state carried over
/// from its last slice, and returns `n`. The machine's speed changes within a second (other tenants share the
/// host), so loops compared by a ratio must see the same machine: slices of about 15 ms put both sides of the
/// ratio into every stretch of it, where whole 150 ms runs back to back did not. Each loop's model is built
/// by the caller, outside the timed slices, so both sides time only their loop's steady state.
fn interleaved(cycles: u64, fs: &mut [&mut dyn FnMut(u64) -> u64]) -> Vec<(f64, f64)> {
    let k = fs.len();
    let (mut cpu, mut wall) = (vec![0.0; k], vec![0.0; k]);
    let slice = (cycles / SLICES).max(1);
    let mut done = 0;
    let mut s = 0;
    while done < cycles {
        let n = if s + 1 >= SLICES {
            cycles - done
        } else {
            slice.min(cycles - done)
        };
        for j in 0..k {
            let j = if s % 2 == 0 { j } else { k - 1 - j };
            let (t, c) = (Instant::now(), thread_cpu());
            let got = fs[j](n);
            wall[j] += t.elapsed().as_secs_f64();
            cpu[j] += thread_cpu() - c;
            assert_eq!(got, n);
        }
        done += n;
        s += 1;
    }
    (0..k)
        .map(|j| (cycles as f64 / cpu[j], cycles as f64 / wall[j]))
        .collect()
}

/// Cycles for which the C++ loop of `B` takes about `ms` milliseconds of CPU time (at least 10,000): short
/// measurements, many rounds, so every block gets the same number of paired rounds in a few seconds whatever
/// its model's speed (from 0.4 to 30 million cycles per second).
fn cycles_for<B: Block>(cfg: &B::Config, ms: f64) -> u64 {
    let probe = 20_000;
    let (r, _) = rate(probe, &mut || {
        let mut m = B::rtl(cfg, None).unwrap();
        black_box(m.bench_cpp(probe, 1).unwrap());
        probe
    });
    ((r * ms / 1e3) as u64).max(10_000)
}

/// The Rust side as a run drives it: the block with its coverage sampler.
fn covered<B: Block>(cfg: &B::Config) -> Covered<B::Model, B::Cover> {
    Covered::new(B::model(cfg).unwrap(), cfg)
}

/// Seconds to set up (and take down) one configuration of a run, as `blocks::run_schedule` does for each:
/// the configured RTL model with its power-on reset edge and the Rust block with its sampler; the median
/// over the first 21 configurations of seed 1's schedule.
fn setup_seconds<B: Block>() -> f64 {
    let t: Vec<f64> = (0..21)
        .map(|k| {
            let seg = segment::<B>(1, k);
            let t0 = Instant::now();
            let r = B::rtl(&seg.cfg, None).unwrap();
            let m = covered::<B>(&seg.cfg);
            drop(black_box((r, m)));
            t0.elapsed().as_secs_f64()
        })
        .collect();
    median(&t)
}

fn bench<B: Block>(o: &Opts) {
    if let Some(b) = &o.blocks {
        if !b.iter().any(|n| n == B::NAME) {
            return;
        }
    }
    let (cfg, stim) = B::random(1);
    let cycles = o.cycles.unwrap_or_else(|| cycles_for::<B>(&cfg, o.ms));
    let window: Vec<B::In> = stim.clone().take(WINDOW).collect();
    // The same window as the port structs the adapter hands the model, for the C++ replay loop.
    let recorded = B::rtl(&cfg, None).unwrap().record(&window);
    let mut gen = || {
        let mut n = 0;
        for i in stim.clone().take(cycles as usize) {
            black_box(i);
            n += 1;
        }
        n
    };
    let mut rust = || {
        let mut m = B::model(&cfg).unwrap();
        for i in window.iter().cycle().take(cycles as usize) {
            black_box(m.step(black_box(i)));
        }
        cycles
    };
    let mut rtl_only = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        let mut n = 0;
        for i in stim.clone().take(cycles as usize) {
            black_box(r.step(&i).unwrap());
            n += 1;
        }
        n
    };
    let mut co = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        let mut m = covered::<B>(&cfg);
        lockstep(&mut r, &mut m, &mut stim.clone(), cycles).unwrap()
    };
    let mut pipe = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        let mut m = covered::<B>(&cfg);
        lockstep_pipelined(&mut r, &mut m, stim.clone(), cycles).unwrap()
    };
    let mut cpp = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        black_box(r.bench_cpp(cycles, 1).unwrap());
        cycles
    };
    let mut replay = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        black_box(r.bench_replay(&recorded, cycles).unwrap());
        cycles
    };
    let fs: [&mut dyn FnMut() -> u64; 7] = [
        &mut gen,
        &mut rust,
        &mut rtl_only,
        &mut co,
        &mut pipe,
        &mut cpp,
        &mut replay,
    ];
    if let Some(only) = &o.only {
        let k = NAMES
            .iter()
            .position(|n| n == only)
            .unwrap_or_else(|| panic!("COSIM_BENCH_ONLY={only}: one of {NAMES:?}"));
        let (cpu, wall) = rate(cycles, fs[k]);
        println!(
            "{} {only}: {:.2} M cycles/s by CPU time, {:.2} by the wall clock",
            B::NAME,
            cpu / 1e6,
            wall / 1e6
        );
        return;
    }
    // Rates by CPU time and by the wall clock, per measurement, one entry per round.
    let mut cpu: [Vec<f64>; 7] = Default::default();
    let mut wall: [Vec<f64>; 7] = Default::default();
    let (mut lock_cpu, mut lock_wall, mut pipe_wall, mut replay_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..o.rounds {
        let mut r = [(0.0f64, 0.0f64); 7];
        for k in [STIM, RUST, RTL, LOCKSTEP] {
            if k != LOCKSTEP {
                r[k] = rate(cycles, fs[k]);
                continue;
            }
            // Lockstep, the C++ loop, the C++ replay loop and the pipelined lockstep, interleaved in slices;
            // each keeps its own model (and the lockstep loops their stimulus) from slice to slice. The
            // pipelined loop starts its second thread in every slice (tens of microseconds in 15 ms).
            let mut rl = B::rtl(&cfg, None).unwrap();
            let mut ml = covered::<B>(&cfg);
            let mut sl = stim.clone();
            let mut rc = B::rtl(&cfg, None).unwrap();
            let mut rr = B::rtl(&cfg, None).unwrap();
            let mut seed = 0;
            let mut rp = B::rtl(&cfg, None).unwrap();
            let mut mp = covered::<B>(&cfg);
            let mut sp = stim.clone();
            let rates = interleaved(
                cycles,
                &mut [
                    &mut |n| lockstep(&mut rl, &mut ml, &mut sl, n).unwrap(),
                    // One xorshift stream per slice (seeds 1, 2, ...), as one run from seed 1 before.
                    &mut |n| {
                        seed += 1;
                        black_box(rc.bench_cpp(n, seed).unwrap());
                        n
                    },
                    // The recorded window from its start in every slice (the model's state carries on).
                    &mut |n| {
                        black_box(rr.bench_replay(&recorded, n).unwrap());
                        n
                    },
                    &mut |n| lockstep_pipelined(&mut rp, &mut mp, &mut sp, n).unwrap(),
                ],
            );
            (r[LOCKSTEP], r[CPP], r[REPLAY], r[PIPE]) = (rates[0], rates[1], rates[2], rates[3]);
        }
        for (k, v) in r.iter().enumerate() {
            cpu[k].push(v.0);
            wall[k].push(v.1);
        }
        lock_cpu.push(r[LOCKSTEP].0 / r[CPP].0);
        lock_wall.push(r[LOCKSTEP].1 / r[CPP].1);
        pipe_wall.push(r[PIPE].1 / r[CPP].1);
        replay_cpu.push(r[LOCKSTEP].0 / r[REPLAY].0);
    }
    let m = |v: &[f64]| median(v) / 1e6;
    let pct = |v: &[f64]| {
        format!(
            "{:.0}% ({:.0}-{:.0})",
            100.0 * median(v),
            100.0 * quantile(v, 0.25),
            100.0 * quantile(v, 0.75)
        )
    };
    let setup = setup_seconds::<B>();
    // The share of a configuration's stretch (B::SEGMENT cycles at the lockstep rate) its setup adds.
    let setup_share = setup * median(&cpu[LOCKSTEP]) / B::SEGMENT as f64;
    println!(
        "| {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {} | {} | {:.2} | {} | {:.2} | {} | {:.0} | {:.1}% |",
        B::NAME,
        m(&cpu[STIM]),
        m(&cpu[RUST]),
        m(&cpu[RTL]),
        m(&cpu[LOCKSTEP]),
        m(&cpu[CPP]),
        pct(&lock_cpu),
        pct(&lock_wall),
        m(&wall[PIPE]),
        pct(&pipe_wall),
        m(&cpu[REPLAY]),
        pct(&replay_cpu),
        setup * 1e6,
        100.0 * setup_share,
    );
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let env = |k: &str| std::env::var(k).ok();
    let o = Opts {
        cycles: env("COSIM_BENCH_CYCLES")
            .and_then(|v| v.parse().ok())
            .or(quick.then_some(10_000)),
        ms: env("COSIM_BENCH_MS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(150.0),
        rounds: env("COSIM_BENCH_ROUNDS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(if quick { 2 } else { 21 }),
        blocks: env("COSIM_BENCH_BLOCKS").map(|v| v.split(',').map(str::to_string).collect()),
        only: env("COSIM_BENCH_ONLY"),
    };
    if o.only.is_none() {
        let per = o.cycles.map_or_else(
            || format!("about {} ms of the C++ loop", o.ms),
            |c| format!("{c} cycles"),
        );
        println!(
            "{} rounds of {per} per measurement; medians over the rounds, million cycles per second of this \
             thread's CPU time (wall clock where marked); ratios: median of the per-round ratios (middle half in \
             parentheses)",
            o.rounds
        );
        println!(
            "| block | stimulus | Rust block | RTL from Rust | lockstep | C++-only loop | lockstep / C++ | \
             lockstep / C++ (wall) | pipelined (wall) | pipelined / C++ (wall) | C++ replay loop | lockstep / \
             replay | setup (us) | setup / configuration |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    }
    bench::<CreditTxBlock>(&o);
    bench::<CreditRxBlock>(&o);
    bench::<TimebaseBlock>(&o);
    bench::<FecnMarkerBlock>(&o);
    bench::<VlArbBlock>(&o);
    bench::<CongDetectBlock>(&o);
    bench::<CctShaperBlock>(&o);
    bench::<FecnRewriteB8Block>(&o);
    bench::<FecnRewriteB32Block>(&o);
}
