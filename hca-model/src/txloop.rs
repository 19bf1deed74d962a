//! A minimal transmit loop: two HCAs joined by one link. The sender has one saturating flow of equal packets,
//! serialised back to back at the link's exact rate whenever its [`RateController`] allows; the receiver
//! sees each packet arrive `latency` cycles after its last wire cycle and may answer with feedback, which
//! reaches the sender another `latency` later. Extra feedback can be injected at given times.
//!
//! Enough to measure what a controller lets through (the rate a fixed CCT entry gives, the RCM levels, that
//! no controller exceeds its cap) without the fabric. Not a clocked block: it jumps from event to event.

use std::collections::VecDeque;

use crate::rate::{Feedback, RateController, Sent};
use crate::units::{Bps, CoreClock, Cycle, LinkRate};

/// The link and the flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// Link data rate.
    pub link: LinkRate,
    /// Bytes of every packet on the wire.
    pub packet_bytes: u32,
    /// One-way latency, cycles (added after the last wire cycle).
    pub latency: Cycle,
    /// No packet starts at or after this cycle.
    pub until: Cycle,
}

/// Runs the loop and returns every packet sent. `receiver(arrival_cycle, &packet)` models the far HCA;
/// `extra` is feedback to inject at fixed cycles, sorted by cycle.
pub fn run<C, R>(
    ctrl: &mut C,
    cfg: &LoopConfig,
    mut receiver: R,
    extra: &[(Cycle, Feedback)],
) -> Vec<Sent>
where
    C: RateController + ?Sized,
    R: FnMut(Cycle, &Sent) -> Option<Feedback>,
{
    let wire = cfg.link.wire_cycles(u64::from(cfg.packet_bytes)).max(1);
    let mut back: VecDeque<(Cycle, Feedback)> = VecDeque::new();
    let mut extra = extra.iter().copied().peekable();
    let mut sent = Vec::new();
    let mut free: Cycle = 0;
    loop {
        let s = free.max(ctrl.next_send());
        // The earliest pending feedback, from the receiver or injected.
        let fb_t = match (back.front(), extra.peek()) {
            (Some(a), Some(b)) => Some(a.0.min(b.0)),
            (a, b) => a.or(b).map(|x| x.0),
        };
        let timer = ctrl.next_timer().filter(|&t| t < s);
        match (fb_t.filter(|&t| t <= s), timer) {
            (Some(t), tm) if tm.is_none_or(|tm| t <= tm) => {
                let ev = if back.front().is_some_and(|b| b.0 == t) {
                    back.pop_front()
                } else {
                    extra.next()
                };
                if let Some((t, fb)) = ev {
                    ctrl.on_feedback(t, fb);
                }
                continue;
            }
            (_, Some(tm)) => {
                // Close the timer's cycle (the CCT applies a cycle's tick when time moves past it).
                ctrl.advance(tm + 1);
                continue;
            }
            _ => {}
        }
        if s >= cfg.until {
            break;
        }
        ctrl.advance(s);
        let p = Sent {
            start: s,
            end: s + wire - 1,
            bytes: cfg.packet_bytes,
        };
        // Feedback that arrives while the packet is on the wire comes first.
        while let Some(&(t, fb)) = back.front().filter(|b| b.0 < p.end) {
            back.pop_front();
            ctrl.on_feedback(t, fb);
        }
        while let Some(&(t, fb)) = extra.peek().filter(|b| b.0 < p.end) {
            extra.next();
            ctrl.on_feedback(t, fb);
        }
        ctrl.on_sent(p);
        if let Some(fb) = receiver(p.end + cfg.latency, &p) {
            back.push_back((p.end + 2 * cfg.latency, fb));
        }
        sent.push(p);
        free = p.end + 1;
    }
    sent
}

/// The long-run rate of `sent` in bit/s on `clock`: the bits of every packet but the last over the time
/// from the first start to the last start (each packet accounts for its own start-to-start period).
pub fn measured_bps(sent: &[Sent], clock: CoreClock) -> Bps {
    let (Some(first), Some(last)) = (sent.first(), sent.last()) else {
        return 0;
    };
    if last.start == first.start {
        return 0;
    }
    let bits: u128 = sent[..sent.len() - 1]
        .iter()
        .map(|p| u128::from(p.bytes) * 8)
        .sum();
    let cycles = u128::from(last.start - first.start);
    (bits * u128::from(clock.hz()) / cycles) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::np::ib::{IbNp, IbNpAction, IbNpConfig};
    use crate::rate::cct::{CctController, CctParams, CctSettings};
    use crate::rate::dcqcn::{DcqcnConfig, DcqcnController};
    use crate::rate::rcm::{RcmConfig, RcmController, RecoveryCombine};
    use crate::rate::rrcc::{RrccSender, RrccSenderConfig};
    use crate::rate::srf::{ResponseFunction, SrfConfig, SrfController};
    use crate::rate::CnpInfo;
    use crate::units::{Mtu, IB_LOCAL_OVERHEAD};
    use proptest::prelude::*;
    use rtl_model::mad::ca_cong::CaCongestionEntry;
    use rtl_model::mad::cct::{Cct, CctEntry};
    use rtl_model::wire::bth::{self, Opcode};
    use rtl_model::wire::lrh::{self, Lnh};

    const KHZ: u32 = 1_000_000;

    fn clock() -> CoreClock {
        CoreClock::from_khz(KHZ).unwrap()
    }

    /// 4x QDR data rate at 1 GHz: 4 bytes per cycle.
    fn qdr() -> LinkRate {
        LinkRate::from_mbps(32_000, clock()).unwrap()
    }

    /// A CCT controller held at one entry: CCTI_Min = CCTI_Limit = `k`.
    fn cct_at(k: u16, entry: CctEntry) -> CctController {
        let mut entries = vec![CctEntry::default(); usize::from(k) + 1];
        entries[usize::from(k)] = entry;
        CctController::new(&CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: 10,
                    ccti_increase: 1,
                    trigger_threshold: 0,
                    ccti_min: k as u8,
                },
                cct: Cct {
                    ccti_limit: k,
                    entries,
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: IB_LOCAL_OVERHEAD,
            link: qdr(),
            clock: clock(),
        })
        .unwrap()
    }

    /// Two HCAs joined by a 4x QDR link (32 Gbit/s of data, 1 GHz core clock, 500 cycles latency); a
    /// saturating flow of 2074-byte packets (MTU 2048 + 26) held at a fixed CCT entry is measured at the
    /// receiver at the rate the entry predicts:
    /// - within 0.1% of `32G * T / (T + IRD)`, `IRD = (T >> shift) * multiplier`, T = T_pkt = 519 cycles (the
    ///   remaining 0.1% is the half cycle by which 2074 bytes / 4 bytes per cycle is rounded up to 519);
    /// - within 1% of the bandwidth fraction `2^shift / (2^shift + multiplier)` for the entries below; for
    ///   (shift 3, multiplier 1000) the hardware formula's truncation `519 >> 3 = 64` (not 64.875) alone
    ///   makes the rate 1.35% higher than the fraction, so that entry is checked against the first only.
    #[test]
    fn fixed_cct_entry_rate_within_one_percent() {
        let cfg = LoopConfig {
            link: qdr(),
            packet_bytes: 2048 + IB_LOCAL_OVERHEAD,
            latency: 500,
            until: 5_000_000,
        };
        for (k, shift, mult) in [(0, 0, 0), (1, 0, 1), (5, 2, 3), (40, 1, 7), (127, 3, 1000)] {
            let mut c = cct_at(k, CctEntry::new(shift, mult).unwrap());
            let mut arrivals = Vec::new();
            let sent = run(
                &mut c,
                &cfg,
                |at, p| {
                    arrivals.push(Sent {
                        start: at + 1 + p.start - p.end - 1,
                        end: at,
                        bytes: p.bytes,
                    });
                    None
                },
                &[],
            );
            let got = measured_bps(&arrivals, clock()) as f64;
            let ird = f64::from((519u32 >> shift) * u32::from(mult));
            let exact = 32e9 * 519.0 / (519.0 + ird);
            let err = (got - exact).abs() / exact;
            assert!(
                err < 0.001,
                "entry {k}: measured {got} vs T/(T+IRD) {exact}: {err}"
            );
            let fraction =
                32e9 * f64::from(1u32 << shift) / (f64::from(1u32 << shift) + f64::from(mult));
            let err = (got - fraction).abs() / fraction;
            eprintln!(
                "entry (shift {shift}, mult {mult}): measured {:.4} Gbit/s, T/(T+IRD) {:.4}, 2^s/(2^s+m) {:.4}",
                got / 1e9,
                exact / 1e9,
                fraction / 1e9
            );
            assert!(
                err < 0.01 || (shift, mult) == (3, 1000),
                "entry {k} (shift {shift}, mult {mult}): measured {got} vs {fraction}: {err}"
            );
            assert_eq!(got as u64, measured_bps(&sent, clock()));
        }
    }

    /// The same loop closed: the receiver's IB notification point answers every packet, which a switch
    /// marked with FECN, with a CNP; the sender's CCTI climbs to CCTI_Limit and stays there (CCTI_Timer 1000
    /// ticks = 1.024 ms: one expiry in the run, undone by the next CNP).
    #[test]
    fn closed_loop_every_packet_marked() {
        let entries: Vec<CctEntry> = (0..8).map(|i| CctEntry::new(0, i * 4).unwrap()).collect();
        let mut c = CctController::new(&CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: 1000,
                    ccti_increase: 1,
                    trigger_threshold: 0,
                    ccti_min: 0,
                },
                cct: Cct {
                    ccti_limit: 7,
                    entries,
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: IB_LOCAL_OVERHEAD,
            link: qdr(),
            clock: clock(),
        })
        .unwrap();
        let mut np = IbNp::new(IbNpConfig {
            own_lid: 2,
            rc_request: Default::default(),
            coalescing: Default::default(),
        });
        let l = lrh::Repr {
            vl: 0,
            lver: 0,
            sl: 0,
            resv2: 0,
            lnh: Lnh::IbaLocal,
            dlid: 2,
            resv5: 0,
            pkt_len: 518,
            slid: 1,
        };
        let b = bth::Repr {
            opcode: Opcode::UdSendOnly,
            se: false,
            migreq: false,
            pad_cnt: 0,
            tver: 0,
            pkey: 0xffff,
            fecn: true,
            becn: false,
            resv6: 0,
            dest_qp: 5,
            ack_req: false,
            resv7: 0,
            psn: 0,
        };
        let cfg = LoopConfig {
            link: qdr(),
            packet_bytes: 2074,
            latency: 300,
            until: 2_000_000,
        };
        let sent = run(
            &mut c,
            &cfg,
            |at, _| match np.on_packet(at, &l, &b, 9) {
                IbNpAction::Cnp(_) => Some(Feedback::Cnp(CnpInfo::BECN)),
                _ => None,
            },
            &[],
        );
        assert_eq!(c.ccti(), 7);
        // Entry 7: IRD = 519 * 28 cycles: the tail runs at 519 / (519 * 29) of the link.
        let tail = &sent[sent.len() - 20..];
        let got = measured_bps(tail, clock());
        let want = 32_000_000_000u64 / 29;
        assert!(got.abs_diff(want) * 100 < want, "{got} vs {want}");
        assert_eq!(np.stats().cnps as usize, sent.len());
    }

    /// RCM through the loop: a CNP every 20 000 cycles, recovery after 30 000 cycles. Worked by hand:
    /// T = 2110 bytes at 5 bytes/cycle = 422 cycles; CNPs at 20 000 and 40 000 raise the level to 2, the
    /// recovery at 70 000 brings it to 1 ... the loop's spacing follows (n + 1) T at every start.
    #[test]
    fn rcm_spacing_in_the_loop() {
        let clock = clock();
        let link = LinkRate::from_mbps(40_000, clock).unwrap();
        let mut c = RcmController::new(RcmConfig {
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: 62,
            link,
            recovery_cycles: Some(30_000),
            recovery_bytes: None,
            combine: RecoveryCombine::Either,
            max_level: 8,
            clock,
        })
        .unwrap();
        let cnps: Vec<(Cycle, Feedback)> = (1..=2)
            .map(|k| (k * 20_000, Feedback::Cnp(CnpInfo::BECN)))
            .collect();
        let sent = run(
            &mut c,
            &LoopConfig {
                link,
                packet_bytes: 2110,
                latency: 0,
                until: 150_000,
            },
            |_, _| None,
            &cnps,
        );
        let gap_at = |t: Cycle| {
            let w = sent.windows(2).find(|w| w[0].start >= t).unwrap();
            w[1].start - w[0].start
        };
        assert_eq!(gap_at(0), 422);
        assert_eq!(gap_at(25_000), 844, "level 1");
        assert_eq!(gap_at(45_000), 1266, "level 2");
        assert_eq!(gap_at(75_000), 844, "recovered at 70 000 to level 1");
        assert_eq!(gap_at(105_000), 422, "level 0 from 100 000");
    }

    /// RoCEv2 closed loop: every packet CE-marked until cycle 2 000 000; the RoCEv2 notification point
    /// answers at most one CNP per 50 us (50 000 cycles) and DCQCN (paper settings: g = 1/256, timer 50 us,
    /// byte counter 10 MB) cuts the rate at each. At most 2 000 000 / 50 000 + 1 = 41 CNPs; fewer in fact,
    /// since once the rate is low a packet (which a CNP needs) comes less often than every 50 us. The rate falls
    /// well below the link; once marking stops, timer-driven recovery brings it back up.
    #[test]
    fn dcqcn_with_the_roce_notification_point() {
        use crate::np::roce::{RoceNp, RoceNpAction, RoceNpConfig};
        use rtl_model::wire::ipv4::Ecn;
        let clock = clock();
        let link = LinkRate::from_mbps(40_000, clock).unwrap();
        let mut c =
            DcqcnController::new(DcqcnConfig::paper_defaults(clock, link.bps(clock))).unwrap();
        let mut np = RoceNp::new(RoceNpConfig {
            min_interval: clock.us_to_cycles(50),
        });
        let b = bth::Repr {
            opcode: Opcode::RcRdmaWriteMiddle,
            se: false,
            migreq: false,
            pad_cnt: 0,
            tver: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp: 5,
            ack_req: false,
            resv7: 0,
            psn: 0,
        };
        let cfg = LoopConfig {
            link,
            packet_bytes: 1086,
            latency: 1000,
            until: 2_000_000,
        };
        let sent = run(
            &mut c,
            &cfg,
            |at, _| match np.on_packet(at, 0u8, Ecn::Ce, false, &b, 9) {
                RoceNpAction::Cnp(_) => Some(Feedback::Cnp(CnpInfo::BECN)),
                _ => None,
            },
            &[],
        );
        let cnps = np.stats().cnps;
        assert!(
            (10..=41).contains(&cnps),
            "at most one CNP per 50 us: {cnps}"
        );
        let tail = measured_bps(&sent[sent.len() - 50..], clock);
        assert!(
            tail < 10_000_000_000,
            "rate cut well below the link: {tail}"
        );
        assert!(c.current() >= 100_000_000, "never below the minimum rate");
        // No more marks: 10 ms of recovery.
        let low = c.current();
        c.advance(12_000_000);
        assert!(
            c.current() > 4 * low,
            "{} after recovery from {low}",
            c.current()
        );
    }

    /// Receiver-driven CC closed loop: the receiver (period 20 us) sees every packet FECN-marked, so each
    /// period ends with a CNP with BECN carrying the receive rate; the sender sets its rate to
    /// receive_rate * d (d = 0.5), so the rate halves period after period until the minimum (1 Gbit/s; the
    /// receive rate then counts 0.82 or 1.64 Gbit/s, 1 or 2 packets per period).
    #[test]
    fn receiver_driven_loop() {
        use crate::np::rrcc::{RrccReceiver, RrccReceiverConfig};
        let clock = clock();
        let link = qdr();
        let mut rx = RrccReceiver::new(RrccReceiverConfig {
            clock,
            period: 20_000,
            mtu: Mtu::new(2048).unwrap(),
            line_rate: link.bps(clock),
            fecn_num: 95,
            fecn_den: 100,
        })
        .unwrap();
        let mut c = RrccSender::new(RrccSenderConfig {
            clock,
            max_rate: link.bps(clock),
            min_rate: 1_000_000_000,
            d_q10: 512,
            rate_ai: 500_000_000,
            consecutive: 3,
        })
        .unwrap();
        let cfg = LoopConfig {
            link,
            packet_bytes: 2074,
            latency: 200,
            until: 400_000,
        };
        let mut rates = Vec::new();
        run(
            &mut c,
            &cfg,
            |at, _| {
                rx.on_packet(at, true).map(|n| {
                    rates.push(n.cnp.receive_rate.unwrap());
                    Feedback::Cnp(n.cnp)
                })
            },
            &[],
        );
        // First period: ~38 MTU packets in 20 us = 31 Gbit/s of MTU payload counted; then about half each time.
        assert!(rates[0] > 30_000_000_000, "{rates:?}");
        // Halving, up to the quantisation of whole packets per period.
        for w in rates.windows(2).take(4) {
            assert!(w[1] <= w[0] * 65 / 100, "{rates:?}");
        }
        assert_eq!(c.current(), 1_000_000_000, "at the minimum");
    }

    /// A random feedback schedule.
    fn feedback() -> impl Strategy<Value = Vec<(Cycle, Feedback)>> {
        proptest::collection::vec((0u64..400_000, 0u8..4, 0u64..64_000_000_000), 0..60).prop_map(
            |v| {
                let mut v: Vec<(Cycle, Feedback)> = v
                    .into_iter()
                    .map(|(t, kind, r)| {
                        let fb = match kind {
                            0 => Feedback::Cnp(CnpInfo::BECN),
                            1 => Feedback::Cnp(CnpInfo {
                                becn: true,
                                receive_rate: Some(r),
                            }),
                            2 => Feedback::Cnp(CnpInfo {
                                becn: false,
                                receive_rate: None,
                            }),
                            _ => Feedback::Ack {
                                ecn_echo: r % 2 == 0,
                            },
                        };
                        (t, fb)
                    })
                    .collect();
                v.sort_by_key(|e| e.0);
                v
            },
        )
    }

    /// Checks the long-run rate of `sent` against `cap` (bit/s): the bits of all packets but the last fit in
    /// `cap` times the time from the first start to the last start, plus one cycle of rounding.
    fn within_cap(sent: &[Sent], cap: Bps) -> Result<(), TestCaseError> {
        if sent.len() < 2 {
            return Ok(());
        }
        let bits: u128 = sent[..sent.len() - 1]
            .iter()
            .map(|p| u128::from(p.bytes) * 8)
            .sum();
        let span = u128::from(sent[sent.len() - 1].start - sent[0].start + 1);
        prop_assert!(
            bits * u128::from(clock().hz()) <= u128::from(cap) * span,
            "{} bits in {} cycles exceed {} bit/s",
            bits,
            span,
            cap
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// No controller lets a flow run faster than its cap (which is below the line rate here) or the
        /// line rate, under random CNPs, ACKs and receive rates, with a packet size from 64 to 4122 bytes.
        #[test]
        fn long_run_rate_within_cap(fb in feedback(), bytes in 64u32..4123, cap_pct in 1u64..=100,
                                    which in 0u8..5) {
            let clock = clock();
            let link = qdr();
            let line = link.bps(clock);
            let cap = line * cap_pct / 100;
            let cfg = LoopConfig { link, packet_bytes: bytes, latency: 100, until: 400_000 };
            let mut ctrl: Box<dyn RateController> = match which {
                0 => Box::new(DcqcnController::new(DcqcnConfig {
                    byte_counter: 20_000,
                    increase_period: 3000,
                    alpha_period: 550,
                    ..DcqcnConfig::ns3_defaults(clock, cap)
                }.clone_with_min(cap)).unwrap()),
                1 => Box::new(RrccSender::new(RrccSenderConfig {
                    clock, max_rate: cap, min_rate: cap.min(100_000_000), d_q10: 900, rate_ai: 1_000_000_000,
                    consecutive: 3,
                }).unwrap()),
                2 => Box::new(SrfController::new(SrfConfig {
                    clock, function: ResponseFunction::Fimd { n: 4 }, unit_bps: 1000,
                    rmax: cap / 1000, rmin: (cap / 1000 / 256).max(1), initial: cap / 1000,
                }).unwrap()),
                3 => Box::new(SrfController::new(SrfConfig {
                    clock, function: ResponseFunction::Pipd { m: 4 }, unit_bps: 1000,
                    rmax: cap / 1000, rmin: (cap / 1000 / 128).max(1), initial: cap / 1000 / 2 + 1,
                }).unwrap()),
                _ => Box::new(cct_at(3, CctEntry::new(1, (100 - cap_pct as u16) / 8).unwrap())),
            };
            let sent = run(ctrl.as_mut(), &cfg, |_, _| None, &fb);
            prop_assert!(ctrl.rate_bps() <= line);
            within_cap(&sent, line)?;
            if which < 4 {
                prop_assert!(ctrl.rate_bps() <= cap);
                within_cap(&sent, cap)?;
            }
            for w in sent.windows(2) {
                prop_assert!(w[1].start > w[0].end, "packets overlap on the wire");
            }
        }

        /// CCTI stays within [CCTI_Min, CCTI_Limit] in the controller under random BECNs and time.
        #[test]
        fn ccti_within_min_and_limit(fb in feedback(), min in 0u8..20, span in 0u16..40, inc in 0u8..5,
                                     timer in 0u16..4) {
            let limit = u16::from(min) + span;
            let mut c = CctController::new(&CctParams {
                settings: CctSettings {
                    entry: CaCongestionEntry { ccti_timer: timer, ccti_increase: inc, trigger_threshold: 3, ccti_min: min },
                    cct: Cct { ccti_limit: limit, entries: vec![CctEntry::new(0, 1).unwrap(); usize::from(limit) + 1] },
                },
                mtu: Mtu::new(256).unwrap(),
                packet_overhead: IB_LOCAL_OVERHEAD,
                link: qdr(),
                clock: clock(),
            }).unwrap();
            for (t, f) in fb {
                c.advance(t);
                c.on_feedback(t, f);
                let k = c.ccti();
                prop_assert!(k >= min && u16::from(k) <= limit, "ccti {} outside [{}, {}]", k, min, limit);
            }
        }
    }

    impl DcqcnConfig {
        /// Test helper: a minimum rate no higher than the cap.
        fn clone_with_min(self, cap: Bps) -> Self {
            DcqcnConfig {
                min_rate: self.min_rate.min(cap),
                ..self
            }
        }
    }
}
