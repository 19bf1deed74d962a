//! ibcycle: fabric assembly, scenarios and outputs on top of the `rtl-model`, `switch-asic` and `hca-model`
//! crates.
pub use rtl_model;

pub mod bench;
pub mod credit_loop;
pub mod fabric;
pub mod import;
pub mod queueing;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod topology;
pub mod updown;
