//! The cycle-level InfiniBand switch pipeline, composed of the `rtl_model` blocks: `credit_rx` and
//! `credit_tx` per port-VL, `vl_arb` per output, `cong_detect` and `fecn_marker` per output port-VL. Ports
//! run IB link-level credits or, in RoCEv2 mode, PFC with ECN CE marking.
//!
//! Packets are descriptors ([`PacketDesc`]); bytes are made only on request. The per-cycle path allocates
//! nothing, idle ports cost nothing, and [`Switch::next_event`] / [`Switch::skip`] fast-forward exactly.
//!
//! - [`config`]: [`SwitchConfig`] and its validation ([`ConfigError`] names the setting).
//! - [`rate`]: exact link rates ([`LinkRate`]) and the sub-cycle tick base.
//! - [`packet`]: packet descriptors and the port interface ([`PacketStart`], [`FcPacket`], [`TxEvent`]).
//! - [`link`]: serialiser, block-arrival model and fixed-latency wire shared by the switch and its partners.
//! - [`switch`]: the [`Switch`] itself (port interface, phases of a cycle, designer choices, cost).
//! - [`pfc`]: RoCEv2 mode: PFC watermarks, headroom and pause frames; ECN CE marking of frame bytes.
//! - [`observe`]: per-clock signals and counters.
//! - [`endpoint`]: a credit-obeying link partner (saturating source and sink) for tests and benches.
#![forbid(unsafe_code)]

#[cfg(test)]
mod cc_tests;
pub mod config;
pub mod endpoint;
#[cfg(test)]
mod endpoint_tests;
pub mod link;
pub mod observe;
pub mod packet;
pub mod pfc;
#[cfg(test)]
mod pipeline_tests;
pub mod port_mask;
pub mod quiet;
pub mod rate;
#[cfg(test)]
mod roce_tests;
pub mod switch;
#[cfg(test)]
mod switch_tests;

pub use config::{ConfigError, PortCc, PortConfig, SwitchConfig};
pub use observe::{PortVlCounters, PortVlSignals};
pub use packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
pub use rate::LinkRate;
pub use switch::{RxError, Switch};
