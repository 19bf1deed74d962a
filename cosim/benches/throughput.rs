//! Co-simulation throughput, in cycles per second, per block:
//! - `stimulus`: the seeded stimulus generator alone;
//! - `rust block`: the Rust block alone, on inputs generated beforehand;
//! - `rtl from rust`: the Verilated model alone, driven from Rust through the C ABI (same stimulus);
//! - `lockstep`: the co-simulation on one thread (stimulus, Rust block, Verilated model, compare every
//!   output), `check::lockstep`;
//! - `pipelined`: the co-simulation as `ibcycle cosim` and the tests run it, `check::lockstep_pipelined`
//!   (stimulus and Rust block a batch ahead on a second thread, the RTL and the comparison on this one);
//! - `c++ loop`: the same Verilated model stepped by a C++-only loop in the shim (xorshift stimulus on every
//!   input, rare resets), the baseline the co-simulation is measured against.
//!
//! `cargo bench -p cosim --features verilator` (best of 7 interleaved runs of 2,000,000 cycles each; `COSIM_BENCH_CYCLES`
//! overrides the count).

use cosim::blocks::cct_shaper::CctShaperBlock;
use cosim::blocks::cong_detect::CongDetectBlock;
use cosim::blocks::credit_rx::CreditRxBlock;
use cosim::blocks::credit_tx::CreditTxBlock;
use cosim::blocks::fecn_marker::FecnMarkerBlock;
use cosim::blocks::fecn_rewrite::{FecnRewriteB32Block, FecnRewriteB8Block};
use cosim::blocks::timebase::TimebaseBlock;
use cosim::blocks::vl_arb::VlArbBlock;
use cosim::blocks::Block;
use cosim::check::{lockstep, lockstep_pipelined};
use cosim::dut::{Dut, Golden};
use cosim::ffi::RtlDut;
use rtl_model::clocked::Clocked;
use std::hint::black_box;
use std::time::Instant;

/// Runs every measurement `ROUNDS` times, interleaved (so load from other processes hits all of them alike),
/// and keeps the best rate of each.
const ROUNDS: usize = 7;

fn rate(cycles: u64, f: &mut dyn FnMut() -> u64) -> f64 {
    let t = Instant::now();
    let n = f();
    assert_eq!(n, cycles);
    cycles as f64 / t.elapsed().as_secs_f64()
}

fn bench<B: Block>(cycles: u64)
where
    B::In: Send,
    B::Out: Send,
    B::Model: Send,
    B::Stim: Send,
{
    let (cfg, stim) = B::random(1);
    // The block alone: inputs generated beforehand, so only `step` is timed.
    let inputs: Vec<B::In> = stim.clone().take(cycles as usize).collect();
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
        for i in &inputs {
            black_box(m.step(i));
        }
        inputs.len() as u64
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
        let mut m = Golden(B::model(&cfg).unwrap());
        lockstep(&mut r, &mut m, &mut stim.clone(), cycles).unwrap()
    };
    let mut pipe = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        let mut m = Golden(B::model(&cfg).unwrap());
        lockstep_pipelined(&mut r, &mut m, stim.clone(), cycles).unwrap()
    };
    let mut cpp = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        black_box(r.bench_cpp(cycles, 1).unwrap());
        cycles
    };
    let mut fs: [&mut dyn FnMut() -> u64; 6] = [
        &mut gen,
        &mut rust,
        &mut rtl_only,
        &mut co,
        &mut pipe,
        &mut cpp,
    ];
    let mut best = [0.0f64; 6];
    let mut all: [Vec<f64>; 6] = Default::default();
    for _ in 0..ROUNDS {
        for (k, f) in fs.iter_mut().enumerate() {
            let r = rate(cycles, *f);
            best[k] = best[k].max(r);
            all[k].push(r);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let med: Vec<f64> = all.iter_mut().map(median).collect();
    let m = |r: f64| r / 1e6;
    println!(
        "{:<16} best: stimulus {:>6.1} | rust block {:>6.1} | rtl from rust {:>6.2} | lockstep {:>6.2} | pipelined {:>6.2} | c++ loop {:>6.2} M/s | lockstep/c++ {:>5.1}% | pipelined/c++ {:>5.1}%",
        B::NAME,
        m(best[0]),
        m(best[1]),
        m(best[2]),
        m(best[3]),
        m(best[4]),
        m(best[5]),
        100.0 * best[3] / best[5],
        100.0 * best[4] / best[5]
    );
    println!(
        "{:<16} median: lockstep {:>6.2} | pipelined {:>6.2} | c++ loop {:>6.2} M/s | lockstep/c++ {:>5.1}% | pipelined/c++ {:>5.1}%",
        "",
        m(med[3]),
        m(med[4]),
        m(med[5]),
        100.0 * med[3] / med[5],
        100.0 * med[4] / med[5]
    );
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let cycles = std::env::var("COSIM_BENCH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 10_000 } else { 2_000_000 });
    bench::<CreditTxBlock>(cycles);
    bench::<CreditRxBlock>(cycles);
    bench::<TimebaseBlock>(cycles);
    bench::<FecnMarkerBlock>(cycles);
    bench::<VlArbBlock>(cycles);
    bench::<CongDetectBlock>(cycles);
    bench::<CctShaperBlock>(cycles);
    bench::<FecnRewriteB8Block>(cycles);
    bench::<FecnRewriteB32Block>(cycles);
}
