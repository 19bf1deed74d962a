//! InfiniBand and RoCEv2 CRCs: ICRC (invariant end to end), VCRC (per hop), LPCRC (flow-control packets).
//! Computing, verifying and filling are kept apart from parsing.
pub mod icrc;
pub mod vcrc;
