//! Notification points: what a receiving HCA sends back when a packet arrives marked. Pure functions and
//! small state machines over parsed header `Repr`s; no fabric needed.
//!
//! - [`ib`]: IB FECN -> CNP (0x80) or, for RC requests, BECN on the ACK; optional CNP coalescing.
//! - [`roce`]: RoCEv2 ECN CE -> CNP (0x81), at most one per flow per minimum interval.
//! - [`rrcc`]: the receiver side of the receiver-driven CC (periodic CNPs with and without BECN).

pub mod ib;
pub mod roce;
pub mod rrcc;

/// Why a marked packet gets no congestion notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ignored {
    /// Not marked (no FECN / not ECN CE).
    NotMarked,
    /// A multicast destination (IB DLID >= 0xC000, or an IP multicast address): nobody to notify.
    Multicast,
    /// A CNP itself (BTH opcode 0x80 or 0x81, or any opcode of the CNP transport class).
    Cnp,
    /// An RC/RD ACKNOWLEDGE: hfi1 ignores FECN on ACKs (they only carry BECN back).
    Ack,
    /// A reserved or vendor transport opcode: no rule applies.
    OtherTransport,
}
