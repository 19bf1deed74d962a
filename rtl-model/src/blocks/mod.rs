//! Clocked primitives: each is a synchronous block following [`crate::clocked`] and the twin of an RTL module
//! of the same name in `hdl/`.
