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

// RoCEv2 ports: the same scoreboard with Ethernet frames, ECN CE and PFC.

use rtl_model::link::pfc::{frame as pause_frame, mark_ce_ipv4, PfcConfig};

/// `cfg()` with every port RoCEv2 (PFC, headroom for a 20-cycle link), 128-block priority buffers and SL s on
/// priority s.
fn roce_cfg() -> SwitchConfig {
    let mut c = cfg();
    c.mtu = 2048;
    for p in &mut c.ports {
        p.pfc = Some(PfcConfig::default());
        p.vl_buf_blocks = vec![128, 128];
    }
    for (sl, v) in c.sl2vl[0].vl.iter_mut().enumerate() {
        *v = (sl % 2) as u8;
    }
    c
}

/// A RoCEv2 frame: DLID `dlid`, priority `prio`, `payload` bytes, PSN `psn`, ECN `ecn`.
fn frame(dlid: u16, prio: u8, payload: u16, psn: u32, ecn: u8) -> Vec<u8> {
    let mut d = PacketDesc::roce_v4(dlid, 0x40, prio, Opcode::RcSendOnly, payload);
    d.psn = psn;
    d.payload_seed = psn * 7 + 1;
    d.ecn = ecn;
    let mut b = Vec::new();
    d.materialise_roce_v4(&mut b).unwrap();
    b
}

/// What a correct RoCEv2 switch sends for `b`: the LFT's port, the bytes unchanged or marked CE (checksum
/// updated).
fn roce_out(c: &SwitchConfig, b: &[u8], mark: bool) -> (usize, Vec<u8>) {
    let dlid = u16::from_be_bytes([b[4], b[5]]);
    let o = usize::from(c.lft[usize::from(dlid)].unwrap());
    let mut x = b.to_vec();
    if mark {
        mark_ce_ipv4(&mut x).unwrap();
    }
    (o, x)
}

fn roce_sb() -> (SwitchConfig, Scoreboard) {
    let c = roce_cfg();
    let sb = Scoreboard::new(&c, Bounds::default());
    (c, sb)
}

#[test]
fn roce_ideal_stream_passes() {
    let (c, mut sb) = roce_sb();
    let mut cyc = 0;
    for i in 0..200u32 {
        let b = frame(
            (i % 8) as u16,
            (i % 2) as u8,
            (i * 37 % 1500) as u16,
            i,
            [0, 1, 2, 3][i as usize % 4],
        );
        let id = sb.rx_packet(cyc, (i % 4) as usize, &b);
        let (o, x) = roce_out(&c, &b, false);
        sb.golden_tx(cyc + 5, id, o, (i % 2) as u8, false);
        sb.tx_packet(cyc + 10, o, &x).unwrap();
        cyc += 40;
    }
    sb.finish(cyc).unwrap();
    assert_eq!(sb.checked(), 200);
}

#[test]
fn roce_mutant_bytes_checksum_icrc() {
    let b = frame(1, 0, 300, 1, 2);
    // A payload byte.
    let (c, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    let (o, mut x) = roce_out(&c, &b, false);
    x[80] ^= 1;
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::BytesChanged);
    // The ICRC.
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    let l = x.len();
    let (o, mut x) = roce_out(&c, &b, false);
    x[l - 2] ^= 0x10;
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::IcrcChanged);
    // CE set with the checksum left as it was (not updated), or a checksum wrong on its own.
    let (_, mut sb) = roce_sb();
    sb.golden_mark_state(0, 1, 0, true);
    sb.rx_packet(0, 0, &b);
    let (o, mut x) = roce_out(&c, &b, false);
    x[14 + 1] |= 3;
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::BadIpChecksum);
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    let (o, mut x) = roce_out(&c, &b, false);
    x[14 + 11] ^= 0x01;
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::BadIpChecksum);
    // An ECT codepoint changed (ECT(0) to ECT(1)), checksum made right: not a mark.
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    let (o, x) = roce_out(&c, &frame(1, 0, 300, 1, 1), false);
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::BytesChanged);
    // Wrong port, unknown, duplicate, out of order: the shared core.
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    let (o, x) = roce_out(&c, &b, false);
    assert_eq!(kind(sb.tx_packet(10, (o + 1) % 4, &x)), Kind::WrongPort);
    let (_, mut sb) = roce_sb();
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::Unknown);
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &b);
    sb.tx_packet(10, o, &x).unwrap();
    assert_eq!(kind(sb.tx_packet(20, o, &x)), Kind::Duplicate);
    let (_, mut sb) = roce_sb();
    let b2 = frame(1, 0, 300, 2, 2);
    sb.rx_packet(0, 0, &b);
    sb.rx_packet(5, 0, &b2);
    sb.tx_packet(10, o, &roce_out(&c, &b2, false).1).unwrap();
    assert_eq!(kind(sb.tx_packet(20, o, &x)), Kind::OutOfOrder);
}

#[test]
fn roce_mutant_ce() {
    let (c, _) = roce_sb();
    // Marked in the marking state: fine, and counted; outside it: ineligible.
    let b = frame(1, 0, 1000, 1, 2);
    let (_, mut sb) = roce_sb();
    sb.golden_mark_state(4_990, 1, 0, true);
    sb.rx_packet(5_000, 0, &b);
    let (o, x) = roce_out(&c, &b, true);
    assert_eq!(x[15] & 3, 3);
    sb.tx_packet(5_010, o, &x).unwrap();
    assert_eq!(sb.marks(), (1, 1));
    let (_, mut sb) = roce_sb();
    sb.rx_packet(5_000, 0, &b);
    assert_eq!(kind(sb.tx_packet(5_010, o, &x)), Kind::CeIneligible);
    // Not ECN-capable: never marked, even in the marking state (checksum made right by hand).
    let n = frame(1, 0, 1000, 2, 0);
    let (_, mut sb) = roce_sb();
    sb.golden_mark_state(0, 1, 0, true);
    sb.rx_packet(5_000, 0, &n);
    let (o, x) = roce_out(&c, &frame(1, 0, 1000, 2, 3), false);
    assert_eq!(kind(sb.tx_packet(5_010, o, &x)), Kind::CeIneligible);
    // CE in, ECT out.
    let m = frame(1, 0, 1000, 3, 3);
    let (_, mut sb) = roce_sb();
    sb.rx_packet(0, 0, &m);
    let (o, x) = roce_out(&c, &frame(1, 0, 1000, 3, 2), false);
    assert_eq!(kind(sb.tx_packet(10, o, &x)), Kind::CeCleared);
    // Marking every eligible frame at Marking_Rate 10.
    let (_, mut sb) = roce_sb();
    sb.golden_mark_state(0, 1, 0, true);
    let mut res = Ok(());
    for i in 0..40u32 {
        let b = frame(1, 0, 1000, 10 + i, 2);
        sb.rx_packet(u64::from(i) * 100, 0, &b);
        let (o, x) = roce_out(&c, &b, true);
        res = sb.tx_packet(u64::from(i) * 100 + 10, o, &x);
        if res.is_err() {
            break;
        }
    }
    assert_eq!(kind(res), Kind::MarkRate);
}

#[test]
fn roce_mutant_pause_ignored_and_overrun() {
    let (c, _) = roce_sb();
    let b = frame(1, 0, 1000, 1, 2);
    let (o, x) = roce_out(&c, &b, false);
    // Output 1 priority 0 paused at cycle 100 for 0xFFFF quanta: a start within the response bound passes,
    // one after it does not; a resume frees it from the next cycle; the other priority is not paused.
    for (at, resume, prio, ok) in [
        (105, None, 0u8, true),
        (109, None, 0, false),
        (5_000, None, 0, false),
        (5_000, Some(4_000), 0, true),
        (5_000, None, 1, true),
    ] {
        let (_, mut sb) = roce_sb();
        sb.rx_pause(100, o, pause_frame(0, 0xFFFF));
        if let Some(r) = resume {
            sb.rx_pause(r, o, pause_frame(0, 0));
        }
        let f = frame(1, prio, 1000, 1, 2);
        sb.rx_packet(0, 0, &f);
        let (_, y) = roce_out(&c, &f, false);
        let r = sb.tx_packet(at, o, &y);
        if ok {
            r.unwrap();
        } else {
            assert_eq!(kind(r), Kind::PauseIgnored);
        }
    }
    // A 1000-byte frame is 16 blocks: the eighth fits the 128-block buffer, a ninth with none out does not.
    let (_, mut sb) = roce_sb();
    for i in 0..8u32 {
        sb.rx_packet(u64::from(i) * 300, 0, &frame(1, 0, 1000, i, 2));
    }
    sb.advance(2_400).unwrap();
    sb.rx_packet(2_400, 0, &frame(1, 0, 1000, 8, 2));
    assert_eq!(kind(sb.advance(2_401)), Kind::PfcOverrun);
    // One out first: fine.
    let (_, mut sb) = roce_sb();
    for i in 0..8u32 {
        sb.rx_packet(u64::from(i) * 300, 0, &frame(1, 0, 1000, i, 2));
    }
    let (o, x0) = roce_out(&c, &frame(1, 0, 1000, 0, 2), false);
    sb.tx_packet(2_300, o, &x0).unwrap();
    sb.rx_packet(2_400, 0, &frame(1, 0, 1000, 8, 2));
    sb.advance(2_401).unwrap();
    let _ = x;
}

/// The golden model as a RoCEv2 switch on random RoCEv2 traffic, marking by RCM-1a and by RCM-1b, with link
/// partners small enough that both sides pause: it passes its own checks; with the partners' pauses dropped
/// before they reach it, a frame starts on a paused priority.
#[test]
fn golden_switch_passes_the_roce_bench() {
    use super::bench::{random_roce_traffic, run, BenchConfig, RunError, SwitchDut};
    use switch_asic::config::RoceDetect;
    let bench = BenchConfig {
        partner_buf_blocks: 160,
        partner_hold: 3_000,
        ..BenchConfig::default()
    };
    for detect in [
        RoceDetect::IbRootVictim,
        RoceDetect::Oversubscribed { in_buf_blocks: 40 },
    ] {
        let mut c = roce_cfg();
        for p in &mut c.ports {
            p.cc.threshold = 10;
            p.cc.packet_size = 0;
            p.cc.marking_rate = 1;
            p.cc.roce_detect = detect;
        }
        let traffic = random_roce_traffic(&c, 3000, 7, 10);
        let mut dut = SwitchDut::new(&c).unwrap();
        let o = run(&mut dut, &c, traffic.clone(), bench, Bounds::default()).unwrap();
        eprintln!("{detect:?}: {o:?}");
        assert!(o.packets > 2000, "{o:?}");
        assert_eq!(o.golden_notes, 0);
        assert!(o.marked > 0 && o.marked <= o.eligible, "{o:?}");
        assert!(o.pauses_in > 0 && o.pauses_out > 0, "{o:?}");
        let mut dut = SwitchDut::new(&c).unwrap();
        dut.ignore_pause = true;
        match run(&mut dut, &c, traffic, bench, Bounds::default()) {
            Err(RunError::Violation(v)) => assert_eq!(v.kind, Kind::PauseIgnored, "{v}"),
            r => panic!("{r:?}"),
        }
    }
}
