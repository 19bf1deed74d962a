//! Fabric topology: switches, HCAs and the links between their ports; generators for two-level fat trees
//! (Clos), three-level fat trees ([`fat_tree3`]) and chains; LID assignment; linear forwarding tables by
//! up/down min-hop routing.
//!
//! A topology is pure structure: rates and latencies ride along on each link as given, and the fabric turns
//! them into link pipelines. Everything here is validated once, with errors that name the node, port or link.

use std::collections::{HashMap, VecDeque};
use std::fmt;

mod fat_tree3;
pub use fat_tree3::{fat_tree3, FatTree3};

/// Most ports a switch may have (the switch model's limit).
pub const MAX_SWITCH_PORTS: u8 = 64;
/// First LID given to an HCA; LIDs are assigned in HCA order. Switch LIDs follow the HCAs'.
pub const FIRST_HCA_LID: u16 = 1;
/// Unicast LIDs end below the multicast range.
pub const MAX_UNICAST_LID: u16 = 0xBFFF;

/// One end of a link: a switch port (1-based, as IB numbers external ports) or an HCA's single port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum End {
    /// Port `port` (1..=ports) of switch `switch` (an index into [`Topology::switches`]).
    Switch { switch: usize, port: u8 },
    /// The port of HCA `hca` (an index into [`Topology::hcas`]).
    Hca { hca: usize },
}

/// A full-duplex link between two ends, with its data rate and one-way latency as the scenario gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
    /// Data rate in Mbit/s (4x QDR: 32 000).
    pub rate_mbps: u64,
    /// One-way latency (wire and PHY) in nanoseconds.
    pub latency_ns: u64,
}

/// A switch: its name and number of ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchNode {
    /// Name (unique among all nodes).
    pub name: String,
    /// Number of external ports (1..=64).
    pub ports: u8,
}

/// An HCA: its name (one port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HcaNode {
    /// Name (unique among all nodes).
    pub name: String,
}

/// What is wrong with a topology. Each variant names what the user wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("node name {0:?} is used twice")]
    DuplicateName(String),
    #[error("switch {name:?}: {ports} ports; a switch has 1 to {MAX_SWITCH_PORTS}")]
    BadPortCount { name: String, ports: u8 },
    #[error("link {link}: {end} does not exist")]
    NoSuchEnd { link: usize, end: String },
    #[error("link {link}: {end} is already connected by link {other}")]
    PortInUse {
        link: usize,
        end: String,
        other: usize,
    },
    #[error("link {link}: connects {end} to itself")]
    SelfLoop { link: usize, end: String },
    #[error("link {link}: rate must be above 0 Mbit/s")]
    ZeroRate { link: usize },
    #[error("HCA {0:?} has no link")]
    UnconnectedHca(String),
    #[error("HCA {hca:?} cannot be reached from switch {switch:?}")]
    Unreachable { hca: String, switch: String },
    #[error("{0} HCAs do not fit in the unicast LID space")]
    TooManyHcas(usize),
    #[error("a fabric needs at least one switch and one HCA")]
    Empty,
    #[error("{0}")]
    BadGenerator(String),
}

/// Why forwarding tables given from outside do not route a topology: switches and HCAs by index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("the tables are not one per switch with one entry per HCA")]
    Shape,
    #[error("switch #{switch} sends HCA #{hca}'s packets to port {port}, which has no link")]
    Nowhere { switch: usize, hca: usize, port: u8 },
    #[error(
        "switch #{switch} sends HCA #{hca}'s packets to port {port}, which leads to another HCA"
    )]
    WrongHca { switch: usize, hca: usize, port: u8 },
    #[error("HCA #{hca}'s packets from switch #{switch} come back to it: a forwarding loop")]
    Loop { switch: usize, hca: usize },
}

impl RouteError {
    /// The message with the switch and HCA named.
    pub fn describe(&self, topo: &Topology) -> String {
        let sw = |s: usize| topo.switches[s].name.as_str();
        let h = |h: usize| topo.hcas[h].name.as_str();
        match *self {
            RouteError::Shape => self.to_string(),
            RouteError::Nowhere { switch, hca, port } => format!(
                "switch {:?} sends {:?}'s packets to port {port}, which has no link",
                sw(switch),
                h(hca)
            ),
            RouteError::WrongHca { switch, hca, port } => format!(
                "switch {:?} sends {:?}'s packets to port {port}, which leads to another HCA",
                sw(switch),
                h(hca)
            ),
            RouteError::Loop { switch, hca } => format!(
                "{:?}'s packets leaving switch {:?} come back to it: a forwarding loop",
                h(hca),
                sw(switch)
            ),
        }
    }
}

/// A validated topology with LIDs assigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Switches, in the order given.
    pub switches: Vec<SwitchNode>,
    /// HCAs, in the order given; HCA `i` has LID `FIRST_HCA_LID + i`.
    pub hcas: Vec<HcaNode>,
    /// Links, in the order given.
    pub links: Vec<Link>,
    /// For each switch, for each port (index 0 = port 1): the link on it, if any.
    pub switch_port_link: Vec<Vec<Option<usize>>>,
    /// For each HCA: its link.
    pub hca_link: Vec<usize>,
    /// Forwarding tables given from outside (up/down routing, a subnet manager's dump) in the form
    /// [`Topology::routes`] returns; `None`: the minimum-hop routes.
    pub fixed_routes: Option<Vec<Vec<u8>>>,
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Switch { switch, port } => write!(f, "switch #{switch} port {port}"),
            End::Hca { hca } => write!(f, "HCA #{hca}"),
        }
    }
}

impl Topology {
    /// Validates the structure: unique names, port counts, every link end exists and is used once, every
    /// HCA has exactly one link, every HCA reachable from every switch.
    pub fn new(
        switches: Vec<SwitchNode>,
        hcas: Vec<HcaNode>,
        links: Vec<Link>,
    ) -> Result<Topology, TopologyError> {
        let topo = Topology::structure(switches, hcas, links)?;
        topo.routes()?;
        Ok(topo)
    }

    /// Validates the structure as [`Topology::new`] does, but not the minimum-hop routes: for a generator
    /// that sets its own tables with [`Topology::with_routes`] (which checks that they reach every HCA).
    fn structure(
        switches: Vec<SwitchNode>,
        hcas: Vec<HcaNode>,
        links: Vec<Link>,
    ) -> Result<Topology, TopologyError> {
        if switches.is_empty() || hcas.is_empty() {
            return Err(TopologyError::Empty);
        }
        if hcas.len() > usize::from(MAX_UNICAST_LID - FIRST_HCA_LID) + 1 {
            return Err(TopologyError::TooManyHcas(hcas.len()));
        }
        let mut names = HashMap::new();
        for n in switches
            .iter()
            .map(|s| &s.name)
            .chain(hcas.iter().map(|h| &h.name))
        {
            if names.insert(n.as_str(), ()).is_some() {
                return Err(TopologyError::DuplicateName(n.clone()));
            }
        }
        for s in &switches {
            if s.ports == 0 || s.ports > MAX_SWITCH_PORTS {
                return Err(TopologyError::BadPortCount {
                    name: s.name.clone(),
                    ports: s.ports,
                });
            }
        }
        let mut switch_port_link: Vec<Vec<Option<usize>>> = switches
            .iter()
            .map(|s| vec![None; usize::from(s.ports)])
            .collect();
        let mut hca_link: Vec<Option<usize>> = vec![None; hcas.len()];
        let describe = |e: &End| match *e {
            End::Switch { switch, port } => switches
                .get(switch)
                .map_or(format!("switch #{switch}"), |s| {
                    format!("{}:{port}", s.name)
                }),
            End::Hca { hca } => hcas
                .get(hca)
                .map_or(format!("HCA #{hca}"), |h| h.name.clone()),
        };
        for (i, l) in links.iter().enumerate() {
            if l.rate_mbps == 0 {
                return Err(TopologyError::ZeroRate { link: i });
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLoop {
                    link: i,
                    end: describe(&l.a),
                });
            }
            for end in [l.a, l.b] {
                let slot = match end {
                    End::Switch { switch, port } => switch_port_link
                        .get_mut(switch)
                        .and_then(|ports| ports.get_mut(usize::from(port).wrapping_sub(1))),
                    End::Hca { hca } => hca_link.get_mut(hca),
                };
                let Some(slot) = slot else {
                    return Err(TopologyError::NoSuchEnd {
                        link: i,
                        end: describe(&end),
                    });
                };
                if let Some(other) = *slot {
                    return Err(TopologyError::PortInUse {
                        link: i,
                        end: describe(&end),
                        other,
                    });
                }
                *slot = Some(i);
            }
        }
        let hca_link = hca_link
            .iter()
            .zip(&hcas)
            .map(|(l, h)| l.ok_or_else(|| TopologyError::UnconnectedHca(h.name.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        let topo = Topology {
            switches,
            hcas,
            links,
            switch_port_link,
            hca_link,
            fixed_routes: None,
        };
        Ok(topo)
    }

    /// The LID of HCA `hca`.
    pub fn hca_lid(&self, hca: usize) -> u16 {
        FIRST_HCA_LID + hca as u16
    }

    /// The HCA with LID `lid`, if any.
    pub fn hca_of_lid(&self, lid: u16) -> Option<usize> {
        let i = usize::from(lid.checked_sub(FIRST_HCA_LID)?);
        (i < self.hcas.len()).then_some(i)
    }

    /// The end across `link` from `end`.
    pub fn peer(&self, link: usize, end: End) -> End {
        let l = &self.links[link];
        if l.a == end {
            l.b
        } else {
            l.a
        }
    }

    /// Index of the node called `name`: a switch or an HCA.
    pub fn find(&self, name: &str) -> Option<End> {
        if let Some(s) = self.switches.iter().position(|s| s.name == name) {
            return Some(End::Switch { switch: s, port: 0 });
        }
        self.hcas
            .iter()
            .position(|h| h.name == name)
            .map(|hca| End::Hca { hca })
    }

    /// Linear forwarding tables: for each switch, the output port (1-based) for each HCA's LID, index
    /// `lid - FIRST_HCA_LID`. Minimum-hop routes; where several ports lead on equally short paths (the up
    /// ports of a fat-tree leaf, parallel links), the port is chosen by `lid mod candidates` over the
    /// candidates sorted by port number, which spreads destinations evenly over the spines: in a two-level
    /// fat tree this is up/down routing with destination-based spreading, as opensm's min-hop engine does
    /// it in effect.
    /// Tables set by [`Topology::with_routes`] are returned as set.
    pub fn routes(&self) -> Result<Vec<Vec<u8>>, TopologyError> {
        if let Some(fixed) = &self.fixed_routes {
            return Ok(fixed.clone());
        }
        self.min_hop_routes()
    }

    /// The topology with `lfts` (one table per switch, the output port for each HCA, as
    /// [`Topology::routes`] returns them) as its routes. Every entry must be a connected port, and from every
    /// switch the tables must lead each HCA's packets to it (no dead end, no forwarding loop).
    pub fn with_routes(mut self, lfts: Vec<Vec<u8>>) -> Result<Topology, RouteError> {
        self.check_routes(&lfts)?;
        self.fixed_routes = Some(lfts);
        Ok(self)
    }

    /// Checks `lfts` as [`Topology::with_routes`] does.
    pub fn check_routes(&self, lfts: &[Vec<u8>]) -> Result<(), RouteError> {
        let ns = self.switches.len();
        if lfts.len() != ns || lfts.iter().any(|t| t.len() != self.hcas.len()) {
            return Err(RouteError::Shape);
        }
        for (s, table) in lfts.iter().enumerate() {
            for (h, &port) in table.iter().enumerate() {
                let connected = usize::from(port)
                    .checked_sub(1)
                    .and_then(|p| self.switch_port_link[s].get(p).copied().flatten())
                    .is_some();
                if !connected {
                    return Err(RouteError::Nowhere {
                        switch: s,
                        hca: h,
                        port,
                    });
                }
            }
        }
        // Walks from every switch: a walk that reaches a switch already known to deliver stops there, so
        // the cost is one visit per switch and destination.
        let mut delivers = vec![false; ns];
        let mut on_walk = vec![false; ns];
        let mut walk = Vec::new();
        // `h` is a destination: it indexes every switch's table, not one list.
        #[allow(clippy::needless_range_loop)]
        for h in 0..self.hcas.len() {
            delivers.fill(false);
            for start in 0..ns {
                let mut s = start;
                walk.clear();
                loop {
                    if delivers[s] {
                        break;
                    }
                    if on_walk[s] {
                        for &w in &walk {
                            on_walk[w] = false;
                        }
                        return Err(RouteError::Loop { switch: s, hca: h });
                    }
                    on_walk[s] = true;
                    walk.push(s);
                    let port = lfts[s][h];
                    let l = self.switch_port_link[s][usize::from(port) - 1]
                        .expect("checked above: a connected port");
                    match self.peer(l, End::Switch { switch: s, port }) {
                        End::Hca { hca } if hca == h => break,
                        End::Hca { .. } => {
                            for &w in &walk {
                                on_walk[w] = false;
                            }
                            return Err(RouteError::WrongHca {
                                switch: s,
                                hca: h,
                                port,
                            });
                        }
                        End::Switch { switch, .. } => s = switch,
                    }
                }
                for &w in &walk {
                    on_walk[w] = false;
                    delivers[w] = true;
                }
            }
        }
        Ok(())
    }

    /// The minimum-hop routes (see [`Topology::routes`]), whatever tables are set.
    pub fn min_hop_routes(&self) -> Result<Vec<Vec<u8>>, TopologyError> {
        let ns = self.switches.len();
        let mut lft = vec![vec![0u8; self.hcas.len()]; ns];
        // Switch-to-switch adjacency: (port, neighbour switch).
        let adj: Vec<Vec<(u8, usize)>> = (0..ns)
            .map(|s| {
                self.switch_port_link[s]
                    .iter()
                    .enumerate()
                    .filter_map(|(p, l)| {
                        let port = p as u8 + 1;
                        match self.peer((*l)?, End::Switch { switch: s, port }) {
                            End::Switch { switch, .. } => Some((port, switch)),
                            End::Hca { .. } => None,
                        }
                    })
                    .collect()
            })
            .collect();
        let mut dist = vec![u32::MAX; ns];
        let mut queue = VecDeque::new();
        for h in 0..self.hcas.len() {
            let lid = self.hca_lid(h);
            let End::Switch { switch: leaf, port } =
                self.peer(self.hca_link[h], End::Hca { hca: h })
            else {
                // An HCA wired straight to an HCA: no switch can reach it.
                return Err(TopologyError::Unreachable {
                    hca: self.hcas[h].name.clone(),
                    switch: self.switches[0].name.clone(),
                });
            };
            dist.fill(u32::MAX);
            dist[leaf] = 0;
            queue.clear();
            queue.push_back(leaf);
            while let Some(s) = queue.pop_front() {
                for &(_, n) in &adj[s] {
                    if dist[n] == u32::MAX {
                        dist[n] = dist[s] + 1;
                        queue.push_back(n);
                    }
                }
            }
            for (s, table) in lft.iter_mut().enumerate() {
                if s == leaf {
                    table[h] = port;
                    continue;
                }
                if dist[s] == u32::MAX {
                    return Err(TopologyError::Unreachable {
                        hca: self.hcas[h].name.clone(),
                        switch: self.switches[s].name.clone(),
                    });
                }
                // Ports are visited in increasing order, so the candidates are sorted.
                let candidates = adj[s].iter().filter(|&&(_, n)| dist[n] + 1 == dist[s]);
                let count = candidates.clone().count();
                let (p, _) = candidates
                    .clone()
                    .nth(usize::from(lid) % count)
                    .expect("a switch at distance d > 0 has a neighbour at d - 1");
                table[h] = *p;
            }
        }
        Ok(lft)
    }
}

/// Builds a two-level fat tree (folded Clos): `leaves` leaf switches with `hosts_per_leaf` HCAs each, and
/// `spines` spine switches; every leaf has `uplinks_per_spine` links to every spine. Leaf ports: hosts
/// first (1..=hosts_per_leaf), then uplinks grouped by spine. Spine ports: by leaf, then parallel link.
/// Names: `L<i>`, `S<j>`, `H<k>` (0-based), HCA `k` on leaf `k / hosts_per_leaf`.
pub fn fat_tree(
    leaves: usize,
    spines: usize,
    hosts_per_leaf: usize,
    uplinks_per_spine: usize,
    host_rate_mbps: u64,
    fabric_rate_mbps: u64,
    latency_ns: u64,
) -> Result<Topology, TopologyError> {
    let leaf_ports = hosts_per_leaf + spines * uplinks_per_spine;
    let spine_ports = leaves * uplinks_per_spine;
    for (what, n) in [("leaf", leaf_ports), ("spine", spine_ports)] {
        if n == 0 || n > usize::from(MAX_SWITCH_PORTS) {
            return Err(TopologyError::BadGenerator(format!(
                "fat tree: a {what} switch would need {n} ports; a switch has 1 to {MAX_SWITCH_PORTS}"
            )));
        }
    }
    if leaves == 0 || hosts_per_leaf == 0 {
        return Err(TopologyError::BadGenerator(
            "fat tree: needs at least one leaf with one host".into(),
        ));
    }
    let mut switches: Vec<SwitchNode> = (0..leaves)
        .map(|i| SwitchNode {
            name: format!("L{i}"),
            ports: leaf_ports as u8,
        })
        .collect();
    switches.extend((0..spines).map(|j| SwitchNode {
        name: format!("S{j}"),
        ports: spine_ports as u8,
    }));
    let hcas = (0..leaves * hosts_per_leaf)
        .map(|k| HcaNode {
            name: format!("H{k}"),
        })
        .collect();
    let mut links = Vec::new();
    for k in 0..leaves * hosts_per_leaf {
        links.push(Link {
            a: End::Hca { hca: k },
            b: End::Switch {
                switch: k / hosts_per_leaf,
                port: (k % hosts_per_leaf + 1) as u8,
            },
            rate_mbps: host_rate_mbps,
            latency_ns,
        });
    }
    for i in 0..leaves {
        for j in 0..spines {
            for u in 0..uplinks_per_spine {
                links.push(Link {
                    a: End::Switch {
                        switch: i,
                        port: (hosts_per_leaf + j * uplinks_per_spine + u + 1) as u8,
                    },
                    b: End::Switch {
                        switch: leaves + j,
                        port: (i * uplinks_per_spine + u + 1) as u8,
                    },
                    rate_mbps: fabric_rate_mbps,
                    latency_ns,
                });
            }
        }
    }
    Topology::new(switches, hcas, links)
}

/// Builds a chain of `n` switches (parking-lot scenarios): switch `i` has `hosts_per_switch` HCAs on ports
/// 1.., then a port to switch `i-1` and a port to switch `i+1` where they exist. Names `SW<i>`, `H<k>`.
pub fn chain(
    n: usize,
    hosts_per_switch: usize,
    host_rate_mbps: u64,
    trunk_rate_mbps: u64,
    latency_ns: u64,
) -> Result<Topology, TopologyError> {
    let ports = hosts_per_switch + 2;
    if n == 0 || hosts_per_switch == 0 || ports > usize::from(MAX_SWITCH_PORTS) {
        return Err(TopologyError::BadGenerator(format!(
            "chain: {n} switches of {hosts_per_switch} hosts; needs at least 1 of each and at most {} hosts \
             per switch",
            MAX_SWITCH_PORTS - 2
        )));
    }
    let switches = (0..n)
        .map(|i| SwitchNode {
            name: format!("SW{i}"),
            ports: ports as u8,
        })
        .collect();
    let hcas = (0..n * hosts_per_switch)
        .map(|k| HcaNode {
            name: format!("H{k}"),
        })
        .collect();
    let mut links: Vec<Link> = (0..n * hosts_per_switch)
        .map(|k| Link {
            a: End::Hca { hca: k },
            b: End::Switch {
                switch: k / hosts_per_switch,
                port: (k % hosts_per_switch + 1) as u8,
            },
            rate_mbps: host_rate_mbps,
            latency_ns,
        })
        .collect();
    for i in 1..n {
        links.push(Link {
            a: End::Switch {
                switch: i - 1,
                port: (hosts_per_switch + 2) as u8,
            },
            b: End::Switch {
                switch: i,
                port: (hosts_per_switch + 1) as u8,
            },
            rate_mbps: trunk_rate_mbps,
            latency_ns,
        });
    }
    Topology::new(switches, hcas, links)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QDR: u64 = 32_000;

    fn sw(name: &str, ports: u8) -> SwitchNode {
        SwitchNode {
            name: name.into(),
            ports,
        }
    }

    fn hca(name: &str) -> HcaNode {
        HcaNode { name: name.into() }
    }

    fn link(a: End, b: End) -> Link {
        Link {
            a,
            b,
            rate_mbps: QDR,
            latency_ns: 100,
        }
    }

    fn sp(switch: usize, port: u8) -> End {
        End::Switch { switch, port }
    }

    fn h(hca: usize) -> End {
        End::Hca { hca }
    }

    /// Gran & Reinemo's testbed: H1-H3 on S1, H4-H7 on S2, S1-S2 trunk.
    fn gran() -> Topology {
        let switches = vec![sw("S1", 8), sw("S2", 8)];
        let hcas = (1..=7).map(|i| hca(&format!("H{i}"))).collect();
        let mut links = vec![
            link(h(0), sp(0, 1)),
            link(h(1), sp(0, 2)),
            link(h(2), sp(0, 3)),
        ];
        links.extend((3..7).map(|k| link(h(k), sp(1, (k - 2) as u8))));
        links.push(link(sp(0, 8), sp(1, 8)));
        Topology::new(switches, hcas, links).unwrap()
    }

    #[test]
    fn two_switch_routes() {
        let t = gran();
        let lft = t.routes().unwrap();
        // S1: H1-H3 on ports 1-3, the rest over the trunk (port 8).
        assert_eq!(lft[0], vec![1, 2, 3, 8, 8, 8, 8]);
        assert_eq!(lft[1], vec![8, 8, 8, 1, 2, 3, 4]);
        assert_eq!(t.hca_lid(0), 1);
        assert_eq!(t.hca_of_lid(7), Some(6));
        assert_eq!(t.hca_of_lid(8), None);
        assert_eq!(t.hca_of_lid(0), None);
    }

    #[test]
    fn fat_tree_routes_are_up_down_and_spread() {
        // 4 leaves x 2 hosts, 2 spines, 1 uplink per spine: leaf ports 1-2 hosts, 3 -> S0, 4 -> S1.
        let t = fat_tree(4, 2, 2, 1, QDR, QDR, 100).unwrap();
        let lft = t.routes().unwrap();
        for (leaf, table) in lft.iter().enumerate().take(4) {
            for (k, &port) in table.iter().enumerate() {
                if k / 2 == leaf {
                    assert_eq!(port, (k % 2 + 1) as u8, "local host");
                } else {
                    // Up to spine lid % 2: LID k + 1.
                    assert_eq!(port, 3 + ((k as u8 + 1) % 2), "leaf {leaf} to H{k}");
                }
            }
        }
        for table in &lft[4..] {
            for (k, &port) in table.iter().enumerate() {
                assert_eq!(port, (k / 2 + 1) as u8, "spine down to the host's leaf");
            }
        }
    }

    #[test]
    fn the_648_port_clos_builds() {
        // 36 leaves with 18 hosts and 18 uplinks (one per spine), 18 spines of 36 ports.
        let t = fat_tree(36, 18, 18, 1, QDR, QDR, 100).unwrap();
        assert_eq!(t.hcas.len(), 648);
        assert_eq!(t.switches.len(), 54);
        assert!(t.switches.iter().all(|s| s.ports == 36));
        let lft = t.routes().unwrap();
        // Every spine carries the same number of destinations from each leaf (spreading is even).
        let mut per_spine = [0usize; 18];
        for (k, &p) in lft[0].iter().enumerate() {
            if k >= 18 {
                per_spine[usize::from(p) - 19] += 1;
            }
        }
        assert!(per_spine.iter().all(|&n| n == 630 / 18), "{per_spine:?}");
    }

    #[test]
    fn chain_routes() {
        let t = chain(3, 2, QDR, QDR, 50).unwrap();
        let lft = t.routes().unwrap();
        // SW1 (middle): its hosts H2, H3 on ports 1-2; H0, H1 left (port 3); H4, H5 right (port 4).
        assert_eq!(lft[1], vec![3, 3, 1, 2, 4, 4]);
    }

    #[test]
    fn bad_topologies_name_what_is_wrong() {
        let e = |sws, hcas, links| Topology::new(sws, hcas, links).unwrap_err().to_string();
        let m = e(
            vec![sw("S1", 4)],
            vec![hca("H1")],
            vec![link(h(0), sp(0, 5))],
        );
        assert_eq!(m, "link 0: S1:5 does not exist");
        let m = e(
            vec![sw("S1", 4)],
            vec![hca("H1")],
            vec![link(h(0), sp(1, 1))],
        );
        assert_eq!(m, "link 0: switch #1 does not exist");
        let m = e(
            vec![sw("S1", 4)],
            vec![hca("H1"), hca("H2")],
            vec![link(h(0), sp(0, 1)), link(h(1), sp(0, 1))],
        );
        assert_eq!(m, "link 1: S1:1 is already connected by link 0");
        let m = e(
            vec![sw("S1", 4)],
            vec![hca("H1"), hca("H2")],
            vec![link(h(0), sp(0, 1))],
        );
        assert_eq!(m, "HCA \"H2\" has no link");
        let m = e(vec![sw("X", 4)], vec![hca("X")], vec![]);
        assert_eq!(m, "node name \"X\" is used twice");
        let m = e(vec![sw("S1", 65)], vec![hca("H1")], vec![]);
        assert!(m.contains("65 ports"), "{m}");
        let m = e(
            vec![sw("S1", 4), sw("S2", 4)],
            vec![hca("H1"), hca("H2")],
            vec![link(h(0), sp(0, 1)), link(h(1), sp(1, 1))],
        );
        assert_eq!(m, "HCA \"H1\" cannot be reached from switch \"S2\"");
        let mut zero = link(h(0), sp(0, 1));
        zero.rate_mbps = 0;
        let m = e(vec![sw("S1", 4)], vec![hca("H1")], vec![zero]);
        assert_eq!(m, "link 0: rate must be above 0 Mbit/s");
        let m = e(
            vec![sw("S1", 4)],
            vec![hca("H1")],
            vec![link(sp(0, 1), sp(0, 1))],
        );
        assert_eq!(m, "link 0: connects S1:1 to itself");
        assert_eq!(e(vec![], vec![], vec![]), TopologyError::Empty.to_string());
        assert!(fat_tree(2, 40, 30, 1, QDR, QDR, 1).is_err());
        assert!(chain(0, 1, QDR, QDR, 1).is_err());
    }
}
