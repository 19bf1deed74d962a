//! Credit loops: a cycle in the channel dependency graph of a topology's routes.
//!
//! Credit-based flow control never drops a packet, so a packet holding buffer space in one channel (a link
//! in one direction) waits for credits of the next channel on its route. When these waits form a cycle, the
//! buffers along it can fill so that every packet in the cycle waits on the next one for ever: a deadlock
//! no congestion control resolves (Dally and Seitz's condition). The routes here are destination-based
//! (one output port per switch and destination LID, as a linear forwarding table holds them), so the graph
//! has an edge from channel `c` into switch `s` to channel `d` out of `s` whenever some destination's
//! packets arrive on `c` and leave on `d`. The check is conservative in one respect: it treats every
//! virtual lane as sharing the one set of routes, so a cycle is reported whatever the SL-to-VL mapping.

use std::fmt;

use crate::topology::{End, Topology};

/// A channel: link `link` in the direction that leaves `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel {
    /// Index into [`Topology::links`].
    pub link: usize,
    /// The end the channel's packets leave from.
    pub from: End,
    /// The end they arrive at.
    pub to: End,
}

/// A cycle of channel dependencies, in order: each channel's packets wait on the next one's credits, and
/// the last one's on the first's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditLoop {
    /// The channels, named `node:port->node:port`.
    pub channels: Vec<String>,
    /// The link of each channel (indices into [`Topology::links`]).
    pub links: Vec<usize>,
    /// The routing that gave the routes, as the message names it ("minimum-hop", "up/down", ...).
    pub routing: String,
}

impl fmt::Display for CreditLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "credit loop under the {} routes (a cyclic channel dependency, which can deadlock): {}",
            self.routing,
            self.channels.join(" then ")
        )?;
        if let Some(first) = self.channels.first() {
            write!(f, " then back to {first}")?;
        }
        Ok(())
    }
}

/// Names an end as a scenario's link ends do: `switch:port`, or the HCA's name.
pub fn end_name(topo: &Topology, end: End) -> String {
    match end {
        End::Switch { switch, port } => format!("{}:{port}", topo.switches[switch].name),
        End::Hca { hca } => topo.hcas[hca].name.clone(),
    }
}

/// Finds a cycle in the channel dependency graph of `lfts` (as [`Topology::routes`] returns them), or
/// `None` when the routes are free of credit loops. The cycle names the routing "minimum-hop"; a caller
/// that checks other routes sets [`CreditLoop::routing`]. Cost: one pass over every switch port per destination,
/// then a depth-first search over the channels.
pub fn find(topo: &Topology, lfts: &[Vec<u8>]) -> Option<CreditLoop> {
    // Channel 2 * link is a -> b, 2 * link + 1 is b -> a.
    let channel = |link: usize, from: End| -> usize {
        if topo.links[link].a == from {
            2 * link
        } else {
            2 * link + 1
        }
    };
    let n = 2 * topo.links.len();
    // Per channel into a switch, the output ports (bit `port - 1`) its packets go on to: at most 64 bits
    // whatever the number of destinations, so memory stays one word per channel.
    let mut next_ports = vec![0u64; n];
    for (s, (ports, table)) in topo.switch_port_link.iter().zip(lfts).enumerate() {
        for (h, &out_port) in table.iter().enumerate() {
            for (p, l) in ports.iter().enumerate() {
                let port = p as u8 + 1;
                let Some(l) = *l else { continue };
                if port == out_port {
                    continue;
                }
                let here = End::Switch { switch: s, port };
                let carries = match topo.peer(l, here) {
                    // Any HCA but the destination itself may send to it.
                    End::Hca { hca } => hca != h,
                    End::Switch {
                        switch: n,
                        port: np,
                    } => lfts[n][h] == np,
                };
                if carries {
                    next_ports[channel(l, topo.peer(l, here))] |= 1 << (out_port - 1);
                }
            }
        }
    }
    let edges: Vec<Vec<usize>> = (0..n)
        .map(|c| {
            let l = &topo.links[c / 2];
            let to = if c % 2 == 0 { l.b } else { l.a };
            let End::Switch { switch, .. } = to else {
                return Vec::new();
            };
            (0..64u8)
                .filter(|b| next_ports[c] >> b & 1 == 1)
                .filter_map(|b| {
                    let from = End::Switch {
                        switch,
                        port: b + 1,
                    };
                    topo.switch_port_link[switch][usize::from(b)].map(|out| channel(out, from))
                })
                .collect()
        })
        .collect();
    // Iterative depth-first search with three colours; a grey successor closes a cycle.
    let mut colour = vec![0u8; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if colour[root] != 0 {
            continue;
        }
        colour[root] = 1;
        stack.push((root, 0));
        while let Some(&mut (c, ref mut next)) = stack.last_mut() {
            if let Some(&d) = edges[c].get(*next) {
                *next += 1;
                match colour[d] {
                    0 => {
                        colour[d] = 1;
                        stack.push((d, 0));
                    }
                    1 => {
                        let start = stack
                            .iter()
                            .position(|&(x, _)| x == d)
                            .expect("a grey channel is on the stack");
                        let channels = stack[start..]
                            .iter()
                            .map(|&(x, _)| {
                                let link = x / 2;
                                let l = &topo.links[link];
                                let (from, to) = if x % 2 == 0 { (l.a, l.b) } else { (l.b, l.a) };
                                format!("{}->{}", end_name(topo, from), end_name(topo, to))
                            })
                            .collect();
                        let links = stack[start..].iter().map(|&(x, _)| x / 2).collect();
                        return Some(CreditLoop {
                            channels,
                            links,
                            routing: "minimum-hop".into(),
                        });
                    }
                    _ => {}
                }
            } else {
                colour[c] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// The routes of `topo` checked for credit loops: the error names the cycle.
pub fn check(topo: &Topology) -> Result<(), String> {
    let lfts = topo.routes().map_err(|e| e.to_string())?;
    match find(topo, &lfts) {
        Some(mut cycle) => {
            if topo.fixed_routes.is_some() {
                cycle.routing = "given".into();
            }
            Err(cycle.to_string())
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{HcaNode, Link, SwitchNode};

    fn sw(s: usize, port: u8) -> End {
        End::Switch { switch: s, port }
    }

    fn link(a: End, b: End) -> Link {
        Link {
            a,
            b,
            rate_mbps: 32_000,
            latency_ns: 100,
        }
    }

    /// `n` switches in a ring (port 1 to the next, port 2 to the previous), two HCAs on ports 3 and 4 of
    /// each, so destinations of both LID parities sit on every switch.
    fn ring(n: usize) -> Topology {
        let switches = (0..n)
            .map(|i| SwitchNode {
                name: format!("R{i}"),
                ports: 4,
            })
            .collect();
        let hcas = (0..2 * n)
            .map(|i| HcaNode {
                name: format!("H{i}"),
            })
            .collect();
        let mut links: Vec<Link> = (0..n).map(|i| link(sw(i, 1), sw((i + 1) % n, 2))).collect();
        for i in 0..2 * n {
            links.push(link(End::Hca { hca: i }, sw(i / 2, 3 + (i % 2) as u8)));
        }
        Topology::new(switches, hcas, links).unwrap()
    }

    #[test]
    fn a_ring_under_min_hop_has_a_credit_loop() {
        for n in [4, 5, 6] {
            let t = ring(n);
            let cycle = find(&t, &t.routes().unwrap()).expect("a ring's min-hop routes loop");
            assert!(cycle.channels.len() >= n, "{cycle}");
            // Every channel of the cycle is switch to switch, and consecutive channels meet at a switch.
            for (i, c) in cycle.channels.iter().enumerate() {
                let next = &cycle.channels[(i + 1) % cycle.channels.len()];
                let to_switch = c.split("->").nth(1).unwrap().split(':').next().unwrap();
                let from_switch = next.split("->").next().unwrap().split(':').next().unwrap();
                assert_eq!(to_switch, from_switch, "{cycle}");
            }
            assert!(check(&t).unwrap_err().contains("credit loop"));
        }
    }

    #[test]
    fn trees_and_chains_have_none() {
        let ft = crate::topology::fat_tree(4, 2, 3, 2, 32_000, 32_000, 100).unwrap();
        assert_eq!(check(&ft), Ok(()));
        let ch = crate::topology::chain(5, 2, 16_000, 32_000, 100).unwrap();
        assert_eq!(check(&ch), Ok(()));
        // A tree of three levels built by hand: root R, two children, two HCAs under each child.
        let switches = ["R", "A", "B"]
            .iter()
            .map(|n| SwitchNode {
                name: n.to_string(),
                ports: 4,
            })
            .collect();
        let hcas = (0..4)
            .map(|i| HcaNode {
                name: format!("H{i}"),
            })
            .collect();
        let links = vec![
            link(sw(0, 1), sw(1, 1)),
            link(sw(0, 2), sw(2, 1)),
            link(End::Hca { hca: 0 }, sw(1, 2)),
            link(End::Hca { hca: 1 }, sw(1, 3)),
            link(End::Hca { hca: 2 }, sw(2, 2)),
            link(End::Hca { hca: 3 }, sw(2, 3)),
        ];
        let t = Topology::new(switches, hcas, links).unwrap();
        assert_eq!(find(&t, &t.routes().unwrap()), None);
    }
}
