//! An IB endpoint stepped only at its `next_event` (and when something is handed in) gives exactly the outputs
//! of stepping it every cycle, although its receive side (blocks coming in, held blocks released, `credit_rx`
//! firing on its timer and on change) runs inside `skip`.

use proptest::prelude::*;
use rtl_model::wire::bth::Opcode;

use super::{Endpoint, EndpointOut};
use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart};
use rtl_model::link::rate::LinkRate;

#[derive(Debug, Clone, Copy)]
enum Hand {
    Pkt(PacketStart),
    Fc(FcPacket),
}

fn pkt(payload: u16) -> PacketDesc {
    PacketDesc::local(2, 1, 0, Opcode::RcSendOnly, payload)
}

/// Packet heads (never overlapping on the wire) and flow-control packets granting the endpoint's own
/// packets credit, at random cycles.
fn script(seed: u64, rate: LinkRate, cycles: u64) -> Vec<(u64, Hand)> {
    let mut s = seed | 1;
    let mut rnd = |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    let mut out = Vec::new();
    let (mut t, mut busy_until, mut granted) = (0u64, 0u64, 0u16);
    while t < cycles {
        // Sometimes back to back, sometimes long idle gaps (the timers fire alone then).
        t += [1, 2, 5, 40, 300][rnd(5) as usize] + rnd(20);
        if rnd(4) == 0 {
            granted = granted.wrapping_add(20 + rnd(60) as u16) & 0xfff;
            out.push((
                t,
                Hand::Fc(FcPacket {
                    vl: 0,
                    fctbs: 0,
                    fccl: granted,
                }),
            ));
        } else if t >= busy_until {
            let d = pkt(rnd(2048) as u16);
            let offset = rnd(rate.ticks_per_cycle()) as u32;
            busy_until =
                t + 2 + (u64::from(d.wire_len) * u64::from(rate.den)).div_ceil(u64::from(rate.num));
            out.push((t, Hand::Pkt(PacketStart { desc: d, offset })));
        }
    }
    out
}

/// Copies of one packet, each loaded once the one before has started (as the HCA loads packet by packet),
/// with the next PSN and payload seed.
#[derive(Debug, Clone, Copy)]
struct Copies {
    d: PacketDesc,
    left: u64,
}

impl Copies {
    fn refill(&mut self, e: &mut Endpoint) {
        if self.left > 0 && !e.loaded(self.d.vl) {
            e.load(self.d);
            self.left -= 1;
            self.d.psn += 1;
            self.d.payload_seed += 1;
        }
    }
}

fn hand_in(e: &mut Endpoint, h: Hand) {
    match h {
        Hand::Pkt(p) => e.rx_packet(p),
        Hand::Fc(f) => e.rx_fc(f),
    }
}

/// Runs `e` over `script` to `end`, every cycle or only at events; returns the non-empty outputs with their
/// cycles and the steps taken.
fn run(
    mut e: Endpoint,
    mut copies: Copies,
    script: &[(u64, Hand)],
    end: u64,
    sleep: bool,
) -> (Vec<(u64, EndpointOut)>, u64, Endpoint) {
    let (mut out, mut steps, mut i) = (Vec::new(), 0, 0);
    while e.now() < end {
        copies.refill(&mut e);
        let t = e.now();
        let next_hand = script.get(i).map_or(end, |x| x.0).min(end);
        if sleep {
            let n = e.next_event().unwrap_or(u64::MAX).min(next_hand - t);
            if n > 0 {
                e.skip(n);
                continue;
            }
        }
        while let Some(&(at, h)) = script.get(i) {
            if at != t {
                break;
            }
            hand_in(&mut e, h);
            i += 1;
        }
        let o = e.step();
        steps += 1;
        if o != EndpointOut::default() {
            out.push((t, o));
        }
    }
    (out, steps, e)
}

/// Runs `e` on a random script stepped every cycle and sleeping between its events: the outputs, the
/// statistics and (once every arriving block is in) the flow-control registers must agree, and the sleeping
/// run must take under half the steps. Returns the flow-control packets sent.
fn sleeps_exactly(
    e: Endpoint,
    rate: LinkRate,
    seed: u64,
    own: u64,
) -> Result<usize, TestCaseError> {
    let copies = Copies {
        d: pkt(512),
        left: own,
    };
    let script = script(seed, rate, 6000);
    let (want, every, mut a) = run(e.clone(), copies, &script, 7000, false);
    let (got, steps, mut b) = run(e, copies, &script, 7000, true);
    prop_assert_eq!(&got, &want);
    prop_assert_eq!(a.stats(), b.stats());
    // Blocks of a packet still arriving are counted lazily by a sleeping endpoint: step both until
    // everything is in, then the flow-control registers must agree too.
    for _ in 0..3000 {
        prop_assert_eq!(a.step(), b.step());
    }
    prop_assert_eq!(a.fc_sync(), b.fc_sync());
    prop_assert!(steps * 2 < every, "{} steps of {}", steps, every);
    Ok(want.iter().filter(|(_, o)| o.fc.is_some()).count())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ib_endpoint_sleeps_exactly(
        seed in any::<u64>(),
        num in 4u32..32,
        interval in 20u16..400,
        buf in 70u16..300,
        own in 0u64..8,
    ) {
        let rate = LinkRate::new(num, 2).unwrap();
        let e = Endpoint::new(rate, 1, buf, interval).unwrap();
        let fcs = sleeps_exactly(e, rate, seed, own)?;
        prop_assert!(fcs > 10, "only {} flow-control packets", fcs);
    }

    /// As above with repeats left off and one or two VLs: the skips' fires (the quiet receive side's
    /// `skip_quiet` among them) leave repeats off with their wire time, VL by VL.
    #[test]
    fn ib_endpoint_sleeps_exactly_with_repeats_left_off(
        seed in any::<u64>(),
        num in 4u32..32,
        interval in 20u16..400,
        buf in 70u16..300,
        own in 0u64..8,
        vls in 1u8..3,
    ) {
        let rate = LinkRate::new(num, 2).unwrap();
        let mut e = Endpoint::new(rate, vls, buf, interval).unwrap();
        e.set_fc_repeats_off(true);
        sleeps_exactly(e, rate, seed, own)?;
    }
}

/// Switching the drain model off while a packet arrives changes how far the endpoint may sleep (per block
/// with a drain, to the tail without): the kept look-up cycle must follow the mode, or the endpoint would
/// wake at a block it no longer watches (and the debug check of the kept cycle fires).
#[test]
fn drain_mode_change_during_an_arrival_moves_the_look() {
    let rate = LinkRate::new(8, 2).unwrap();
    let p = PacketStart {
        desc: pkt(2048),
        offset: 0,
    };
    let mut plain = Endpoint::new(rate, 1, 200, 1000).unwrap();
    let mut drained = plain.clone();
    drained.set_drain(Some(rate));
    for e in [&mut plain, &mut drained] {
        // Past the first flow-control packets, so that only the arrival decides the sleep.
        for _ in 0..5 {
            e.step();
        }
        e.rx_packet(p);
        e.step();
    }
    drained.set_drain(None);
    let sleep = plain.next_event().expect("an event: the packet's tail");
    // The tail of a 2 kB packet at 4 bytes per cycle is hundreds of cycles off, the next block 16.
    assert!(sleep > 100, "sleeps {sleep} cycles");
    assert_eq!(drained.next_event(), Some(sleep));
}

/// A PFC port stepped only at its `next_event` (and when something is handed in) gives the outputs of
/// stepping it every cycle: pause frames (XOFF, the XOFF refreshes while its buffer stays above the mark,
/// XON), its own packets held back by pauses it receives, and its blocks.
#[test]
fn pfc_port_sleeps_exactly() {
    use rtl_model::link::pfc::PfcConfig;
    // A 2048-byte RoCEv2 packet from LID `p + 1` to LID 5.
    let roce = |p: u16| PacketDesc::roce_v4(5, p + 1, 0, Opcode::RcSendOnly, 2048);
    let rate = LinkRate::new(4, 1).unwrap();
    let pfc = PfcConfig {
        headroom_blocks: Some(10),
        xon_blocks: Some(6),
        // Refreshes every 104 cycles: not on the 16-cycle grid of the arriving blocks' steps.
        pause_quanta: 13,
        ..PfcConfig::default()
    };
    let mut a = Endpoint::new(rate, 1, 30, 200)
        .unwrap()
        .with_pfc(pfc, 33)
        .unwrap();
    let mut own = Copies {
        d: roce(0),
        left: 3,
    };
    let mut b = a.clone();
    let mut own_b = own;
    // Hand-ins: pause frames for the endpoint's own three packets, XOFF at 300 (holding the second one
    // back) and XON at 700; then, with its wire free, 2048-byte packets back to back from cycle 2000 (each
    // holds up to 33 blocks, above XOFF at 20, long enough for refreshes).
    let wire = u64::from(roce(1).wire_len).div_ceil(4);
    let heads: Vec<u64> = (0..5).map(|k| 2000 + k * (wire + 3)).collect();
    let hand = |e: &mut Endpoint, t: u64| {
        if heads.contains(&t) {
            e.rx_packet(PacketStart {
                desc: roce(1),
                offset: 0,
            });
        }
        if t == 300 || t == 700 {
            e.rx_pause(rtl_model::link::pfc::frame(
                0,
                if t == 300 { 40 } else { 0 },
            ));
        }
    };
    let due = |t: u64| heads.contains(&t) || t == 300 || t == 700;
    let mut want: Vec<(u64, EndpointOut)> = Vec::new();
    for t in 0..5000 {
        own.refill(&mut a);
        hand(&mut a, t);
        let o = a.step();
        if o != EndpointOut::default() {
            want.push((t, o));
        }
    }
    let mut got = Vec::new();
    let mut steps = 0;
    while b.now() < 5000 {
        own_b.refill(&mut b);
        let t = b.now();
        let idle = b.next_event().unwrap_or(u64::MAX);
        let next_hand = (t..5000).find(|&c| due(c)).unwrap_or(5000);
        let n = idle.min(next_hand - t).min(5000 - t);
        if n > 0 {
            b.skip(n);
            continue;
        }
        hand(&mut b, t);
        let o = b.step();
        steps += 1;
        if o != EndpointOut::default() {
            got.push((t, o));
        }
    }
    let quanta: Vec<u16> = want
        .iter()
        .filter_map(|(_, o)| o.pause.map(|p| p.quanta[0]))
        .collect();
    let xoff = quanta.iter().filter(|&&q| q > 0).count();
    let xon = quanta.len() - xoff;
    // Per arriving packet an XOFF, at least one refresh, an XON.
    assert!(xoff >= 10 && xon >= 5, "pause frames {quanta:?}");
    let sent = want
        .iter()
        .filter(|(_, o)| o.pkt.is_some())
        .map(|(t, _)| *t)
        .collect::<Vec<_>>();
    assert!(
        sent.len() == 3 && sent[1] > 700,
        "own packets at {sent:?}: the pause did not hold one back"
    );
    assert_eq!(got, want);
    assert!(steps < 4000, "{steps} steps: the endpoint did not sleep");
}
