//! `[topology]`: a fabric named by its `ibnetdiscover` output instead of written out, and the routing of any
//! topology: minimum-hop (the default), `routing = "updown"` (with `roots`), or the tables a subnet manager
//! set (`lfts`, opensm's forwarding-table dump; needs `ibnetdiscover`, whose GUIDs and LIDs the dump's
//! switches and destinations are matched by).

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::file::TopologySection;
use super::names::Names;
use super::{limits, read_input, ScenarioError};
use crate::import::ibnetdiscover::{read_fabric, Fabric, LINK_LATENCY_NS};
use crate::import::lfts;
use crate::topology::{RouteError, Topology};

/// A file named by a scenario key: relative to the scenario's directory.
fn beside(path: &Path, name: &str) -> PathBuf {
    path.parent().unwrap_or_else(|| Path::new(".")).join(name)
}

/// The topology of `[topology] ibnetdiscover = "FILE"`, as `ibcycle import ibnetdiscover` writes it (the
/// same names, order, rates and latencies), its fabric (for names, GUIDs and LIDs) and the import's notes.
/// Errors in the file name the file and its line.
pub(super) fn from_ibnetdiscover(
    sec: &TopologySection,
    file_key: &Spanned<String>,
    path: &Path,
    clock: u32,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<(Topology, Fabric, Vec<String>), ScenarioError> {
    let file = beside(path, file_key.get_ref());
    let text = read_input(&file)?;
    let imp = |e: crate::import::ibnetdiscover::ImportError| ScenarioError {
        file: e.file,
        line: e.line,
        message: e.message,
    };
    let mut fabric = read_fabric(&file, &text).map_err(imp)?;
    if let Some(info) = &sec.iblinkinfo {
        let info = beside(path, info.get_ref());
        let t = read_input(&info)?;
        crate::import::iblinkinfo::apply(&mut fabric, &info, &t).map_err(imp)?;
    }
    let in_file = |line: usize, message: String| ScenarioError {
        file: file.clone(),
        line,
        message,
    };
    for l in &fabric.links {
        let mbps = super::rate_mbps(&l.rate).unwrap_or(0);
        if mbps > limits::max_rate_mbps(clock) || crate::fabric::link_rate(mbps, clock).is_err() {
            return Err(in_file(
                l.line,
                format!(
                    "{} ({mbps} Mbit/s) is not an exact fraction of bytes per cycle at settings.clock_mhz = \
                     {clock} (clock_mhz = {} represents every link of the file)",
                    l.rate, fabric.clock_mhz
                ),
            ));
        }
    }
    let latency = match &sec.latency_ns {
        None => LINK_LATENCY_NS,
        Some(l) if *l.get_ref() > limits::MAX_LATENCY_NS => {
            return Err(at(
                l.span(),
                limits::out_of_range(
                    "topology.latency_ns",
                    l.get_ref(),
                    0,
                    limits::MAX_LATENCY_NS,
                ),
            ))
        }
        Some(l) => *l.get_ref(),
    };
    let topo = fabric
        .topology(latency)
        .map_err(|(line, m)| in_file(line, m))?;
    let notes = fabric
        .notes
        .iter()
        .map(String::as_str)
        .chain(
            sec.iblinkinfo
                .is_none()
                .then_some(crate::import::ibnetdiscover::NO_CAPABILITIES),
        )
        .map(|n| format!("{}: {n}", file.display()))
        .collect();
    Ok((topo, fabric, notes))
}

/// `topo` with the routes `[topology]` asks for, and the routing's name for messages; `fabric` is the
/// `ibnetdiscover` fabric the topology came from, if it did.
pub(super) fn route(
    topo: Topology,
    sec: Option<&Spanned<TopologySection>>,
    fabric: Option<&Fabric>,
    path: &Path,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<(Topology, &'static str), ScenarioError> {
    let Some(sec) = sec else {
        return Ok((topo, "minimum-hop"));
    };
    let s = sec.get_ref();
    if let (Some(l), None) = (&s.latency_ns, fabric) {
        return Err(at(
            l.span(),
            "topology.latency_ns: only for a fabric from topology.ibnetdiscover (written links have their own)"
                .into(),
        ));
    }
    let updown = match &s.routing {
        None => false,
        Some(r) => match r.get_ref().as_str() {
            "minhop" => false,
            "updown" => true,
            other => {
                return Err(at(
                    r.span(),
                    format!(
                        "topology.routing: {other:?} is not a routing (\"minhop\" or \"updown\")"
                    ),
                ))
            }
        },
    };
    if let Some(r) = &s.roots {
        if !updown {
            return Err(at(
                r.span(),
                "topology.roots: only up/down routing has roots (add routing = \"updown\")".into(),
            ));
        }
    }
    if let (Some(i), None) = (&s.iblinkinfo, fabric) {
        return Err(at(
            i.span(),
            "topology.iblinkinfo: needs topology.ibnetdiscover (it marks the links of that fabric)"
                .into(),
        ));
    }
    if let Some(l) = &s.lfts {
        if let Some(r) = &s.routing {
            return Err(at(
                r.span(),
                "topology.routing: the routes come from topology.lfts; give one of the two".into(),
            ));
        }
        let Some(fabric) = fabric else {
            return Err(at(
                l.span(),
                "topology.lfts: needs topology.ibnetdiscover (the dump names switches by GUID and \
                 destinations by LID, which only the ibnetdiscover file gives)"
                    .into(),
            ));
        };
        let topo = from_lfts(topo, fabric, &beside(path, l.get_ref()))?;
        return Ok((topo, "subnet manager's (topology.lfts)"));
    }
    if !updown {
        return Ok((topo, "minimum-hop"));
    }
    let names = Names::new(&topo, fabric);
    let roots = match &s.roots {
        Some(r) => {
            let mut v = Vec::new();
            for name in r.get_ref() {
                let sw = names
                    .switch(name)
                    .map_err(|m| at(r.span(), format!("topology.roots: {m}")))?;
                if !v.contains(&sw) {
                    v.push(sw);
                }
            }
            if v.is_empty() {
                return Err(at(
                    r.span(),
                    "topology.roots: empty; name at least one switch, or leave roots out for the default"
                        .into(),
                ));
            }
            v
        }
        None => {
            let guids: Vec<u64> =
                fabric.map_or_else(Vec::new, |f| f.switches.iter().map(|s| s.guid).collect());
            crate::updown::default_roots(&topo, &guids)
        }
    };
    let span = s.routing.as_ref().map_or(0..0, |r| r.span());
    let lfts = crate::updown::routes(&topo, &roots)
        .map_err(|m| at(span.clone(), format!("topology.routing: {m}")))?;
    let topo = topo
        .with_routes(lfts)
        .map_err(|e| at(span.clone(), format!("topology.routing: up/down: {e}")))?;
    Ok((topo, "up/down"))
}

/// `topo` routed by the dump at `file`: every switch of the fabric needs a table, with an entry for every
/// imported HCA's LID that names a port with a link on it; the tables must deliver (no loop).
fn from_lfts(topo: Topology, fabric: &Fabric, file: &Path) -> Result<Topology, ScenarioError> {
    let text = read_input(file)?;
    let err = |line: usize, message: String| ScenarioError {
        file: file.to_path_buf(),
        line,
        message,
    };
    let tables = lfts::parse(&text).map_err(|(l, m)| err(l, m))?;
    let mut of_switch: Vec<Option<&lfts::SwitchTable>> = vec![None; fabric.switches.len()];
    for t in &tables {
        let Some(s) = fabric.switches.iter().position(|s| s.guid == t.guid) else {
            return Err(err(
                t.line,
                format!(
                    "switch GUID 0x{:016x} is not a switch of the ibnetdiscover file",
                    t.guid
                ),
            ));
        };
        of_switch[s] = Some(t);
    }
    let mut lfts = vec![vec![0u8; fabric.hcas.len()]; fabric.switches.len()];
    let mut entry_line = vec![vec![0usize; fabric.hcas.len()]; fabric.switches.len()];
    for (s, t) in of_switch.iter().enumerate() {
        let sw = &fabric.switches[s];
        let Some(t) = t else {
            return Err(err(
                0,
                format!(
                    "no table for switch {:?} (GUID 0x{:016x}, line {} of the ibnetdiscover file)",
                    sw.name, sw.guid, sw.line
                ),
            ));
        };
        for (h, hca) in fabric.hcas.iter().enumerate() {
            let Some(lid) = hca.lid else {
                return Err(err(
                    0,
                    format!(
                        "the ibnetdiscover file gives no LID for {:?} (line {}), so its entries cannot be found",
                        hca.name, hca.line
                    ),
                ));
            };
            let Some(&(port, line)) = t.entries.get(&lid) else {
                return Err(err(
                    t.line,
                    format!(
                        "switch {:?} has no entry for LID 0x{lid:04x} ({:?})",
                        sw.name, hca.name
                    ),
                ));
            };
            let linked = usize::from(port)
                .checked_sub(1)
                .and_then(|p| topo.switch_port_link[s].get(p).copied().flatten())
                .is_some();
            if !linked {
                let why = if port == 0 {
                    "port 0 is the switch itself".to_string()
                } else if port > sw.ports {
                    format!("the switch has ports 1 to {}", sw.ports)
                } else {
                    "no imported link is on that port".to_string()
                };
                return Err(err(
                    line,
                    format!(
                        "LID 0x{lid:04x} ({:?}) leaves switch {:?} by port {port}, which leads nowhere: {why}",
                        hca.name, sw.name
                    ),
                ));
            }
            lfts[s][h] = port;
            entry_line[s][h] = line;
        }
    }
    let checked = topo.check_routes(&lfts);
    match checked {
        Ok(()) => Ok(topo.with_routes(lfts).expect("checked")),
        Err(e) => {
            let line = match e {
                RouteError::Nowhere { switch, hca, .. }
                | RouteError::WrongHca { switch, hca, .. }
                | RouteError::Loop { switch, hca } => entry_line[switch][hca],
                RouteError::Shape => 0,
            };
            Err(err(line, e.describe(&topo)))
        }
    }
}
