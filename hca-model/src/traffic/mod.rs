//! Traffic generation for one flow: when messages arrive ([`pattern`]) and which wait at the source
//! ([`source`]). Seeded randomness only ([`rng`]);
//! integer arithmetic only.

pub mod pattern;
pub mod rng;
pub mod source;
