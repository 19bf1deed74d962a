//! An explicit topology (`[[switch]]`, `[[hca]]`, `[[link]]`): names, ports and link ends resolved, every
//! error tied to the line of the value that is wrong.

use std::ops::Range;

use toml::Spanned;

use super::file::File;
use super::ScenarioError;
use crate::topology::{self, End, HcaNode, Link, SwitchNode, Topology, TopologyError};

pub(super) fn explicit_topology(
    file: &File,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
    rate: &impl Fn(&Spanned<String>, &str) -> Result<u64, ScenarioError>,
    latency: &impl Fn(&Spanned<u64>, &str) -> Result<u64, ScenarioError>,
) -> Result<Topology, ScenarioError> {
    let switches: Vec<SwitchNode> = file
        .switch
        .iter()
        .map(|s| SwitchNode {
            name: s.name.get_ref().clone(),
            ports: s.ports.as_ref().map_or(0, |p| *p.get_ref()),
        })
        .collect();
    let hcas: Vec<HcaNode> = file
        .hca
        .iter()
        .map(|h| HcaNode {
            name: h.name.get_ref().clone(),
        })
        .collect();
    // Port counts before link ends: an end on a 0-port switch would otherwise report "ports 1 to 0".
    for (i, s) in file.switch.iter().enumerate() {
        let Some(ports_v) = &s.ports else {
            return Err(at(
                s.name.span(),
                format!(
                    "switch[{i}].ports: missing (only a switch of a [chain], [fat_tree] or [fat_tree3] is named without ports)"
                ),
            ));
        };
        let ports = *ports_v.get_ref();
        if ports == 0 || ports > topology::MAX_SWITCH_PORTS {
            let e = TopologyError::BadPortCount {
                name: s.name.get_ref().clone(),
                ports,
            };
            return Err(at(ports_v.span(), format!("topology: {e}")));
        }
    }
    // Names first: a link end is looked up by name, so a duplicate would be resolved silently.
    let names: Vec<&Spanned<String>> = file
        .switch
        .iter()
        .map(|s| &s.name)
        .chain(file.hca.iter().map(|h| &h.name))
        .collect();
    for (i, n) in names.iter().enumerate() {
        let (kind, k) = if i < file.switch.len() {
            ("switch", i)
        } else {
            ("hca", i - file.switch.len())
        };
        if let Err(why) = super::limits::check_name(n.get_ref()) {
            return Err(at(n.span(), format!("{kind}[{k}].name: {why}")));
        }
        if kind == "switch" && n.get_ref().contains(':') {
            // A link end names a switch port as "name:port".
            return Err(at(
                n.span(),
                format!("{kind}[{k}].name: {:?} holds ':', which separates a switch's name from its port", n.get_ref()),
            ));
        }
        if names[..i].iter().any(|m| m.get_ref() == n.get_ref()) {
            let e = TopologyError::DuplicateName(n.get_ref().clone());
            return Err(at(n.span(), format!("topology: {e}")));
        }
    }
    let end = |i: usize, s: &Spanned<String>| -> Result<End, ScenarioError> {
        let text = s.get_ref();
        let (node, port) = match text.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (text.as_str(), None),
        };
        let bad = |why: String| at(s.span(), format!("link[{i}].ends: {text:?}: {why}"));
        if let Some(sw) = switches.iter().position(|x| x.name == node) {
            let port = port
                .ok_or_else(|| bad("a switch end needs a port, as \"name:port\"".into()))?
                .parse::<u8>()
                .map_err(|_| bad("the port is not a number from 1 to 64".into()))?;
            if port == 0 || port > switches[sw].ports {
                return Err(bad(format!(
                    "switch {node:?} has ports 1 to {}",
                    switches[sw].ports
                )));
            }
            Ok(End::Switch { switch: sw, port })
        } else if let Some(h) = hcas.iter().position(|x| x.name == node) {
            if port.is_some_and(|p| p != "1") {
                return Err(bad("an HCA has one port (write the name alone)".into()));
            }
            Ok(End::Hca { hca: h })
        } else {
            Err(bad("no switch or HCA of that name".into()))
        }
    };
    let mut links = Vec::with_capacity(file.link.len());
    for (i, l) in file.link.iter().enumerate() {
        let ends = l.ends.get_ref();
        if ends.len() != 2 {
            return Err(at(
                l.ends.span(),
                format!(
                    "link[{i}].ends: {} ends; a link has exactly two",
                    ends.len()
                ),
            ));
        }
        links.push(Link {
            a: end(i, &ends[0])?,
            b: end(i, &ends[1])?,
            rate_mbps: rate(&l.rate, &format!("link[{i}].rate"))?,
            latency_ns: latency(&l.latency_ns, &format!("link[{i}].latency_ns"))?,
        });
    }
    let topo = Topology::new(switches, hcas, links).map_err(|e| {
        let span = match &e {
            TopologyError::BadPortCount { name, .. } => file
                .switch
                .iter()
                .find(|s| s.name.get_ref() == name)
                .and_then(|s| s.ports.as_ref().map(|p| p.span())),
            TopologyError::NoSuchEnd { link, .. }
            | TopologyError::PortInUse { link, .. }
            | TopologyError::SelfLoop { link, .. } => file.link.get(*link).map(|l| l.ends.span()),
            TopologyError::ZeroRate { link } => file.link.get(*link).map(|l| l.rate.span()),
            TopologyError::UnconnectedHca(n) | TopologyError::Unreachable { hca: n, .. } => file
                .hca
                .iter()
                .find(|h| h.name.get_ref() == n)
                .map(|h| h.name.span()),
            TopologyError::DuplicateName(_)
            | TopologyError::TooManyHcas(_)
            | TopologyError::Empty
            | TopologyError::BadGenerator(_) => None,
        };
        at(span.unwrap_or(0..0), format!("topology: {e}"))
    })?;
    Ok(topo)
}
