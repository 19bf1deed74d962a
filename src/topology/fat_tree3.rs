//! Three-level fat trees (k-ary, as built from radix-k switches: pods of edge and aggregation switches under
//! a core layer) with destination-mod-k routes.
//!
//! With radix `k` (even) and `pods` pods (at most `k`; `k` gives the full tree): each pod has `k/2` edge
//! and `k/2` aggregation switches; every edge switch has `k/2` hosts and one link to every aggregation
//! switch of its pod; aggregation switch `a` of every pod has one link to each of the `k/2` core switches of
//! group `a`, so there are `(k/2)^2` cores, each with one link to every pod. Radix 36 and 36 pods give the
//! 11,664-host fabric of 1,620 36-port switches (648 edge, 648 aggregation, 324 core).
//!
//! Ports: an edge switch has its hosts on ports `1..=k/2` and its uplinks to aggregation switches
//! `0..k/2` on ports `k/2+1..=k`; an aggregation switch has its edge switches on `1..=k/2` and its cores
//! `0..k/2` of its group on `k/2+1..=k`; a core has pod `p` on port `p+1`. Names: `E<pod>_<i>`,
//! `A<pod>_<i>`, `C<group>_<i>`, `H<k>` (0-based), host `d` on edge `(d / (k/2)) mod (k/2)` of pod
//! `d / (k/2)^2`.
//!
//! Routes (destination-mod-k, as Zahavi's D-mod-K and opensm's fat-tree engine spread them): towards host
//! `d`, an edge switch not holding it goes up to aggregation switch `d mod (k/2)`, an aggregation switch
//! outside `d`'s pod goes up to core `(d / (k/2)) mod (k/2)` of its group, and every switch below a common
//! ancestor goes down the one way there is. Minimum-hop, up/down (so free of credit loops), and every core
//! carries the same number of destinations. The generic minimum-hop rule of [`super::Topology::routes`]
//! (`lid mod candidates` at every level) would pick the same index at both upward levels and use only the
//! `k/2` cores `(a, a)`: a tree of three levels needs each level to spread on its own digit of `d`.

use super::{End, HcaNode, Link, SwitchNode, Topology, TopologyError, MAX_SWITCH_PORTS};

/// The shape of a three-level fat tree; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatTree3 {
    /// Ports per switch (even, 2..=64).
    pub radix: usize,
    /// Pods (1..=radix).
    pub pods: usize,
}

impl FatTree3 {
    /// Half the radix: hosts per edge switch, edge and aggregation switches per pod, cores per group.
    pub fn half(self) -> usize {
        self.radix / 2
    }

    /// Number of HCAs.
    pub fn hosts(self) -> usize {
        self.pods * self.half() * self.half()
    }

    /// Number of switches: edge and aggregation switches of every pod, then the cores.
    pub fn switches(self) -> usize {
        2 * self.pods * self.half() + self.half() * self.half()
    }

    fn check(self) -> Result<(), TopologyError> {
        let bad = |m: String| Err(TopologyError::BadGenerator(format!("fat_tree3: {m}")));
        if self.radix < 2
            || !self.radix.is_multiple_of(2)
            || self.radix > usize::from(MAX_SWITCH_PORTS)
        {
            return bad(format!(
                "radix {} is not an even number of ports from 2 to {MAX_SWITCH_PORTS}",
                self.radix
            ));
        }
        if self.pods == 0 || self.pods > self.radix {
            return bad(format!(
                "{} pods; a core switch of radix {} has room for 1 to {} pods",
                self.pods, self.radix, self.radix
            ));
        }
        Ok(())
    }

    fn edge(self, pod: usize, i: usize) -> usize {
        pod * self.half() + i
    }

    fn agg(self, pod: usize, i: usize) -> usize {
        (self.pods + pod) * self.half() + i
    }

    fn core(self, group: usize, i: usize) -> usize {
        2 * self.pods * self.half() + group * self.half() + i
    }

    /// The destination-mod-k tables: per switch, the output port for each HCA.
    fn routes(self) -> Vec<Vec<u8>> {
        let h = self.half();
        let port = |p: usize| p as u8;
        let mut lft = vec![vec![0u8; self.hosts()]; self.switches()];
        // `d` is a destination: it indexes every switch's table, not one list.
        #[allow(clippy::needless_range_loop)]
        for d in 0..self.hosts() {
            let (pod, edge, pos) = (d / (h * h), (d / h) % h, d % h);
            let (up_agg, up_core) = (d % h, (d / h) % h);
            for p in 0..self.pods {
                for i in 0..h {
                    lft[self.edge(p, i)][d] = if (p, i) == (pod, edge) {
                        port(pos + 1)
                    } else {
                        port(h + up_agg + 1)
                    };
                    lft[self.agg(p, i)][d] = if p == pod {
                        port(edge + 1)
                    } else {
                        port(h + up_core + 1)
                    };
                }
            }
            for g in 0..h {
                for i in 0..h {
                    lft[self.core(g, i)][d] = port(pod + 1);
                }
            }
        }
        lft
    }
}

/// Builds the three-level fat tree `shape` with its destination-mod-k routes; see the module documentation.
/// Host links run at `host_rate_mbps`, switch-to-switch links at `fabric_rate_mbps`.
pub fn fat_tree3(
    shape: FatTree3,
    host_rate_mbps: u64,
    fabric_rate_mbps: u64,
    latency_ns: u64,
) -> Result<Topology, TopologyError> {
    shape.check()?;
    let h = shape.half();
    let ports = shape.radix as u8;
    let mut switches = Vec::with_capacity(shape.switches());
    for (kind, ports) in [("E", ports), ("A", ports)] {
        for p in 0..shape.pods {
            switches.extend((0..h).map(|i| SwitchNode {
                name: format!("{kind}{p}_{i}"),
                ports,
            }));
        }
    }
    for g in 0..h {
        switches.extend((0..h).map(|i| SwitchNode {
            name: format!("C{g}_{i}"),
            ports: shape.pods as u8,
        }));
    }
    let hcas = (0..shape.hosts())
        .map(|k| HcaNode {
            name: format!("H{k}"),
        })
        .collect();
    let sw = |switch: usize, port: usize| End::Switch {
        switch,
        port: port as u8,
    };
    let link = |a, b, rate_mbps| Link {
        a,
        b,
        rate_mbps,
        latency_ns,
    };
    let mut links = Vec::with_capacity(shape.hosts() * 3);
    for d in 0..shape.hosts() {
        let (pod, edge, pos) = (d / (h * h), (d / h) % h, d % h);
        links.push(link(
            End::Hca { hca: d },
            sw(shape.edge(pod, edge), pos + 1),
            host_rate_mbps,
        ));
    }
    for p in 0..shape.pods {
        for e in 0..h {
            for a in 0..h {
                links.push(link(
                    sw(shape.edge(p, e), h + a + 1),
                    sw(shape.agg(p, a), e + 1),
                    fabric_rate_mbps,
                ));
            }
        }
        for a in 0..h {
            for c in 0..h {
                links.push(link(
                    sw(shape.agg(p, a), h + c + 1),
                    sw(shape.core(a, c), p + 1),
                    fabric_rate_mbps,
                ));
            }
        }
    }
    let topo = Topology::structure(switches, hcas, links)?;
    let routes = shape.routes();
    topo.with_routes(routes)
        .map_err(|e| TopologyError::BadGenerator(format!("fat_tree3: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const QDR: u64 = 32_000;

    #[test]
    fn the_full_size_tree_has_the_stated_counts() {
        let s = FatTree3 {
            radix: 36,
            pods: 36,
        };
        assert_eq!((s.hosts(), s.switches()), (11_664, 1_620));
    }

    #[test]
    fn routes_are_minimum_hop_and_use_every_core_evenly() {
        let shape = FatTree3 { radix: 6, pods: 6 };
        let t = fat_tree3(shape, QDR, QDR, 100).unwrap();
        let lfts = t.routes().unwrap();
        let h = shape.half();
        // Hops from each host's edge switch to each destination: 0 (same edge), 2 (same pod), 4 (otherwise).
        let mut through_core = vec![0usize; shape.switches()];
        // `d` is a destination: it indexes every switch's table.
        #[allow(clippy::needless_range_loop)]
        for s in 0..shape.hosts() {
            for d in 0..shape.hosts() {
                let start = shape.edge(s / (h * h), (s / h) % h);
                let (mut at, mut hops) = (start, 0);
                loop {
                    let port = lfts[at][d];
                    let l = t.switch_port_link[at][usize::from(port) - 1].unwrap();
                    match t.peer(l, End::Switch { switch: at, port }) {
                        End::Hca { hca } => {
                            assert_eq!(hca, d);
                            break;
                        }
                        End::Switch { switch, .. } => {
                            if switch >= shape.core(0, 0) {
                                through_core[switch] += 1;
                            }
                            at = switch;
                            hops += 1;
                        }
                    }
                }
                let want = if s / h == d / h {
                    0
                } else if s / (h * h) == d / (h * h) {
                    2
                } else {
                    4
                };
                assert_eq!(hops, want, "{s} -> {d}");
            }
        }
        let cores = &through_core[shape.core(0, 0)..];
        assert!(cores.iter().all(|&n| n == cores[0] && n > 0), "{cores:?}");
    }

    #[test]
    fn bad_shapes_are_refused() {
        for (radix, pods) in [(5, 5), (0, 1), (66, 2), (8, 9), (8, 0)] {
            assert!(fat_tree3(FatTree3 { radix, pods }, QDR, QDR, 1).is_err());
        }
    }

    #[test]
    fn a_partial_tree_has_short_cores() {
        let t = fat_tree3(FatTree3 { radix: 8, pods: 3 }, QDR, QDR, 1).unwrap();
        assert_eq!(t.hcas.len(), 48);
        assert_eq!(t.switches.last().unwrap().ports, 3);
    }
}
