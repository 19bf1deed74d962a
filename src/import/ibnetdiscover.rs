//! The topology file `ibnetdiscover` (rdma-core's infiniband-diags) prints, read into a scenario.
//!
//! The format, per node: identification lines (`vendid=0x..`, `devid=0x..`, `sysimgguid=0x..`, then
//! `switchguid=0x..(..)` or `caguid=0x..`), a node line, then one line per connected port:
//!
//! ```text
//! Switch  36 "S-0002c90200400000"   # "desc" enhanced port 0 lid 1 lmc 0
//! [1]  "H-0002c90300000010"[1](2c90300000011)   # "node1 HCA-1" lid 3 4xQDR
//! [9]  "S-0002c90200400100"[9]    # "desc of the peer switch" lid 2 4xQDR
//! Ca  2 "H-0002c90300000010"   # "node1 HCA-1"
//! [1](2c90300000011)  "S-0002c90200400000"[1]   # lid 3 lmc 0 "desc" lid 1 4xQDR
//! ```
//!
//! A switch's port line names the peer node and port (with the peer's port GUID when the peer is not a
//! switch), the peer's description and LID, and the link's active width and speed; a CA's port line adds its
//! own port GUID, LID and LMC. `ibnetdiscover -f` appends ` s=.. w=.. v=..` (and ` e=..`); these are
//! accepted and ignored. Both ends of a link print it, so every link is read twice and both must agree.
//! The ports report of `ibnetdiscover -p` is read too (`parse_ports`) into the same nodes and port lines.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::scenario;
use crate::topology::{End, HcaNode, Link, SwitchNode, Topology, TopologyError};

/// Flows to add to the imported scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flows {
    /// None: the file has a commented example instead.
    #[default]
    None,
    /// Saturating flows from every HCA but the last to the last.
    Incast,
    /// A saturating flow from every HCA to every other.
    AllToAll,
    /// A `[[traffic]]` shift: HCA i to HCA (i + k) mod n.
    Shift(u64),
    /// A `[[traffic]]` random permutation drawn from this seed.
    Permutation(u64),
    /// A `[[traffic]]` bisection: the first half of the HCAs with the second, pair by pair.
    Bisection,
}

/// An imported scenario.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The scenario file's text.
    pub toml: String,
    /// What was not imported or is worth knowing (also written into the file as comments).
    pub notes: Vec<String>,
    /// Counts of what was imported.
    pub switches: usize,
    pub hcas: usize,
    pub links: usize,
}

/// An import error: the input file, the 1-based line (0 when the error is not about one line) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Switch,
    Ca,
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    guid: u64,
    ports: u8,
    desc: String,
    line: usize,
    /// Whether the file has this node's own section (else it is known from its peers' lines only).
    in_file: bool,
}

/// One port line: what a node says is on its port.
#[derive(Debug)]
struct Report {
    line: usize,
    node: usize,
    port: u8,
    peer_kind: Kind,
    peer_guid: u64,
    peer_port: u8,
    peer_desc: String,
    /// The width and speed as printed (`4xQDR`).
    speed: String,
    /// This port's LID and, for a CA port, its port GUID, where the line gives them.
    own_lid: Option<u16>,
    own_port_guid: Option<u64>,
    /// The peer port's LID and, for a CA port, its port GUID, where the line gives them.
    peer_lid: Option<u16>,
    peer_port_guid: Option<u64>,
}

impl Report {
    /// Adds the report of a connected port after the checks both formats share: an external peer port and a
    /// width and speed the model represents; `Err` is the message for the report's line.
    fn add(self, reports: &mut Vec<Report>) -> Result<(), String> {
        if self.peer_port == 0 {
            return Err("peer port 0: not an external port".into());
        }
        rate_of(&self.speed)?;
        reports.push(self);
        Ok(())
    }
}

/// Reads `path` (as `ibnetdiscover` wrote it) into a scenario.
pub fn import_file(path: &Path, flows: Flows) -> Result<Imported, ImportError> {
    let text = scenario::read_input(path).map_err(|e| ImportError {
        file: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })?;
    import_text(path, &text, flows)
}

/// Reads `path` (as `ibnetdiscover` wrote it) into a scenario as `opts` say.
pub fn import_file_with(path: &Path, opts: &Options) -> Result<Imported, ImportError> {
    let text = scenario::read_input(path).map_err(|e| ImportError {
        file: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })?;
    import_text_with(path, &text, opts)
}

/// A small cursor over one line.
struct Cur<'a> {
    s: &'a str,
}

impl<'a> Cur<'a> {
    fn ws(&mut self) {
        self.s = self.s.trim_start();
    }
    fn lit(&mut self, l: &str) -> bool {
        match self.s.strip_prefix(l) {
            Some(r) => {
                self.s = r;
                true
            }
            None => false,
        }
    }
    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let end = self.s.find(|c| !f(c)).unwrap_or(self.s.len());
        let (a, b) = self.s.split_at(end);
        self.s = b;
        a
    }
    fn dec<T: std::str::FromStr>(&mut self) -> Option<T> {
        self.take_while(|c| c.is_ascii_digit()).parse().ok()
    }
    fn hex(&mut self) -> Option<u64> {
        u64::from_str_radix(self.take_while(|c| c.is_ascii_hexdigit()), 16).ok()
    }
    /// `"text"` up to the next quote.
    fn quoted(&mut self) -> Option<&'a str> {
        let r = self.s.strip_prefix('"')?;
        let end = r.find('"')?;
        self.s = &r[end + 1..];
        Some(&r[..end])
    }
    /// `[n]` and an optional `[ext n]` after it (`ibnetdiscover -g`).
    fn port(&mut self) -> Option<u8> {
        if !self.lit("[") {
            return None;
        }
        let p = self.dec()?;
        if !self.lit("]") {
            return None;
        }
        if self.lit("[ext ") && (self.dec::<u32>().is_none() || !self.lit("]")) {
            return None;
        }
        Some(p)
    }
    /// `(hex)`, if there.
    fn paren_hex(&mut self) -> Option<Option<u64>> {
        if !self.lit("(") {
            return Some(None);
        }
        let v = self.hex()?;
        self.lit(")").then_some(Some(v))
    }
}

/// A node id, `"S-<guid>"` or `"H-<guid>"`.
fn node_id(id: &str) -> Result<(Kind, u64), String> {
    let (kind, hex) = if let Some(h) = id.strip_prefix("S-") {
        (Kind::Switch, h)
    } else if let Some(h) = id.strip_prefix("H-") {
        (Kind::Ca, h)
    } else if id.starts_with("R-") {
        return Err(format!(
            "{id:?} is a router; the model has switches and channel adapters only"
        ));
    } else {
        return Err(format!(
            "{id:?} is not a node id (\"S-<guid>\" or \"H-<guid>\")"
        ));
    };
    if hex.is_empty() || hex.len() > 16 {
        return Err(format!("{id:?}: the GUID is not 1 to 16 hex digits"));
    }
    u64::from_str_radix(hex, 16)
        .map(|g| (kind, g))
        .map_err(|_| format!("{id:?}: the GUID is not hex"))
}

/// The scenario rate of an active width and speed as printed (`4xQDR`): a rate name the scenario format
/// knows, or the data rate after line coding in Mbit/s for widths it has no name for. 8b/10b speeds (SDR,
/// DDR, QDR) carry 2, 4 and 8 Gbit/s of data per lane; FDR10 (10.3125 Gbaud, 64b/66b) 10 Gbit/s. FDR, EDR and
/// HDR are taken at 4x only, with the scenario's own names; NDR and beyond are not represented.
fn rate_of(speed: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "{speed:?}: a link width and speed the model cannot represent (1x, 2x, 4x, 8x or 12x SDR, DDR, QDR \
             or FDR10; 4x FDR, EDR or HDR)"
        )
    };
    let (w, s) = speed.split_once('x').ok_or_else(bad)?;
    let width: u64 = w.parse().map_err(|_| bad())?;
    if ![1, 2, 4, 8, 12].contains(&width) {
        return Err(bad());
    }
    let s = s.to_ascii_uppercase();
    let lane = match s.as_str() {
        "SDR" => Some(2_000),
        "DDR" => Some(4_000),
        "QDR" => Some(8_000),
        "FDR10" => Some(10_000),
        _ => None,
    };
    let named = format!("{width}x{s}");
    if scenario::rate_mbps(&named).is_some() {
        return Ok(named);
    }
    match lane {
        Some(l) => Ok(format!("{}Mbps", l * width)),
        None => Err(bad()),
    }
}

fn parse(path: &Path, text: &str) -> Result<(Vec<Node>, Vec<Report>), ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_guid: HashMap<u64, usize> = HashMap::new();
    let mut reports: Vec<Report> = Vec::new();
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |what: &str| err(line, format!("{what}: {t:?}"));
        // Identification lines: a new node's section starts.
        if let Some((key, value)) = t.split_once('=') {
            if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric()) {
                let ok_hex = |v: &str| {
                    v.strip_prefix("0x")
                        .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
                };
                let ok = match key {
                    "vendid" | "devid" | "sysimgguid" | "caguid" => ok_hex(value),
                    "switchguid" => value
                        .split_once('(')
                        .is_some_and(|(g, rest)| ok_hex(g) && rest.ends_with(')')),
                    "rtguid" => {
                        return Err(err(
                            line,
                            "a router; the model has switches and channel adapters only".into(),
                        ))
                    }
                    _ => false,
                };
                if !ok {
                    return Err(bad("not an identification line ibnetdiscover prints"));
                }
                current = None;
                continue;
            }
        }
        if t.starts_with("Switch") || t.starts_with("Ca") {
            let kind = if t.starts_with("Switch") {
                Kind::Switch
            } else {
                Kind::Ca
            };
            let mut c = Cur { s: t };
            c.lit(if kind == Kind::Switch { "Switch" } else { "Ca" });
            c.ws();
            let truncated = "a node line cut short (expected: Switch|Ca <ports> \"<id>\" # \"<description>\" ...)";
            let ports: u8 = c.dec().ok_or_else(|| bad(truncated))?;
            c.ws();
            let id = c.quoted().ok_or_else(|| bad(truncated))?;
            let (k, guid) = node_id(id).map_err(|m| err(line, m))?;
            if k != kind {
                return Err(err(
                    line,
                    format!("{id:?} is not the id of a {kind:?} node"),
                ));
            }
            c.ws();
            if !c.lit("#") {
                return Err(bad(truncated));
            }
            let rest = c.s.trim();
            let (desc, tail) = match (rest.strip_prefix('"'), rest.rfind('"')) {
                (Some(_), Some(end)) if end > 0 => (&rest[1..end], rest[end + 1..].trim()),
                _ => return Err(bad(truncated)),
            };
            let tail_ok = match kind {
                Kind::Switch => {
                    let mut c = Cur { s: tail };
                    (c.lit("enhanced") || c.lit("base"))
                        && c.lit(" port 0 lid ")
                        && c.dec::<u16>().is_some()
                        && c.lit(" lmc ")
                        && c.dec::<u8>().is_some()
                        && c.s.trim().is_empty()
                }
                Kind::Ca => tail.is_empty() || tail == "(scp)",
            };
            if !tail_ok {
                return Err(bad(truncated));
            }
            if ports == 0 || ports > crate::topology::MAX_SWITCH_PORTS {
                return Err(err(
                    line,
                    format!(
                        "{ports} ports; the model's nodes have 1 to {}",
                        crate::topology::MAX_SWITCH_PORTS
                    ),
                ));
            }
            if let Some(&other) = by_guid.get(&guid) {
                return Err(err(
                    line,
                    format!(
                        "node {id:?} was already described at line {}",
                        nodes[other].line
                    ),
                ));
            }
            by_guid.insert(guid, nodes.len());
            current = Some(nodes.len());
            nodes.push(Node {
                kind,
                guid,
                ports,
                desc: desc.to_string(),
                line,
                in_file: true,
            });
            continue;
        }
        if t.starts_with('[') {
            let Some(node) = current else {
                return Err(bad(
                    "a port line outside a node's section (no Switch or Ca line before it)",
                ));
            };
            let kind = nodes[node].kind;
            let form = match kind {
                Kind::Switch => "[port] \"<peer id>\"[peer port] # \"<peer description>\" lid <lid> <width><speed>",
                Kind::Ca => "[port](<port guid>) \"<peer id>\"[peer port] # lid <lid> lmc <lmc> \"<peer description>\" lid <lid> <width><speed>",
            };
            let not_understood =
                || bad(&format!("not a port line of a {kind:?} (expected: {form})"));
            let mut c = Cur { s: t };
            let port = c.port().ok_or_else(not_understood)?;
            let own_guid = c.paren_hex().ok_or_else(not_understood)?;
            if own_guid.is_some() != (kind == Kind::Ca) {
                return Err(not_understood());
            }
            c.ws();
            let id = c.quoted().ok_or_else(not_understood)?;
            let (peer_kind, peer_guid) = node_id(id).map_err(|m| err(line, m))?;
            let peer_port = c.port().ok_or_else(not_understood)?;
            c.ws();
            let peer_port_guid = c.paren_hex().ok_or_else(not_understood)?;
            c.ws();
            if !c.lit("#") {
                return Err(not_understood());
            }
            c.ws();
            let mut own_lid = None;
            if kind == Kind::Ca {
                if !c.lit("lid ") {
                    return Err(not_understood());
                }
                own_lid = c.dec::<u16>();
                if !(own_lid.is_some() && c.lit(" lmc ") && c.dec::<u8>().is_some()) {
                    return Err(not_understood());
                }
                c.ws();
            }
            let rest = c.s;
            let Some(end) = rest.rfind("\" lid ") else {
                return Err(not_understood());
            };
            if !rest.starts_with('"') {
                return Err(not_understood());
            }
            let peer_desc = &rest[1..end];
            let mut c = Cur {
                s: &rest[end + "\" lid ".len()..],
            };
            let Some(peer_lid) = c.dec::<u16>() else {
                return Err(not_understood());
            };
            c.ws();
            let speed = c.take_while(|ch| !ch.is_whitespace()).to_string();
            if speed.is_empty() {
                return Err(not_understood());
            }
            // `-f` adds s=, w=, v= and e=; a switch line may end in (scp) or slot N for Xsigo gear.
            let extras: Vec<&str> = c.s.split_whitespace().collect();
            let mut k = 0;
            while k < extras.len() {
                let e = extras[k];
                let numeric = |p: &str| {
                    e.strip_prefix(p)
                        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                };
                if numeric("s=") || numeric("w=") || numeric("v=") || numeric("e=") || e == "(scp)"
                {
                    k += 1;
                } else if e == "slot" && extras.get(k + 1).is_some_and(|n| n.parse::<u32>().is_ok())
                {
                    k += 2;
                } else {
                    return Err(not_understood());
                }
            }
            if port == 0 || port > nodes[node].ports {
                return Err(err(
                    line,
                    format!("port {port}: the node has ports 1 to {}", nodes[node].ports),
                ));
            }
            if let Some(r) = reports.iter().find(|r| r.node == node && r.port == port) {
                return Err(err(
                    line,
                    format!("port {port} was already given at line {}", r.line),
                ));
            }
            Report {
                line,
                node,
                port,
                peer_kind,
                peer_guid,
                peer_port,
                peer_desc: peer_desc.to_string(),
                speed,
                own_lid,
                own_port_guid: own_guid,
                peer_lid: Some(peer_lid),
                peer_port_guid,
            }
            .add(&mut reports)
            .map_err(|m| err(line, m))?;
            continue;
        }
        return Err(bad("not a line of ibnetdiscover's topology output"));
    }
    Ok((nodes, reports))
}

/// The ports report (`ibnetdiscover -p`): one line per port,
///
/// ```text
/// SW     1  8 0x0002c90200400001 4x QDR - SW     2  8 0x0002c90200400002 ( 'leaf1' - 'leaf2' )
/// CA     3  1 0x0002c90300000011 4x DDR - SW     1  1 0x0002c90200400001 ( 'node1 HCA-1' - 'leaf1' )
/// SW     1  3 0x0002c90200400001 4x SDR                                    'leaf1'
/// ```
///
/// (type, LID, port, port GUID, width, speed, then the peer's or, for a port with nothing connected, only the
/// node's description). A switch's ports share one port GUID, so a switch is known by it and has as many
/// ports as its highest port listed. A CA's ports each have their own GUID and nothing says which ports share
/// an adapter, so every CA port is an HCA of its own.
fn parse_ports(path: &Path, text: &str) -> Result<(Vec<Node>, Vec<Report>), ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_guid: HashMap<u64, usize> = HashMap::new();
    let mut reports: Vec<Report> = Vec::new();
    let form = "(expected: SW|CA <lid> <port> 0x<port guid> <width> <speed> - SW|CA <lid> <port> 0x<port guid> \
                ( '<description>' - '<peer description>' ), or an unconnected port's \
                SW|CA <lid> <port> 0x<port guid> <width> <speed> '<description>')";
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = || {
            err(
                line,
                format!("not a line of ibnetdiscover's ports report {form}: {t:?}"),
            )
        };
        let kind = |s: &str| match s {
            "SW" => Ok(Kind::Switch),
            "CA" => Ok(Kind::Ca),
            "RT" => Err(err(
                line,
                "a router; the model has switches and channel adapters only".into(),
            )),
            _ => Err(bad()),
        };
        let guid = |s: &str| {
            s.strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(bad)
        };
        let quote = t.find('\'').ok_or_else(bad)?;
        let (head, descs) = t.split_at(quote);
        let head = head.trim_end();
        let (head, connected) = match head.strip_suffix('(') {
            Some(h) => (h.trim_end(), true),
            None => (head, false),
        };
        let f: Vec<&str> = head.split_whitespace().collect();
        if f.len() != if connected { 11 } else { 6 } {
            return Err(bad());
        }
        let k = kind(f[0])?;
        let own_lid: u16 = f[1].parse().map_err(|_| bad())?;
        let port: u8 = f[2].parse().map_err(|_| bad())?;
        let g = guid(f[3])?;
        if port == 0 || port > crate::topology::MAX_SWITCH_PORTS {
            return Err(err(
                line,
                format!(
                    "port {port}: the model's nodes have ports 1 to {}",
                    crate::topology::MAX_SWITCH_PORTS
                ),
            ));
        }
        let (desc, peer_desc) = if connected {
            let inner = descs
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix("' )"))
                .ok_or_else(bad)?;
            let (a, b) = inner.split_once("' - '").ok_or_else(bad)?;
            (a, Some(b))
        } else {
            let d = descs
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix('\''))
                .ok_or_else(bad)?;
            (d, None)
        };
        let node = match by_guid.get(&g) {
            Some(&n) => {
                if nodes[n].kind != k || k == Kind::Ca {
                    return Err(err(
                        line,
                        format!(
                            "port GUID {g:016x} was already given at line {}",
                            nodes[n].line
                        ),
                    ));
                }
                nodes[n].ports = nodes[n].ports.max(port);
                n
            }
            None => {
                by_guid.insert(g, nodes.len());
                nodes.push(Node {
                    kind: k,
                    guid: g,
                    ports: port,
                    desc: desc.to_string(),
                    line,
                    in_file: true,
                });
                nodes.len() - 1
            }
        };
        if let Some(r) = reports.iter().find(|r| r.node == node && r.port == port) {
            return Err(err(
                line,
                format!("port {port} was already given at line {}", r.line),
            ));
        }
        let Some(peer_desc) = peer_desc else {
            continue;
        };
        if f[6] != "-" {
            return Err(bad());
        }
        let peer_kind = kind(f[7])?;
        let peer_lid: u16 = f[8].parse().map_err(|_| bad())?;
        let peer_port: u8 = f[9].parse().map_err(|_| bad())?;
        let peer_guid = guid(f[10])?;
        Report {
            line,
            node,
            port,
            peer_kind,
            peer_guid,
            peer_port,
            peer_desc: peer_desc.to_string(),
            speed: format!("{}{}", f[4], f[5]),
            own_lid: Some(own_lid),
            own_port_guid: (k == Kind::Ca).then_some(g),
            peer_lid: Some(peer_lid),
            peer_port_guid: (peer_kind == Kind::Ca).then_some(peer_guid),
        }
        .add(&mut reports)
        .map_err(|m| err(line, m))?;
    }
    Ok((nodes, reports))
}

/// Reads the text of an `ibnetdiscover` topology file into a fabric; `path` names it in errors.
pub fn read_fabric(path: &Path, text: &str) -> Result<Fabric, ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let ports_form = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| ["SW ", "CA ", "RT "].iter().any(|p| l.starts_with(p)));
    let (mut nodes, reports) = if ports_form {
        parse_ports(path, text)?
    } else {
        parse(path, text)?
    };
    let mut by_guid: HashMap<u64, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n.guid, i)).collect();
    // Nodes known only from their peers' lines (a file with only switch or only CA sections).
    for r in &reports {
        match by_guid.get(&r.peer_guid) {
            Some(&p) => {
                if nodes[p].kind != r.peer_kind {
                    return Err(err(
                        r.line,
                        format!(
                            "the peer {:016x} is a {:?} at line {}, not a {:?}",
                            r.peer_guid, nodes[p].kind, nodes[p].line, r.peer_kind
                        ),
                    ));
                }
                if !nodes[p].in_file {
                    nodes[p].ports = nodes[p].ports.max(r.peer_port);
                }
            }
            None => {
                by_guid.insert(r.peer_guid, nodes.len());
                nodes.push(Node {
                    kind: r.peer_kind,
                    guid: r.peer_guid,
                    ports: r.peer_port,
                    desc: r.peer_desc.clone(),
                    line: r.line,
                    in_file: false,
                });
            }
        }
    }
    // Every link once; both ends must agree where both are in the file.
    let at: HashMap<(usize, u8), usize> = reports
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.node, r.port), i))
        .collect();
    // (node, port, node, port, rate, line)
    let mut links: Vec<(usize, u8, usize, u8, String, usize)> = Vec::new();
    let mut seen_from_peer: BTreeMap<(usize, u8), usize> = BTreeMap::new();
    for r in &reports {
        let peer = by_guid[&r.peer_guid];
        if peer == r.node {
            return Err(err(r.line, "a link from a node to itself".into()));
        }
        if nodes[peer].in_file {
            if r.peer_port > nodes[peer].ports {
                return Err(err(
                    r.line,
                    format!(
                        "peer port {}: the peer (line {}) has ports 1 to {}",
                        r.peer_port, nodes[peer].line, nodes[peer].ports
                    ),
                ));
            }
            let Some(&back) = at.get(&(peer, r.peer_port)) else {
                return Err(err(
                    r.line,
                    format!(
                        "the two ends disagree: this line puts port {} on port {} of {:016x}, whose section \
                         (line {}) has no line for that port",
                        r.port, r.peer_port, r.peer_guid, nodes[peer].line
                    ),
                ));
            };
            let b = &reports[back];
            if b.peer_guid != nodes[r.node].guid || b.peer_port != r.port {
                return Err(err(
                    r.line,
                    format!(
                        "the two ends disagree: this line connects port {} to {:016x} port {}, but line {} \
                         connects that port to {:016x} port {}",
                        r.port, r.peer_guid, r.peer_port, b.line, b.peer_guid, b.peer_port
                    ),
                ));
            }
            if !b.speed.eq_ignore_ascii_case(&r.speed) {
                return Err(err(
                    r.line,
                    format!(
                        "the two ends disagree: {} here, {} at line {}",
                        r.speed, b.speed, b.line
                    ),
                ));
            }
            if (r.node, r.port) > (peer, r.peer_port) {
                continue;
            }
        } else if let Some(other) = seen_from_peer.insert((peer, r.peer_port), r.line) {
            return Err(err(
                r.line,
                format!(
                    "port {} of {:016x} is also connected at line {other}",
                    r.peer_port, r.peer_guid
                ),
            ));
        }
        let rate = rate_of(&r.speed).map_err(|m| err(r.line, m))?;
        links.push((r.node, r.port, peer, r.peer_port, rate, r.line));
    }
    let mut notes = Vec::new();
    if ports_form && nodes.iter().any(|n| n.kind == Kind::Ca) {
        notes.push(
            "a ports report (-p) does not say which CA ports share an adapter: every CA port is an HCA of its own"
                .to_string(),
        );
    }
    // One port per CA: its lowest connected one.
    let mut ca_port: HashMap<usize, u8> = HashMap::new();
    for &(a, pa, b, pb, ..) in &links {
        for (n, p) in [(a, pa), (b, pb)] {
            if nodes[n].kind == Kind::Ca {
                let e = ca_port.entry(n).or_insert(p);
                *e = (*e).min(p);
            }
        }
    }
    links.retain(|&(a, pa, b, pb, _, line)| {
        for (n, p) in [(a, pa), (b, pb)] {
            if nodes[n].kind == Kind::Ca && ca_port[&n] != p {
                notes.push(format!(
                    "line {line}: port {p} of CA {:016x} ({:?}) not imported: the model's HCA has one port \
                     (port {} is)",
                    nodes[n].guid, nodes[n].desc, ca_port[&n]
                ));
                return false;
            }
        }
        true
    });
    for (i, n) in nodes.iter().enumerate() {
        if n.kind == Kind::Ca && !ca_port.contains_key(&i) {
            notes.push(format!(
                "line {}: CA {:016x} ({:?}) has no connected port; not imported",
                n.line, n.guid, n.desc
            ));
        }
        if !n.in_file {
            notes.push(format!(
                "line {}: {:?} {:016x} ({:?}) has no section of its own; taken from its peers' lines{}",
                n.line,
                n.kind,
                n.guid,
                n.desc,
                if n.kind == Kind::Switch {
                    format!(", with {} ports (its highest connected port)", n.ports)
                } else {
                    String::new()
                }
            ));
        }
    }
    // The clock: a link moves an exact fraction of bytes per cycle (both parts bounded). Every rate the
    // importer gives is one at 1000 MHz; should a rate not be, the smallest clock from 1000 MHz at which all
    // are is taken.
    let mut rates: Vec<(u64, &str, usize)> = links
        .iter()
        .map(|(.., rate, line)| {
            let mbps = scenario::rate_mbps(rate).expect("rate_of gives rates the scenario reads");
            (mbps, rate.as_str(), *line)
        })
        .collect();
    rates.sort_unstable();
    rates.dedup_by_key(|r| r.0);
    let fits = |mbps: u64, clock: u32| {
        mbps <= scenario::limits::max_rate_mbps(clock)
            && crate::fabric::link_rate(mbps, clock).is_ok()
    };
    let max_clock = scenario::limits::MAX_CLOCK_MHZ;
    let Some(clock) = (1000..=max_clock).find(|&c| rates.iter().all(|r| fits(r.0, c))) else {
        for &(mbps, rate, line) in &rates {
            if !(1..=max_clock).any(|c| fits(mbps, c)) {
                return Err(err(
                    line,
                    format!(
                        "{rate} ({mbps} Mbit/s) is an exact fraction of bytes per cycle (both parts at most \
                         65 536) at no clock up to {max_clock} MHz"
                    ),
                ));
            }
        }
        return Err(err(
            0,
            format!("the links' rates are exact fractions of bytes per cycle at no common clock from 1000 to {max_clock} MHz"),
        ));
    };
    if clock != 1000 {
        notes.push(format!(
            "settings.clock_mhz = {clock}: the smallest clock from 1000 MHz at which every link's rate is an \
             exact fraction of bytes per cycle"
        ));
    }
    // Names: the description where unique and usable, else the id ibnetdiscover uses.
    let mut desc_count: HashMap<&str, usize> = HashMap::new();
    for n in &nodes {
        *desc_count.entry(n.desc.as_str()).or_default() += 1;
    }
    let names: Vec<String> = nodes
        .iter()
        .map(|n| {
            let usable = desc_count[n.desc.as_str()] == 1
                && scenario::limits::check_name(&n.desc).is_ok()
                && !n.desc.contains(':')
                && n.desc.trim() == n.desc
                && n.desc != "all";
            if usable {
                n.desc.clone()
            } else {
                let prefix = if n.kind == Kind::Switch { "S" } else { "H" };
                format!("{prefix}-{:016x}", n.guid)
            }
        })
        .collect();
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(err(
                nodes[i].line,
                format!("two nodes would both be named {a:?}"),
            ));
        }
    }
    let switch_nodes: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind == Kind::Switch)
        .collect();
    let hca_nodes: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind == Kind::Ca && ca_port.contains_key(&i))
        .collect();
    // LIDs and port GUIDs of CA ports, from their own lines or their peers'.
    let mut lid_of: HashMap<(usize, u8), u16> = HashMap::new();
    let mut pguid_of: HashMap<(usize, u8), u64> = HashMap::new();
    for r in &reports {
        if let Some(l) = r.own_lid {
            lid_of.insert((r.node, r.port), l);
        }
        if let Some(g) = r.own_port_guid {
            pguid_of.insert((r.node, r.port), g);
        }
        let peer = by_guid[&r.peer_guid];
        if let Some(l) = r.peer_lid {
            lid_of.entry((peer, r.peer_port)).or_insert(l);
        }
        if let Some(g) = r.peer_port_guid {
            pguid_of.entry((peer, r.peer_port)).or_insert(g);
        }
    }
    let mut index = vec![usize::MAX; nodes.len()];
    for (i, &n) in switch_nodes.iter().enumerate() {
        index[n] = i;
    }
    for (i, &n) in hca_nodes.iter().enumerate() {
        index[n] = i;
    }
    let end = |n: usize, p: u8| match nodes[n].kind {
        Kind::Switch => End::Switch {
            switch: index[n],
            port: p,
        },
        Kind::Ca => End::Hca { hca: index[n] },
    };
    Ok(Fabric {
        switches: switch_nodes
            .iter()
            .map(|&n| FabricSwitch {
                name: names[n].clone(),
                desc: nodes[n].desc.clone(),
                guid: nodes[n].guid,
                ports: nodes[n].ports,
                line: nodes[n].line,
            })
            .collect(),
        hcas: hca_nodes
            .iter()
            .map(|&n| {
                let port = ca_port[&n];
                FabricHca {
                    name: names[n].clone(),
                    desc: nodes[n].desc.clone(),
                    guid: nodes[n].guid,
                    port,
                    port_guid: pguid_of.get(&(n, port)).copied(),
                    lid: lid_of.get(&(n, port)).copied(),
                    line: nodes[n].line,
                }
            })
            .collect(),
        links: links
            .iter()
            .map(|(a, pa, b, pb, rate, line)| FabricLink {
                a: end(*a, *pa),
                b: end(*b, *pb),
                rate: rate.clone(),
                line: *line,
            })
            .collect(),
        notes,
        clock_mhz: clock,
    })
}

/// A switch of an imported fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricSwitch {
    /// The scenario name: the description where unique and usable, else `S-<guid>`.
    pub name: String,
    /// The node description.
    pub desc: String,
    /// The node GUID.
    pub guid: u64,
    /// Port count.
    pub ports: u8,
    /// The line of the input that describes it.
    pub line: usize,
}

/// A channel adapter's imported port: the model's HCA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricHca {
    /// The scenario name: the description where unique and usable, else `H-<guid>`.
    pub name: String,
    /// The node description.
    pub desc: String,
    /// The node GUID (in a ports report, which gives no node GUIDs, the port GUID).
    pub guid: u64,
    /// The adapter's port that is imported.
    pub port: u8,
    /// That port's GUID and LID, where the input gives them.
    pub port_guid: Option<u64>,
    pub lid: Option<u16>,
    /// The line of the input that describes it.
    pub line: usize,
}

/// A link of an imported fabric; its ends index [`Fabric::switches`] and [`Fabric::hcas`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricLink {
    pub a: End,
    pub b: End,
    /// The scenario rate (`"4xQDR"`, `"40000Mbps"`).
    pub rate: String,
    /// The input line it was read from.
    pub line: usize,
}

/// A fabric as read from `ibnetdiscover`'s output: the nodes and links a scenario is made of, in the order
/// a scenario lists them, and what was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fabric {
    pub switches: Vec<FabricSwitch>,
    pub hcas: Vec<FabricHca>,
    pub links: Vec<FabricLink>,
    /// What was not imported or is worth knowing.
    pub notes: Vec<String>,
    /// The smallest clock from 1000 MHz at which every link's rate is an exact fraction of bytes per cycle.
    pub clock_mhz: u32,
}

/// Latency of every imported link: ibnetdiscover gives no cable lengths.
pub const LINK_LATENCY_NS: u64 = 100;

/// Said once per import without iblinkinfo's output: what the input cannot tell about link speeds.
pub const NO_CAPABILITIES: &str = "ibnetdiscover's output gives each link's active width and speed only, not \
     the widths and speeds its ports support, so a link running slower than its ports could cannot be told \
     from it (give iblinkinfo's output to have such links reported); every link is imported at its active rate";

impl Fabric {
    /// An end as a scenario's link ends name it.
    pub fn end_name(&self, e: End) -> String {
        match e {
            End::Switch { switch, port } => format!("{}:{port}", self.switches[switch].name),
            End::Hca { hca } => self.hcas[hca].name.clone(),
        }
    }

    /// The fabric as a topology, every link with `latency_ns`; an error names the input line of the link
    /// or node it is about (0 when it is about none).
    pub fn topology(&self, latency_ns: u64) -> Result<Topology, (usize, String)> {
        let switches = self
            .switches
            .iter()
            .map(|s| SwitchNode {
                name: s.name.clone(),
                ports: s.ports,
            })
            .collect();
        let hcas = self
            .hcas
            .iter()
            .map(|h| HcaNode {
                name: h.name.clone(),
            })
            .collect();
        let mut links = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let rate_mbps = scenario::rate_mbps(&l.rate).ok_or_else(|| {
                (
                    l.line,
                    format!("{:?} is not a rate the model reads", l.rate),
                )
            })?;
            links.push(Link {
                a: l.a,
                b: l.b,
                rate_mbps,
                latency_ns,
            });
        }
        Topology::new(switches, hcas, links).map_err(|e| {
            let line = match &e {
                TopologyError::NoSuchEnd { link, .. }
                | TopologyError::PortInUse { link, .. }
                | TopologyError::SelfLoop { link, .. }
                | TopologyError::ZeroRate { link } => self.links[*link].line,
                TopologyError::UnconnectedHca(n) | TopologyError::Unreachable { hca: n, .. } => {
                    self.hcas
                        .iter()
                        .find(|h| &h.name == n)
                        .map_or(0, |h| h.line)
                }
                _ => 0,
            };
            (line, e.to_string())
        })
    }
}

/// How the imported scenario routes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Routing {
    /// The model's minimum-hop routes.
    #[default]
    MinHop,
    /// Up/down routes from these roots (switch names, descriptions or GUIDs); none: the default roots.
    UpDown(Vec<String>),
}

/// What the import writes besides the fabric.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    pub flows: Flows,
    pub routing: Routing,
    /// iblinkinfo's output for the fabric: links running slower than their ports could are reported.
    pub iblinkinfo: Option<PathBuf>,
}

/// Reads the text of an `ibnetdiscover` topology file into a scenario with minimum-hop routes; `path` names
/// it in errors.
pub fn import_text(path: &Path, text: &str, flows: Flows) -> Result<Imported, ImportError> {
    import_text_with(
        path,
        text,
        &Options {
            flows,
            routing: Routing::MinHop,
            iblinkinfo: None,
        },
    )
}

/// Reads the text of an `ibnetdiscover` topology file into a scenario as `opts` say.
pub fn import_text_with(path: &Path, text: &str, opts: &Options) -> Result<Imported, ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let mut fabric = read_fabric(path, text)?;
    if let Some(info) = &opts.iblinkinfo {
        let t = scenario::read_input(info).map_err(|e| ImportError {
            file: info.clone(),
            line: e.line,
            message: e.message,
        })?;
        super::iblinkinfo::apply(&mut fabric, info, &t)?;
    }
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = String::new();
    // The scenario is named after the file where that is a valid name.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| scenario::limits::check_name(s).is_ok())
        .unwrap_or_else(|| "imported".to_string());
    let routes = match opts.routing {
        Routing::MinHop => "the model's minimum-hop routes (checked free of credit loops)",
        Routing::UpDown(_) => "up/down routes (free of credit loops by construction, and checked)",
    };
    out.push_str(&format!(
        "# Imported from {} by `ibcycle import ibnetdiscover`: {} switches, {} HCAs, {} links.\n\
         # Routes are {routes}, not the subnet manager's.\n\
         # ibnetdiscover gives no cable lengths: every link has latency_ns = {LINK_LATENCY_NS}.\n",
        path.display().to_string().escape_debug(),
        fabric.switches.len(),
        fabric.hcas.len(),
        fabric.links.len()
    ));
    for n in &fabric.notes {
        out.push_str(&format!("# Note: {n}\n"));
    }
    if opts.iblinkinfo.is_none() {
        out.push_str(&format!("# Note: {NO_CAPABILITIES}.\n"));
    }
    out.push_str(&format!(
        "name = {}\nduration_us = 1000\nseed = 1\n",
        q(&stem)
    ));
    if fabric.clock_mhz != 1000 {
        out.push_str(&format!("\n[settings]\nclock_mhz = {}\n", fabric.clock_mhz));
    }
    if let Routing::UpDown(given) = &opts.routing {
        let topo = fabric
            .topology(LINK_LATENCY_NS)
            .map_err(|(l, m)| err(l, m))?;
        let roots = if given.is_empty() {
            let guids: Vec<u64> = fabric.switches.iter().map(|s| s.guid).collect();
            crate::updown::default_roots(&topo, &guids)
        } else {
            let names = crate::scenario::names::Names::new(&topo, Some(&fabric));
            given
                .iter()
                .map(|r| names.switch(r).map_err(|m| err(0, format!("--root: {m}"))))
                .collect::<Result<Vec<_>, _>>()?
        };
        let roots: Vec<String> = roots.iter().map(|&r| q(&fabric.switches[r].name)).collect();
        out.push_str(&format!(
            "\n[topology]\nrouting = \"updown\"\nroots = [{}]\n",
            roots.join(", ")
        ));
    }
    for s in &fabric.switches {
        out.push_str(&format!(
            "\n[[switch]]\n# {:?} GUID 0x{:016x}\nname = {}\nports = {}\n",
            s.desc,
            s.guid,
            q(&s.name),
            s.ports
        ));
    }
    for h in &fabric.hcas {
        out.push_str(&format!(
            "\n[[hca]]\n# {:?} GUID 0x{:016x}, port {}\nname = {}\n",
            h.desc,
            h.guid,
            h.port,
            q(&h.name)
        ));
    }
    for l in &fabric.links {
        out.push_str(&format!(
            "\n[[link]]\n# line {}\nends = [{}, {}]\nrate = {}\nlatency_ns = {LINK_LATENCY_NS}\n",
            l.line,
            q(&fabric.end_name(l.a)),
            q(&fabric.end_name(l.b)),
            q(&l.rate)
        ));
    }
    let hca_names: Vec<&str> = fabric.hcas.iter().map(|h| h.name.as_str()).collect();
    let mut flows_out: Vec<(&str, &str)> = Vec::new();
    match opts.flows {
        Flows::None => {}
        Flows::Incast => {
            if let Some((dst, srcs)) = hca_names.split_last() {
                flows_out.extend(srcs.iter().map(|s| (*s, *dst)));
            }
        }
        Flows::AllToAll => {
            for s in &hca_names {
                for d in &hca_names {
                    if s != d {
                        flows_out.push((s, d));
                    }
                }
            }
        }
        Flows::Shift(k) => out.push_str(&format!(
            "\n# Every HCA i sends to HCA (i + {k}) mod n, in the order above.\n[[traffic]]\nkind = \"shift\"\nk = {k}\n"
        )),
        Flows::Permutation(seed) => out.push_str(&format!(
            "\n# A random permutation of the HCAs (no HCA to itself), drawn from seed {seed}.\n[[traffic]]\nkind = \"permutation\"\nseed = {seed}\n"
        )),
        Flows::Bisection => out.push_str(
            "\n# The first half of the HCAs above with the second, pair by pair, both ways.\n[[traffic]]\nkind = \"bisection\"\n",
        ),
    }
    let traffic = matches!(
        opts.flows,
        Flows::Shift(_) | Flows::Permutation(_) | Flows::Bisection
    );
    if flows_out.is_empty() && !traffic {
        let (s, d) = match hca_names.as_slice() {
            [a, .., b] => (*a, *b),
            _ => ("SRC", "DST"),
        };
        out.push_str(&format!(
            "\n# Flows: add [[flow]] entries, e.g.\n# [[flow]]\n# id = \"F1\"\n# src = {}\n# dst = {}\n# start_us = 0\n",
            q(s),
            q(d)
        ));
    }
    for (i, (s, d)) in flows_out.iter().enumerate() {
        out.push_str(&format!(
            "\n[[flow]]\nid = \"F{}\"\nsrc = {}\ndst = {}\nstart_us = 0\n",
            i + 1,
            q(s),
            q(d)
        ));
    }
    // The scenario must load as written: this also checks the routes for credit loops.
    scenario::parse(Path::new("imported.toml"), &out).map_err(|e| {
        // A link's error names the input line the link came from (its `# line N` comment).
        let lines: Vec<&str> = out.lines().take(e.line).collect();
        let line = lines
            .iter()
            .rev()
            .take_while(|l| !l.starts_with("[[") || l.starts_with("[[link]]"))
            .find_map(|l| l.strip_prefix("# line ").and_then(|n| n.parse().ok()))
            .unwrap_or(0);
        err(line, format!("the imported fabric: {}", e.message))
    })?;
    Ok(Imported {
        toml: out,
        notes: fabric.notes.clone(),
        switches: fabric.switches.len(),
        hcas: fabric.hcas.len(),
        links: fabric.links.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate_of("4xQDR").unwrap(), "4xQDR");
        assert_eq!(rate_of("4xFDR").unwrap(), "4xFDR");
        assert_eq!(rate_of("1xSDR").unwrap(), "1xSDR");
        assert_eq!(rate_of("1xQDR").unwrap(), "8000Mbps");
        assert_eq!(rate_of("12xDDR").unwrap(), "48000Mbps");
        assert_eq!(rate_of("4xFDR10").unwrap(), "40000Mbps");
        assert!(rate_of("4xNDR").is_err());
        assert!(rate_of("1xEDR").is_err());
        assert!(rate_of("4x???").is_err());
        assert!(rate_of("3xQDR").is_err());
    }
}
