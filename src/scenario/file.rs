//! The scenario file as the TOML parser reads it (every table and key; [`super::parse`] checks them and
//! builds the [`super::Scenario`]). Values whose errors must point at their line are kept [`Spanned`].

use serde::Deserialize;
use toml::Spanned;

use super::{ports, HcaCc, RoceSettings, Settings, SwitchCc, VlArb};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    pub(super) name: Option<String>,
    #[serde(default = "default_seed")]
    pub(super) seed: u64,
    pub(super) duration_us: Spanned<u64>,
    #[serde(default)]
    pub(super) switch: Vec<SwitchEntry>,
    #[serde(default)]
    pub(super) hca: Vec<HcaEntry>,
    #[serde(default)]
    pub(super) link: Vec<LinkEntry>,
    pub(super) fat_tree: Option<Spanned<FatTreeEntry>>,
    pub(super) fat_tree3: Option<Spanned<FatTree3Entry>>,
    pub(super) chain: Option<Spanned<ChainEntry>>,
    #[serde(default)]
    pub(super) flow: Vec<FlowEntry>,
    #[serde(default)]
    pub(super) traffic: Vec<Spanned<TrafficEntry>>,
    pub(super) topology: Option<Spanned<TopologySection>>,
    pub(super) settings: Option<Spanned<Settings>>,
    pub(super) switch_cc: Option<Spanned<SwitchCc>>,
    pub(super) hca_cc: Option<Spanned<HcaCc>>,
    pub(super) roce: Option<Spanned<RoceSettings>>,
    /// Not `Spanned`: the table is often implicit (only `[cc.opensm]` written), which `Spanned` cannot read.
    pub(super) cc: Option<CcSection>,
}

/// `[cc]`: congestion-control settings from elsewhere: an `opensm.conf` (`opensm_conf`, relative to the
/// scenario file) and opensm keys inline (`[cc.opensm]`, applied after the file; strings in opensm's syntax
/// or TOML integers and booleans).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CcSection {
    pub(super) opensm_conf: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) opensm: std::collections::BTreeMap<String, Spanned<toml::Value>>,
}

impl CcSection {
    /// Where errors about the section point: the `opensm_conf` value, else the first inline key.
    pub(super) fn span(&self) -> std::ops::Range<usize> {
        self.opensm_conf
            .as_ref()
            .map(Spanned::span)
            .or_else(|| self.opensm.values().next().map(Spanned::span))
            .unwrap_or(0..0)
    }
}

/// `[topology]`: where the fabric comes from when it is not written out (`ibnetdiscover`, relative to the
/// scenario file) and how it is routed (`routing`, `roots`, or a subnet manager's `lfts` dump).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologySection {
    pub(super) ibnetdiscover: Option<Spanned<String>>,
    pub(super) lfts: Option<Spanned<String>>,
    pub(super) iblinkinfo: Option<Spanned<String>>,
    pub(super) routing: Option<Spanned<String>>,
    pub(super) roots: Option<Spanned<Vec<String>>>,
    pub(super) latency_ns: Option<Spanned<u64>>,
}

/// `[[traffic]]`: flows over a set of hosts by a pattern (`kind`), each with the flow keys given here.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TrafficEntry {
    pub(super) kind: Spanned<String>,
    pub(super) hosts: Option<Spanned<Vec<String>>>,
    pub(super) k: Option<Spanned<u64>>,
    pub(super) seed: Option<Spanned<u64>>,
    pub(super) dst: Option<Spanned<String>>,
    pub(super) id: Option<Spanned<String>>,
    #[serde(default = "default_sl")]
    pub(super) sl: Spanned<u8>,
    #[serde(default = "default_mtu")]
    pub(super) mtu: Spanned<u16>,
    #[serde(default = "default_message")]
    pub(super) message_bytes: Spanned<u64>,
    #[serde(default = "zero")]
    pub(super) start_us: Spanned<u64>,
    pub(super) stop_us: Option<Spanned<u64>>,
    pub(super) pattern: Option<Spanned<String>>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) scv: Option<Spanned<f64>>,
}

pub(super) fn default_seed() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SwitchEntry {
    pub(super) name: Spanned<String>,
    /// Absent: an entry naming a generated switch, carrying only settings.
    pub(super) ports: Option<Spanned<u8>>,
    pub(super) cc: Option<Spanned<ports::SwitchCcOverride>>,
    pub(super) sl2vl: Option<Spanned<Vec<u8>>>,
    pub(super) sl2vl_scope: Option<Spanned<Vec<ports::Sl2VlScopeEntry>>>,
    pub(super) vl_arb: Option<Spanned<VlArb>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HcaEntry {
    pub(super) name: Spanned<String>,
    pub(super) cc: Option<Spanned<ports::HcaCcOverride>>,
    pub(super) host_cap: Option<Spanned<String>>,
    pub(super) drain_cap: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkEntry {
    /// Two ends; read as a list so that a third is an error rather than ignored.
    pub(super) ends: Spanned<Vec<Spanned<String>>>,
    pub(super) rate: Spanned<String>,
    #[serde(default = "zero")]
    pub(super) latency_ns: Spanned<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FatTreeEntry {
    pub(super) leaves: usize,
    pub(super) spines: usize,
    pub(super) hosts_per_leaf: usize,
    #[serde(default = "one")]
    pub(super) uplinks_per_spine: usize,
    pub(super) host_rate: Spanned<String>,
    pub(super) fabric_rate: Spanned<String>,
    #[serde(default = "zero")]
    pub(super) latency_ns: Spanned<u64>,
}

/// `[fat_tree3]`: a three-level fat tree of `radix`-port switches (`pods` defaults to `radix`, the full tree).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FatTree3Entry {
    pub(super) radix: usize,
    pub(super) pods: Option<usize>,
    pub(super) host_rate: Spanned<String>,
    pub(super) fabric_rate: Spanned<String>,
    #[serde(default = "zero")]
    pub(super) latency_ns: Spanned<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChainEntry {
    pub(super) switches: usize,
    pub(super) hosts_per_switch: usize,
    pub(super) host_rate: Spanned<String>,
    pub(super) trunk_rate: Spanned<String>,
    #[serde(default = "zero")]
    pub(super) latency_ns: Spanned<u64>,
}

pub(super) fn zero() -> Spanned<u64> {
    Spanned::new(0..0, 0)
}

pub(super) fn one() -> usize {
    1
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct FlowEntry {
    pub(super) id: Spanned<String>,
    pub(super) src: Spanned<String>,
    pub(super) dst: Spanned<String>,
    #[serde(default = "default_sl")]
    pub(super) sl: Spanned<u8>,
    #[serde(default = "default_mtu")]
    pub(super) mtu: Spanned<u16>,
    #[serde(default = "default_message")]
    pub(super) message_bytes: Spanned<u64>,
    #[serde(default = "zero")]
    pub(super) start_us: Spanned<u64>,
    pub(super) stop_us: Option<Spanned<u64>>,
    pub(super) pattern: Option<Spanned<String>>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) scv: Option<Spanned<f64>>,
}

pub(super) fn default_sl() -> Spanned<u8> {
    Spanned::new(0..0, 0)
}

pub(super) fn default_mtu() -> Spanned<u16> {
    Spanned::new(0..0, 2048)
}

pub(super) fn default_message() -> Spanned<u64> {
    Spanned::new(0..0, 1 << 20)
}
