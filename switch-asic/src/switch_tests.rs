//! Switch-level tests: forwarding, lossless incast, cut-through timing, fast-forward.

use rtl_model::wire::bth::Opcode;

use crate::config::{Allocator, PortConfig, SwitchConfig};
use crate::rig::Rig;
use crate::switch::Switch;
use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart};
use rtl_model::link::rate::LinkRate;

fn rate8() -> LinkRate {
    LinkRate::new(8, 1).unwrap()
}

/// `n` ports at `rate`, one VL of `buf` blocks, DLID d routed to port d - 1.
pub(crate) fn cfg(n: usize, rate: LinkRate, buf: u16) -> SwitchConfig {
    let mut c = SwitchConfig::uniform(n, PortConfig::new(rate, buf));
    for p in 0..n {
        c.route(p as u16 + 1, p as u8);
    }
    c
}

pub(crate) fn pkt(dst_port: usize, payload: u16) -> PacketDesc {
    PacketDesc::local(dst_port as u16 + 1, 99, 0, Opcode::RcSendOnly, payload)
}

#[test]
fn forwards_at_full_rate_without_loss() {
    let mut rig = Rig::new(cfg(2, rate8(), 200), 200, 5).unwrap();
    rig.set_source(0, pkt(1, 2048), None);
    rig.run(100_000);
    let s0 = rig.eps[0].stats();
    let s1 = rig.eps[1].stats();
    assert!(s1.recv_pkts > 0);
    assert_eq!(s0.overflow + s1.overflow + s0.credit_err + s1.credit_err, 0);
    let c = rig.sw.port_counters(0);
    let d = rig.sw.port_counters(1);
    assert_eq!(c.overflow + c.dropped + d.credit_err, 0);
    // 2048 + 26 bytes = 2074 bytes per packet at 8 B/cycle; flow-control packets take a cycle each.
    let util = s1.recv_bytes as f64 / (8.0 * 100_000.0);
    assert!(util > 0.97, "utilisation {util}");
    assert_eq!(d.xmit_pkts, c.rcv_pkts - rig.sw.packets_held() as u64);
}

/// At 32 bytes a cycle a 26-byte packet's last byte leaves in its start cycle; it is released the next
/// cycle. Never released, its blocks and its read of the input were lost, and the input stopped after as
/// many packets as its speed-up allows.
#[test]
fn packets_ending_in_their_start_cycle_are_released() {
    let mut rig = Rig::new(cfg(2, LinkRate::new(32, 1).unwrap(), 200), 200, 5).unwrap();
    rig.set_source(0, pkt(1, 0), None);
    rig.run(10_000);
    let s1 = rig.eps[1].stats();
    assert!(s1.recv_pkts > 5_000, "{} packets", s1.recv_pkts);
    let c = rig.sw.port_counters(0);
    assert_eq!(c.overflow + c.dropped, 0);
    assert!(rig.sw.packets_held() < 10, "{} held", rig.sw.packets_held());
}

/// Gives port 1 credit (an FC packet with FCCL 100), steps a cycle, and hands in at port 0 a packet of 1000
/// bytes for port 1 (returned).
fn one_packet_to_port_1(sw: &mut Switch) -> PacketDesc {
    sw.rx_fc(
        1,
        FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 100,
        },
    )
    .unwrap();
    sw.step();
    let p = pkt(1, 1000);
    sw.rx_packet(0, PacketStart { desc: p, offset: 0 }).unwrap();
    p
}

#[test]
fn cut_through_latency_is_a_few_cycles() {
    // One packet: head in at cycle L + 0, out of the switch the cycle after, at the sink L later.
    let mut sw = Switch::new(cfg(2, rate8(), 200)).unwrap();
    let p = one_packet_to_port_1(&mut sw);
    let mut out_at = None;
    for _ in 0..50 {
        let t = sw.now();
        for e in sw.step() {
            if let crate::TxEvent::Packet { port: 1, start } = e {
                out_at = Some((t, *start));
            }
        }
        if out_at.is_some() {
            break;
        }
    }
    let (t, s) = out_at.expect("packet left");
    // Head in at cycle 1, joins the VoQ, arbitrated in cycle 2 (the FC packets of reset go first at cycle 2
    // only if pending; port 1 sends its initial FC packet in cycle 1).
    assert!(t <= 3, "left at {t}");
    assert_eq!(s.desc.dlid, p.dlid);
    assert_eq!(s.desc.vl, 0);
}

/// A fabric drains by stepping while anything is held (`packets_held`) and reads it between steps. A packet
/// head handed in during the last cycle sits in the registered ingress stage then: no longer on a wire, not
/// yet in a VoQ. Not counted, the drain stopped with it inside and it never left.
#[test]
fn a_registered_packet_head_is_held_between_steps() {
    let mut sw = Switch::new(cfg(2, rate8(), 200)).unwrap();
    one_packet_to_port_1(&mut sw);
    assert_eq!(sw.packets_held(), 1, "handed in, before the step");
    sw.step();
    assert_eq!(
        sw.packets_held(),
        1,
        "registered, before the step that enqueues it"
    );
    let mut left = false;
    let mut steps = 0;
    while sw.packets_held() > 0 {
        left |= sw
            .step()
            .iter()
            .any(|e| matches!(e, crate::TxEvent::Packet { port: 1, .. }));
        steps += 1;
        assert!(steps < 1000, "never drained");
    }
    assert!(
        left,
        "the packet left port 1 before the switch read as empty"
    );
}

/// Checks that nothing was lost and no credit leaked once the rig is quiet: every packet sent arrived, every
/// buffer is empty and every transmitter has its receiver's whole buffer (up to the 2048-block cap) as credit.
pub(crate) fn assert_quiet_and_lossless(rig: &Rig, sw_buf: u16, ep_buf: u16) {
    let n = rig.eps.len();
    let (mut sent, mut recv) = (0, 0);
    for p in 0..n {
        let e = rig.eps[p].stats();
        sent += e.sent_pkts;
        recv += e.recv_pkts;
        assert_eq!(e.overflow + e.credit_err, 0, "endpoint {p}");
        let c = rig.sw.port_counters(p);
        assert_eq!(
            c.overflow + c.credit_err + c.dropped,
            0,
            "switch port {p}: {c:?}"
        );
        let o = rig.sw.observe(p, 0);
        assert_eq!(o.in_buf_used, 0, "switch port {p} buffer not empty");
        assert_eq!(
            o.credits_avail,
            ep_buf.min(2048),
            "switch port {p} credit leaked"
        );
        assert_eq!(
            rig.eps[p].credits_avail(0),
            sw_buf.min(2048),
            "endpoint {p} credit leaked"
        );
        assert_eq!(rig.eps[p].rx_free(0), ep_buf);
    }
    assert_eq!(rig.sw.packets_held(), 0);
    assert_eq!(sent, recv, "packets lost");
}

/// Runs a 4:1 incast (ports 0-3 to port 4) for `cycles`, checking buffers every cycle, then drains.
pub(crate) fn incast(cycles: u64) -> Rig {
    let (sw_buf, ep_buf) = (132u16, 200u16);
    let mut rig = Rig::new(cfg(5, rate8(), sw_buf), ep_buf, 20).unwrap();
    for p in 0..4 {
        let mut d = pkt(4, 2048);
        d.tag = p as u32;
        rig.set_source(p, d, None);
    }
    for _ in 0..cycles {
        rig.step();
        for p in 0..5 {
            assert!(rig.sw.observe(p, 0).in_buf_used <= sw_buf);
        }
    }
    for p in 0..4 {
        rig.stop_source(p);
    }
    rig.run(20_000);
    assert_quiet_and_lossless(&rig, sw_buf, ep_buf);
    rig
}

#[test]
fn incast_4_to_1_is_lossless_and_leaks_no_credit() {
    // The full 1,000,000 cycles: about a second in a debug build.
    let rig = incast(1_000_000);
    let out = rig.sw.port_counters(4);
    // The output is the bottleneck: it runs at nearly full rate and waits for nothing (the sink is fast).
    let util = out.xmit_bytes as f64 / (8.0 * 1_000_000.0);
    assert!(util > 0.97, "output utilisation {util}");
    // The four inputs share it fairly (round robin): each sent within 2% of a quarter.
    let total: u64 = (0..4).map(|p| rig.eps[p].stats().sent_bytes).sum();
    for p in 0..4 {
        let share = rig.eps[p].stats().sent_bytes as f64 / total as f64;
        assert!((share - 0.25).abs() < 0.02, "input {p} share {share}");
    }
    // The inputs were held back by credit: they waited.
    assert!(rig.eps[0].stats().sent_bytes < 1_000_000 * 8 / 3);
}

fn lookahead(mut c: SwitchConfig) -> SwitchConfig {
    c.allocator = Allocator::Lookahead;
    c
}

/// The look-ahead allocator decides the next packet while the previous one is on the wire: a lone flow
/// keeps its output as busy as the same-cycle allocator does.
#[test]
fn lookahead_forwards_back_to_back() {
    for (rate, payload) in [(rate8(), 2048), (LinkRate::new(16, 1).unwrap(), 38)] {
        let mut sent = Vec::new();
        for c in [cfg(2, rate, 200), lookahead(cfg(2, rate, 200))] {
            let mut rig = Rig::new(c, 200, 5).unwrap();
            rig.set_source(0, pkt(1, payload), None);
            rig.run(100_000);
            let c = rig.sw.port_counters(0);
            let d = rig.sw.port_counters(1);
            assert_eq!(c.overflow + c.dropped + d.credit_err, 0);
            assert_eq!(d.xmit_pkts, c.rcv_pkts - rig.sw.packets_held() as u64);
            sent.push(rig.eps[1].stats().recv_bytes);
        }
        // A 64-byte packet at 16 bytes a cycle is on the wire for 4 cycles, more than the look-ahead.
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!(
            ratio > 0.995,
            "rate {rate:?} payload {payload}: lookahead/same-cycle {ratio}"
        );
    }
}

/// An idle output starts a packet `LOOKAHEAD_CYCLES` cycles later than with the same-cycle allocator.
#[test]
fn lookahead_adds_its_stages_to_an_idle_output() {
    let mut at = Vec::new();
    for c in [cfg(2, rate8(), 200), lookahead(cfg(2, rate8(), 200))] {
        let mut sw = Switch::new(c).unwrap();
        one_packet_to_port_1(&mut sw);
        let mut out = None;
        for _ in 0..50 {
            let t = sw.now();
            if sw
                .step()
                .iter()
                .any(|e| matches!(e, crate::TxEvent::Packet { port: 1, .. }))
            {
                out = Some(t);
                break;
            }
        }
        at.push(out.expect("packet left"));
    }
    assert_eq!(at[1], at[0] + crate::config::LOOKAHEAD_CYCLES, "{at:?}");
}

/// The 4:1 incast with the look-ahead allocator: lossless, no credit leaked, the output nearly always
/// busy, the inputs served fairly.
#[test]
fn lookahead_incast_is_lossless_and_fair() {
    let (sw_buf, ep_buf) = (132u16, 200u16);
    let mut rig = Rig::new(lookahead(cfg(5, rate8(), sw_buf)), ep_buf, 20).unwrap();
    for p in 0..4 {
        rig.set_source(p, pkt(4, 2048), None);
    }
    rig.run(300_000);
    for p in 0..4 {
        rig.stop_source(p);
    }
    let out = rig.sw.port_counters(4);
    let util = out.xmit_bytes as f64 / (8.0 * 300_000.0);
    assert!(util > 0.97, "output utilisation {util}");
    let total: u64 = (0..4).map(|p| rig.eps[p].stats().sent_bytes).sum();
    for p in 0..4 {
        let share = rig.eps[p].stats().sent_bytes as f64 / total as f64;
        assert!((share - 0.25).abs() < 0.02, "input {p} share {share}");
    }
    rig.run(20_000);
    assert_quiet_and_lossless(&rig, sw_buf, ep_buf);
}

#[test]
fn idle_switch_costs_nearly_nothing() {
    let mut c = cfg(64, rate8(), 100);
    for p in c.ports.iter_mut() {
        p.fc_interval = 65_535;
    }
    let mut sw = Switch::new(c).unwrap();
    for _ in 0..1_000_000 {
        sw.step();
    }
    // 64 ports: a flow-control packet each per 65,535 cycles; the timer fire is applied when the packet
    // leaves (the cycle after), so only the sends are worked.
    let work = sw.work_cycles();
    assert!(work <= 64 * 16, "{work} busy cycles of 1,000,000");
    let k = sw.next_event().unwrap();
    assert!(k > 0 && k <= 65_535);
    // Skipping up to the next event is O(1): no cycle is worked.
    let before = (sw.work_cycles(), sw.now());
    sw.skip(k);
    assert_eq!(sw.work_cycles(), before.0);
    assert_eq!(sw.now(), before.1 + k);
    assert_eq!(sw.next_event(), Some(0));
    // The receivers' timers fired in the cycle before: their flow-control packets leave now.
    let ev = sw.step().len();
    let ev2 = sw.step().len();
    assert_eq!((ev, ev2), (64, 0), "one flow-control packet per port");
}

#[test]
fn timer_fires_and_the_tail_of_an_arrival_take_no_cycle_of_their_own() {
    // One 2048-byte packet (2074 bytes on the wire, 33 blocks) arrives on port 0 from cycle 3 to its tail
    // in cycle 3 + 2074 / 8 - 1 = 262 (rounded up); its output (port 1) has no credit, so it stays queued.
    // Every port's flow-control timer fires every 20 cycles meanwhile.
    let mut c = cfg(2, rate8(), 200);
    for p in c.ports.iter_mut() {
        p.fc_interval = 20;
    }
    let run = |eager: bool| {
        let mut sw = Switch::new(c.clone()).unwrap();
        sw.set_eager(eager);
        let (mut out, mut worked) = (Vec::new(), Vec::new());
        for t in 0..400u64 {
            if t == 3 {
                let start = PacketStart {
                    desc: pkt(1, 2048),
                    offset: 0,
                };
                sw.rx_packet(0, start).unwrap();
            }
            let before = sw.work_cycles();
            out.extend(sw.step().iter().map(|e| (t, *e)));
            if sw.work_cycles() > before {
                worked.push(t);
            }
        }
        (out, worked, sw.observe(0, 0), sw.counters(0, 0))
    };
    let (r, _, r_obs, r_cnt) = run(true);
    let (a, worked, a_obs, a_cnt) = run(false);
    assert_eq!(r, a, "lazy timer fires or tail changed the outputs");
    assert_eq!((r_obs, r_cnt), (a_obs, a_cnt));
    assert_eq!(a_obs.in_buf_used, 33, "the packet's blocks are held");
    let fc_cycles: std::collections::BTreeSet<u64> = a
        .iter()
        .filter(|(_, e)| matches!(e, crate::TxEvent::Fc { .. }))
        .map(|&(t, _)| t)
        .collect();
    assert!(
        fc_cycles.len() >= 19,
        "{} flow-control cycles",
        fc_cycles.len()
    );
    // After the head (handed in at 3, the switch's input at 4) and the first arbitration of the queued
    // packet (5), through the tail and beyond, the only worked cycles are those a flow-control packet leaves
    // in: a fire is applied when its packet leaves (the cycle after the fire), and the tail's blocks are
    // counted at the port's next look.
    let other: Vec<u64> = worked
        .iter()
        .copied()
        .filter(|t| *t > 5 && !fc_cycles.contains(t))
        .collect();
    assert!(
        other.is_empty(),
        "cycles worked for nothing leaving: {other:?}"
    );
    assert!(worked.contains(&4), "the head is worked: {worked:?}");
}

/// A scripted stream of hand-ins for one switch: (cycle, port, what).
#[derive(Debug, Clone, Copy)]
enum In {
    Pkt(PacketStart),
    Fc(FcPacket),
    Pause(rtl_model::wire::pfc::Repr),
}

fn script(seed: u64, n: usize, cycles: u64, pfc: bool, rate: LinkRate) -> Vec<(u64, usize, In)> {
    let mut s = seed | 1;
    let mut rnd = move |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    let mut out = Vec::new();
    let mut busy_until = vec![0u64; n];
    let mut fctbs = vec![0u16; n];
    let mut t = 0;
    while t < cycles {
        t += 1 + rnd(40);
        let p = rnd(n as u64) as usize;
        if pfc && rnd(3) == 0 {
            // Pauses of a few quanta, or resumes.
            let q = [0u16, 1, 5, 40][rnd(4) as usize];
            out.push((t, p, In::Pause(rtl_model::link::pfc::frame(0, q))));
        } else if !pfc && rnd(3) == 0 {
            // Generous credit for the switch's output p, and this input's FCTBS (the blocks it sent).
            let fccl = fctbs[p].wrapping_add(100 + rnd(400) as u16) & 0xfff;
            out.push((
                t,
                p,
                In::Fc(FcPacket {
                    vl: 0,
                    fctbs: fctbs[p],
                    fccl,
                }),
            ));
        } else if t >= busy_until[p] {
            let mut d = pkt(rnd(n as u64) as usize, rnd(600) as u16);
            d.ecn = rnd(4) as u8;
            // The next head on this link only after this packet's last byte.
            busy_until[p] =
                t + 2 + (u64::from(d.wire_len) * u64::from(rate.den)).div_ceil(u64::from(rate.num));
            fctbs[p] = fctbs[p].wrapping_add(d.blocks()) & 0xfff;
            let offset = rnd(u64::from(rate.num)) as u32;
            out.push((t, p, In::Pkt(PacketStart { desc: d, offset })));
        }
    }
    out
}

fn hand_in(sw: &mut Switch, p: usize, x: In) {
    let _ = match x {
        In::Pkt(s) => sw.rx_packet(p, s),
        In::Fc(f) => sw.rx_fc(p, f),
        In::Pause(f) => sw.rx_pause(p, f),
    };
}

fn trace(
    cfg: &SwitchConfig,
    inputs: &[(u64, usize, In)],
    end: u64,
    fast: bool,
    eager: bool,
) -> (Vec<(u64, crate::TxEvent)>, Switch) {
    let mut sw = Switch::new(cfg.clone()).unwrap();
    sw.set_eager(eager);
    let mut out = Vec::new();
    let mut i = 0;
    while sw.now() < end {
        let t = sw.now();
        if fast && inputs.get(i).is_none_or(|x| x.0 > t) {
            let until = inputs.get(i).map_or(end, |x| x.0).min(end);
            let k = sw.next_event().unwrap_or(u64::MAX).min(until - t);
            if k > 0 {
                sw.skip(k);
                continue;
            }
        }
        while let Some(&(at, p, x)) = inputs.get(i) {
            if at != t {
                break;
            }
            hand_in(&mut sw, p, x);
            i += 1;
        }
        for e in sw.step() {
            out.push((t, *e));
        }
    }
    (out, sw)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Activity tracking (clocking only what has work) and fast-forwarding with next_event/skip give the
    /// same outputs in the same cycles, and the same counters and signals, as the eager reference that
    /// clocks every port and block every cycle; in IB and in PFC mode, with marking on.
    #[test]
    fn skip_equals_stepping(
        seed in proptest::prelude::any::<u64>(),
        n in 2usize..6,
        rate in 1u32..12,
        pfc in proptest::prelude::any::<bool>(),
        speedup in 1u8..3,
        fast_port0 in proptest::prelude::any::<bool>(),
        lookahead in proptest::prelude::any::<bool>(),
    ) {
        let rate = LinkRate::new(rate * 2, 3).unwrap();
        let mut c = cfg(n, rate, 200);
        // The look-ahead allocator is built for IB ports only.
        let pfc = pfc && !lookahead;
        if lookahead {
            c.allocator = Allocator::Lookahead;
        }
        if fast_port0 {
            // Port 0 twice as fast: packets from the others to it are stored and forwarded.
            c.ports[0].rate = LinkRate::new(rate.num * 2, rate.den).unwrap();
        }
        for p in c.ports.iter_mut() {
            p.fc_interval = 300;
            p.speedup = speedup;
            p.cc.threshold = 15;
            p.cc.packet_size = 0;
            p.cc.marking_rate = 1;
            if pfc {
                p.pfc = Some(rtl_model::link::pfc::PfcConfig {
                    headroom_blocks: Some(140),
                    pause_quanta: 30,
                    victim_hold: 50,
                    ..Default::default()
                });
            }
        }
        // Port 0's hand-ins are timed for the slower rate: still legal, only sparser.
        // Long enough for several of the largest packets per port at the slowest rates too (at 2/3 of a byte a
        // cycle a packet takes about 1000 cycles: 3000 cycles once let only 4 packets out of a 2-port switch).
        let pkt_cycles = (700 * u64::from(rate.den)).div_ceil(u64::from(rate.num));
        let span = 3000.max(8 * pkt_cycles);
        let end = span + 1000.max(2 * pkt_cycles);
        let inputs = script(seed, n, span, pfc, rate);
        let (r, sr) = trace(&c, &inputs, end, false, true);
        let (a, sa) = trace(&c, &inputs, end, false, false);
        let (b, sb) = trace(&c, &inputs, end, true, false);
        proptest::prop_assert_eq!(&r, &a, "activity tracking changed the outputs");
        proptest::prop_assert_eq!(&a, &b, "fast-forward changed the outputs");
        for p in 0..n {
            proptest::prop_assert_eq!(sr.counters(p, 0), sa.counters(p, 0));
            proptest::prop_assert_eq!(sr.observe(p, 0), sa.observe(p, 0));
        }
        let pkts = a.iter().filter(|e| matches!(e.1, crate::TxEvent::Packet { .. })).count();
        proptest::prop_assert!(pkts > 5, "only {} packets left the switch", pkts);
        proptest::prop_assert_eq!(sa.rx_errors(), 0);
        proptest::prop_assert!(sb.work_cycles() <= sa.work_cycles());
        for p in 0..n {
            proptest::prop_assert_eq!(sa.counters(p, 0), sb.counters(p, 0));
            proptest::prop_assert_eq!(sa.observe(p, 0), sb.observe(p, 0));
        }
    }
}
