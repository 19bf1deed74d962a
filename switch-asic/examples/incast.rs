//! Long runs of the switch with endpoints on every port, checking losslessness, and a speed measurement.
//!
//! `cargo run --release -p switch-asic --example incast -- [cycles] [ports]`
//!
//! Runs a 4:1 incast (ports 0-3 to port 4) for `cycles` (default 10,000,000) on a 5-port switch, then, for
//! a tenth of that, a `ports`-port switch (default 36) in groups of four where three ports send to the
//! group's fourth, which sends to the next group (3:1 incasts plus a ring), and finally the idle switch.
//! Prints simulated port-cycles per wall second (switch and endpoints together: endpoints are clocked every
//! cycle). Exits non-zero if a packet was lost, a buffer overflowed or a credit leaked.

use std::time::Instant;

use rtl_model::wire::bth::Opcode;
#[path = "../src/rig.rs"]
#[allow(dead_code)] // Not every user of the shared rig calls all of it.
mod rig;
use rig::Rig;
use switch_asic::{LinkRate, PacketDesc, PortConfig, SwitchConfig};

fn config(n: usize, buf: u16) -> SwitchConfig {
    let mut c = SwitchConfig::uniform(n, PortConfig::new(LinkRate::new(8, 1).unwrap(), buf));
    for p in 0..n {
        c.route(p as u16 + 1, p as u8);
    }
    c
}

fn check(rig: &Rig, what: &str) -> bool {
    let mut ok = true;
    let (mut sent, mut recv) = (0, 0);
    for (p, ep) in rig.eps.iter().enumerate() {
        let e = ep.stats();
        sent += e.sent_pkts;
        recv += e.recv_pkts;
        let c = rig.sw.port_counters(p);
        if e.overflow + e.credit_err + c.overflow + c.credit_err + c.dropped != 0 {
            eprintln!("{what}: port {p}: endpoint {e:?} switch {c:?}");
            ok = false;
        }
    }
    let held = rig.sw.packets_held() as u64;
    println!("{what}: sent {sent} received {recv} held in switch {held}");
    ok
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let cycles = args.first().copied().unwrap_or(10_000_000);
    let ports = args.get(1).copied().unwrap_or(36) as usize;
    let mut ok = true;

    let mut rig = Rig::new(config(5, 132), 200, 20).expect("config");
    for p in 0..4 {
        rig.set_source(
            p,
            PacketDesc::local(5, p as u16, 0, Opcode::RcSendOnly, 2048),
            None,
        );
    }
    let t0 = Instant::now();
    rig.run(cycles);
    let dt = t0.elapsed().as_secs_f64();
    let out = rig.sw.port_counters(4);
    println!(
        "incast 4:1, {cycles} cycles in {dt:.2} s ({:.1} M switch port-cycles/s with endpoints): output at {:.4} of line rate, {} cycles congested, {} marked",
        cycles as f64 * 5.0 / dt / 1e6,
        out.xmit_bytes as f64 / (8.0 * cycles as f64),
        out.cong_cycles,
        out.marked
    );
    for p in 0..rig.eps.len() {
        rig.stop_source(p);
    }
    rig.run(50_000);
    ok &= check(&rig, "incast");
    ok &= rig.sw.packets_held() == 0;

    let mut rig = Rig::new(config(ports, 132), 200, 20).expect("config");
    for p in 0..ports {
        // Groups of four: three send to the group's last port, which sends to the next group.
        let g = p / 4 * 4;
        let dst = if p % 4 == 3 || g + 3 >= ports {
            (p + 4) % ports
        } else {
            g + 3
        };
        rig.set_source(
            p,
            PacketDesc::local(
                dst as u16 + 1,
                p as u16,
                0,
                Opcode::RcSendOnly,
                1024 + 256 * (p % 4) as u16,
            ),
            None,
        );
    }
    let n = cycles / 10;
    let t0 = Instant::now();
    rig.run(n);
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "{ports}-port switch under incasts, {n} cycles in {dt:.2} s: {:.1} M port-cycles/s (switch and {ports} endpoints)",
        n as f64 * ports as f64 / dt / 1e6
    );
    for p in 0..rig.eps.len() {
        rig.stop_source(p);
    }
    rig.run(50_000);
    ok &= check(&rig, "mesh");

    // The switch alone, idle, with the default flow-control interval: the cost of doing nothing.
    let mut sw = switch_asic::Switch::new(config(ports, 132)).expect("config");
    let t0 = Instant::now();
    for _ in 0..n {
        sw.step();
    }
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "idle {ports}-port switch stepped every cycle: {:.0} M port-cycles/s, {} of {n} cycles did work",
        n as f64 * ports as f64 / dt / 1e6,
        sw.work_cycles()
    );
    if !ok {
        std::process::exit(1);
    }
}
