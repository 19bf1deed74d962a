//! Clocked primitives: each is a synchronous block following [`crate::clocked`] and the twin of an RTL module
//! of the same name in `hdl/`.

pub mod cct_shaper;
pub mod cong_detect;
pub mod credit_rx;
pub mod credit_tx;
pub mod fecn_marker;
pub mod timebase;
pub mod vl_arb;
