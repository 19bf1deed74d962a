//! Switch-level tests of RoCEv2 mode: PFC losslessness and headroom, ECN CE marking by RCM-1a and RCM-1b.

use crate::config::{PortCc, RoceDetect, SwitchConfig};
use crate::rig::Rig;
use crate::switch_tests::cfg;
use rtl_model::link::packet::PacketDesc;
use rtl_model::link::pfc::headroom_blocks;
use rtl_model::link::pfc::PfcConfig;
use rtl_model::link::rate::LinkRate;
use rtl_model::wire::bth::Opcode;

const OUT: usize = 4;

/// A 5-port PFC switch (buffers of `buf` blocks, headroom for `delay`) with PFC endpoints, links of
/// `latency` cycles, and a 4:1 incast of ECT(0) packets into port 4.
fn roce_rig(buf: u16, delay: u32, latency: u64, cc: PortCc, inputs: usize) -> Rig {
    let mut c: SwitchConfig = cfg(5, LinkRate::new(8, 1).unwrap(), buf);
    for p in c.ports.iter_mut() {
        p.pfc = Some(PfcConfig {
            link_delay: delay,
            ..PfcConfig::default()
        });
        p.cc = cc;
    }
    let mut r = Rig::new(c, buf, latency).unwrap();
    for p in 0..inputs {
        r.set_source(p, roce(p), None);
    }
    r
}

/// A 2048-byte RoCEv2 packet (ECT(0)) from input `p` to port 4.
fn roce(p: usize) -> PacketDesc {
    PacketDesc::roce_v4(OUT as u16 + 1, p as u16 + 1, 0, Opcode::RcSendOnly, 2048)
}

fn overflows(r: &Rig) -> u64 {
    (0..5)
        .map(|p| r.sw.port_counters(p).overflow + r.eps[p].stats().overflow)
        .sum()
}

#[test]
fn pfc_incast_is_lossless_for_a_million_cycles() {
    let mut r = roce_rig(250, 20, 20, PortCc::off(), 4);
    let mut paused_cycles = 0u64;
    for _ in 0..1_000_000 {
        r.step();
        paused_cycles += u64::from(r.sw.observe(0, 0).pause_sent);
    }
    assert_eq!(overflows(&r), 0);
    let out = r.sw.port_counters(OUT);
    assert!(
        out.xmit_bytes as f64 / 8e6 > 0.97,
        "output at {} of line rate",
        out.xmit_bytes as f64 / 8e6
    );
    assert!(
        paused_cycles > 100_000,
        "input 0 was paused for {paused_cycles} cycles"
    );
    for p in 0..4 {
        r.stop_source(p);
    }
    r.run(20_000);
    let sent: u64 = (0..5).map(|p| r.eps[p].stats().sent_pkts).sum();
    let recv: u64 = (0..5).map(|p| r.eps[p].stats().recv_pkts).sum();
    assert_eq!(sent, recv, "packets lost");
    assert_eq!(r.sw.packets_held(), 0);
    for p in 0..5 {
        let o = r.sw.observe(p, 0);
        assert_eq!(
            (o.in_buf_used, o.pause_sent, o.paused),
            (0, false, false),
            "port {p} after drain"
        );
        assert_eq!(r.sw.port_counters(p).dropped, 0);
    }
}

/// Headroom computed for a 60-cycle link: every link delay up to 60 is paused in time (no overflow), the
/// senders are paused and resumed; a 1000-cycle link, far beyond the headroom, overflows.
#[test]
fn pfc_pauses_before_overflow_for_every_delay_within_headroom() {
    for delay in [1u64, 7, 20, 33, 47, 60] {
        let mut r = roce_rig(250, 60, delay, PortCc::off(), 4);
        r.run(60_000);
        assert_eq!(overflows(&r), 0, "link delay {delay}");
        for p in 0..4 {
            let c = r.sw.counters(p, 0);
            assert!(
                c.pauses_sent > 0 && c.resumes_sent > 0,
                "delay {delay}, input {p}: {c:?}"
            );
        }
        // Every input was paused at some point and is now flowing or paused, never overflowing; the
        // sources were held back: each sent well under line rate.
        for p in 0..4 {
            assert!(
                r.eps[p].stats().sent_bytes < 60_000 * 8 / 2,
                "input {p} not held back"
            );
        }
    }
    let mut r = roce_rig(250, 60, 1000, PortCc::off(), 4);
    r.run(60_000);
    assert!(
        overflows(&r) > 0,
        "a link beyond the headroom must overflow (or the check cannot fail)"
    );
}

#[test]
fn headroom_of_the_test_link() {
    // 250-block buffers, headroom for 60 cycles: 2 x 66 x 64 + 64 + 122 x 8 = 9488 bytes, 149 + 1 blocks,
    // XOFF at 100 blocks. 600 cycles would need 2 x 66 x 64 + 64 + 1202 x 8 = 18,128 bytes: 285 blocks.
    assert_eq!(headroom_blocks(LinkRate::new(8, 1).unwrap(), 60, 66), 150);
    assert_eq!(headroom_blocks(LinkRate::new(8, 1).unwrap(), 600, 66), 285);
}

fn ce_run(cc: PortCc, inputs: usize, slow_sink: bool) -> (u64, u64, u64) {
    let mut r = roce_rig(250, 20, 20, cc, inputs);
    if slow_sink {
        // The output resumes for about 460 cycles after each XON before the sink pauses it again; a hold of
        // 2000 cycles keeps it a victim throughout.
        let mut c = r.sw.config().clone();
        for p in c.ports.iter_mut() {
            p.pfc = p.pfc.map(|x| PfcConfig {
                victim_hold: 2000,
                ..x
            });
        }
        let srcs: Vec<_> = (0..inputs).collect();
        r = Rig::new(c, 250, 20).unwrap();
        for p in srcs {
            r.set_source(p, roce(p), None);
        }
    }
    if slow_sink {
        r.eps[OUT].set_drain(Some(LinkRate::new(1, 1).unwrap()));
    }
    r.run(30_000);
    let b = r.sw.counters(OUT, 0);
    let ce0 = r.eps[OUT].stats().recv_ce;
    r.run(100_000);
    let c = r.sw.counters(OUT, 0);
    assert_eq!(overflows(&r), 0);
    (
        c.marked - b.marked,
        c.xmit_pkts - b.xmit_pkts,
        r.eps[OUT].stats().recv_ce - ce0,
    )
}

#[test]
fn rcm_1a_marks_ce_at_the_root_and_at_the_victim_only_with_the_mask() {
    let cc = PortCc {
        threshold: 15,
        packet_size: 0,
        marking_rate: 0,
        ..PortCc::default()
    };
    // Incast, fast sink: the output is the root; every packet is marked CE (rate 0) once congested.
    let (marked, sent, ce) = ce_run(cc, 4, false);
    assert!(sent > 300, "{sent} packets in the window");
    assert!(
        marked + 2 >= sent && ce + 2 >= marked,
        "root marks: {marked} of {sent}, {ce} CE at the sink"
    );
    // Slow sink: it pauses the output, which is then a victim: no marks, unless Victim_Mask.
    let (marked, sent, _) = ce_run(cc, 4, true);
    assert!(sent > 40);
    assert_eq!(
        marked, 0,
        "a paused (victim) output marks nothing without Victim_Mask"
    );
    let (marked, sent, _) = ce_run(
        PortCc {
            victim_mask: true,
            ..cc
        },
        4,
        true,
    );
    // The sink takes 1 byte a cycle: about 48 packets in the 100,000-cycle window, each marked.
    assert!(
        sent > 40 && marked + 2 >= sent,
        "with Victim_Mask the victim marks ({marked} of {sent})"
    );
}

#[test]
fn rcm_1b_marks_when_oversubscribed_and_the_input_buffer_is_above_its_threshold() {
    let cc = PortCc {
        threshold: 15,
        packet_size: 0,
        marking_rate: 0,
        roce_detect: RoceDetect::Oversubscribed { in_buf_blocks: 60 },
        ..PortCc::default()
    };
    let (marked, sent, _) = ce_run(cc, 4, false);
    assert!(
        sent > 300 && marked * 10 > sent * 9,
        "incast: {marked} of {sent} marked"
    );
    // One input at line rate: not oversubscribed, nothing marked.
    let (marked, sent, _) = ce_run(cc, 1, false);
    assert!(sent > 300);
    assert_eq!(marked, 0);
    // An input-buffer threshold above what the buffers ever hold (XOFF at 101 blocks plus headroom): no marks.
    let (marked, _, _) = ce_run(
        PortCc {
            roce_detect: RoceDetect::Oversubscribed { in_buf_blocks: 250 },
            ..cc
        },
        4,
        false,
    );
    assert_eq!(marked, 0);
}

#[test]
fn packets_not_ecn_capable_are_never_marked() {
    let cc = PortCc {
        threshold: 15,
        packet_size: 0,
        marking_rate: 0,
        ..PortCc::default()
    };
    let mut r = roce_rig(250, 20, 20, cc, 4);
    for p in 0..4 {
        let mut d = roce(p);
        d.ecn = 0;
        r.set_source(p, d, None);
    }
    r.run(50_000);
    assert_eq!(r.sw.counters(OUT, 0).marked, 0);
    assert_eq!(r.eps[OUT].stats().recv_ce, 0);
    assert!(
        r.sw.counters(OUT, 0).cong_cycles > 10_000,
        "congested all the same"
    );
}

#[test]
fn pfc_config_errors_name_the_setting() {
    let mut c = cfg(3, LinkRate::new(8, 1).unwrap(), 100);
    c.ports[1].pfc = Some(PfcConfig::default());
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("ports[1].pfc.headroom_blocks = "), "{e}");
    c.ports[1] = c.ports[1].clone().with_vls(9, 400);
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.starts_with("ports[1].data_vls = 9: a PFC port has at most 8"),
        "{e}"
    );
}
