//! The per-cycle path allocates nothing: a counting global allocator (stats_alloc) watches a switch with
//! endpoints on every port through a congested incast, after construction and a warm-up.
//!
//! Its own test binary, so no other test allocates while the region is open.

use std::alloc::System;

use rtl_model::wire::bth::Opcode;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
#[path = "../src/rig.rs"]
#[allow(dead_code)] // Not every user of the shared rig calls all of it.
mod rig;
use rig::Rig;
use switch_asic::{LinkRate, PacketDesc, PortCc, PortConfig, SwitchConfig};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One test function: the allocator counts every thread, so the two scenarios must not run in parallel.
#[test]
fn stepping_allocates_nothing() {
    ib_mode();
    pfc_mode();
}

fn ib_mode() {
    // 8 ports, 2 VLs, CC on with LFSR marking; inputs 0-5 send to port 6 (on SL 0 and 1), input 7 to port 0.
    let port = PortConfig::new(LinkRate::new(25, 4).unwrap(), 140).with_vls(2, 140);
    let mut c = SwitchConfig::uniform(8, port);
    for p in 0..8 {
        c.route(p as u16 + 1, p as u8);
        c.ports[p].cc = PortCc {
            marking_rate: 3,
            packet_size: 0,
            mark_mode: switch_asic::config::MarkMode::Lfsr,
            ..PortCc::default()
        };
    }
    let mut rig = Rig::new(c, 300, 7).unwrap();
    for p in 0..6 {
        let d = PacketDesc::local(
            7,
            50 + p as u16,
            (p % 2) as u8,
            Opcode::RcSendOnly,
            512 + 300 * p as u16,
        );
        rig.set_source(p, d, None);
    }
    rig.set_source(
        7,
        PacketDesc::local(1, 9, 0, Opcode::RcSendOnly, 4096),
        None,
    );
    rig.run(20_000);

    let region = Region::new(GLOBAL);
    rig.run(200_000);
    let change = region.change();

    assert_eq!(
        (change.allocations, change.reallocations),
        (0, 0),
        "allocations in 200,000 busy cycles: {change:?}"
    );
    // The run did real work: many packets, marks, congestion.
    let out = rig.sw.port_counters(6);
    assert!(
        out.xmit_pkts > 1000 && out.marked > 100 && out.cong_cycles > 100_000,
        "{out:?}"
    );

    // And the idle fast path: skipping to the next event allocates nothing either.
    for p in 0..8 {
        rig.stop_source(p);
    }
    rig.run(50_000);
    // A clone keeps its preallocated capacity, so it too steps without allocating.
    let mut sw = rig.sw.clone();
    let region = Region::new(GLOBAL);
    for _ in 0..1000 {
        let k = sw.next_event().unwrap_or(1000);
        sw.skip(k);
        sw.step();
    }
    assert_eq!(region.change().allocations, 0);
}

fn pfc_mode() {
    let mut port = PortConfig::new(LinkRate::new(8, 1).unwrap(), 250);
    port.pfc = Some(rtl_model::link::pfc::PfcConfig {
        link_delay: 10,
        victim_hold: 500,
        ..Default::default()
    });
    port.cc = PortCc {
        packet_size: 0,
        marking_rate: 1,
        ..PortCc::default()
    };
    let mut c = SwitchConfig::uniform(5, port);
    for p in 0..5 {
        c.route(p as u16 + 1, p as u8);
    }
    let mut rig = Rig::new(c, 250, 10).unwrap();
    for p in 0..4 {
        let mut d = PacketDesc::local(5, p as u16, 0, Opcode::RcSendOnly, 1500);
        d.ecn = 2;
        rig.set_source(p, d, None);
    }
    rig.run(20_000);
    let region = Region::new(GLOBAL);
    rig.run(200_000);
    let change = region.change();
    assert_eq!(
        (change.allocations, change.reallocations),
        (0, 0),
        "{change:?}"
    );
    let c0 = rig.sw.counters(0, 0);
    assert!(
        c0.pauses_sent > 10 && rig.sw.counters(4, 0).marked > 100,
        "{c0:?}"
    );
}
