//! The HCA that `ibcycle run` steps, built on `rtl-model` blocks and its link layer (`rtl_model::link`).
//!
//! - [`hca`]: the HCA itself ([`hca::Hca`]): per VL the flows on it served round-robin, VL arbitration
//!   among the VLs with credit (the port's VLArbitrationTable, `rtl_model::blocks::vl_arb`), segmentation
//!   into MTU packets with PSNs, a reaction point per flow, a host injection cap, CNPs ahead of data, the
//!   IB and RoCEv2 notification point (a CNP per marked packet, at most one per flow per minimum interval),
//!   the receiver side of receiver-driven CC, RC ACKs, RoCEv2 framing, the sink's ICRC and PSN-order
//!   checks, per-flow receive counts and message completions; exact `next_event` / `skip`.
//! - [`port`]: its link port ([`port::Endpoint`]): IB credits (`credit_tx` / `credit_rx`) or PFC, the
//!   serialiser, the VL arbiter, the block-arrival model and the receive buffer's drain (a receive-side host
//!   cap), flow-control packets by the switch port's rules.
//! - [`rate`]: the [`rate::RateController`] interface and the reaction points behind it: the IB CCT reaction
//!   point, the RoCEv2 RCM of Liu et al., the receiver-driven CC of Zhang et al. (sender side), DCQCN, and the
//!   one type the HCA holds them in ([`rate::flow::FlowCc`], which also says when a controller next wants
//!   to send).
//! - [`np`]: the receiver side of the receiver-driven CC.
//! - [`traffic`]: message arrival patterns (saturating, constant rate, Poisson, GE bursty) and a flow's
//!   queue of messages at its source.
//! - [`units`]: the time, clock and MTU units every controller uses (integer core cycles, exact rationals).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod hca;
pub mod np;
pub mod port;
pub mod rate;
pub mod traffic;
pub mod units;

pub use error::CcError;
