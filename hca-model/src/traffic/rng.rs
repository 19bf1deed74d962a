//! The deterministic generator of traffic patterns: the workspace's one SplitMix64, in rtl-model.

pub use rtl_model::rng::SplitMix64;
