//! Verilator co-simulation of the RTL in `hdl/` against the `rtl-model` blocks, clock by clock.
//!
//! - [`table`]: the RTL modules, their ports and bug variants (read by `build.rs` too).
//! - [`ports`]: port names and values of a block's `In`/`Out` structs, for reports and port traces.
//! - [`dut`]: the narrow [`dut::Dut`] trait both sides implement (the Rust block through [`dut::Golden`]).
//! - [`check`]: the lockstep checker: same inputs to both every cycle, every output compared, the first
//!   mismatch reported with cycle, port, RTL value and model value in hex, and a VCD window around it.
//! - [`cover`]: functional coverage: each block's cover points, the sampler on the Rust side, the report.
//! - [`blocks`]: per block, the seeded stimulus generator, the port lists and (with the `verilator` feature)
//!   the adapter to its Verilated model.
//! - [`wide`]: port values of any width (up to 2,048 bits), as Verilator's `VlWide` words.
//! - [`trace`]: the port-trace file format (per-cycle inputs as CSV) for replaying recorded stimulus.
//! - [`switch`], [`switch_trace`]: the fabric's switch (`switch_asic::Switch`) against `hdl/ib_switch.sv`,
//!   driven from a switch port trace recorded in a fabric run.
//! - [`registry`]: blocks by name, for the `ibcycle cosim` command.
//! - `ffi` (feature `verilator`): the safe wrapper over the generated C ABI shim; the only `unsafe` code.
//! - `adapter` (feature `verilator`): `rtl_dut!`, the `Dut` impl of every RTL adapter from its output conversions.
//!
//! Without the `verilator` feature everything but the RTL side builds and is tested against Rust models, so
//! plain `cargo test` needs no external tool.
#![deny(unsafe_code)]

#[cfg(feature = "verilator")]
pub mod adapter;
pub mod blocks;
pub mod check;
pub mod cover;
pub mod dut;
#[cfg(feature = "verilator")]
#[allow(unsafe_code)]
pub mod ffi;
pub mod portmap;
pub mod ports;
pub mod registry;
pub mod rng;
pub mod rtlcheck;
pub mod scoreboard;
pub mod switch;
pub mod switch_trace;
pub mod table;
pub mod tb_trace;
pub mod trace;
pub mod wide;

pub use check::{lockstep, CosimError, Matched, Mismatch};
pub use dut::{Dut, Golden, Halt};
