//! Switch-side congestion markers described by the seed papers but not part of the IB switch kit.

pub mod two_counter;
