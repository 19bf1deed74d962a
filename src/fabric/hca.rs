//! The fabric's HCA is hca-model's [`Hca`]: the fabric builds it from the scenario
//! (`Fabric::new`), hands it what arrives on its link and steps or skips it (`src/fabric/event.rs`).

pub use hca_model::hca::{Hca, Retarget, RxCount, TxFlow, CNP_QUEUE, FIRST_DATA_QP};
