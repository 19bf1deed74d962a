//! Per-switch, per-port and per-HCA settings: SL2VL and VL arbitration (global in `[settings]`, or per
//! switch), and overrides of `[switch_cc]` and `[hca_cc]` on single `[[switch]]` and `[[hca]]` entries.
//!
//! ```toml
//! [settings]
//! data_vls = 2
//! sl2vl = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]   # SL s -> VL; every HCA uses it too
//! vl_arb = { low = [[0, 96], [1, 32]], high = [], high_limit = 0 }
//!
//! [[switch]]
//! name = "S1"
//! ports = 8
//! cc = { threshold = 0 }                       # no marking at S1 only
//!
//! [[switch]]                                   # with a generator: a generated switch, by name
//! name = "S2"
//! cc = { fill_comparison = "sum_voqs", victim_ports = [8], port_threshold = [[3, 12]] }
//! vl_arb = { low = [[0, 32], [1, 32]] }
//! # SL2VL of some (input, output) port pairs only, as opensm's qos-policy `sl2vl-scope` (from, to): packets
//! # entering at port 8 and leaving at 5 map SL 1 to VL 0. Later scopes override earlier ones; an absent
//! # `from` or `to` means every port.
//! sl2vl_scope = [{ from = [8], to = [5], sl2vl = [0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1] }]
//!
//! [[hca]]
//! name = "H1"
//! cc = { ccti_increase = 4, ccti_timer = 20 }  # the CCT reaction points of H1's flows
//! ```
//!
//! With a generator, a `[[switch]]` entry without `ports` and a `[[hca]]` entry with `cc` name a generated
//! node and only carry its settings.

use serde::Deserialize;
use switch_asic::config::{FillCompare, MarkMode, MarkPoint, ThresholdMap};
use switch_asic::PortCc;

use rtl_model::mad::vlarb::{VlArbEntry, VlArbTable};

use super::{HcaCc, SwitchCc};

/// VL arbitration of a port as written: `vl_arb = { high = [[vl, weight], ...], low = [...], high_limit = N }`.
/// Weights are in 64-byte units (0 skips an entry, a packet may overrun the last units of a weight);
/// `high_limit` is PortInfo VLHighLimit (4 KB units of high-priority bytes before a low-priority packet may
/// go; 255 = no limit). A VL in neither list is never sent, so every VL an SL maps to should be listed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VlArb {
    /// High-priority list, `[vl, weight]` pairs, at most 64.
    pub high: Vec<[u16; 2]>,
    /// Low-priority list, `[vl, weight]` pairs, at most 64.
    pub low: Vec<[u16; 2]>,
    /// VLHighLimit, 0..=255.
    pub high_limit: u16,
}

impl VlArb {
    /// Checks the lists against `data_vls`; the error names the list and entry (`low[1]: ...`).
    pub fn check(&self, data_vls: u8) -> Result<(), String> {
        if self.high_limit > 255 {
            return Err(format!("high_limit: {} is above 255", self.high_limit));
        }
        for (name, list) in [("high", &self.high), ("low", &self.low)] {
            if list.len() > VlArbTable::MAX_ENTRIES {
                return Err(format!(
                    "{name}: {} entries, at most {}",
                    list.len(),
                    VlArbTable::MAX_ENTRIES
                ));
            }
            for (i, &[vl, weight]) in list.iter().enumerate() {
                if vl >= u16::from(data_vls) {
                    return Err(format!(
                        "{name}[{i}]: VL {vl} does not exist (data_vls = {data_vls}: VLs 0..={})",
                        data_vls - 1
                    ));
                }
                if weight > 255 {
                    return Err(format!("{name}[{i}]: weight {weight} is not in 0..=255"));
                }
            }
        }
        if self.high.iter().chain(&self.low).all(|e| e[1] == 0) {
            return Err("no entry has a weight above 0: no VL would ever be sent".into());
        }
        Ok(())
    }

    /// The VLs this table ever grants, as the arbiter built from it decides them
    /// ([`rtl_model::blocks::vl_arb::Config::granted_vls`]; call [`Self::check`] first).
    pub fn granted(&self) -> u16 {
        rtl_model::blocks::vl_arb::Config::from_table(&self.table()).granted_vls()
    }

    /// Why flows on SLs `sls` would not all be sent by a port with this table, its packets of SL s on
    /// VL `vl_of(s)`: the first SL whose VL no entry of weight above 0 grants (a VL in neither list is
    /// never sent, and its packets would wait for ever).
    pub fn ungranted(&self, sls: &[u8], vl_of: impl Fn(u8) -> u8) -> Option<String> {
        let g = self.granted();
        sls.iter().find(|&&sl| g & (1 << vl_of(sl)) == 0).map(|&sl| {
            format!(
                "VL {} (of SL {sl}, which a flow uses) has no entry of weight above 0: its packets would never be sent",
                vl_of(sl)
            )
        })
    }

    /// The switch-asic table (call [`Self::check`] first: values are truncated to 8 bits).
    pub fn table(&self) -> VlArbTable {
        let list = |l: &[[u16; 2]]| {
            l.iter()
                .map(|&[vl, weight]| VlArbEntry {
                    vl: vl as u8,
                    weight: weight as u8,
                })
                .collect()
        };
        VlArbTable {
            high: list(&self.high),
            low: list(&self.low),
            high_limit: self.high_limit as u8,
        }
    }
}

/// The SL2VL table of `sl2vl = [..]`: exactly 16 VLs, each an existing data VL (VL 15, drop, is not offered:
/// a scenario's flows would silently vanish).
pub fn check_sl2vl(v: &[u8], data_vls: u8) -> Result<[u8; 16], String> {
    let t: [u8; 16] = v
        .try_into()
        .map_err(|_| format!("{} entries, give one VL for each of the 16 SLs", v.len()))?;
    if let Some((sl, vl)) = t.iter().enumerate().find(|(_, &vl)| vl >= data_vls) {
        return Err(format!(
            "SL {sl} -> VL {vl}: that VL does not exist (data_vls = {data_vls}: VLs 0..={})",
            data_vls - 1
        ));
    }
    Ok(t)
}

/// `cc = { .. }` on a `[[switch]]`: any `[switch_cc]` key, plus per-port settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchCcOverride {
    /// Threshold of every port of this switch, 0 (off) ..= 15.
    pub threshold: Option<u8>,
    /// Marking_Rate.
    pub marking_rate: Option<u16>,
    /// Packet_Size in 64-byte units.
    pub packet_size: Option<u8>,
    /// Victim_Mask of every port of this switch.
    pub victim_mask: Option<bool>,
    /// Marking_Rate counting.
    pub mark_mode: Option<MarkMode>,
    /// Which VoQ fill is compared with the threshold.
    pub fill_comparison: Option<FillCompare>,
    /// Credit (blocks) from which a congested port-VL is a root.
    pub root_min_credits: Option<u16>,
    /// How root and victim are told apart.
    pub root_rule: Option<switch_asic::config::RootRule>,
    /// Cycles a credit stall keeps a port-VL a victim (the stall window rule).
    pub stall_window: Option<u32>,
    /// Threshold mapping.
    pub threshold_map: Option<ThresholdMap>,
    /// When FECN is decided.
    pub mark_point: Option<MarkPoint>,
    /// Ports (1-based) whose Victim_Mask bit is set (in addition to `victim_mask`).
    pub victim_ports: Vec<u8>,
    /// `[port, threshold]` pairs: the threshold of single ports (1-based).
    pub port_threshold: Vec<[u8; 2]>,
}

impl SwitchCcOverride {
    /// The settings of this switch: `base` with the given keys replaced.
    pub fn apply(&self, base: &SwitchCc) -> SwitchCc {
        SwitchCc {
            threshold: self.threshold.unwrap_or(base.threshold),
            marking_rate: self.marking_rate.unwrap_or(base.marking_rate),
            packet_size: self.packet_size.unwrap_or(base.packet_size),
            victim_mask: self.victim_mask.unwrap_or(base.victim_mask),
            mark_mode: self.mark_mode.unwrap_or(base.mark_mode),
            fill_comparison: self.fill_comparison.unwrap_or(base.fill_comparison),
            root_min_credits: self.root_min_credits.unwrap_or(base.root_min_credits),
            root_rule: self.root_rule.unwrap_or(base.root_rule),
            stall_window: self.stall_window.unwrap_or(base.stall_window),
            threshold_map: self.threshold_map.unwrap_or(base.threshold_map),
            mark_point: self.mark_point.unwrap_or(base.mark_point),
            victim_ports_all: base.victim_ports_all,
        }
    }

    /// Checks values and port numbers against a switch of `ports` ports; the error names the key.
    pub fn check(&self, ports: u8) -> Result<(), String> {
        if let Some(t) = self.threshold.filter(|&t| t > 15) {
            return Err(format!("threshold: {t} is above 15"));
        }
        if let Some(w) = self.stall_window {
            super::check_stall_window(w)?;
        }
        if let Some(r) = self
            .root_min_credits
            .filter(|&r| r > super::ROOT_MIN_CREDITS_MAX)
        {
            return Err(format!(
                "root_min_credits: {r} is not in 0..={} (the 12-bit credit count)",
                super::ROOT_MIN_CREDITS_MAX
            ));
        }
        for (i, &p) in self.victim_ports.iter().enumerate() {
            if p == 0 || p > ports {
                return Err(format!(
                    "victim_ports[{i}]: port {p} does not exist (ports 1..={ports})"
                ));
            }
        }
        for (i, &[p, t]) in self.port_threshold.iter().enumerate() {
            if p == 0 || p > ports {
                return Err(format!(
                    "port_threshold[{i}]: port {p} does not exist (ports 1..={ports})"
                ));
            }
            if t > 15 {
                return Err(format!("port_threshold[{i}]: threshold {t} is above 15"));
            }
        }
        Ok(())
    }
}

/// `cc = { .. }` on an `[[hca]]`: the CCT keys of `[hca_cc]` for the reaction points of the flows this HCA
/// sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HcaCcOverride {
    /// CCTI_Increase.
    pub ccti_increase: Option<u8>,
    /// CCTI_Limit.
    pub ccti_limit: Option<u16>,
    /// CCTI_Min.
    pub ccti_min: Option<u8>,
    /// CCTI_Timer (1.024 us units).
    pub ccti_timer: Option<u16>,
    /// CCT_Shift of every entry.
    pub cct_shift: Option<u8>,
    /// CCT_Multiplier step.
    pub cct_multiplier_step: Option<u16>,
}

impl HcaCcOverride {
    /// `base` with the given keys replaced.
    pub fn apply(&self, base: &HcaCc) -> HcaCc {
        HcaCc {
            ccti_increase: self.ccti_increase.unwrap_or(base.ccti_increase),
            ccti_limit: self.ccti_limit.unwrap_or(base.ccti_limit),
            ccti_min: self.ccti_min.unwrap_or(base.ccti_min),
            ccti_timer: self.ccti_timer.unwrap_or(base.ccti_timer),
            cct_shift: self.cct_shift.unwrap_or(base.cct_shift),
            cct_multiplier_step: self.cct_multiplier_step.unwrap_or(base.cct_multiplier_step),
            ..*base
        }
    }
}

/// One `sl2vl_scope` entry as written: the SL2VL of the (input, output) pairs with the input in `from` and
/// the output in `to` (1-based ports; absent: every port).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sl2VlScopeEntry {
    /// Input ports; absent: every port.
    pub from: Option<Vec<u8>>,
    /// Output ports; absent: every port.
    pub to: Option<Vec<u8>>,
    /// The table for those pairs: 16 VLs, entry s for SL s.
    pub sl2vl: Vec<u8>,
}

/// A checked `sl2vl_scope` entry: port sets as 1-based port numbers (empty: every port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sl2VlScope {
    /// Input ports (empty: every port).
    pub from: Vec<u8>,
    /// Output ports (empty: every port).
    pub to: Vec<u8>,
    /// The table of those pairs.
    pub sl2vl: [u8; 16],
}

impl Sl2VlScope {
    /// Whether the pair (input `inp`, output `out`), 1-based, is in the scope.
    pub fn covers(&self, inp: u8, out: u8) -> bool {
        (self.from.is_empty() || self.from.contains(&inp))
            && (self.to.is_empty() || self.to.contains(&out))
    }
}

/// The settings of one switch after its overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSettings {
    /// `[switch_cc]` with this switch's `cc` keys.
    pub cc: SwitchCc,
    /// Ports (1-based) with Victim_Mask set besides `cc.victim_mask`.
    pub victim_ports: Vec<u8>,
    /// `(port, threshold)` of single ports (1-based).
    pub port_threshold: Vec<(u8, u8)>,
    /// SL2VL of every (input, output) pair; `None`: SL s uses VL s mod data_vls.
    pub sl2vl: Option<[u8; 16]>,
    /// SL2VL of some pairs, over `sl2vl` (later entries over earlier ones).
    pub sl2vl_scopes: Vec<Sl2VlScope>,
    /// VL arbitration of every output; `None`: opensm's defaults.
    pub vl_arb: Option<VlArb>,
}

impl SwitchSettings {
    /// The congestion settings of `port` (1-based); the Marking_Rate LFSR seed is left at its default.
    pub fn port_cc(&self, port: u8) -> PortCc {
        let threshold = self
            .port_threshold
            .iter()
            .rev()
            .find(|p| p.0 == port)
            .map_or(self.cc.threshold, |p| p.1);
        PortCc {
            threshold,
            marking_rate: self.cc.marking_rate,
            packet_size: self.cc.packet_size,
            victim_mask: self.cc.victim_mask
                || self.victim_ports.contains(&port)
                || self.cc.victim_ports_all[usize::from(port / 64)] >> (port % 64) & 1 != 0,
            compare: self.cc.fill_comparison,
            root_min_credits: self.cc.root_min_credits,
            root_rule: self.cc.root_rule,
            // Checked to be within 16 bits where the scenario is read.
            stall_window: u16::try_from(self.cc.stall_window).unwrap_or(u16::MAX),
            threshold_map: self.cc.threshold_map,
            mark_point: self.cc.mark_point,
            ..PortCc::default()
        }
    }
}

/// Settings of single switches and HCAs, by topology index (a missing or `None` entry: the global settings).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Overrides {
    /// Per switch.
    pub switches: Vec<Option<SwitchSettings>>,
    /// Per HCA: the `[hca_cc]` of the flows it sends.
    pub hca_cc: Vec<Option<HcaCc>>,
    /// Per HCA: its host injection cap (`host_cap`), Mbit/s of packets on the wire.
    pub host_cap_mbps: Vec<Option<u64>>,
    /// Per HCA: its receive-side host cap (`drain_cap`), Mbit/s taken out of its receive buffer.
    pub drain_cap_mbps: Vec<Option<u64>>,
}

impl super::Scenario {
    /// The settings of switch `s`: its overrides, or the global `[switch_cc]` and `[settings]` ones.
    pub fn switch_settings(&self, s: usize) -> SwitchSettings {
        if let Some(Some(o)) = self.overrides.switches.get(s) {
            return o.clone();
        }
        SwitchSettings {
            cc: self.switch_cc,
            victim_ports: Vec::new(),
            port_threshold: Vec::new(),
            sl2vl: self.sl2vl(),
            sl2vl_scopes: Vec::new(),
            vl_arb: self.settings.vl_arb.clone(),
        }
    }

    /// The `[hca_cc]` of flows sent by HCA `h` (`None`: no IB CC at the HCAs).
    pub fn hca_cc_of(&self, h: usize) -> Option<HcaCc> {
        match self.overrides.hca_cc.get(h) {
            Some(Some(c)) => Some(*c),
            _ => self.hca_cc,
        }
    }

    /// The host injection cap of HCA `h` in Mbit/s (`[[hca]] host_cap`; `None`: only its link limits it).
    pub fn host_cap_mbps(&self, h: usize) -> Option<u64> {
        self.overrides.host_cap_mbps.get(h).copied().flatten()
    }

    /// HCA `h`'s receive-side host cap (`[[hca]] drain_cap`) in Mbit/s, if set.
    pub fn drain_cap_mbps(&self, h: usize) -> Option<u64> {
        self.overrides.drain_cap_mbps.get(h).copied().flatten()
    }

    /// The global SL2VL table (`[settings] sl2vl`), checked at parse time.
    pub fn sl2vl(&self) -> Option<[u8; 16]> {
        self.settings
            .sl2vl
            .as_ref()
            .and_then(|v| check_sl2vl(v, self.settings.data_vls).ok())
    }
}

/// The overrides of `file`'s `[[switch]]` and `[[hca]]` entries on top of the global settings, checked:
/// errors name the entry's line and the key (`switch[1].cc.victim_ports[0]: ...`).
pub(super) fn resolve(
    file: &super::File,
    topo: &crate::topology::Topology,
    settings: &super::Settings,
    switch_cc: &SwitchCc,
    hca_cc: Option<HcaCc>,
    sls: &[u8],
    at: &impl Fn(std::ops::Range<usize>, String) -> super::ScenarioError,
) -> Result<Overrides, super::ScenarioError> {
    use crate::topology::End;
    let mut out = Overrides::default();
    let vls = settings.data_vls;
    let global_sl2vl = settings
        .sl2vl
        .as_ref()
        .and_then(|v| check_sl2vl(v, vls).ok());
    for (i, e) in file.switch.iter().enumerate() {
        let s = match topo.find(e.name.get_ref()) {
            Some(End::Switch { switch, .. }) => switch,
            _ => {
                return Err(at(
                    e.name.span(),
                    format!("switch[{i}].name: no switch named {:?}", e.name.get_ref()),
                ))
            }
        };
        if e.cc.is_none() && e.sl2vl.is_none() && e.sl2vl_scope.is_none() && e.vl_arb.is_none() {
            continue;
        }
        // A second entry for one generated switch would silently replace the first.
        if out.switches.get(s).is_some_and(Option::is_some) {
            return Err(at(
                e.name.span(),
                format!(
                    "switch[{i}].name: {:?} already has settings in an earlier [[switch]]",
                    e.name.get_ref()
                ),
            ));
        }
        let ports = topo.switches[s].ports;
        let mut ss = SwitchSettings {
            cc: *switch_cc,
            victim_ports: Vec::new(),
            port_threshold: Vec::new(),
            sl2vl: global_sl2vl,
            sl2vl_scopes: Vec::new(),
            vl_arb: settings.vl_arb.clone(),
        };
        if let Some(c) = &e.cc {
            let o = c.get_ref();
            o.check(ports)
                .map_err(|why| at(c.span(), format!("switch[{i}].cc.{why}")))?;
            ss.cc = o.apply(switch_cc);
            ss.victim_ports.clone_from(&o.victim_ports);
            ss.port_threshold = o.port_threshold.iter().map(|p| (p[0], p[1])).collect();
        }
        if let Some(t) = &e.sl2vl {
            ss.sl2vl = Some(
                check_sl2vl(t.get_ref(), vls)
                    .map_err(|why| at(t.span(), format!("switch[{i}].sl2vl: {why}")))?,
            );
        }
        if let Some(sc) = &e.sl2vl_scope {
            for (k, en) in sc.get_ref().iter().enumerate() {
                let key = format!("switch[{i}].sl2vl_scope[{k}]");
                let mut sets = [Vec::new(), Vec::new()];
                for (set, (name, list)) in sets.iter_mut().zip([("from", &en.from), ("to", &en.to)])
                {
                    let Some(list) = list else { continue };
                    if list.is_empty() {
                        return Err(at(
                            sc.span(),
                            format!("{key}.{name}: empty (leave it out for every port)"),
                        ));
                    }
                    for (j, &p) in list.iter().enumerate() {
                        if p == 0 || p > ports {
                            return Err(at(
                                sc.span(),
                                format!("{key}.{name}[{j}]: port {p}, but the switch has ports 1..={ports}"),
                            ));
                        }
                    }
                    set.clone_from(list);
                }
                let t = check_sl2vl(&en.sl2vl, vls)
                    .map_err(|why| at(sc.span(), format!("{key}.sl2vl: {why}")))?;
                let [from, to] = sets;
                ss.sl2vl_scopes.push(Sl2VlScope { from, to, sl2vl: t });
            }
        }
        if let Some(a) = &e.vl_arb {
            a.get_ref()
                .check(vls)
                .map_err(|why| at(a.span(), format!("switch[{i}].vl_arb.{why}")))?;
            ss.vl_arb = Some(a.get_ref().clone());
        }
        if let Some(a) = &ss.vl_arb {
            // A flow's packets leave this switch on the VL of any of its SL2VL tables.
            let tables: Vec<Option<[u8; 16]>> = std::iter::once(ss.sl2vl)
                .chain(ss.sl2vl_scopes.iter().map(|sc| Some(sc.sl2vl)))
                .collect();
            for t in &tables {
                let vl_of = |sl: u8| t.map_or(sl % vls, |t| t[usize::from(sl)]);
                if let Some(why) = a.ungranted(sls, vl_of) {
                    let span = e.vl_arb.as_ref().map_or(e.name.span(), |v| v.span());
                    return Err(at(
                        span,
                        format!("switch[{i}].vl_arb: {why} at this switch"),
                    ));
                }
            }
        }
        if out.switches.len() <= s {
            out.switches.resize(s + 1, None);
        }
        out.switches[s] = Some(ss);
    }
    for (i, e) in file.hca.iter().enumerate() {
        for (key, cap, caps) in [
            ("host_cap", &e.host_cap, &mut out.host_cap_mbps),
            ("drain_cap", &e.drain_cap, &mut out.drain_cap_mbps),
        ] {
            let Some(cap) = cap else { continue };
            let Some(End::Hca { hca: h }) = topo.find(e.name.get_ref()) else {
                return Err(at(
                    e.name.span(),
                    format!("hca[{i}].name: no HCA named {:?}", e.name.get_ref()),
                ));
            };
            let mbps = super::rate_mbps(cap.get_ref()).ok_or_else(|| {
                at(
                    cap.span(),
                    format!(
                        "hca[{i}].{key}: {:?} is not a rate (e.g. \"13200Mbps\")",
                        cap.get_ref()
                    ),
                )
            })?;
            // A cap at the fastest link's rate limits nothing; the check keeps the cap's cycle arithmetic
            // small.
            let hi = super::limits::max_rate_mbps(settings.clock_mhz);
            if !(1..=hi).contains(&mbps) {
                return Err(at(
                    cap.span(),
                    super::limits::out_of_range(&format!("hca[{i}].{key} (Mbit/s)"), mbps, 1, hi),
                ));
            }
            if caps.len() <= h {
                caps.resize(h + 1, None);
            }
            caps[h] = Some(mbps);
        }
    }
    for (i, e) in file.hca.iter().enumerate() {
        let Some(c) = &e.cc else { continue };
        let h = match topo.find(e.name.get_ref()) {
            Some(End::Hca { hca }) => hca,
            _ => {
                return Err(at(
                    e.name.span(),
                    format!("hca[{i}].name: no HCA named {:?}", e.name.get_ref()),
                ))
            }
        };
        if out.hca_cc.get(h).is_some_and(Option::is_some) {
            return Err(at(
                e.name.span(),
                format!(
                    "hca[{i}].name: {:?} already has settings in an earlier [[hca]]",
                    e.name.get_ref()
                ),
            ));
        }
        let Some(base) = hca_cc else {
            return Err(at(
                c.span(),
                format!("hca[{i}].cc: needs an [hca_cc] section (IB CC at the HCAs) to override"),
            ));
        };
        let v = c.get_ref().apply(&base);
        if let Err((field, value, why)) = super::check_hca_cc(&v) {
            return Err(at(c.span(), format!("hca[{i}].cc.{field}: {value} {why}")));
        }
        if out.hca_cc.len() <= h {
            out.hca_cc.resize(h + 1, None);
        }
        out.hca_cc[h] = Some(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(extra: &str) -> Result<super::super::Scenario, String> {
        let text = format!(
            "duration_us = 10\n[chain]\nswitches = 2\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H3\"\n{extra}"
        );
        super::super::parse(std::path::Path::new("p.toml"), &text).map_err(|e| e.to_string())
    }

    #[test]
    fn host_caps_by_hca_with_their_range() {
        let sc = chain("[[hca]]\nname = \"H1\"\nhost_cap = \"13200Mbps\"\n").unwrap();
        assert_eq!(
            (sc.host_cap_mbps(0), sc.host_cap_mbps(1)),
            (None, Some(13_200))
        );
        for (cap, want) in [
            ("0Mbps", "hca[0].host_cap (Mbit/s): 0 is not in 1..=512000"),
            (
                "600Gbps",
                "hca[0].host_cap (Mbit/s): 600000 is not in 1..=512000",
            ),
            ("fast", "hca[0].host_cap: \"fast\" is not a rate"),
        ] {
            let e = chain(&format!("[[hca]]\nname = \"H1\"\nhost_cap = \"{cap}\"\n")).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        let e = chain("[[hca]]\nname = \"H9\"\nhost_cap = \"1Gbps\"\n").unwrap_err();
        assert!(e.contains("no HCA named \"H9\""), "{e}");
    }

    #[test]
    fn generated_switches_and_hcas_take_overrides_by_name() {
        let sc = chain(
            "[switch_cc]\nthreshold = 12\nfill_comparison = \"sum_voqs\"\n[hca_cc]\nccti_timer = 10\n[[switch]]\nname = \"SW1\"\ncc = { threshold = 0, victim_ports = [3] }\n[[hca]]\nname = \"H1\"\ncc = { ccti_increase = 5 }\n",
        )
        .unwrap();
        let (s0, s1) = (sc.switch_settings(0), sc.switch_settings(1));
        assert_eq!((s0.cc.threshold, s1.cc.threshold), (12, 0));
        assert_eq!(
            s1.cc.fill_comparison,
            FillCompare::SumVoqs,
            "the rest of [switch_cc] stays"
        );
        assert!(s1.port_cc(3).victim_mask && !s0.port_cc(3).victim_mask);
        let (h0, h1) = (sc.hca_cc_of(0).unwrap(), sc.hca_cc_of(1).unwrap());
        assert_eq!((h0.ccti_increase, h1.ccti_increase), (1, 5));
        assert_eq!((h0.ccti_timer, h1.ccti_timer), (10, 10));
    }

    #[test]
    fn sl2vl_and_vl_arb_global_and_per_switch() {
        let sc = chain(
            "[settings]\ndata_vls = 2\nsl2vl = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]\nvl_arb = { low = [[0, 3], [1, 1]] }\n[[switch]]\nname = \"SW0\"\nvl_arb = { high = [[1, 8]], low = [[0, 8]], high_limit = 4 }\n",
        )
        .unwrap();
        assert_eq!(sc.sl2vl().unwrap()[0], 1);
        let (s0, s1) = (sc.switch_settings(0), sc.switch_settings(1));
        assert_eq!(
            s0.sl2vl,
            sc.sl2vl(),
            "per-switch settings keep the global SL2VL"
        );
        assert_eq!(s0.vl_arb.unwrap().high_limit, 4);
        assert_eq!(s1.vl_arb.unwrap().low, vec![[0, 3], [1, 1]]);
    }

    #[test]
    fn bad_overrides_name_line_and_key() {
        let e = chain("[[switch]]\nname = \"S9\"\ncc = { threshold = 1 }\n").unwrap_err();
        assert!(
            e.starts_with("p.toml:12: switch[0].name: no switch named \"S9\""),
            "{e}"
        );
        let e = chain("[[switch]]\nname = \"SW0\"\ncc = { victim_ports = [9] }\n").unwrap_err();
        assert!(
            e.starts_with("p.toml:13: switch[0].cc.victim_ports[0]: port 9"),
            "{e}"
        );
        let e =
            chain("[[switch]]\nname = \"SW0\"\ncc = { port_threshold = [[1, 16]] }\n").unwrap_err();
        assert!(
            e.contains("port_threshold[0]: threshold 16 is above 15"),
            "{e}"
        );
        let e = chain("[[hca]]\nname = \"H0\"\ncc = { ccti_timer = 3 }\n").unwrap_err();
        assert!(
            e.starts_with("p.toml:13: hca[0].cc: needs an [hca_cc]"),
            "{e}"
        );
        let e = chain("[hca_cc]\n[[hca]]\nname = \"H0\"\ncc = { ccti_timer = 0 }\n").unwrap_err();
        assert!(e.contains("hca[0].cc.ccti_timer: 0 must be above 0"), "{e}");
        let e = chain("[settings]\ndata_vls = 2\n\nvl_arb = { low = [[0, 300]] }\n").unwrap_err();
        assert!(
            e.starts_with("p.toml:14: settings.vl_arb.low[0]: weight 300"),
            "{e}"
        );
        let e = chain("[settings]\nsl2vl = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n")
            .unwrap_err();
        assert!(
            e.starts_with("p.toml:12: settings.sl2vl: SL 1 -> VL 1"),
            "{e}"
        );
        let e = chain("[[switch]]\nname = \"SW0\"\nsl2vl = [0]\n").unwrap_err();
        assert!(e.contains("switch[0].sl2vl: 1 entries"), "{e}");
        let e = chain("[switch_cc]\nfill_comparison = \"max\"\n").unwrap_err();
        assert!(e.starts_with("p.toml:12:") && e.contains("per_voq"), "{e}");
        let e = chain("[[switch]]\nname = \"SW0\"\ncc = { threshold = 1 }\n[[switch]]\nname = \"SW0\"\nsl2vl = []\n")
            .unwrap_err();
        assert!(
            e.starts_with("p.toml:15: switch[1].name: \"SW0\" already has settings"),
            "{e}"
        );
        let e = chain("[[switch]]\nname = \"SW7\"\n").unwrap_err();
        assert!(e.contains("no switch named \"SW7\""), "{e}");
        let e = chain("[[switch]]\nname = \"SW0\"\nports = 4\n").unwrap_err();
        assert!(e.contains("give exactly one of"), "{e}");
    }

    #[test]
    fn vl_arb_is_checked_and_converted() {
        let a = VlArb {
            high: vec![],
            low: vec![[0, 96], [1, 32]],
            high_limit: 0,
        };
        assert_eq!(a.check(2), Ok(()));
        let t = a.table();
        assert_eq!((t.low[1].vl, t.low[1].weight), (1, 32));
        assert!(a
            .check(1)
            .unwrap_err()
            .starts_with("low[1]: VL 1 does not exist"));
        let heavy = VlArb {
            low: vec![[0, 256]],
            ..a.clone()
        };
        assert!(heavy.check(2).unwrap_err().contains("weight 256"));
        let limit = VlArb {
            high_limit: 256,
            ..a.clone()
        };
        assert!(limit.check(2).unwrap_err().starts_with("high_limit"));
        let zero = VlArb {
            low: vec![[0, 0]],
            ..a
        };
        assert!(zero.check(2).unwrap_err().contains("no entry"));
    }

    #[test]
    fn sl2vl_needs_16_existing_vls() {
        let mut v = vec![0u8; 16];
        v[3] = 1;
        assert_eq!(check_sl2vl(&v, 2).unwrap()[3], 1);
        assert!(check_sl2vl(&v, 1).unwrap_err().starts_with("SL 3 -> VL 1"));
        assert!(check_sl2vl(&v[..15], 2).unwrap_err().contains("15 entries"));
    }

    #[test]
    fn overrides_replace_only_their_keys_and_ports() {
        let base = SwitchCc {
            threshold: 12,
            ..SwitchCc::default()
        };
        let o = SwitchCcOverride {
            marking_rate: Some(3),
            victim_ports: vec![8],
            port_threshold: vec![[2, 0]],
            ..Default::default()
        };
        assert_eq!(o.check(8), Ok(()));
        assert!(o.check(7).unwrap_err().starts_with("victim_ports[0]"));
        let cc = o.apply(&base);
        assert_eq!((cc.threshold, cc.marking_rate), (12, 3));
        let s = SwitchSettings {
            cc,
            victim_ports: o.victim_ports.clone(),
            port_threshold: vec![(2, 0)],
            sl2vl: None,
            sl2vl_scopes: Vec::new(),
            vl_arb: None,
        };
        assert_eq!((s.port_cc(1).threshold, s.port_cc(2).threshold), (12, 0));
        assert!(s.port_cc(8).victim_mask && !s.port_cc(1).victim_mask);
        let h = HcaCcOverride {
            ccti_timer: Some(7),
            ..Default::default()
        }
        .apply(&HcaCc::default());
        assert_eq!(
            (h.ccti_timer, h.ccti_increase),
            (7, HcaCc::default().ccti_increase)
        );
    }
}
