//! `ibcycle rtl-check` on RTL that is not the twin: the second switch implementation (hdl/alt/alt_switch.sv,
//! through its port map hdl/alt/alt_switch.map.toml) passes the transaction-level scoreboard on every shipped
//! InfiniBand scenario's traffic at its busiest switch and on random traffic, and each of its bug variants is
//! caught with the violation it causes. Needs Verilator (feature `cosim`).
//!
//! The scenarios are shortened as in tests/ib_switch_trace.rs (flows start 2 us apart, cycling over five start
//! times), so queues build and the switches mark within the recorded cycles. One RTL build (8 ports: a
//! scenario's busiest switch of at most 8 ports) serves every scenario and the random traffic; each bug variant
//! is a 4-port build of its own. (An 18-port build, which also takes rrcc's 18-port switches, passes too but
//! takes minutes more to compile.) No build writes waveforms (a VCD is asked for only on a violation, and these runs ask for none).
#![cfg(feature = "cosim")]

use std::path::PathBuf;
use std::time::Instant;

use cosim::portmap::PortMap;
use cosim::rtlcheck::{check, default_random_config, traffic_of_trace, CheckOpts, CheckOutcome};
use cosim::scoreboard::bench::{random_traffic, TrafficPacket};
use cosim::scoreboard::Kind;
use ibcycle::run::port_trace;
use switch_asic::SwitchConfig;

mod common;

/// Cycles of each scenario recorded.
const CYCLES: u64 = 30_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn map() -> PortMap {
    PortMap::load(&root().join("hdl/alt/alt_switch.map.toml")).unwrap()
}

/// The same RTL at 4 ports (smaller, so quicker to compile) through the map's other options: byte enables
/// (`keep`) instead of byte counts, the transmit `ready` mapped, and the most significant byte first (the RTL's
/// `MsbFirst`). The bug variants' builds, and one clean build.
fn map4() -> PortMap {
    let path = root().join("hdl/alt/alt_switch.map.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut t = text.clone();
    for (a, b) in [
        ("\nports = 8\n", "\nports = 4\n"),
        ("\nNPorts = 8\n", "\nNPorts = 4\n"),
        ("\nSlotMax = 2048\n", "\nSlotMax = 1024\nMsbFirst = true\n"),
        (
            "\nties = { \"out_ready\" = 255 }\n",
            "\nbyte_order = \"msb_first\"\n",
        ),
        (
            "\nbytes = \"in_nbytes[{p*5+4}:{p*5}]\"\n",
            "\nkeep = \"in_keep[{p*16+15}:{p*16}]\"\n",
        ),
        (
            "\nbytes = \"out_nbytes[{p*5+4}:{p*5}]\"\n",
            "\nkeep = \"out_keep[{p*16+15}:{p*16}]\"\nready = \"out_ready[{p}]\"\n",
        ),
    ] {
        assert!(t.contains(a), "{a}");
        t = t.replace(a, b);
    }
    PortMap::parse(&path, &t).unwrap()
}

/// `traffic`'s packets to its busiest output alone: every VL of that output stays backlogged, so VL
/// arbitration decides each VL's share through whole windows.
fn hot_only(cfg: &SwitchConfig, traffic: &[TrafficPacket]) -> Vec<TrafficPacket> {
    let out_of = |b: &[u8]| cfg.lft[usize::from(u16::from_be_bytes([b[2], b[3]]))];
    let mut n = vec![0usize; cfg.ports.len()];
    for p in traffic {
        if let Some(o) = out_of(&p.bytes) {
            n[usize::from(o)] += 1;
        }
    }
    let hot = (0..n.len()).max_by_key(|&o| n[o]).unwrap() as u8;
    traffic
        .iter()
        .filter(|p| out_of(&p.bytes) == Some(hot))
        .cloned()
        .collect()
}

fn opts(defines: &[&str]) -> CheckOpts {
    CheckOpts {
        defines: defines.iter().map(|s| s.to_string()).collect(),
        ..CheckOpts::default()
    }
}

/// Output 0's two VLs kept backlogged: VL 0 from inputs 1 and 3 (twice what the link carries), VL 1 from
/// input 2, full-MTU packets all ready at once. With the two VLs' equal weights, each must get half of the
/// link through every arbitration window; an arbiter that ignores the weights serves VL 0 alone, as its queue
/// never empties. (Traffic from one input per VL does not show it: a packet's successor arrives at the pace
/// it leaves, so at each packet end the first VL's queue is often empty and the other VL is served anyway.)
fn two_vl_backlog(cfg: &SwitchConfig, per_input: usize) -> Vec<TrafficPacket> {
    use rtl_model::link::packet::PacketDesc;
    use rtl_model::wire::bth::Opcode;
    let mut out = Vec::new();
    // DLID 1 is routed to port 0; SL 0 leaves on VL 0 and SL 2 on VL 1 (SL2VL: (SL / 2) mod 2).
    for (inp, sl) in [(1usize, 0u8), (3, 0), (2, 2)] {
        for i in 0..per_input {
            let mut d = PacketDesc::local(1, 0x100 + inp as u16, sl, Opcode::RcSendOnly, 2048);
            d.vl = sl % cfg.ports[inp].data_vls.max(1);
            d.psn = i as u32;
            d.payload_seed = (inp * 100_000 + i) as u32;
            let mut bytes = Vec::new();
            d.materialise(&mut bytes).unwrap();
            out.push(TrafficPacket {
                cycle: 10,
                port: inp,
                bytes,
            });
        }
    }
    out
}

#[test]
fn alt_switch_passes_on_shipped_and_random_traffic_and_every_bug_is_caught() {
    let m = map();
    let t0 = Instant::now();
    // Every shipped IB scenario's busiest switch.
    let mut total = 0;
    for sc in common::shipped_ib_scenarios_staggered() {
        let all: Vec<usize> = (0..sc.topology.switches.len()).collect();
        let ts = port_trace::traces_of(&sc, &all, CYCLES).unwrap();
        // The busiest switch the 8-port build can be (rrcc's busiest has 18 ports: one of its 4-port
        // switches is taken there).
        let (k, (t, _)) = ts
            .into_iter()
            .enumerate()
            .filter(|(_, (t, _))| t.config.ports.len() <= m.ports.len())
            .max_by_key(|(_, (_, r))| r.packets)
            .unwrap();
        let name = &sc.topology.switches[k].name;
        match check(&m, &t.config, traffic_of_trace(&t), &opts(&[])).unwrap() {
            CheckOutcome::Passed(o) => {
                eprintln!("{} {name}: {o:?}", sc.name);
                assert!(o.packets > 0, "{}", sc.name);
                assert_eq!(o.golden_notes, 0, "{}", sc.name);
                total += o.packets;
            }
            CheckOutcome::Violation { v, .. } => panic!("{} {name}: {v}", sc.name),
        }
    }
    eprintln!(
        "shipped scenarios: {total} packets checked, {:?}",
        t0.elapsed()
    );
    // Random traffic on 4 of the 8 ports, congesting one output on two VLs.
    let cfg = default_random_config(4);
    let traffic = random_traffic(&cfg, 600, 11, 10);
    let t1 = Instant::now();
    match check(&m, &cfg, traffic.clone(), &opts(&[])).unwrap() {
        CheckOutcome::Passed(o) => {
            eprintln!("random: {o:?} {:?}", t1.elapsed());
            assert!(o.packets > 400 && o.marked > 0, "{o:?}");
        }
        CheckOutcome::Violation { v, .. } => panic!("random: {v}"),
    }
    // The 4-port build through keep, ready and the most significant byte first: the same random traffic, and
    // traffic to one output alone (its VLs backlogged: their shares are checked window by window).
    let m4 = map4();
    assert_eq!(m4.ports.len(), 4);
    let hot = hot_only(&cfg, &random_traffic(&cfg, 1500, 11, 10));
    let backlog = two_vl_backlog(&cfg, 60);
    for (what, t) in [
        ("random", &traffic),
        ("one output", &hot),
        ("two VLs backlogged", &backlog),
    ] {
        let t3 = Instant::now();
        match check(&m4, &cfg, t.clone(), &opts(&[])).unwrap() {
            CheckOutcome::Passed(o) => {
                eprintln!(
                    "4 ports, keep, ready, msb_first, {what}: {o:?} {:?}",
                    t3.elapsed()
                );
                assert_eq!(o.packets, t.len(), "{what}: every packet checked");
            }
            CheckOutcome::Violation { v, .. } => panic!("4 ports, {what}: {v}"),
        }
    }
    // Every bug variant in that build: on the random traffic, the arbitration bug on the two backlogged VLs.
    for (bug, kinds) in [
        ("ALT_CREDIT_DROP", &[Kind::CreditLost][..]),
        (
            "ALT_FECN_WRONG",
            &[Kind::FecnIneligible, Kind::FecnCleared][..],
        ),
        ("ALT_DUP", &[Kind::Duplicate][..]),
        ("ALT_VL_MIX", &[Kind::WrongVl][..]),
        ("ALT_VCRC", &[Kind::BadVcrc][..]),
        ("ALT_ARB", &[Kind::ArbShare][..]),
    ] {
        let t2 = Instant::now();
        let fault = format!("IBCYCLE_FAULT_{bug}");
        let o = opts(&["IBCYCLE_FAULTS_ENABLE", &fault]);
        // The arbitration bug on the two backlogged VLs (the arbitration-share check must see it).
        let t = if bug == "ALT_ARB" { &backlog } else { &traffic };
        match check(&m4, &cfg, t.clone(), &o).unwrap() {
            CheckOutcome::Passed(o) => panic!("{bug} not caught: {o:?}"),
            CheckOutcome::Violation { v, .. } => {
                eprintln!(
                    "{bug}: {:?} at cycle {} ({:?})",
                    v.kind,
                    v.cycle,
                    t2.elapsed()
                );
                assert!(kinds.contains(&v.kind), "{bug}: {v}");
            }
        }
    }
    eprintln!("total {:?}", t0.elapsed());
}
