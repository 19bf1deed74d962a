//! Switch-level tests of the pipeline's parts: VL arbitration and SL2VL through the switch, cut-through
//! versus store-and-forward, internal speed-up, drops and refused hand-ins.

use rtl_model::mad::sl2vl::Sl2VlTable;
use rtl_model::mad::vlarb::{VlArbEntry, VlArbTable};
use rtl_model::wire::bth::Opcode;

use crate::config::{PortConfig, SwitchConfig};
use crate::rig::Rig;
use crate::switch::{RxError, Switch};
use crate::switch_tests::{cfg, pkt};
use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
use rtl_model::link::rate::LinkRate;

fn r(n: u32, d: u32) -> LinkRate {
    LinkRate::new(n, d).unwrap()
}

#[test]
fn vl_arbitration_weights_and_sl2vl_through_the_switch() {
    let port = PortConfig::new(r(8, 1), 140).with_vls(2, 140);
    let mut c = SwitchConfig::uniform(3, port);
    for p in 0..3 {
        c.route(p as u16 + 1, p as u8);
    }
    // SL s -> VL s; weights VL0 64 blocks, VL1 192 blocks per round.
    c.sl2vl = vec![Sl2VlTable {
        vl: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    }];
    c.ports[2].vlarb = VlArbTable {
        high: vec![],
        low: vec![
            VlArbEntry { vl: 0, weight: 64 },
            VlArbEntry { vl: 1, weight: 192 },
        ],
        high_limit: 0,
    };
    let mut rig = Rig::new(c, 300, 5).unwrap();
    rig.record(true);
    // Both inputs send on their link's VL0; input 1's packets are SL1, so they leave on VL1.
    rig.set_source(
        0,
        PacketDesc::local(3, 1, 0, Opcode::RcSendOnly, 1024),
        None,
    );
    rig.set_source(
        1,
        PacketDesc::local(3, 2, 1, Opcode::RcSendOnly, 1024),
        None,
    );
    rig.run(200_000);
    let (v0, v1) = (rig.sw.counters(2, 0), rig.sw.counters(2, 1));
    // 17-block packets: a VL0 visit sends 4 (68 blocks), a VL1 visit 12 (204 blocks): 1 : 3.
    let ratio = v1.xmit_bytes as f64 / v0.xmit_bytes as f64;
    assert!((ratio - 3.0).abs() < 0.05, "VL1 : VL0 = {ratio}");
    assert!(
        rig.sent[2].iter().all(|d| d.vl == d.sl.min(1)),
        "output VL from SL2VL"
    );
    assert_eq!(
        rig.sent[2].iter().filter(|d| d.vl == 1).count() as u64,
        v1.xmit_pkts
    );
    // Input counters count on the input VL (both VL0).
    assert_eq!(rig.sw.counters(1, 0).rcv_pkts, rig.eps[1].stats().sent_pkts);
    assert_eq!(rig.sw.counters(1, 1).rcv_pkts, 0);
    assert_eq!(rig.eps[2].stats().overflow, 0);
}

#[test]
fn per_pair_sl2vl_tables_pick_the_output_vl_of_the_pair() {
    let port = PortConfig::new(r(8, 1), 140).with_vls(2, 140);
    let mut c = SwitchConfig::uniform(3, port);
    for p in 0..3 {
        c.route(p as u16 + 1, p as u8);
    }
    // One table per (input, output) pair: SL0 leaves on VL0, except from input 1 to output 2 (VL1), so
    // the switch must read the pair's own table, not the first one.
    let vl0 = Sl2VlTable { vl: [0; 16] };
    c.sl2vl = vec![vl0; 9];
    c.sl2vl[3 + 2].vl[0] = 1;
    let mut rig = Rig::new(c, 300, 5).unwrap();
    rig.record(true);
    rig.set_source(0, PacketDesc::local(3, 1, 0, Opcode::RcSendOnly, 256), None);
    rig.set_source(1, PacketDesc::local(3, 2, 0, Opcode::RcSendOnly, 256), None);
    rig.run(20_000);
    let from = |slid: u16| rig.sent[2].iter().filter(move |d| d.slid == slid);
    assert!(from(1).count() > 10 && from(2).count() > 10);
    assert!(from(1).all(|d| d.vl == 0), "input 0 to output 2: VL0");
    assert!(from(2).all(|d| d.vl == 1), "input 1 to output 2: VL1");
}

/// Hands one 1050-byte packet from port 0 to port 1 and returns the cycle its head leaves port 1.
fn departure(in_rate: LinkRate, out_rate: LinkRate) -> u64 {
    let mut c = cfg(2, in_rate, 200);
    c.ports[1].rate = out_rate;
    let mut sw = Switch::new(c).unwrap();
    sw.rx_fc(
        1,
        FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 500,
        },
    )
    .unwrap();
    sw.step();
    sw.rx_packet(
        0,
        PacketStart {
            desc: pkt(1, 1024),
            offset: 0,
        },
    )
    .unwrap();
    for _ in 0..2000 {
        let t = sw.now();
        if sw
            .step()
            .iter()
            .any(|e| matches!(e, TxEvent::Packet { port: 1, .. }))
        {
            return t;
        }
    }
    panic!("never left");
}

#[test]
fn cut_through_unless_the_output_is_faster() {
    // Head handed in at cycle 1, the switch's input at cycle 2 (the registered ingress stage). Same rate or
    // slower output: out two cycles after that.
    assert_eq!(departure(r(8, 1), r(8, 1)), 3);
    assert_eq!(departure(r(8, 1), r(4, 1)), 3);
    // Faster output: it waits for the tail, in at cycle 2 + ceil(1050 / 4) - 1 = 264, queued from then on.
    assert_eq!(departure(r(4, 1), r(8, 1)), 265);
}

/// Hands 8 packets into port 0 (64 B/cycle) alternately for ports 1 and 2 (8 B/cycle each) and returns the
/// cycle the last one has left.
fn drain_time(speedup: u8) -> u64 {
    let mut c = cfg(3, r(8, 1), 200);
    c.ports[0].rate = r(64, 1);
    c.ports[0].speedup = speedup;
    let mut sw = Switch::new(c).unwrap();
    sw.rx_fc(
        1,
        FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 1000,
        },
    )
    .unwrap();
    sw.rx_fc(
        2,
        FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 1000,
        },
    )
    .unwrap();
    sw.step();
    let mut handed = 0;
    let mut last = 0;
    for _ in 0..5000 {
        let t = sw.now();
        if handed < 8 && t % 17 == 1 {
            sw.rx_packet(
                0,
                PacketStart {
                    desc: pkt(1 + handed % 2, 1024),
                    offset: 0,
                },
            )
            .unwrap();
            handed += 1;
        }
        sw.step();
        if sw.counters(1, 0).xmit_pkts + sw.counters(2, 0).xmit_pkts == 8 && last == 0 {
            last = t;
        }
    }
    assert_eq!(sw.port_counters(0).dropped, 0);
    last
}

#[test]
fn speedup_lets_one_input_feed_several_outputs() {
    let one = drain_time(1);
    let two = drain_time(2);
    // One read at a time: the 8 packets leave one after another (8 x 132 cycles); two reads: in pairs.
    assert!(one >= 7 * 131, "speed-up 1: last start at {one}");
    assert!(two <= 4 * 133, "speed-up 2: last start at {two}");
}

#[test]
fn drops_are_counted_and_free_their_buffer() {
    let mut c = cfg(2, r(8, 1), 100);
    c.sl2vl[0].vl[3] = Sl2VlTable::VL_DROP;
    let mut sw = Switch::new(c).unwrap();
    // No route (DLID 77), an SL mapped to VL15, and a packet longer than the 4096 MTU allows.
    let mut no_route = pkt(0, 100);
    no_route.dlid = 77;
    let mut sl15 = pkt(1, 100);
    sl15.sl = 3;
    let mut big = pkt(1, 4096);
    big.wire_len = 66 * 64 + 1;
    for (i, d) in [no_route, sl15, big].into_iter().enumerate() {
        sw.rx_packet(0, PacketStart { desc: d, offset: 0 }).unwrap();
        for _ in 0..700 {
            sw.step();
        }
        assert_eq!(sw.counters(0, 0).dropped, i as u64 + 1);
        assert_eq!(sw.observe(0, 0).in_buf_used, 0, "drop {i} freed its blocks");
    }
    assert_eq!(sw.packets_held(), 0);
    assert_eq!(sw.port_counters(1).xmit_pkts, 0);
}

#[test]
fn bad_hand_ins_are_refused_not_panics() {
    let mut sw = Switch::new(cfg(2, r(8, 1), 100)).unwrap();
    let s = PacketStart {
        desc: pkt(1, 1000),
        offset: 0,
    };
    assert_eq!(sw.rx_packet(2, s), Err(RxError::NoSuchPort(2)));
    assert_eq!(
        sw.rx_packet(0, PacketStart { offset: 8, ..s }),
        Err(RxError::BadOffset(0, 8))
    );
    sw.rx_packet(0, s).unwrap();
    assert_eq!(sw.rx_packet(0, s), Err(RxError::TwoInOneCycle(0)));
    assert_eq!(
        sw.rx_fc(
            1,
            FcPacket {
                vl: 3,
                fctbs: 0,
                fccl: 0
            }
        ),
        Err(RxError::BadVl(1, 3))
    );
    sw.step();
    // A head while the previous packet (1026 bytes, 129 cycles) is still arriving: refused and counted when
    // the switch takes it, in the cycle after its hand-in (the registered ingress stage).
    sw.rx_packet(0, s).unwrap();
    sw.step();
    sw.step();
    assert_eq!(sw.rx_errors(), 5);
    // A packet on a VL the port lacks is counted too, and the switch carries on.
    for _ in 0..200 {
        sw.step();
    }
    let mut d = pkt(1, 10);
    d.vl = 5;
    sw.rx_packet(0, PacketStart { desc: d, offset: 0 }).unwrap();
    sw.step();
    sw.step();
    assert_eq!(sw.rx_errors(), 6);
    assert_eq!(sw.counters(0, 0).rcv_pkts, 1);
}
