//! Synthetic streams: an ideal switch's stream passes, and one mutated stream per check fails with that check.

use rtl_model::link::packet::{egress_rewrite, FcPacket, PacketDesc};
use rtl_model::wire::bth::Opcode;
use switch_asic::{LinkRate, PortConfig, SwitchConfig};

use super::{Bounds, Kind, Scoreboard};

/// Four ports of 64-block VL buffers with the VL arbitration of the RTL checker's random traffic (both VLs in
/// the low table, equal weights) and the default CC settings.
fn cfg() -> SwitchConfig {
    let mut p = PortConfig::new(LinkRate::new(4, 1).unwrap(), 64).with_vls(2, 64);
    p.vlarb = crate::rtlcheck::default_random_config(4).ports[0]
        .vlarb
        .clone();
    let mut c = SwitchConfig::uniform(4, p);
    for d in 0..8u16 {
        c.route(d, (d % 4) as u8);
    }
    c
}

/// Packet bytes: DLID `dlid`, SL `sl`, arriving on VL `sl % 2`, `payload` bytes, PSN `psn`.
fn pkt(dlid: u16, sl: u8, payload: u16, psn: u32, fecn: bool) -> Vec<u8> {
    let mut d = PacketDesc::local(dlid, 0x40, sl, Opcode::RcSendOnly, payload);
    d.vl = sl % 2;
    d.psn = psn;
    d.payload_seed = psn * 7 + 1;
    d.fecn = fecn;
    let mut b = Vec::new();
    d.materialise(&mut b).unwrap();
    b
}

/// What an ideal switch sends for `b` coming in at `inp`: VL from SL2VL, FECN as asked, VCRC regenerated.
fn out(c: &SwitchConfig, inp: usize, b: &[u8], fecn: bool) -> (usize, Vec<u8>) {
    let dlid = u16::from_be_bytes([b[2], b[3]]);
    let o = usize::from(c.lft[usize::from(dlid)].unwrap());
    let vl = c.sl2vl_of(inp, o).vl_of(b[1] >> 4).unwrap();
    let mut x = b.to_vec();
    egress_rewrite(&mut x, vl, fecn).unwrap();
    (o, x)
}

fn credit_all(sb: &mut Scoreboard, fccl: u16) {
    for p in 0..4 {
        for vl in 0..2 {
            sb.rx_fc(0, p, FcPacket { vl, fctbs: 0, fccl });
        }
    }
}

struct Run {
    c: SwitchConfig,
    sb: Scoreboard,
}

impl Run {
    fn new(bounds: Bounds) -> Self {
        let c = cfg();
        let mut sb = Scoreboard::new(&c, bounds);
        credit_all(&mut sb, 1000);
        Run { c, sb }
    }
    fn through(&mut self, cyc: u64, inp: usize, b: &[u8]) -> Result<(), super::Violation> {
        let id = self.sb.rx_packet(cyc, inp, b);
        let (o, x) = out(&self.c, inp, b, b[12] & 0x80 != 0);
        self.sb.golden_tx(cyc + 5, id, o, x[0] >> 4, false);
        self.sb.tx_packet(cyc + 10, o, &x)
    }
    /// The switch's closing flow-control packets: every input VL's whole buffer advertised.
    fn drained(&mut self, cyc: u64) -> Result<(), super::Violation> {
        for p in 0..4 {
            for vl in 0..2u8 {
                let k = self.sb.k(p, vl);
                let fctbs = self.sb.tx[k].sent as u16;
                let fccl = ((self.sb.rx[k].abr + 64) % 4096) as u16;
                self.sb.tx_fc(cyc, p, FcPacket { vl, fctbs, fccl })?;
            }
        }
        self.sb.finish(cyc + 1)
    }
}

fn kind(r: Result<(), super::Violation>) -> Kind {
    match r {
        Ok(()) => panic!("the mutant was not caught"),
        Err(v) => {
            // Every report names its packet's both views in text.
            assert!(!v.to_string().is_empty());
            v.kind
        }
    }
}

#[test]
fn ideal_stream_passes() {
    let mut r = Run::new(Bounds::default());
    let mut cyc = 0;
    for i in 0..200u32 {
        let b = pkt(
            (i % 8) as u16,
            (i % 3) as u8,
            (i * 37 % 1500) as u16,
            i,
            i % 5 == 0,
        );
        r.through(cyc, (i % 4) as usize, &b).unwrap();
        cyc += 20;
    }
    r.drained(cyc).unwrap();
    assert_eq!(r.sb.checked(), 200);
}

#[test]
fn mutant_unknown_and_duplicate() {
    let mut r = Run::new(Bounds::default());
    let (o, x) = out(&r.c, 0, &pkt(1, 0, 100, 1, false), false);
    assert_eq!(kind(r.sb.tx_packet(5, o, &x)), Kind::Unknown);

    let mut r = Run::new(Bounds::default());
    let b = pkt(1, 0, 100, 1, false);
    r.through(0, 0, &b).unwrap();
    let (o, x) = out(&r.c, 0, &b, false);
    assert_eq!(kind(r.sb.tx_packet(30, o, &x)), Kind::Duplicate);
}

#[test]
fn mutant_out_of_order() {
    let mut r = Run::new(Bounds::default());
    let a = pkt(1, 0, 100, 1, false);
    let b = pkt(1, 0, 100, 2, false);
    r.sb.rx_packet(0, 0, &a);
    r.sb.rx_packet(10, 0, &b);
    let (o, xb) = out(&r.c, 0, &b, false);
    r.sb.tx_packet(20, o, &xb).unwrap();
    let (o, xa) = out(&r.c, 0, &a, false);
    assert_eq!(kind(r.sb.tx_packet(30, o, &xa)), Kind::OutOfOrder);
    // Different input VLs may pass each other.
    let mut r = Run::new(Bounds::default());
    let a = pkt(1, 0, 100, 1, false);
    let b = pkt(1, 1, 100, 2, false);
    r.sb.rx_packet(0, 0, &a);
    r.sb.rx_packet(10, 0, &b);
    let (o, xb) = out(&r.c, 0, &b, false);
    r.sb.tx_packet(20, o, &xb).unwrap();
    let (o, xa) = out(&r.c, 0, &a, false);
    r.sb.tx_packet(30, o, &xa).unwrap();
}

#[test]
fn mutant_wrong_port_and_vl() {
    let mut r = Run::new(Bounds::default());
    let b = pkt(1, 0, 100, 1, false);
    r.sb.rx_packet(0, 0, &b);
    let (o, x) = out(&r.c, 0, &b, false);
    assert_eq!(kind(r.sb.tx_packet(10, (o + 1) % 4, &x)), Kind::WrongPort);

    let mut r = Run::new(Bounds::default());
    r.sb.rx_packet(0, 0, &b);
    let mut x = b.clone();
    egress_rewrite(&mut x, 1, false).unwrap();
    assert_eq!(kind(r.sb.tx_packet(10, o, &x)), Kind::WrongVl);
}

#[test]
fn mutant_bytes_icrc_vcrc() {
    let b = pkt(1, 0, 100, 1, false);
    let mut r = Run::new(Bounds::default());
    r.sb.rx_packet(0, 0, &b);
    let (o, mut x) = out(&r.c, 0, &b, false);
    x[40] ^= 1;
    rtl_model::crc::vcrc::fill_vcrc(&mut x);
    assert_eq!(kind(r.sb.tx_packet(10, o, &x)), Kind::BytesChanged);

    let mut r = Run::new(Bounds::default());
    r.sb.rx_packet(0, 0, &b);
    let (o, mut x) = out(&r.c, 0, &b, false);
    let l = x.len();
    x[l - 4] ^= 0x10;
    rtl_model::crc::vcrc::fill_vcrc(&mut x);
    assert_eq!(kind(r.sb.tx_packet(10, o, &x)), Kind::IcrcChanged);

    let mut r = Run::new(Bounds::default());
    r.sb.rx_packet(0, 0, &b);
    let (o, mut x) = out(&r.c, 0, &b, false);
    x[l - 1] ^= 0x01;
    assert_eq!(kind(r.sb.tx_packet(10, o, &x)), Kind::BadVcrc);
}

#[test]
fn mutant_fecn() {
    // Cleared.
    let mut r = Run::new(Bounds::default());
    let b = pkt(1, 0, 1000, 1, true);
    r.sb.rx_packet(0, 0, &b);
    let (o, x) = out(&r.c, 0, &b, false);
    let mut x2 = x.clone();
    x2[12] &= 0x7f;
    rtl_model::crc::vcrc::fill_vcrc(&mut x2);
    assert_eq!(kind(r.sb.tx_packet(10, o, &x2)), Kind::FecnCleared);

    // Set with the golden port-VL never in the marking state, or in it long before.
    let b = pkt(1, 0, 1000, 2, false);
    for state_at in [None, Some(0u64)] {
        let mut r = Run::new(Bounds::default());
        if let Some(c) = state_at {
            r.sb.golden_mark_state(c, 1, 0, true);
            r.sb.golden_mark_state(c + 10, 1, 0, false);
        }
        r.sb.rx_packet(5_000, 0, &b);
        let (o, x) = out(&r.c, 0, &b, true);
        assert_eq!(kind(r.sb.tx_packet(5_010, o, &x)), Kind::FecnIneligible);
    }
    // In the marking state: fine; too short (Packet_Size 8 = 512 bytes): not.
    let mut r = Run::new(Bounds::default());
    r.sb.golden_mark_state(4_990, 1, 0, true);
    r.sb.rx_packet(5_000, 0, &b);
    let (o, x) = out(&r.c, 0, &b, true);
    r.sb.tx_packet(5_010, o, &x).unwrap();
    let s = pkt(1, 0, 100, 3, false);
    r.sb.rx_packet(5_020, 0, &s);
    let (o, x) = out(&r.c, 0, &s, true);
    assert_eq!(kind(r.sb.tx_packet(5_030, o, &x)), Kind::FecnIneligible);
}

#[test]
fn mutant_mark_rate() {
    // Marking_Rate 10: marking every eligible packet is caught within a few dozen.
    let mut r = Run::new(Bounds::default());
    r.sb.golden_mark_state(0, 1, 0, true);
    let mut res = Ok(());
    for i in 0..40u32 {
        let b = pkt(1, 0, 1000, i, false);
        r.sb.rx_packet(u64::from(i) * 100, 0, &b);
        let (o, x) = out(&r.c, 0, &b, true);
        res = r.sb.tx_packet(u64::from(i) * 100 + 10, o, &x);
        if res.is_err() {
            break;
        }
    }
    assert_eq!(kind(res), Kind::MarkRate);
    // One in eleven passes.
    let mut r = Run::new(Bounds::default());
    credit_all(&mut r.sb, 2000);
    r.sb.golden_mark_state(0, 1, 0, true);
    for i in 0..110u32 {
        let b = pkt(1, 0, 1000, i, false);
        r.sb.rx_packet(u64::from(i) * 100, 0, &b);
        let (o, x) = out(&r.c, 0, &b, i % 11 == 0);
        r.sb.tx_packet(u64::from(i) * 100 + 10, o, &x).unwrap();
    }
}

#[test]
fn mutant_credits() {
    // 17-block packets against an FCCL of 20: the second overruns.
    let c = cfg();
    let mut sb = Scoreboard::new(&c, Bounds::default());
    credit_all(&mut sb, 20);
    let a = pkt(1, 0, 1000, 1, false);
    let b = pkt(1, 0, 1000, 2, false);
    sb.rx_packet(0, 0, &a);
    sb.rx_packet(1, 0, &b);
    let (o, x) = out(&c, 0, &a, false);
    sb.tx_packet(10, o, &x).unwrap();
    let (o, x) = out(&c, 0, &b, false);
    assert_eq!(kind(sb.tx_packet(20, o, &x)), Kind::CreditOverrun);
    // Without any flow-control packet there is no credit at all.
    let mut sb = Scoreboard::new(&c, Bounds::default());
    sb.rx_packet(0, 0, &a);
    let (o, x) = out(&c, 0, &a, false);
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::CreditOverrun);

    // FCTBS other than the blocks sent.
    let mut r = Run::new(Bounds::default());
    r.through(0, 0, &a).unwrap();
    let fc = FcPacket {
        vl: 0,
        fctbs: 16,
        fccl: 64,
    };
    assert_eq!(kind(r.sb.tx_fc(30, 1, fc)), Kind::BadFctbs);
    // FCCL beyond the buffer (64 blocks per VL).
    let mut r = Run::new(Bounds::default());
    r.through(0, 0, &a).unwrap();
    let fc = FcPacket {
        vl: 0,
        fctbs: 0,
        fccl: 17 + 65,
    };
    assert_eq!(kind(r.sb.tx_fc(30, 0, fc)), Kind::CreditBeyondBuffer);
    let fc = FcPacket {
        vl: 0,
        fctbs: 0,
        fccl: 17 + 64,
    };
    r.sb.tx_fc(31, 0, fc).unwrap();
}

#[test]
fn mutant_lossless() {
    let mut r = Run::new(Bounds::default());
    let a = pkt(1, 0, 1000, 1, false);
    r.sb.rx_packet(0, 0, &a);
    assert_eq!(kind(r.drained(100)), Kind::Lost);
    // Delivered, but one block of credit never advertised again.
    let mut r = Run::new(Bounds::default());
    r.through(0, 0, &a).unwrap();
    let fc = FcPacket {
        vl: 0,
        fctbs: 0,
        fccl: 17 + 63,
    };
    r.sb.tx_fc(100, 0, fc).unwrap();
    assert_eq!(kind(r.sb.finish(200)), Kind::CreditLost);
}

#[test]
fn mutant_latency() {
    let mut r = Run::new(Bounds {
        max_extra_latency: 100,
        ..Bounds::default()
    });
    let a = pkt(1, 0, 100, 1, false);
    let id = r.sb.rx_packet(0, 0, &a);
    r.sb.golden_tx(10, id, 1, 0, false);
    let (o, x) = out(&r.c, 0, &a, false);
    assert_eq!(kind(r.sb.tx_packet(111, o, &x)), Kind::Latency);
    let mut r = Run::new(Bounds {
        max_extra_latency: 100,
        ..Bounds::default()
    });
    let id = r.sb.rx_packet(0, 0, &a);
    r.sb.golden_tx(10, id, 1, 0, false);
    r.sb.tx_packet(110, o, &x).unwrap();
}

/// Output 1: VL 0 and VL 1 (weights 4 and 4) both wait with credit; the switch serves VL 0 only (`starve`)
/// or alternates.
fn arb_run(starve: bool) -> Result<(), super::Violation> {
    let bounds = Bounds {
        arb_window: 10_000,
        arb_settle: 100,
        arb_slack_bytes: 4_200,
        ..Bounds::default()
    };
    let c = cfg();
    let mut sb = Scoreboard::new(&c, bounds);
    credit_all(&mut sb, 2000);
    // Plenty waiting on both VLs from cycle 0 (SL 0 -> VL 0, SL 1 -> VL 1), from inputs 0 and 2.
    let mut q: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    for i in 0..120u32 {
        for vl in 0..2u8 {
            let b = pkt(1, vl, 1000, i * 2 + u32::from(vl), false);
            sb.rx_packet(0, usize::from(vl) * 2, &b);
            q[usize::from(vl)].push(b);
        }
    }
    let mut cyc = 200;
    let mut k = [0usize; 2];
    for n in 0..110 {
        let vl = if starve || n % 2 == 0 { 0 } else { 1 };
        let b = &q[vl][k[vl]];
        k[vl] += 1;
        let (o, x) = out(&c, vl * 2, b, false);
        sb.tx_packet(cyc, o, &x)?;
        // 1,066 bytes at 4 bytes per cycle.
        cyc += 270;
        // The partner keeps returning credit.
        for v in 0..2u8 {
            let kk = sb.k(1, v);
            let fccl = ((sb.tx[kk].sent + 1000) % 4096) as u16;
            sb.rx_fc(
                cyc,
                1,
                FcPacket {
                    vl: v,
                    fctbs: 0,
                    fccl,
                },
            );
        }
    }
    sb.advance(cyc)
}

#[test]
fn mutant_arbitration() {
    arb_run(false).unwrap();
    assert_eq!(kind(arb_run(true)), Kind::ArbShare);
}

/// The golden model as the switch under test, with congestion (a hot output) and marking on: it passes its
/// own checks; with its VLs mixed up it does not.
#[test]
fn golden_switch_passes_the_bench() {
    use super::bench::{random_traffic, run, BenchConfig, RunError, SwitchDut};
    let mut c = cfg();
    c.mtu = 2048;
    for p in &mut c.ports {
        p.cc.threshold = 10;
        p.cc.packet_size = 0;
        p.cc.marking_rate = 1;
    }
    let traffic = random_traffic(&c, 3000, 7, 10);
    let mut dut = SwitchDut::new(&c).unwrap();
    let o = run(
        &mut dut,
        &c,
        traffic.clone(),
        BenchConfig::default(),
        Bounds::default(),
    )
    .unwrap();
    eprintln!("{o:?}");
    assert!(o.packets > 2000, "{o:?}");
    assert_eq!(o.golden_notes, 0);
    assert!(o.marked > 0 && o.marked <= o.eligible, "{o:?}");
    let mut dut = SwitchDut::new(&c).unwrap();
    dut.mutate_vl = true;
    match run(
        &mut dut,
        &c,
        traffic,
        BenchConfig::default(),
        Bounds::default(),
    ) {
        Err(RunError::Violation(v)) => assert_eq!(v.kind, Kind::WrongVl),
        r => panic!("{r:?}"),
    }
}
