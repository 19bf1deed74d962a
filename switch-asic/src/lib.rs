//! The cycle-level InfiniBand switch pipeline, composed of the `rtl_model` blocks: `credit_rx` and
//! `credit_tx` per port-VL, `vl_arb` per output, `cong_detect` and `fecn_marker` per output port-VL. Ports
//! run IB link-level credits or, in RoCEv2 mode, PFC with ECN CE marking.
//!
//! Packets are descriptors ([`PacketDesc`]); bytes are made only on request. The per-cycle path allocates
//! nothing, idle ports cost nothing, and [`Switch::next_event`] / [`Switch::skip`] fast-forward exactly.
//!
//! - [`config`]: [`SwitchConfig`] and its validation ([`ConfigError`] names the setting).
//! - the link layer (link rates, packet descriptors and the port interface, serialiser, wire, PFC timers) is
//!   `rtl_model::link`, shared with the HCA; its port types are re-exported here.
//! - [`switch`]: the [`Switch`] itself (port interface, phases of a cycle, designer choices, cost).
//! - [`observe`]: per-clock signals and counters.
//!
//! Its tests put an HCA port (`hca_model::port`) on every switch port (`src/rig.rs`).
#![forbid(unsafe_code)]

// The test rig names this crate by its name, as the integration tests and examples that include it do.
#[cfg(test)]
extern crate self as switch_asic;

#[cfg(test)]
mod cc_tests;
pub mod config;
pub mod observe;
#[cfg(test)]
mod pipeline_tests;
pub mod port_mask;
#[cfg(test)]
mod rig;
#[cfg(test)]
mod roce_tests;
pub mod switch;
#[cfg(test)]
mod switch_tests;

pub use config::{ConfigError, PortCc, PortConfig, SwitchConfig};
pub use observe::{PortVlCounters, PortVlSignals};
pub use rtl_model::link::{FcPacket, LinkRate, PacketDesc, PacketStart, TxEvent};
pub use switch::{RxError, Switch};
