//! Co-simulation throughput, in cycles per second, per block:
//! - `stimulus`: the seeded stimulus generator alone;
//! - `rust block`: the Rust block alone, on inputs generated beforehand;
//! - `rtl from rust`: the Verilated model alone, driven from Rust through the C ABI (same stimulus);
//! - `lockstep`: the co-simulation (stimulus, Rust block, Verilated model, compare every output);
//! - `c++ loop`: the same Verilated model stepped by a C++-only loop in the shim (xorshift stimulus on every
//!   input, rare resets), the baseline the co-simulation is measured against.
//!
//! `cargo bench -p cosim --features verilator` (best of 7 interleaved runs of 2,000,000 cycles each; `COSIM_BENCH_CYCLES`
//! overrides the count).

use cosim::blocks::credit_rx::CreditRxBlock;
use cosim::blocks::credit_tx::CreditTxBlock;
use cosim::blocks::fecn_marker::FecnMarkerBlock;
use cosim::blocks::timebase::TimebaseBlock;
use cosim::blocks::vl_arb::VlArbBlock;
use cosim::blocks::Block;
use cosim::check::lockstep;
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

fn bench<B: Block>(cycles: u64) {
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
    let mut cpp = || {
        let mut r = B::rtl(&cfg, None).unwrap();
        black_box(r.bench_cpp(cycles, 1).unwrap());
        cycles
    };
    let mut fs: [&mut dyn FnMut() -> u64; 5] =
        [&mut gen, &mut rust, &mut rtl_only, &mut co, &mut cpp];
    let mut best = [0.0f64; 5];
    for _ in 0..ROUNDS {
        for (k, f) in fs.iter_mut().enumerate() {
            best[k] = best[k].max(rate(cycles, *f));
        }
    }
    let m = |r: f64| r / 1e6;
    println!(
        "{:<10} stimulus {:>6.1} M/s | rust block {:>6.1} M/s | rtl from rust {:>6.2} M/s | lockstep {:>6.2} M/s | c++ loop {:>6.2} M/s | lockstep/c++ {:>5.1}%",
        B::NAME,
        m(best[0]),
        m(best[1]),
        m(best[2]),
        m(best[3]),
        m(best[4]),
        100.0 * best[3] / best[4]
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
}
