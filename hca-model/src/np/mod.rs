//! Notification points: what a receiving HCA sends back. The IB and RoCEv2 rules (a CNP for a marked packet,
//! RoCEv2 at most one per flow per minimum interval) are part of the HCA's receive side; here is the receiver
//! side of the receiver-driven CC ([`rrcc`]: periodic CNPs with and without BECN).

pub mod rrcc;
