//! HCA pipelines: traffic, transmit scheduling, CNPs, rate control. Built on `rtl-model` blocks.
//!
//! What is here: the congestion-control part of an HCA, independent of any fabric, traffic generation, and
//! the transmit and receive sides of one port (native IB, or RoCEv2 with PFC):
//! - [`units`]: the time, link-rate and MTU units every controller uses (integer core cycles, exact rationals).
//! - [`rate`]: the [`rate::RateController`] interface the transmit pipeline calls per flow (QP or SL), and the
//!   controllers behind it: the IB CCT reaction point (and a port-level container for QP/SL contexts), the
//!   RoCEv2 RCM of Liu et al., the receiver-driven CC of Zhang et al. (sender side), DCQCN, and the FIMD/PIPD
//!   source response functions of the thesis (seed 003).
//! - [`np`]: notification points: the IB rule (CNP or BECN on the ACK), the RoCEv2 rule (CNP 0x81 on ECN CE
//!   with a minimum interval per flow), and the receiver side of the receiver-driven CC.
//! - [`marker`]: the two-counter ECN marker of seed 003 (a switch-side block, kept here next to its source
//!   response functions until the switch crate wants it).
//! - [`traffic`]: message arrival patterns (saturating, constant rate, Poisson, GE bursty, on/off) and
//!   segmentation into IB or RoCEv2 packets with real headers and PSNs.
//! - [`pipeline`]: the per-cycle transmit side of a port (arrivals, segmentation, CC and host-cap gates,
//!   per-VL round robin, VL arbitration, IB credits or PFC, CNPs first, exact serialisation, exact idle
//!   skipping).
//! - [`sink`]: the receive side (ICRC check, per-flow statistics and message completion times, IB and RoCEv2
//!   notification points, RC ACKs, feedback for the port's own QPs).
//! - [`txloop`]: a minimal event-driven transmit loop (two HCAs joined by one link: a saturating flow serialised at an
//!   exact link rate, gated by a controller, with feedback from the receiver) used to measure what a
//!   controller lets through.
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
