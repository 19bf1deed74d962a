//! The `summary.json` of a run: field order is the struct order and floats are rounded to three decimals, so
//! the same scenario gives byte-identical files.

use serde::Serialize;

use super::round3;
use crate::fabric::traffic::LatencyStats;
use crate::fabric::Fabric;
use crate::scenario::Scenario;

/// The whole summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Simulated time of the run (the drain after it excluded).
    pub sim_time_us: u64,
    /// Core cycles of the run.
    pub cycles: u64,
    /// Core clock.
    pub clock_mhz: u32,
    /// Per flow, in scenario order.
    pub flows: Vec<FlowSummary>,
    /// Per connected switch output port and VL.
    pub ports: Vec<PortSummary>,
    /// Integrity.
    pub invariants: Invariants,
    /// The scenario's warnings (values allowed but probably not meant); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One flow's figures over the run time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    /// Flow id.
    pub id: String,
    /// Source HCA name.
    pub src: String,
    /// Destination HCA name.
    pub dst: String,
    /// Payload throughput over the flow's active time (start to stop or end of run), Gbit/s; the time is at
    /// least what the source's link needs to carry the delivered bytes (bytes sent just before `stop_us`
    /// arrive after it), so the figure never exceeds the link rate.
    pub avg_gbps: f64,
    /// Payload bytes delivered during the run.
    pub delivered_bytes: u64,
    /// Packets delivered during the run.
    pub delivered_packets: u64,
    /// Packets received with FECN set.
    pub fecn_marked_rx: u64,
    /// Packets received with ECN CE set (RoCEv2 mode; 0 on IB links).
    pub ecn_marked_rx: u64,
    /// CNPs the destination sent for this flow (0 with `[hca_cc]` absent).
    pub cnp_sent: u64,
    /// CNPs (BECN) the source received for this flow.
    pub becn_rx: u64,
    /// ACKs the destination sent for this flow (`[settings] acks`); absent when 0.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub acks_sent: u64,
    /// ACKs the source received for this flow; absent when 0.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub acks_rx: u64,
    /// Message arrivals refused on a full send queue (patterned flows; see `max_queued_messages`).
    pub messages_refused: u64,
    /// Message completion latency (arrival to last byte in); `null` when no message completed.
    pub msg_latency_us: Option<LatencyStats>,
}

/// One switch output port-VL's counters over the run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortSummary {
    /// Switch name.
    pub switch: String,
    /// Port number (1-based, as the scenario names ports).
    pub port: u8,
    /// VL.
    pub vl: u8,
    /// Packets sent.
    pub xmit_packets: u64,
    /// Cycles in the congestion state.
    pub congested_cycles: u64,
    /// Packets marked with FECN.
    pub packets_marked: u64,
    /// Cycles with a packet queued that the credit could not cover.
    pub credit_wait_cycles: u64,
}

/// Integrity of the run, checked after the drain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invariants {
    /// Packets the HCAs injected (run and drain).
    pub packets_injected: u64,
    /// Packets whose tail reached their destination.
    pub packets_delivered: u64,
    /// Packets still on wires, in switches or arriving (0 when drained).
    pub packets_in_flight: u64,
    /// Packets injected and neither delivered nor in flight: injected minus delivered minus in flight, and
    /// once drained the sum over flows of each flow's shortfall (so a loss in one flow is not hidden by a
    /// duplicate in another).
    pub packets_lost: u64,
    /// Packets delivered more often than injected (the counterpart of `packets_lost`); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub packets_duplicated: u64,
    /// Credit blocks lost or gained over all link directions after the drain (computed whether or not the
    /// fabric drained; with packets still in flight it includes the blocks they hold).
    pub credits_leaked: u64,
    /// Of `credits_leaked`, the blocks gained (a sender holding more credit than the receiver's buffer has,
    /// or a buffer with more free blocks than it holds); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub credits_gained: u64,
    /// Drops, overflows, credit errors and refused hand-ins the blocks flagged.
    pub violations: u64,
    /// Packets whose ICRC their destination found wrong (a field the ICRC covers changed in flight);
    /// absent when 0.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub icrc_errors: u64,
    /// Data packets that reached their destination out of their flow's PSN order (a duplicate or a
    /// reordering); absent when 0.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub psn_order_errors: u64,
    /// The fabric emptied within the drain limit.
    pub drained: bool,
    /// Cycles of the drain and flow-control settling.
    pub drain_cycles: u64,
}

impl Invariants {
    /// What is broken, if anything.
    pub fn broken(&self) -> Option<String> {
        let mut v = Vec::new();
        if self.packets_lost != 0 {
            v.push(format!("{} packets lost", self.packets_lost));
        }
        if self.packets_duplicated != 0 {
            v.push(format!(
                "{} packets duplicated (delivered more often than injected)",
                self.packets_duplicated
            ));
        }
        if self.credits_leaked != 0 {
            if self.credits_gained != 0 {
                v.push(format!(
                    "{} credit blocks leaked ({} gained: credit returned for blocks never received or freed)",
                    self.credits_leaked, self.credits_gained
                ));
            } else {
                v.push(format!("{} credit blocks leaked", self.credits_leaked));
            }
        }
        if self.violations != 0 {
            v.push(format!("{} lossless violations flagged", self.violations));
        }
        if self.icrc_errors != 0 {
            v.push(format!(
                "{} packets failed their destination's ICRC check (a covered field changed in flight)",
                self.icrc_errors
            ));
        }
        if self.psn_order_errors != 0 {
            v.push(format!(
                "{} packets reached their destination out of PSN order (duplicated or reordered)",
                self.psn_order_errors
            ));
        }
        if !self.drained {
            v.push(format!(
                "{} packets still in flight after the drain limit (stuck, or settings.drain_limit_us too short)",
                self.packets_in_flight
            ));
        }
        (!v.is_empty()).then(|| v.join(", "))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The flows' figures; `delivered` holds each flow's payload bytes at the end of the run.
pub(super) fn flows(fab: &Fabric, sc: &Scenario, delivered: &[u64]) -> Vec<FlowSummary> {
    let names = &sc.topology.hcas;
    sc.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let rx = fab.hcas[f.dst].per_flow[i].rx;
            let avg = avg_gbps(sc, i, delivered[i]);
            FlowSummary {
                id: f.id.clone(),
                src: names[f.src].name.clone(),
                dst: names[f.dst].name.clone(),
                avg_gbps: round3(avg),
                delivered_bytes: delivered[i],
                delivered_packets: rx.packets,
                fecn_marked_rx: rx.fecn,
                ecn_marked_rx: rx.ecn_ce,
                cnp_sent: fab.hcas[f.dst].per_flow[i].cnp_sent,
                becn_rx: fab.hcas[f.src].per_flow[i].becn_rx,
                acks_sent: fab.hcas[f.dst].per_flow[i].acks_sent,
                acks_rx: fab.hcas[f.src].per_flow[i].acks_rx,
                messages_refused: fab.hcas[f.src]
                    .refused()
                    .find(|&(g, _)| g == i)
                    .map_or(0, |(_, n)| n),
                // Filled in by the run, which collects the latencies.
                msg_latency_us: None,
            }
        })
        .collect()
}

/// Flow `i`'s payload throughput in Gbit/s for `bytes` delivered: over its active time, or over the time its
/// source's link needs to carry them when that is longer.
pub(super) fn avg_gbps(sc: &Scenario, i: usize, bytes: u64) -> f64 {
    let f = &sc.flows[i];
    let end = f.stop_us.unwrap_or(sc.duration_us).min(sc.duration_us);
    let active_us = end.saturating_sub(f.start_us);
    if active_us == 0 {
        return 0.0;
    }
    let bits = bytes as f64 * 8.0;
    let link_mbps = sc.topology.links[sc.topology.hca_link[f.src]].rate_mbps;
    let carry_ns = bits * 1000.0 / link_mbps as f64;
    bits / (active_us as f64 * 1000.0).max(carry_ns)
}

/// Every connected switch output port-VL's counters now.
pub(super) fn ports(fab: &Fabric, sc: &Scenario) -> Vec<PortSummary> {
    let mut v = Vec::new();
    for (s, sw) in fab.switches.iter().enumerate() {
        for (p, link) in sc.topology.switch_port_link[s].iter().enumerate() {
            if link.is_none() {
                continue;
            }
            for vl in 0..sc.settings.data_vls {
                let c = sw.counters(p, usize::from(vl));
                v.push(PortSummary {
                    switch: fab.switch_names[s].clone(),
                    port: p as u8 + 1,
                    vl,
                    xmit_packets: c.xmit_pkts,
                    congested_cycles: c.cong_cycles,
                    packets_marked: c.marked,
                    credit_wait_cycles: c.xmit_wait,
                });
            }
        }
    }
    v
}
