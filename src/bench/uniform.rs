//! The `ft18x2-uniform` traffic: every node injects one-packet messages at a constant fraction of its link
//! rate ([`LOAD_NUM`] / [`LOAD_DEN`], BookSim2's 0.4), each to a uniformly random other node.
//!
//! The HCA adapter sends saturating flows; this driver turns each HCA's single flow into a constant-rate,
//! random-destination source from outside, between fabric steps: after the flow's `k`-th packet left, the
//! flow's `start` becomes the `k+1`-th injection time (`phase + (k+1) * gap`) and its destination a fresh
//! random node. It looks every [`Driver::chunk`] cycles, which is shorter than one packet's wire time, so a
//! flow cannot send twice between looks. A source that fell behind (no credit) sends as soon as it can,
//! as BookSim2's injection queue does. Random choices come from one seeded SplitMix64 stream per node, so
//! the traffic is the same for any stepping order.

use switch_asic::PacketDesc;

use crate::fabric::{link_rate, Fabric};
use crate::scenario::{Flow, Scenario};

/// Offered load as a fraction of the link rate: numerator.
pub const LOAD_NUM: u64 = 2;
/// Offered load as a fraction of the link rate: denominator.
pub const LOAD_DEN: u64 = 5;
/// Payload of every packet (one 2048-byte MTU packet per message).
pub const PAYLOAD: u16 = 2048;

/// SplitMix64 step: a small, well-mixed generator for seeded choices.
fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniformly random node other than `src` among `n` (`n >= 2`).
fn other(s: &mut u64, src: usize, n: usize) -> usize {
    let d = (splitmix(s) % (n as u64 - 1)) as usize;
    if d >= src {
        d + 1
    } else {
        d
    }
}

fn stream(seed: u64, node: usize) -> u64 {
    let mut s = seed ^ (node as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix(&mut s)
}

/// One flow per node with its first random destination (flow `i` from node `i`).
pub fn flows(n: usize, seed: u64) -> Vec<Flow> {
    (0..n)
        .map(|i| {
            let mut s = stream(seed, i);
            Flow {
                id: format!("U{i}"),
                src: i,
                dst: other(&mut s, i, n),
                sl: 0,
                mtu: PAYLOAD,
                message_bytes: u64::from(PAYLOAD),
                start_us: 0,
                stop_us: None,
                pattern: Default::default(),
            }
        })
        .collect()
}

/// Drives the flows of a `flows()` scenario. See the module documentation.
#[derive(Debug, Clone)]
pub struct Driver {
    rng: Vec<u64>,
    next: Vec<u64>,
    seen: Vec<u64>,
    gap: u64,
    chunk: u64,
}

impl Driver {
    /// A driver for `fab`, built from `sc` (whose flows came from [`flows`]); sets each flow's random phase.
    pub fn new(sc: &Scenario, fab: &mut Fabric) -> Self {
        let n = sc.topology.hcas.len();
        let l = &sc.topology.links[sc.topology.hca_link[0]];
        let r = link_rate(l.rate_mbps, sc.settings.clock_mhz).expect("a bench link rate converts");
        let wire = u64::from(
            PacketDesc::local(1, 2, 0, rtl_model::wire::bth::Opcode::RcSendOnly, PAYLOAD).wire_len,
        );
        let (num, den) = (u64::from(r.num), u64::from(r.den));
        let gap = (wire * den * LOAD_DEN).div_ceil(num * LOAD_NUM);
        let chunk = (wire * den / num / 2).max(1);
        let mut rng: Vec<u64> = (0..n).map(|i| stream(sc.seed, i)).collect();
        let mut next = Vec::with_capacity(n);
        for (i, s) in rng.iter_mut().enumerate() {
            // The first destination was drawn by `flows`; draw it again to keep the streams aligned.
            let _ = other(s, i, n);
            let phase = splitmix(s) % gap;
            next.push(phase);
            if let Some(f) = fab.hcas[i].flow_mut(0) {
                f.start = phase;
            }
        }
        Driver {
            rng,
            next,
            seen: vec![0; n],
            gap,
            chunk,
        }
    }

    /// Cycles between two looks at the sources.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Cycles between two injections of one node.
    pub fn gap(&self) -> u64 {
        self.gap
    }

    /// Steps `fab` to cycle `end`, rescheduling and retargeting every source that sent.
    pub fn run_until(&mut self, fab: &mut Fabric, end: u64) {
        let n = self.rng.len();
        while fab.now() < end {
            let t = (fab.now() + self.chunk).min(end);
            fab.run_until(t);
            for h in 0..n {
                let inj = fab.hcas[h].injected[h];
                if inj != self.seen[h] {
                    self.seen[h] = inj;
                    self.next[h] += self.gap;
                    let dst = other(&mut self.rng[h], h, n);
                    if let Some(f) = fab.hcas[h].flow_mut(0) {
                        f.start = self.next[h];
                        f.dlid = crate::topology::FIRST_HCA_LID + dst as u16;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_are_uniform_over_the_other_nodes() {
        let mut s = stream(7, 3);
        let mut hits = [0u32; 5];
        for _ in 0..50_000 {
            hits[other(&mut s, 3, 5)] += 1;
        }
        assert_eq!(hits[3], 0);
        // 12 500 expected per node; 4 standard deviations of a binomial(50 000, 1/4) is about 390.
        for (i, &h) in hits.iter().enumerate().filter(|&(i, _)| i != 3) {
            assert!(h.abs_diff(12_500) < 390, "node {i}: {h}");
        }
    }

    #[test]
    fn offered_load_is_the_configured_fraction() {
        let sc = super::super::scenario(super::super::BenchName::Ft18x2Uniform, 30);
        let mut fab = Fabric::new(&sc).unwrap();
        let mut d = Driver::new(&sc, &mut fab);
        // 4 bytes per cycle, 2074 wire bytes: 1296.25 cycles per packet at 0.4, rounded up.
        assert_eq!(d.gap(), 1297);
        assert!(d.chunk() * 2 <= 2074 / 4);
        d.run_until(&mut fab, 30_000);
        let sent: u64 = (0..324).map(|h| fab.hcas[h].injected[h]).sum();
        // 30 000 cycles / 1297 = 23.1 injection times per node; a node has 23 or 24 (by its phase) and sends
        // them all unless credit held it back, which 0.4 uniform load on a non-blocking tree does not do for
        // long; never more (the source is rate-limited).
        assert!((0..324).all(|h| fab.hcas[h].injected[h] <= 24));
        let per_node = sent as f64 / 324.0;
        assert!((22.5..=24.0).contains(&per_node), "{per_node}");
    }
}
