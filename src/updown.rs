//! Up/down routing: forwarding tables free of credit loops on any topology, rings and meshes included.
//!
//! The switches are ranked by their hop distance from the root switches; a switch-to-switch link leads
//! "up" towards the lower (rank, switch index) and "down" towards the higher. A route is legal when it never
//! goes up after going down. Because (rank, index) orders the switches totally, every channel dependency
//! of legal routes either keeps going up or turns down once, and no cycle of dependencies can close: the
//! channel dependency graph is acyclic (Schroeder et al.'s Autonet argument, the rule opensm's `updn`
//! engine follows).
//!
//! The tables are destination-based (one port per switch and destination), so the choice at one switch
//! must fit every packet that reaches it: a switch from which the destination's switch can be reached by
//! down links alone takes the shortest such path (a packet that came down to it can only go on down);
//! any other switch goes up, along the shortest up-then-down route. Where several ports are equally short,
//! the port is chosen by `lid mod candidates` over the candidates sorted by port number, as the minimum-hop
//! routes spread them. On a tree with its top as the root these are the minimum-hop routes.

use std::collections::VecDeque;

use crate::topology::{End, Topology};

/// The default roots when none are given: the switches farthest (in switch hops) from every switch with
/// an HCA on it, the spines of a fat tree or the core of a three-level tree. When every switch has an HCA
/// (a ring, a mesh), the one switch with the smallest `key` (its GUID where known, else its index).
pub fn default_roots(topo: &Topology, key: &[u64]) -> Vec<usize> {
    let ns = topo.switches.len();
    let adj = switch_adjacency(topo);
    let mut dist = vec![u32::MAX; ns];
    let mut queue = VecDeque::new();
    for h in 0..topo.hcas.len() {
        if let End::Switch { switch, .. } = topo.peer(topo.hca_link[h], End::Hca { hca: h }) {
            if dist[switch] != 0 {
                dist[switch] = 0;
                queue.push_back(switch);
            }
        }
    }
    while let Some(s) = queue.pop_front() {
        for &(_, n) in &adj[s] {
            if dist[n] == u32::MAX {
                dist[n] = dist[s] + 1;
                queue.push_back(n);
            }
        }
    }
    let far = dist.iter().copied().filter(|&d| d != u32::MAX).max();
    match far {
        Some(d) if d > 0 => (0..ns).filter(|&s| dist[s] == d).collect(),
        _ => (0..ns)
            .min_by_key(|&s| (key.get(s).copied().unwrap_or(s as u64), s))
            .into_iter()
            .collect(),
    }
}

/// Per switch, its switch neighbours as (port, switch), by port.
fn switch_adjacency(topo: &Topology) -> Vec<Vec<(u8, usize)>> {
    (0..topo.switches.len())
        .map(|s| {
            topo.switch_port_link[s]
                .iter()
                .enumerate()
                .filter_map(|(p, l)| {
                    let port = p as u8 + 1;
                    match topo.peer((*l)?, End::Switch { switch: s, port }) {
                        End::Switch { switch, .. } => Some((port, switch)),
                        End::Hca { .. } => None,
                    }
                })
                .collect()
        })
        .collect()
}

/// Up/down forwarding tables of `topo` from `roots` (switch indices, at least one), in the form
/// [`Topology::routes`] returns. An error names a switch and HCA with no legal route between them (possible
/// only with several roots, when a root cannot reach a destination by going down).
pub fn routes(topo: &Topology, roots: &[usize]) -> Result<Vec<Vec<u8>>, String> {
    let ns = topo.switches.len();
    if roots.is_empty() {
        return Err("up/down routing needs at least one root switch".into());
    }
    let adj = switch_adjacency(topo);
    // Rank: hops from the nearest root.
    let mut rank = vec![u32::MAX; ns];
    let mut queue = VecDeque::new();
    for &r in roots {
        if rank[r] != 0 {
            rank[r] = 0;
            queue.push_back(r);
        }
    }
    while let Some(s) = queue.pop_front() {
        for &(_, n) in &adj[s] {
            if rank[n] == u32::MAX {
                rank[n] = rank[s] + 1;
                queue.push_back(n);
            }
        }
    }
    if let Some(s) = (0..ns).find(|&s| rank[s] == u32::MAX) {
        return Err(format!(
            "up/down routing: switch {:?} is not connected to a root",
            topo.switches[s].name
        ));
    }
    let key = |s: usize| (rank[s], s);
    // Switches from the top down: a switch's up neighbours come before it.
    let mut order: Vec<usize> = (0..ns).collect();
    order.sort_unstable_by_key(|&s| key(s));
    let mut lft = vec![vec![0u8; topo.hcas.len()]; ns];
    let mut down = vec![u32::MAX; ns];
    let mut len = vec![u32::MAX; ns];
    // `h` is a destination: it indexes every switch's table, not one list.
    #[allow(clippy::needless_range_loop)]
    for h in 0..topo.hcas.len() {
        let lid = usize::from(topo.hca_lid(h));
        let End::Switch { switch: leaf, port } = topo.peer(topo.hca_link[h], End::Hca { hca: h })
        else {
            return Err(format!("HCA {:?} is not on a switch", topo.hcas[h].name));
        };
        // Shortest down-only distance to the leaf: a breadth-first search up from it.
        down.fill(u32::MAX);
        down[leaf] = 0;
        queue.clear();
        queue.push_back(leaf);
        while let Some(n) = queue.pop_front() {
            for &(_, s) in &adj[n] {
                if key(s) < key(n) && down[s] == u32::MAX {
                    down[s] = down[n] + 1;
                    queue.push_back(s);
                }
            }
        }
        // Route lengths: down-only where possible, else one hop up plus the up neighbour's route.
        for &s in &order {
            len[s] = if down[s] != u32::MAX {
                down[s]
            } else {
                adj[s]
                    .iter()
                    .filter(|&&(_, n)| key(n) < key(s) && len[n] != u32::MAX)
                    .map(|&(_, n)| len[n] + 1)
                    .min()
                    .unwrap_or(u32::MAX)
            };
        }
        for s in 0..ns {
            if s == leaf {
                lft[s][h] = port;
                continue;
            }
            let candidates: Vec<u8> = if down[s] != u32::MAX {
                adj[s]
                    .iter()
                    .filter(|&&(_, n)| key(n) > key(s) && down[n].checked_add(1) == Some(down[s]))
                    .map(|&(p, _)| p)
                    .collect()
            } else {
                adj[s]
                    .iter()
                    .filter(|&&(_, n)| {
                        key(n) < key(s)
                            && len[s] != u32::MAX
                            && len[n].checked_add(1) == Some(len[s])
                    })
                    .map(|&(p, _)| p)
                    .collect()
            };
            if candidates.is_empty() {
                return Err(format!(
                    "up/down routing: no route from switch {:?} to HCA {:?} that never goes up after going \
                     down (choose other roots)",
                    topo.switches[s].name, topo.hcas[h].name
                ));
            }
            lft[s][h] = candidates[lid % candidates.len()];
        }
    }
    Ok(lft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{HcaNode, Link, SwitchNode};

    fn link(a: End, b: End) -> Link {
        Link {
            a,
            b,
            rate_mbps: 32_000,
            latency_ns: 100,
        }
    }

    fn sw(switch: usize, port: u8) -> End {
        End::Switch { switch, port }
    }

    /// A `w` x `h` mesh of switches (ports 1-4: east, west, south, north), one HCA on port 5 of each.
    fn mesh(w: usize, h: usize, torus: bool) -> Topology {
        let n = w * h;
        let switches = (0..n)
            .map(|i| SwitchNode {
                name: format!("M{i}"),
                ports: 5,
            })
            .collect();
        let hcas = (0..n)
            .map(|i| HcaNode {
                name: format!("H{i}"),
            })
            .collect();
        let mut links = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                if x + 1 < w || (torus && w > 2) {
                    links.push(link(sw(i, 1), sw(y * w + (x + 1) % w, 2)));
                }
                if y + 1 < h || (torus && h > 2) {
                    links.push(link(sw(i, 3), sw(((y + 1) % h) * w + x, 4)));
                }
                links.push(link(End::Hca { hca: i }, sw(i, 5)));
            }
        }
        Topology::new(switches, hcas, links).unwrap()
    }

    #[test]
    fn meshes_and_tori_route_without_credit_loops() {
        for (w, h, torus) in [(3, 3, false), (4, 3, false), (3, 3, true), (4, 4, true)] {
            let t = mesh(w, h, torus);
            let roots = default_roots(&t, &[]);
            assert_eq!(roots, vec![0], "every switch has a host: the first");
            let lft = routes(&t, &roots).unwrap();
            assert_eq!(crate::credit_loop::find(&t, &lft), None, "{w}x{h}");
            t.check_routes(&lft).unwrap();
        }
        // The torus under minimum-hop routes loops; under up/down it does not.
        let t = mesh(4, 4, true);
        assert!(crate::credit_loop::find(&t, &t.routes().unwrap()).is_some());
    }

    #[test]
    fn on_a_fat_tree_the_roots_are_the_spines_and_the_routes_are_min_hop() {
        let t = crate::topology::fat_tree(4, 3, 2, 2, 32_000, 32_000, 100).unwrap();
        let roots = default_roots(&t, &[]);
        assert_eq!(roots, vec![4, 5, 6]);
        assert_eq!(routes(&t, &roots).unwrap(), t.routes().unwrap());
        let ch = crate::topology::chain(4, 2, 32_000, 32_000, 100).unwrap();
        let lft = routes(&ch, &default_roots(&ch, &[])).unwrap();
        assert_eq!(lft, ch.routes().unwrap(), "a chain is a tree");
    }

    #[test]
    fn a_root_that_cannot_reach_down_is_an_error() {
        // A ring of four with two opposite roots: M1 and M3 are below both, but M2 can reach M0 neither
        // down (through M1 or M3, then up) nor up (both neighbours rank below it).
        let t = mesh(4, 1, true);
        let e = routes(&t, &[0, 2]).unwrap_err();
        assert!(e.contains("\"M2\"") && e.contains("\"H0\""), "{e}");
        assert!(routes(&t, &[0]).is_ok());
        assert!(routes(&t, &[]).is_err());
    }
}
