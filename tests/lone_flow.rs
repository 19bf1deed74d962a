//! The lone-flow invariant of congestion control: in every shipped scenario with its topology and CC
//! settings, each flow, alone and saturating, on a path with no link slower than its source's, is never
//! marked (FECN, or ECN CE in RoCEv2 mode), leaves no port in the congestion state, and runs at its source
//! link's rate. Where its path narrows, the
//! flow is held to the narrowest link's rate (and marking it is CC doing its job). A source's rate is its
//! link's, or its host cap where that is lower.
//!
//! This is what the hardware does at Threshold 15 (seed 000 figure 7b, seed 004 figure 5: a lone flow at line
//! rate with CC on), and what a switch that calls one packet in flight congestion gets wrong.

use std::path::Path;

use ibcycle::fabric::roce::frame_bytes;
use ibcycle::run::run;
use ibcycle::scenario::{load, parse, FlowPattern, Scenario};
use ibcycle::topology::{End, FIRST_HCA_LID};

/// Queueing-model files (no fabric).
const NOT_FABRICS: [&str; 2] = ["thesis-ctmc.toml", "thesis-ge.toml"];

/// Link rates (Mbit/s) along the route of a packet from HCA `src` to HCA `dst`, source link first.
fn path_rates(sc: &Scenario, src: usize, dst: usize) -> Vec<u64> {
    let topo = &sc.topology;
    let lft = topo.routes().expect("routes");
    let mut link = topo.hca_link[src];
    let mut at = End::Hca { hca: src };
    let mut rates = vec![topo.links[link].rate_mbps];
    for _ in 0..=topo.switches.len() {
        match topo.peer(link, at) {
            End::Hca { hca } => {
                assert_eq!(hca, dst, "route ends at the destination");
                return rates;
            }
            End::Switch { switch, .. } => {
                let lid = topo.hca_lid(dst);
                let port = lft[switch][usize::from(lid - FIRST_HCA_LID)];
                link = topo.switch_port_link[switch][usize::from(port) - 1]
                    .expect("routed port is linked");
                at = End::Switch { switch, port };
                rates.push(topo.links[link].rate_mbps);
            }
        }
    }
    panic!("route from {src} to {dst} loops");
}

#[test]
fn a_lone_saturating_flow_is_never_marked_and_runs_at_its_links_rate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| !NOT_FABRICS.contains(&p.file_name().unwrap().to_str().unwrap()))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    let mut checked = 0;
    for file in &files {
        let base = load(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // One run per source HCA (its first flow): the flows of one source take one path shape.
        let mut seen = Vec::new();
        for f in &base.flows {
            if seen.contains(&(f.src, f.dst)) {
                continue;
            }
            seen.push((f.src, f.dst));
            let mut sc = base.clone();
            let mut lone = f.clone();
            lone.start_us = 0;
            lone.stop_us = None;
            lone.pattern = FlowPattern::Saturating;
            sc.flows = vec![lone];
            // Long enough for marks to act: 20 CCTI_Timer periods of the fastest timer shipped (10 us) and
            // several of the hardware's 150 us.
            sc.duration_us = 1500;
            let r = run(&sc, false).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let s = &r.summary.flows[0];
            let mut rates = path_rates(&sc, f.src, f.dst);
            // A host capped below its link (its PCIe slot) is a source of the cap's rate.
            if let Some(cap) = sc.host_cap_mbps(f.src) {
                rates[0] = rates[0].min(cap);
            }
            let narrowest = *rates.iter().min().unwrap();
            let wire = match &sc.roce {
                Some(ro) => frame_bytes(f.mtu, ro.frame_overhead_bytes),
                None => f.mtu + 26,
            };
            let payload = |mbps: u64| mbps as f64 / 1000.0 * f64::from(f.mtu) / f64::from(wire);
            let what = format!(
                "{} flow {} ({:?} Mbit/s): {:.3} Gbit/s, {} FECN, {} CE",
                file.file_name().unwrap().to_str().unwrap(),
                f.id,
                rates,
                s.avg_gbps,
                s.fecn_marked_rx,
                s.ecn_marked_rx
            );
            eprintln!("{what}");
            if narrowest >= rates[0] {
                assert_eq!((s.fecn_marked_rx, s.ecn_marked_rx), (0, 0), "{what}");
                // Not even in the congestion state, anywhere: no port holds more than the packet it forwards.
                for p in &r.summary.ports {
                    assert_eq!(p.congested_cycles, 0, "{what}: {p:?}");
                }
                let want = payload(rates[0]);
                assert!(
                    s.avg_gbps >= 0.97 * want,
                    "{what}: below its link's {want:.3}"
                );
            } else {
                let cap = payload(narrowest);
                assert!(
                    s.avg_gbps <= 1.01 * cap,
                    "{what}: above the narrowest link's {cap:.3}"
                );
            }
            assert!(r.summary.invariants.broken().is_none(), "{what}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} lone flows");
}

/// Where the path narrows (QDR hosts, a DDR trunk), the lone flow is held to the trunk's rate, and with CC on
/// the trunk's port is a root: marking the flow there is CC doing its job (its rate then falls below the
/// trunk's, as CC costs throughput where there is no victim, seed 000 scenario 2).
#[test]
fn a_lone_flow_on_a_narrowing_path_runs_at_the_narrowest_rate() {
    let text = r#"name = "narrowing"
duration_us = 1500
[settings]
switch_vl_buf_blocks = 512
[switch_cc]
threshold = 15
marking_rate = 1
[hca_cc]
ccti_timer = 146
[chain]
switches = 2
hosts_per_switch = 1
host_rate = "4xQDR"
trunk_rate = "4xDDR"
[[flow]]
id = "A"
src = "H0"
dst = "H1"
"#;
    let sc = parse(Path::new("narrowing.toml"), text).expect("parses");
    assert_eq!(path_rates(&sc, 0, 1), [32_000, 16_000, 32_000]);
    let r = run(&sc, false).expect("fabric builds");
    let s = &r.summary.flows[0];
    let trunk = 16.0 * 2048.0 / 2074.0;
    eprintln!("{:.3} Gbit/s, {} FECN", s.avg_gbps, s.fecn_marked_rx);
    assert!(s.avg_gbps <= 1.01 * trunk, "{s:?}");
    assert!(s.fecn_marked_rx > 0, "the narrowing port is a root: {s:?}");
    assert!(r.summary.invariants.broken().is_none());
}
