//! Two HCAs joined by a link, end to end through the public API: HCA A's transmit pipeline sends real packet
//! bytes over a link with latency to HCA B's sink; a switch stand-in in the middle may set FECN; B's
//! notification point queues CNPs in B's transmit pipeline, which sends them back to A's sink; A feeds them
//! to the CC context of the QP they name. Credits: each receiver advertises an endless buffer (FCCL kept
//! 1000 blocks ahead of the sender's FCTBS), so credits never limit these runs.

use std::collections::VecDeque;

use hca_model::np::ib::{CnpCoalescing, IbNpConfig, RcRequestFecn};
use hca_model::pipeline::{
    CnpKind, FlowConfig, LinkFlowControl, PortConfig, TxKind, TxPort, TxStart,
};
use hca_model::rate::cct::{CctController, CctParams, CctSettings};
use hca_model::rate::{CnpInfo, Feedback};
use hca_model::sink::Sink;
use hca_model::traffic::pattern::{Arrivals, Pattern};
use hca_model::traffic::segment::{FlowSpec, Segmenter, Service};
use hca_model::units::{CoreClock, Cycle, LinkRate, Mtu, IB_LOCAL_OVERHEAD};
use rtl_model::blocks::credit_tx;
use rtl_model::blocks::vl_arb::{self, ArbEntry};
use rtl_model::mad::ca_cong::CaCongestionEntry;
use rtl_model::mad::cct::{Cct, CctEntry};
use rtl_model::wire::builder;

const LATENCY: Cycle = 400;

fn clock() -> CoreClock {
    CoreClock::from_khz(1_000_000).unwrap()
}

fn link() -> LinkRate {
    LinkRate::from_mbps(32_000, clock()).unwrap()
}

fn port(flows: Vec<FlowConfig>, ctxs: Vec<Box<dyn hca_model::rate::RateController>>) -> TxPort {
    TxPort::new(
        PortConfig {
            link: link(),
            clock: clock(),
            vl_arb: vl_arb::Config {
                high: vec![],
                low: vec![ArbEntry::new(0, 255)],
                vl_high_limit: 0,
            },
            sl2vl: [0; 16],
            host_cap: None,
            flow_control: LinkFlowControl::Credits(credit_tx::Config { fccl_reset: 0 }),
            cnp_queue_len: 16,
        },
        flows,
        ctxs,
    )
    .unwrap()
}

fn spec() -> FlowSpec {
    FlowSpec {
        service: Service::Ud,
        slid: 1,
        dlid: 2,
        sl: 0,
        vl: 0,
        pkey: 0xffff,
        src_qp: 0x11,
        dest_qp: 0x22,
        qkey: 7,
        mtu: Mtu::new(2048).unwrap(),
    }
}

fn cct(min: u8, limit: u16, timer: u16) -> CctController {
    let entries = (0..=limit)
        .map(|i| CctEntry::new(1, i * 2).unwrap())
        .collect();
    CctController::new(&CctParams {
        settings: CctSettings {
            entry: CaCongestionEntry {
                ccti_timer: timer,
                ccti_increase: 1,
                trigger_threshold: 0,
                ccti_min: min,
            },
            cct: Cct {
                ccti_limit: limit,
                entries,
            },
        },
        mtu: Mtu::new(2048).unwrap(),
        // UD packets: LRH 8 + BTH 12 + DETH 8 + ICRC 4 + VCRC 2.
        packet_overhead: IB_LOCAL_OVERHEAD + 8,
        link: link(),
        clock: clock(),
    })
    .unwrap()
}

/// Runs the pair for `cycles`; `mark` decides whether the switch sets FECN on a data packet. Returns the
/// data arrival times at B (last wire cycle + latency), and A's port.
fn run(
    ctrl: CctController,
    cycles: Cycle,
    mark: impl Fn(Cycle) -> bool,
) -> (Vec<(Cycle, u32)>, TxPort, Sink) {
    let flow = FlowConfig {
        spec: spec(),
        first_psn: 0,
        arrivals: Arrivals::new(Pattern::Saturating, clock(), 2048, 0, u64::MAX, 1).unwrap(),
        msg_bytes: 2048,
        cc: Some(0),
        roce: None,
    };
    let seg = Segmenter::new(spec(), 0);
    let mut a = port(vec![flow], vec![Box::new(ctrl)]);
    let mut b = port(vec![], vec![]);
    let np = |lid| IbNpConfig {
        own_lid: lid,
        rc_request: RcRequestFecn::AckWithBecn,
        coalescing: CnpCoalescing::Off,
    };
    let mut sink_a = Sink::new(np(1));
    let mut sink_b = Sink::new(np(2));
    // Packets on the wire A -> B and B -> A: (arrival cycle, bytes).
    let mut ab: VecDeque<(Cycle, Vec<u8>)> = VecDeque::new();
    let mut ba: VecDeque<(Cycle, Vec<u8>)> = VecDeque::new();
    let mut arrivals = Vec::new();
    let mut buf = Vec::new();
    for now in 0..cycles {
        // Endless buffers: every cycle a flow-control packet puts FCCL 1000 blocks ahead of FCTBS.
        a.flow_control(0, (a.fctbs(0) + 1000) & 0x0FFF);
        b.flow_control(0, (b.fctbs(0) + 1000) & 0x0FFF);
        while ab.front().is_some_and(|p| p.0 <= now) {
            let (t, bytes) = ab.pop_front().unwrap();
            let r = sink_b.receive_bytes(t, &bytes).unwrap();
            arrivals.push((t, bytes.len() as u32));
            if let Some(c) = r.cnp {
                b.push_cnp(c);
            }
        }
        while ba.front().is_some_and(|p| p.0 <= now) {
            let (t, bytes) = ba.pop_front().unwrap();
            let r = sink_a.receive_bytes(t, &bytes).unwrap();
            if r.becn_for_qp == Some(0x11) {
                a.feedback(t, 0, Feedback::Cnp(CnpInfo::BECN));
            }
        }
        if let Some(TxStart {
            sent,
            kind: TxKind::Data { seg: s, .. },
            ..
        }) = a.step(now)
        {
            let mut p = seg.packet(&s);
            p.transport.bth.fecn = mark(now);
            p.build(&mut buf).unwrap();
            ab.push_back((sent.end + LATENCY, buf.clone()));
        }
        if let Some(TxStart {
            sent,
            kind: TxKind::Cnp(CnpKind::Ib(c)),
            ..
        }) = b.step(now)
        {
            builder::ib_cnp(&c, &mut buf).unwrap();
            ba.push_back((sent.end + LATENCY, buf.clone()));
        }
    }
    (arrivals, a, sink_b)
}

fn rate_bps(arr: &[(Cycle, u32)]) -> f64 {
    let bits: u64 = arr[..arr.len() - 1]
        .iter()
        .map(|a| u64::from(a.1) * 8)
        .sum();
    bits as f64 * 1e9 / (arr[arr.len() - 1].0 - arr[0].0) as f64
}

/// A flow held at a fixed CCT entry (CCTI_Min = CCTI_Limit = 3: shift 1, multiplier 6) is received at B at
/// the rate the entry predicts. UD packets of 2082 bytes (2048 + 34): T_pkt = 520.5 rounded up to 521 cycles;
/// the serialiser alternates 520 and 521 (exactly 4 bytes per cycle); IRD = (521 >> 1) * 6 = 1560.
/// Bandwidth fraction 2 / (2 + 6) = 25% of 32 Gbit/s; measured (wire bytes at B) within 1% of it.
#[test]
fn fixed_entry_rate_at_the_receiver() {
    let (arr, _, sink) = run(cct(3, 3, 0), 2_000_000, |_| false);
    let got = rate_bps(&arr);
    let want = 32e9 * 2.0 / 8.0;
    eprintln!(
        "fixed entry at the receiver: {:.4} Gbit/s vs {:.4} predicted",
        got / 1e9,
        want / 1e9
    );
    assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
    let f = sink.flow(1, 0x22);
    assert_eq!((f.fecn_marked, f.cnps_sent, f.icrc_errors), (0, 0, 0));
    assert_eq!(f.packets as usize, arr.len());
}

/// Every packet marked between 100 000 and 600 000: CNPs flow back, A's CCTI climbs to CCTI_Limit (10) and
/// the rate at B drops to about entry 10's share, 2 / (2 + 20) of the link. The CCTI_Timer (20 ticks =
/// 20 480 cycles) keeps taking it to 9 until the next CNP (one packet period, about 5700 cycles, plus the
/// round trip) puts it back, so the rate lies between entry 10's (2.909 Gbit/s) and entry 9's (3.2 Gbit/s).
/// After marking stops the timer brings CCTI back to 0 and the flow back to the full rate.
#[test]
fn marking_closes_the_loop() {
    let (arr, mut a, sink) = run(cct(0, 10, 20), 3_000_000, |t| {
        (100_000..600_000).contains(&t)
    });
    let ccti = a.context(0).map(|c| c.rate_bps()).unwrap();
    assert!(ccti > 31_000_000_000, "back to full rate: {ccti}");
    let window: Vec<(Cycle, u32)> = arr
        .iter()
        .copied()
        .filter(|a| (400_000..600_000).contains(&a.0))
        .collect();
    let got = rate_bps(&window);
    let (lo, hi) = (32e9 * 2.0 / 22.0, 32e9 * 2.0 / 20.0);
    eprintln!(
        "marked: {:.4} Gbit/s, entries 10..9 give {:.4}..{:.4}",
        got / 1e9,
        lo / 1e9,
        hi / 1e9
    );
    assert!(got > lo * 0.995 && got < hi, "{got} not in [{lo}, {hi}]");
    let late: Vec<(Cycle, u32)> = arr.iter().copied().filter(|a| a.0 > 2_500_000).collect();
    assert!(rate_bps(&late) > 0.99 * 32e9);
    let f = sink.flow(1, 0x22);
    assert!(f.fecn_marked > 0 && f.cnps_sent == f.fecn_marked);
}
