//! Bad configurations reach the RTL's `cfg_err_o`: every block with held configuration ports flags the
//! configurations its Rust `Config::validate` refuses, with the bits of the Rust rule (`Config::cfg_err`), and
//! its assertion stops the simulation a cycle later. The lockstep co-simulation cannot show this (a Rust block
//! is never built from a refused configuration, so there `cfg_err_o` is 0 on both sides): here the Verilated
//! models are driven directly with configurations drawn across each port's whole range, edges included.
//! Needs Verilator: compiled only with the `verilator` feature (on in the README's test command).
#![cfg(feature = "verilator")]

use cosim::dut::Halt;
use cosim::ffi::{
    CctShaperIo, CongDetectIo, CreditRxIo, FecnMarkerIo, Rtl, TimebaseIo, VlArbIo,
    CCT_SHAPER_VARIANTS, CONG_DETECT_VARIANTS, CREDIT_RX_VARIANTS, FECN_MARKER_VARIANTS,
    TIMEBASE_VARIANTS, VL_ARB_VARIANTS,
};
use cosim::rng::Rng;
use rtl_model::blocks::{cct_shaper, cong_detect, credit_rx, fecn_marker, timebase, vl_arb};

/// Configurations drawn per block.
const DRAWS: u64 = 300;

/// One of `edges` half of the time, else any value below `2^bits`.
fn pick(r: &mut Rng, edges: &[u64], bits: u32) -> u64 {
    if r.pct(50) {
        edges[r.below(edges.len() as u64) as usize]
    } else {
        r.next_u64() & ((1u64 << bits) - 1)
    }
}

/// Steps a freshly reset model once out of reset and returns `cfg_err_o` as it showed then; then checks the
/// assertion: the next cycle halts the model exactly when a rule is broken.
fn check<Io>(
    name: &str,
    m: &mut Rtl<Io>,
    io: &mut Io,
    set_rst: fn(&mut Io, bool),
    err: fn(&Io) -> u32,
    want: u8,
    what: &str,
) {
    set_rst(io, false);
    m.step(io).expect("a reset cycle never halts");
    let in_reset = err(io);
    set_rst(io, true);
    m.step(io)
        .expect("the first cycle out of reset asserts nothing yet");
    let got = err(io);
    assert_eq!(
        (in_reset, got),
        (u32::from(want), u32::from(want)),
        "{name}: cfg_err_o for {what}"
    );
    let next = m.step(io);
    if want == 0 {
        assert_eq!(next, Ok(()), "{name}: a valid configuration halted: {what}");
    } else {
        assert_eq!(
            next,
            Err(Halt::Error),
            "{name}: no assertion for a flagged configuration: {what}"
        );
    }
}

#[test]
fn credit_rx_flags_what_validate_refuses() {
    let mut r = Rng::new(0xc0f1);
    let mut flagged = 0;
    for _ in 0..DRAWS {
        let cfg = credit_rx::Config {
            buf_blocks: pick(&mut r, &[0, 1, 0xffff], 16) as u16,
            fc_interval: pick(&mut r, &[0, 1, 0xffff], 16) as u16,
            policy: if r.pct(50) {
                credit_rx::FcPolicy::Periodic
            } else {
                credit_rx::FcPolicy::PeriodicAndOnChange
            },
            fccl_cap: pick(&mut r, &[0, 1, 2047, 2048, 2049, 4095], 12) as u16,
        };
        let want = cfg.cfg_err();
        assert_eq!(cfg.validate().is_err(), want != 0, "{cfg:?}");
        flagged += usize::from(want != 0);
        let mut m = Rtl::new("credit_rx", CREDIT_RX_VARIANTS, None).unwrap();
        let mut io = CreditRxIo {
            buf_blocks_i: cfg.buf_blocks.into(),
            fc_interval_i: cfg.fc_interval.into(),
            fc_on_change_i: u32::from(cfg.policy == credit_rx::FcPolicy::PeriodicAndOnChange),
            fccl_cap_i: cfg.fccl_cap.into(),
            ..CreditRxIo::default()
        };
        check(
            "credit_rx",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!("{cfg:?}"),
        );
    }
    assert!(flagged > 50, "only {flagged} bad configurations drawn");
}

/// An interval of 0 no longer reloads the periodic timer with 65,535 (a flow-control packet every cycle
/// instead), and a cap above 2048 advertises at most 2048 ahead. Checked out of the assertion's reach: the
/// outputs of the first cycle after reset, and of the cycle the assertion halts in (outputs are read before
/// the edge).
#[test]
fn credit_rx_bad_interval_and_cap_stay_safe() {
    let mut m = Rtl::new("credit_rx", CREDIT_RX_VARIANTS, None).unwrap();
    let mut io = CreditRxIo {
        buf_blocks_i: 4000,
        fc_interval_i: 0,
        fccl_cap_i: 4000,
        ..CreditRxIo::default()
    };
    m.step(&mut io).unwrap();
    io.rst_ni = 1;
    m.step(&mut io).unwrap();
    assert_eq!((io.fc_send_o, io.fccl_o), (1, 2048), "first cycle");
    let _ = m.step(&mut io);
    assert_eq!(
        (io.fc_send_o, io.fccl_o),
        (1, 2048),
        "second cycle: the timer reloaded with 0"
    );
}

#[test]
fn fecn_marker_flags_seed_zero() {
    let mut r = Rng::new(0xfec0);
    for k in 0..DRAWS {
        let cfg = fecn_marker::Config {
            packet_size: r.below(256) as u8,
            marking_rate: pick(&mut r, &[0, 15, 0xffff], 16) as u16,
            mode: if r.pct(50) {
                fecn_marker::MarkMode::Counter
            } else {
                fecn_marker::MarkMode::Lfsr
            },
            lfsr_seed: if k % 3 == 0 { 0 } else { r.below(65536) as u16 },
        };
        let want = cfg.cfg_err();
        assert_eq!(cfg.validate().is_err(), want != 0, "{cfg:?}");
        let mut m = Rtl::new("fecn_marker", FECN_MARKER_VARIANTS, None).unwrap();
        let mut io = FecnMarkerIo {
            packet_size_i: cfg.packet_size.into(),
            marking_rate_i: cfg.marking_rate.into(),
            mode_i: u32::from(cfg.mode == fecn_marker::MarkMode::Lfsr),
            lfsr_seed_i: cfg.lfsr_seed.into(),
            lfsr_thresh_i: cfg.lfsr_thresh(),
            ..FecnMarkerIo::default()
        };
        check(
            "fecn_marker",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!("{cfg:?}"),
        );
    }
}

/// A seed of 0 does not stick the LFSR at 0: with Marking_Rate 15 in LFSR mode (about one mark in 16), the
/// first eligible packet after reset is compared against the substitute seed 0xACE1, not 0, and goes
/// unmarked (an LFSR at 0 marks every packet).
#[test]
fn fecn_marker_seed_zero_does_not_mark_every_packet() {
    let cfg = fecn_marker::Config {
        packet_size: 0,
        marking_rate: 15,
        mode: fecn_marker::MarkMode::Lfsr,
        lfsr_seed: 0,
    };
    let mut m = Rtl::new("fecn_marker", FECN_MARKER_VARIANTS, None).unwrap();
    let mut io = FecnMarkerIo {
        marking_rate_i: 15,
        mode_i: 1,
        lfsr_thresh_i: cfg.lfsr_thresh(),
        ..FecnMarkerIo::default()
    };
    m.step(&mut io).unwrap();
    io.rst_ni = 1;
    io.pkt_valid_i = 1;
    io.pkt_bytes_i = 1000;
    io.mark_state_i = 1;
    m.step(&mut io).unwrap();
    assert_eq!((io.cfg_err_o, io.mark_o), (1, 0));
    assert!(0xACE1 >= cfg.lfsr_thresh(), "the substitute seed marks");
}

#[test]
fn cct_shaper_flags_what_validate_refuses() {
    let mut r = Rng::new(0xcc7);
    let mut flagged = 0;
    for _ in 0..DRAWS {
        let cfg = cct_shaper::Config {
            cct: (0..128)
                .map(|_| cct_shaper::CctEntryBits::from_raw(r.next_u64() as u16))
                .collect(),
            ccti_limit: pick(&mut r, &[0, 1, 126, 127], 7) as u16,
            ccti_min: pick(&mut r, &[0, 1, 126, 127], 7) as u8,
            ccti_increase: r.below(256) as u8,
            ccti_timer: r.below(65536) as u16,
            trigger_threshold: r.below(256) as u8,
            t_pkt: r.below(65536) as u16,
        };
        let want = cfg.cfg_err();
        assert_eq!(cfg.validate().is_err(), want != 0, "{cfg:?}");
        flagged += usize::from(want != 0);
        let mut cct_i = [0u32; 64];
        for (e, x) in cfg.cct.iter().enumerate() {
            cct_i[e / 2] |= u32::from(x.to_raw()) << (16 * (e % 2));
        }
        let mut m = Rtl::new("cct_shaper", CCT_SHAPER_VARIANTS, None).unwrap();
        let mut io = CctShaperIo {
            cct_i,
            ccti_limit_i: cfg.ccti_limit.into(),
            ccti_min_i: cfg.ccti_min.into(),
            ccti_increase_i: cfg.ccti_increase.into(),
            ccti_timer_i: cfg.ccti_timer.into(),
            trigger_threshold_i: cfg.trigger_threshold.into(),
            t_pkt_i: cfg.t_pkt.into(),
            ..CctShaperIo::default()
        };
        check(
            "cct_shaper",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!("ccti_min {} ccti_limit {}", cfg.ccti_min, cfg.ccti_limit),
        );
    }
    assert!(flagged > 50, "only {flagged} bad configurations drawn");
}

#[test]
fn vl_arb_flags_what_validate_refuses() {
    let mut r = Rng::new(0xa4b);
    let mut flagged = 0;
    for _ in 0..DRAWS {
        let table = |r: &mut Rng| -> Vec<vl_arb::ArbEntry> {
            let n = pick(r, &[0, 1, 64, 65, 127], 7) as usize;
            // VL 15 rarely, so most tables are valid: one draw in 16 per entry would spoil nearly all.
            (0..n)
                .map(|_| {
                    let vl = if r.below(200) == 0 {
                        15
                    } else {
                        r.below(15) as u8
                    };
                    vl_arb::ArbEntry::new(vl, r.below(256) as u8)
                })
                .collect()
        };
        let cfg = vl_arb::Config {
            high: table(&mut r),
            low: table(&mut r),
            vl_high_limit: r.below(256) as u8,
        };
        let want = cfg.cfg_err();
        assert_eq!(cfg.validate().is_err(), want != 0, "{cfg:?}");
        flagged += usize::from(want != 0);
        let flat = |t: &[vl_arb::ArbEntry]| {
            let (mut vl, mut w) = ([0u32; 8], [0u32; 16]);
            for (e, x) in t.iter().take(vl_arb::TABLE_MAX).enumerate() {
                vl[e / 8] |= u32::from(x.vl & 0xf) << (4 * (e % 8));
                w[e / 4] |= u32::from(x.weight) << (8 * (e % 4));
            }
            (vl, w)
        };
        let ((hi_vl_i, hi_weight_i), (lo_vl_i, lo_weight_i)) = (flat(&cfg.high), flat(&cfg.low));
        let mut m = Rtl::new("vl_arb", VL_ARB_VARIANTS, None).unwrap();
        let mut io = VlArbIo {
            hi_vl_i,
            hi_weight_i,
            hi_n_i: cfg.high.len() as u32,
            lo_vl_i,
            lo_weight_i,
            lo_n_i: cfg.low.len() as u32,
            vl_high_limit_i: cfg.vl_high_limit.into(),
            ..VlArbIo::default()
        };
        check(
            "vl_arb",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!(
                "{} high, {} low entries, bits {want:#x}",
                cfg.high.len(),
                cfg.low.len()
            ),
        );
    }
    assert!(flagged > 50, "only {flagged} bad configurations drawn");
}

#[test]
fn timebase_flags_what_validate_refuses() {
    let mut r = Rng::new(0x71b);
    // The held ports directly (the Rust configuration is a clock, turned into them by `Config::ratio`).
    for _ in 0..DRAWS {
        let inc = pick(&mut r, &[0, 1, 1_000_000, u64::from(u32::MAX)], 32) as u32;
        let modulus = pick(
            &mut r,
            &[0, 1, 1_000_000, 1_024_000, u64::from(u32::MAX)],
            32,
        ) as u32;
        let want = timebase::cfg_err_of(inc.into(), modulus.into());
        let mut m = Rtl::new("timebase", TIMEBASE_VARIANTS, None).unwrap();
        let mut io = TimebaseIo {
            inc_i: inc,
            modulus_i: modulus,
            ..TimebaseIo::default()
        };
        check(
            "timebase",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!("inc {inc} modulus {modulus}"),
        );
    }
    // And the clocks the Rust rule refuses are the clocks `validate` refuses (but for a reduced ratio
    // beyond the 32-bit ports, which no port value can show).
    use timebase::{ClockSpec, Config};
    for clock in [
        ClockSpec::FreqKhz(0),
        ClockSpec::PeriodPs(0),
        ClockSpec::PeriodPs(1_024_000),
        ClockSpec::PeriodPs(u32::MAX),
        ClockSpec::FreqKhz(1),
        ClockSpec::FreqKhz(1_000_000),
        ClockSpec::PeriodPs(1),
        ClockSpec::PeriodPs(1_023_999),
    ] {
        let c = Config { clock };
        assert_eq!(c.validate().is_err(), c.cfg_err() != 0, "{clock:?}");
    }
}

#[test]
fn cong_detect_flags_the_reserved_compare_encoding() {
    for compare in 0..4u32 {
        let mut m = Rtl::new("cong_detect", CONG_DETECT_VARIANTS, None).unwrap();
        let mut io = CongDetectIo {
            threshold_i: 15,
            compare_i: compare,
            ..CongDetectIo::default()
        };
        let want = if compare == 3 {
            cong_detect::CFG_ERR_COMPARE_RESERVED
        } else {
            0
        };
        check(
            "cong_detect",
            &mut m,
            &mut io,
            |io, r| io.rst_ni = r.into(),
            |io| io.cfg_err_o,
            want,
            &format!("compare_i {compare}"),
        );
    }
    assert_eq!(
        cong_detect::Config::new(100).cfg_err(),
        0,
        "the Rust enum has no reserved value"
    );
}
