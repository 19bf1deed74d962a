//! Traffic generation for one flow: when messages arrive ([`pattern`]) and how a message becomes packets
//! with real headers ([`segment`]). Seeded randomness only ([`rng`]); integer arithmetic only.

pub mod pattern;
pub mod rng;
pub mod segment;
