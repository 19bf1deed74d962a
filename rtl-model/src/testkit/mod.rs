//! Property-test kit: proptest strategies for IB and RoCEv2 packets (valid and malformed) and for
//! congestion-control settings, and oracles that say whether a marking block did its job. Behind the
//! `proptest` feature.
//!
//! A marking block is correct when, for every packet, what leaves is what the specification allows and
//! nothing else. The oracles state that from the packet bytes alone, so they check any implementation (this
//! project's RTL, yours, a Rust model) without trusting a second implementation of the same logic:
//! - [`oracle::fecn_marked`] / [`oracle::becn_marked`]: exactly that BTH bit differs (set), the VCRC is
//!   regenerated over the new bytes, the ICRC is untouched (FECN and BECN are masked in it);
//! - [`oracle::passed_unchanged`]: an unmarked packet leaves byte for byte as it came;
//! - [`oracle::switched`]: a packet forwarded by a switch differs only in its LRH VL (the output VL), FECN
//!   if marked, and a regenerated VCRC;
//! - [`oracle::ecn_ce_marked`]: on a RoCEv2 frame over IPv4 only the ECN field differs (now CE) and the
//!   header checksum is the RFC 1624 incremental update of the old one; the ICRC still verifies;
//! - [`oracle::ended_bad`]: a packet that came with a wrong VCRC leaves with a VCRC that fails (a switch
//!   never makes a corrupt packet look good).
//!
//! # Example
//! A property test of a marking function. Replace `my_marker` with a call into your model or your
//! Verilated RTL (the project's own use, streaming the packets through `hdl/fecn_rewrite.sv` beat by beat,
//! is `cosim/tests/marking_kit.rs`):
//! ```
//! use proptest::prelude::*;
//! use rtl_model::testkit::{oracle, packets};
//!
//! /// The block under test: sets FECN when `mark`, regenerates the VCRC.
//! fn my_marker(pkt: &[u8], mark: bool) -> Vec<u8> {
//!     let mut out = pkt.to_vec();
//!     if mark {
//!         let bth = packets::bth_offset(pkt).unwrap();
//!         out[bth + 4] |= 0x80;
//!         rtl_model::crc::vcrc::fill_vcrc(&mut out);
//!     }
//!     out
//! }
//!
//! proptest!(|(pkt in packets::ib_packet(), mark in any::<bool>())| {
//!     let out = my_marker(&pkt, mark);
//!     let verdict = if mark {
//!         oracle::fecn_marked(&pkt, &out)
//!     } else {
//!         oracle::passed_unchanged(&pkt, &out)
//!     };
//!     prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
//! });
//! ```

pub mod oracle;
pub mod packets;
pub mod settings;
