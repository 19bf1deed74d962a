//! The `ft18x2-uniform` traffic: every node injects one-packet messages at a constant fraction of its link
//! rate ([`LOAD_NUM`] / [`LOAD_DEN`], BookSim2's 0.4), each to a uniformly random other node.
//!
//! Each HCA's single flow is a saturating flow with a [`Retarget`]: after its `k`-th packet left, the flow's
//! `start` becomes the `k+1`-th injection time (`phase + (k+1) * gap`) and its destination a fresh random
//! node, inside the HCA's step, so the flow sleeps until its next injection. A source that fell behind (no
//! credit) sends as soon as it can, as BookSim2's injection queue does. Random choices come from one seeded
//! SplitMix64 stream per node, so the traffic is the same for any stepping order.
//!
//! Why inside the HCA: a driver doing this from outside, between calls of [`Fabric::run_until`] every half
//! packet time ([`Driver`], kept for the test that the two give the same traffic), makes each HCA load its
//! next packet right after a send and give it back when the driver moves its start, two steps a packet
//! that do nothing, and every call brings all 360 blocks to its end.

use switch_asic::PacketDesc;

use crate::fabric::hca::Retarget;
use crate::fabric::{link_rate, Fabric};
use crate::scenario::{Flow, Scenario};

/// Offered load as a fraction of the link rate: numerator.
pub const LOAD_NUM: u64 = 2;
/// Offered load as a fraction of the link rate: denominator.
pub const LOAD_DEN: u64 = 5;
/// Payload of every packet (one 2048-byte MTU packet per message).
pub const PAYLOAD: u16 = 2048;

fn stream(seed: u64, node: usize) -> u64 {
    let mut s = seed ^ (node as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    Retarget::splitmix(&mut s)
}

/// One flow per node with its first random destination (flow `i` from node `i`).
pub fn flows(n: usize, seed: u64) -> Vec<Flow> {
    (0..n)
        .map(|i| {
            let mut s = stream(seed, i);
            Flow {
                id: format!("U{i}"),
                src: i,
                dst: Retarget::other(&mut s, i, n),
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

/// Cycles between two injections of one node and half a packet's wire time, at the scenario's HCA link rate.
fn gap_and_chunk(sc: &Scenario) -> (u64, u64) {
    let l = &sc.topology.links[sc.topology.hca_link[0]];
    let r = link_rate(l.rate_mbps, sc.settings.clock_mhz).expect("a bench link rate converts");
    let wire = u64::from(
        PacketDesc::local(1, 2, 0, rtl_model::wire::bth::Opcode::RcSendOnly, PAYLOAD).wire_len,
    );
    let (num, den) = (u64::from(r.num), u64::from(r.den));
    let gap = (wire * den * LOAD_DEN).div_ceil(num * LOAD_NUM);
    (gap, (wire * den / num / 2).max(1))
}

/// Node `i`'s stream after its first destination (drawn by `flows`, drawn again to keep the streams aligned)
/// and its random phase in `0..gap`, with the phase.
fn phased_stream(seed: u64, i: usize, n: usize, gap: u64) -> (u64, u64) {
    let mut s = stream(seed, i);
    let _ = Retarget::other(&mut s, i, n);
    let phase = Retarget::splitmix(&mut s) % gap;
    (s, phase)
}

/// Gives every flow of a `flows()` scenario in `fab` its [`Retarget`] and random phase; returns the gap.
pub fn retarget(sc: &Scenario, fab: &mut Fabric) -> u64 {
    let n = sc.topology.hcas.len();
    let (gap, _) = gap_and_chunk(sc);
    for i in 0..n {
        let (s, phase) = phased_stream(sc.seed, i, n, gap);
        if let Some(f) = fab.hcas[i].flow_mut(0) {
            f.start = phase;
            f.retarget = Some(Retarget {
                rng: s,
                nodes: n,
                me: i,
                first_lid: crate::topology::FIRST_HCA_LID,
                gap,
                next: phase,
            });
        }
    }
    gap
}

/// Drives the flows of a `flows()` scenario from outside, as the bench did before [`retarget`] (the test's
/// reference).
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct Driver {
    rng: Vec<u64>,
    next: Vec<u64>,
    seen: Vec<u64>,
    gap: u64,
    chunk: u64,
}

#[cfg(test)]
impl Driver {
    /// A driver for `fab`, built from `sc` (whose flows came from [`flows`]); sets each flow's random phase.
    pub fn new(sc: &Scenario, fab: &mut Fabric) -> Self {
        let n = sc.topology.hcas.len();
        let (gap, chunk) = gap_and_chunk(sc);
        let (mut rng, mut next) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let (s, phase) = phased_stream(sc.seed, i, n, gap);
            rng.push(s);
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
                let inj = fab.hcas[h].per_flow[h].injected;
                if inj != self.seen[h] {
                    self.seen[h] = inj;
                    self.next[h] += self.gap;
                    let dst = Retarget::other(&mut self.rng[h], h, n);
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
            hits[Retarget::other(&mut s, 3, 5)] += 1;
        }
        assert_eq!(hits[3], 0);
        // 12 500 expected per node; 4 standard deviations of a binomial(50 000, 1/4) is about 390.
        for (i, &h) in hits.iter().enumerate().filter(|&(i, _)| i != 3) {
            assert!(h.abs_diff(12_500) < 390, "node {i}: {h}");
        }
    }

    /// The flows' own retargeting sends the same packets to the same places at the same cycles as the driver
    /// that retargeted them from outside between short runs: every HCA's injected and received counts and
    /// completion cycles, every switch port's counters (packets, bytes, XmitWait, ...) and the switch and HCA
    /// steps are equal after 30,000 cycles, and with fewer HCA steps (no packet loaded and given back).
    #[test]
    fn retargeting_flows_send_what_the_outside_driver_did() {
        let sc = super::super::scenario(super::super::BenchName::Ft18x2Uniform, 30);
        let mut a = Fabric::new(&sc).unwrap();
        let mut d = Driver::new(&sc, &mut a);
        d.run_until(&mut a, 30_000);
        let mut b = Fabric::new(&sc).unwrap();
        assert_eq!(retarget(&sc, &mut b), d.gap());
        b.run_until(30_000);
        assert_eq!(a.now(), b.now());
        let sent: u64 = (0..324).map(|h| b.hcas[h].per_flow[h].injected).sum();
        assert!(sent > 7000, "{sent} packets sent");
        for h in 0..324 {
            let (x, y) = (&a.hcas[h], &b.hcas[h]);
            // Injected, received, completions and the rest of what the HCA counts per flow.
            assert_eq!(x.per_flow, y.per_flow, "HCA {h} per-flow counts");
        }
        for (s, (x, y)) in a.switches.iter().zip(&b.switches).enumerate() {
            for p in 0..36 {
                assert_eq!(
                    x.port_counters(p),
                    y.port_counters(p),
                    "switch {s} port {p}"
                );
            }
        }
        let (wa, wb) = (a.step_work(), b.step_work());
        assert_eq!(wa.switch_steps, wb.switch_steps);
        assert_eq!(wa.wire_items, wb.wire_items);
        assert!(wb.hca_steps < wa.hca_steps * 4 / 5, "{wb:?} against {wa:?}");
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
        let sent: u64 = (0..324).map(|h| fab.hcas[h].per_flow[h].injected).sum();
        // 30 000 cycles / 1297 = 23.1 injection times per node; a node has 23 or 24 (by its phase) and sends
        // them all unless credit held it back, which 0.4 uniform load on a non-blocking tree does not do for
        // long; never more (the source is rate-limited).
        assert!((0..324).all(|h| fab.hcas[h].per_flow[h].injected <= 24));
        let per_node = sent as f64 / 324.0;
        assert!((22.5..=24.0).contains(&per_node), "{per_node}");
    }
}
