//! The link layer shared by the switch and the HCA: exact link rates, packet descriptors and the port
//! interface, the serialiser, the block-arrival model and the fixed-latency wire, PFC pause timers and
//! watermarks, and the state by which a sender leaves off flow-control packets that repeat the last one.
//!
//! Both ends of every link in a fabric are built from these, so a rate, a packet's wire time or a pause
//! runs out by one rule everywhere.
//!
//! - [`rate`]: exact link rates ([`LinkRate`]) and the sub-cycle tick base.
//! - [`packet`]: packet descriptors and the port interface ([`PacketStart`], [`FcPacket`], [`TxEvent`]).
//! - [`serial`]: serialiser, block-arrival model and fixed-latency wire.
//! - [`pfc`]: RoCEv2 mode: PFC watermarks, headroom, pause frames and timers; ECN CE marking of frame bytes.
//! - [`fc`]: the last flow-control packet sent per VL, and a port-VL's flow-control registers.

pub mod fc;
pub mod packet;
pub mod pfc;
pub mod rate;
pub mod serial;

pub use packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
pub use rate::LinkRate;

/// A setting a link, port or switch cannot be built with: which setting, its value, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{setting} = {value}: {reason}")]
pub struct ConfigError {
    /// Path of the setting (`ports[3].vl_buf_blocks[1]`, `lft[17]`, ...).
    pub setting: String,
    /// The bad value as written.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ConfigError {
    /// An error for `setting` holding `value`.
    pub fn new(
        setting: impl Into<String>,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        ConfigError {
            setting: setting.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
