//! The run's optional observation outputs, chosen on the command line: packet captures of links
//! (`--pcap`), a VCD waveform of blocks' signals (`--vcd`) and per-port-VL CSV traces (`--trace`). Nothing
//! here exists in a run that asks for none of them.
//!
//! Names on the command line are the scenario's: a switch port is `S2:2` (1-based port, as in `[[link]]
//! ends`), an HCA `H4`, a link either of its ends' names joined by `-` (`S1:8-S2:8`, `S2:2-H4`, in either
//! order), an HCA's name alone (its only link) or a switch port alone (the link on it), or `all`. File names
//! use the scenario's names through [`super::output::file_component`] (`:` and every character other than
//! ASCII letters, digits, `.`, `-` and `+` replaced by `_`: `S1_8-S2_8.pcap`, `trace-S2_2-vl0.csv`), so
//! that they are portable, shell-safe and never leave the output directory.

use std::path::Path;

use super::capture::Capture;
use super::trace::Traces;
use super::vcd::Waves;
use crate::fabric::tap::WireEnd;
use crate::fabric::Fabric;
use crate::scenario::Scenario;
use crate::topology::{End, Topology};

/// What the user asked to observe (the `run` options, unresolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObserveOpts {
    /// `--pcap LINK`, repeatable.
    pub pcap: Vec<String>,
    /// `--vcd BLOCK`, repeatable.
    pub vcd: Vec<String>,
    /// `--trace PORT:VL`, repeatable.
    pub trace: Vec<String>,
}

impl ObserveOpts {
    /// Nothing asked for.
    pub fn is_empty(&self) -> bool {
        self.pcap.is_empty() && self.vcd.is_empty() && self.trace.is_empty()
    }
}

/// An observation option that names nothing in the scenario, or an output that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// `--{option} {value}`: what is wrong.
    #[error("--{option} {value}: {why}")]
    Spec {
        /// The option (without dashes).
        option: &'static str,
        /// The value given.
        value: String,
        /// What is wrong.
        why: String,
    },
    /// An output file could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// A block whose signals go into the VCD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// Switch `0`'s port `1` (0-based): every VL's congestion detector, VoQ fill, buffer and credits.
    SwitchPort(usize, usize),
    /// HCA `0`: the CCTI of each flow it sends, and its credits and receive buffer per VL.
    Hca(usize),
}

/// The scenario's name of a link end (`S1:8`, `H4`).
pub fn end_name(topo: &Topology, e: End) -> String {
    match e {
        End::Switch { switch, port } => format!("{}:{port}", topo.switches[switch].name),
        End::Hca { hca } => topo.hcas[hca].name.clone(),
    }
}

/// The scenario's name of link `l` (`S1:8-S2:8`).
fn link_name(topo: &Topology, l: usize) -> String {
    let link = &topo.links[l];
    format!("{}-{}", end_name(topo, link.a), end_name(topo, link.b))
}

/// The file-name stem of link `l`: its HCA's name for a host link, else `A-B` in scenario order, with `:`
/// as `_`.
pub fn link_file_stem(topo: &Topology, l: usize) -> String {
    let link = &topo.links[l];
    let name = match (link.a, link.b) {
        (End::Hca { hca }, _) | (_, End::Hca { hca }) => topo.hcas[hca].name.clone(),
        (a, b) => format!("{}-{}", end_name(topo, a), end_name(topo, b)),
    };
    super::output::file_component(&name)
}

/// The wire end (receiver) of a topology end.
pub fn wire_end(e: End) -> WireEnd {
    match e {
        End::Switch { switch, port } => WireEnd::Switch(switch, usize::from(port) - 1),
        End::Hca { hca } => WireEnd::Hca(hca),
    }
}

fn spec_err(option: &'static str, value: &str, why: impl Into<String>) -> ObserveError {
    ObserveError::Spec {
        option,
        value: value.to_string(),
        why: why.into(),
    }
}

fn names(v: impl Iterator<Item = String>) -> String {
    v.collect::<Vec<_>>().join(", ")
}

/// Resolves a port or HCA name (`S2:2`, `H4`) to its topology end.
fn parse_end(topo: &Topology, s: &str) -> Result<End, String> {
    if let Some((sw, port)) = s.split_once(':') {
        let switch = topo
            .switches
            .iter()
            .position(|n| n.name == sw)
            .ok_or_else(|| {
                format!(
                    "no switch {sw:?} (switches: {})",
                    names(topo.switches.iter().map(|n| n.name.clone()))
                )
            })?;
        let ports = topo.switches[switch].ports;
        let port: u8 = port
            .parse()
            .ok()
            .filter(|p| (1..=ports).contains(p))
            .ok_or_else(|| format!("{sw} has ports 1..={ports}, not {port:?}"))?;
        Ok(End::Switch { switch, port })
    } else {
        let hca = topo.hcas.iter().position(|n| n.name == s).ok_or_else(|| {
            format!(
                "no HCA {s:?} and not a switch port NAME:PORT (HCAs: {})",
                names(topo.hcas.iter().map(|n| n.name.clone()))
            )
        })?;
        Ok(End::Hca { hca })
    }
}

/// The link on an end, if any.
fn link_of(topo: &Topology, e: End) -> Option<usize> {
    match e {
        End::Switch { switch, port } => topo.switch_port_link[switch][usize::from(port) - 1],
        End::Hca { hca } => Some(topo.hca_link[hca]),
    }
}

/// Resolves a `--pcap` value to link indices.
pub fn parse_links(topo: &Topology, value: &str) -> Result<Vec<usize>, ObserveError> {
    let err = |why: String| spec_err("pcap", value, why);
    if value == "all" {
        return Ok((0..topo.links.len()).collect());
    }
    if let Some((a, b)) = value.split_once('-') {
        let a = parse_end(topo, a).map_err(err)?;
        let b = parse_end(topo, b).map_err(err)?;
        let l = link_of(topo, a)
            .filter(|&l| {
                let k = &topo.links[l];
                (k.a == a && k.b == b) || (k.a == b && k.b == a)
            })
            .ok_or_else(|| err("no link joins these two ends".into()))?;
        return Ok(vec![l]);
    }
    let e = parse_end(topo, value).map_err(err)?;
    let l = link_of(topo, e).ok_or_else(|| err("no link on this port".into()))?;
    Ok(vec![l])
}

/// Resolves a `--vcd` value.
pub fn parse_block(topo: &Topology, value: &str) -> Result<Block, ObserveError> {
    match parse_end(topo, value).map_err(|why| spec_err("vcd", value, why))? {
        End::Switch { switch, port } => Ok(Block::SwitchPort(switch, usize::from(port) - 1)),
        End::Hca { hca } => Ok(Block::Hca(hca)),
    }
}

/// Resolves a `--trace` value `SWITCH:PORT:VL` to (switch, 0-based port, VL).
pub fn parse_port_vl(sc: &Scenario, value: &str) -> Result<(usize, usize, u8), ObserveError> {
    let err = |why: String| spec_err("trace", value, why);
    let (port, vl) = value
        .rsplit_once(':')
        .filter(|(p, _)| p.contains(':'))
        .ok_or_else(|| err("expected SWITCH:PORT:VL, e.g. S2:2:0".into()))?;
    let vls = sc.settings.data_vls;
    let vl: u8 = vl.parse().ok().filter(|v| *v < vls).ok_or_else(|| {
        err(format!(
            "VL must be 0..{vls} (data_vls = {vls}), not {vl:?}"
        ))
    })?;
    match parse_end(&sc.topology, port).map_err(err)? {
        End::Switch { switch, port } => Ok((switch, usize::from(port) - 1, vl)),
        End::Hca { .. } => Err(err("traces are of switch ports".into())),
    }
}

/// The open observation outputs of one run.
pub struct Observers {
    capture: Option<Capture>,
    waves: Option<Waves>,
    traces: Option<Traces>,
}

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observers")
            .field("capture", &self.capture.is_some())
            .field("waves", &self.waves.is_some())
            .field("traces", &self.traces.is_some())
            .finish()
    }
}

impl Observers {
    /// Resolves `opts` against `sc` and creates the output files in `out` (created if missing). Every
    /// name is checked before any file is created.
    pub fn open(opts: &ObserveOpts, sc: &Scenario, out: &Path) -> Result<Self, ObserveError> {
        let mut links = Vec::new();
        for v in &opts.pcap {
            for l in parse_links(&sc.topology, v)? {
                if !links.contains(&l) {
                    links.push(l);
                }
            }
        }
        // Two links whose names differ only in characters the file names replace would share a file.
        let mut stems = std::collections::HashMap::new();
        for &l in &links {
            let stem = link_file_stem(&sc.topology, l);
            if let Some(&m) = stems.get(&stem) {
                return Err(spec_err(
                    "pcap",
                    &opts.pcap.join(","),
                    format!(
                        "links {} and {} would both be written to {stem}.pcap; capture one of them",
                        link_name(&sc.topology, m),
                        link_name(&sc.topology, l)
                    ),
                ));
            }
            stems.insert(stem, l);
        }
        let mut blocks = Vec::new();
        for v in &opts.vcd {
            let b = parse_block(&sc.topology, v)?;
            if !blocks.contains(&b) {
                blocks.push(b);
            }
        }
        let mut ports = Vec::new();
        for v in &opts.trace {
            let p = parse_port_vl(sc, v)?;
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        if !opts.is_empty() {
            std::fs::create_dir_all(out).map_err(|source| ObserveError::Io {
                path: out.display().to_string(),
                source,
            })?;
        }
        Ok(Observers {
            capture: (!links.is_empty())
                .then(|| Capture::create(sc, &links, out, super::capture::link_kind(sc)))
                .transpose()?,
            waves: (!blocks.is_empty())
                .then(|| Waves::create(sc, &blocks, out))
                .transpose()?,
            traces: (!ports.is_empty())
                .then(|| Traces::create(sc, &ports, out))
                .transpose()?,
        })
    }

    /// Installs what the observers need in the fabric (the tap of the captured links' wires).
    pub fn attach(&self, fab: &mut Fabric) {
        if let Some(c) = &self.capture {
            fab.set_tap(c.wire_ends());
        }
    }

    /// Called after every stepped cycle: records what changed in it.
    pub fn after_step(&mut self, fab: &mut Fabric) {
        if let Some(c) = &mut self.capture {
            c.after_step(fab);
        }
        if let Some(w) = &mut self.waves {
            w.after_step(fab);
        }
        if let Some(t) = &mut self.traces {
            t.after_step(fab);
        }
    }

    /// Writes what is buffered and closes the files; the first write error of the run, if any.
    pub fn finish(self, fab: &mut Fabric) -> Result<(), ObserveError> {
        if let Some(c) = self.capture {
            c.finish(fab)?;
        }
        if let Some(w) = self.waves {
            w.finish()?;
        }
        if let Some(t) = self.traces {
            t.finish()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc() -> Scenario {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cao-cc-on-quick.toml");
        crate::scenario::load(&path).unwrap()
    }

    #[test]
    fn links_are_found_by_either_end_and_in_either_order() {
        let sc = sc();
        let t = &sc.topology;
        let trunk = parse_links(t, "S1:8-S2:8").unwrap();
        assert_eq!(parse_links(t, "S2:8-S1:8").unwrap(), trunk);
        assert_eq!(parse_links(t, "S1:8").unwrap(), trunk);
        assert_eq!(link_file_stem(t, trunk[0]), "S1_8-S2_8");
        let h4 = parse_links(t, "H4").unwrap();
        assert_eq!(parse_links(t, "S2:2-H4").unwrap(), h4);
        assert_eq!(link_file_stem(t, h4[0]), "H4");
        assert_eq!(parse_links(t, "all").unwrap().len(), t.links.len());
    }

    #[test]
    fn bad_names_say_what_is_wrong() {
        let sc = sc();
        let t = &sc.topology;
        let e = |r: Result<Vec<usize>, ObserveError>| r.unwrap_err().to_string();
        assert!(e(parse_links(t, "S9:1")).contains("no switch \"S9\" (switches: S1, S2)"));
        assert!(e(parse_links(t, "S1:9")).contains("S1 has ports 1..=8"));
        assert!(e(parse_links(t, "S1:5")).contains("no link on this port"));
        assert!(e(parse_links(t, "H1-H4")).contains("no link joins"));
        assert!(e(parse_links(t, "H9")).starts_with("--pcap H9: no HCA"));
        let tr = |v: &str| parse_port_vl(&sc, v).unwrap_err().to_string();
        assert!(tr("S2:2").contains("expected SWITCH:PORT:VL"));
        assert!(tr("S2:2:1").contains("VL must be 0..1"));
        assert!(tr("H1:0").contains("expected SWITCH:PORT:VL"));
        assert_eq!(parse_port_vl(&sc, "S2:2:0").unwrap(), (1, 1, 0));
        assert_eq!(parse_block(t, "S2:2").unwrap(), Block::SwitchPort(1, 1));
        assert_eq!(parse_block(t, "H1").unwrap(), Block::Hca(0));
        assert!(parse_block(t, "X").is_err());
    }
}
