//! Traffic generation for one flow: when messages arrive ([`pattern`]). Seeded randomness only ([`rng`]);
//! integer arithmetic only.

pub mod pattern;
pub mod rng;
