//! The hardware kit shared by the ibcycle switch and HCA models.
//!
//! - [`wire`]: bit-accurate views of InfiniBand and RoCEv2 headers (smoltcp style), and a packet builder.
//! - [`crc`]: ICRC (with the masking rules for IB local, IB global, RoCEv2 over IPv4/IPv6), VCRC, LPCRC.
//! - [`mad`]: wire layouts of the management attributes that configure congestion control and arbitration.
//! - [`blocks`]: synchronous clocked primitives (credit accounting, VL arbitration, congestion detection, FECN
//!   marking decision, CCT rate shaper), each the twin of an RTL module in `hdl/`.
//! - [`capture`]: pcap writing in the formats Wireshark/tshark decode.
//! - [`link`]: the link layer both the switch and the HCA use (link rates, packet descriptors, serialiser,
//!   wire, PFC timers).
//!
//! [`clocked`] states the contract every block follows.
#![forbid(unsafe_code)]

pub mod blocks;
pub mod capture;
pub mod clocked;
pub mod crc;
pub mod link;
pub mod mad;
pub mod rng;
pub mod samples;
#[cfg(feature = "proptest")]
pub mod testkit;
pub mod wire;
