//! The co-simulation itself: every block against its Verilated RTL for at least a million random cycles,
//! every bug variant caught within a bound, the VCD window, replay from a port trace, the benchmark's replay loop.
//! Needs Verilator: compiled only with the `verilator` feature (on in the README's test command).
#![cfg(feature = "verilator")]

use cosim::blocks::cct_shaper::CctShaperBlock;
use cosim::blocks::cong_detect::CongDetectBlock;
use cosim::blocks::credit_rx::CreditRxBlock;
use cosim::blocks::credit_tx::CreditTxBlock;
use cosim::blocks::fecn_marker::FecnMarkerBlock;
use cosim::blocks::fecn_rewrite::{FecnRewriteB32Block, FecnRewriteB8Block};
use cosim::blocks::timebase::TimebaseBlock;
use cosim::blocks::vl_arb::VlArbBlock;
use cosim::blocks::{run, run_random, run_schedule, Block, RunOpts, DEFAULT_CYCLES};
use cosim::check::CosimError;
use cosim::cover::Cover;
use cosim::registry;
use cosim::table::MODULES;
use rtl_model::blocks::credit_rx::FcPolicy;
use rtl_model::blocks::fecn_marker::MarkMode;

/// A bug variant must show within this many cycles (the longest FC interval is 65,535 cycles, and a late
/// timer shows at the second expiry).
const BUG_BOUND: u64 = 200_000;
/// Seeds tried per bug variant: the first this many whose configuration can show the bug.
const BUG_SEEDS: usize = 4;

/// Whether the seeded configuration of `block` lets `bug` change any output. Some bugs only exist in some
/// configurations: a missing cap is no bug when the cap never binds (buffer not above the cap), and a late
/// periodic timer cannot show when flow-control packets go out on every FCCL change and the interval is
/// longer than the stimulus ever keeps FCCL still.
fn exposes(block: &str, bug: &str, seed: u64) -> bool {
    let (c, _) = CreditRxBlock::random(seed);
    match (block, bug) {
        ("credit_rx", "BUG_FCCL_CAP") => c.buf_blocks > c.fccl_cap,
        // Flagging the cap of exactly 2048 as out of range shows only with that cap.
        ("credit_rx", "BUG_CAP_CHECK") => c.fccl_cap == rtl_model::blocks::credit_rx::FCCL_CAP,
        ("credit_rx", "BUG_FC_TIMER") => c.policy == FcPolicy::Periodic || c.fc_interval <= 64,
        // Dropping the remainder at a tick changes nothing when the ratio is a whole number of cycles.
        ("timebase", "BUG_TICK_DRIFT") => {
            let (inc, modulus) = TimebaseBlock::random(seed).0.ratio().unwrap();
            modulus % inc != 0
        }
        // The reload bug only exists in counter mode; a Marking_Rate past 1000 takes too long to wrap.
        ("fecn_marker", "BUG_COUNTER_RELOAD") => {
            let f = FecnMarkerBlock::random(seed).0;
            f.mode == MarkMode::Counter && f.marking_rate <= 1000
        }
        // Rounding the size up only matters where 64 * Packet_Size - 63 fits the 13-bit length, and shows
        // in a mark only if marks are frequent enough to come within the bound.
        ("fecn_marker", "BUG_PACKET_SIZE") => {
            let f = FecnMarkerBlock::random(seed).0;
            (1..=128).contains(&f.packet_size) && f.marking_rate <= 1000
        }
        // A weight read in the wrong unit only changes which entry goes next when a table has two
        // candidates of different VLs.
        ("vl_arb", "BUG_WEIGHT_UNIT") => {
            let a = VlArbBlock::random(seed).0;
            [&a.high, &a.low].iter().any(|t| {
                let vls: std::collections::BTreeSet<u8> =
                    t.iter().filter(|e| e.weight > 0).map(|e| e.vl).collect();
                vls.len() >= 2
            })
        }
        // Threshold 0 is never congested, with or without the bug.
        ("cong_detect", "BUG_THRESHOLD_OFF_BY_ONE") => {
            CongDetectBlock::random(seed).0.threshold != 0
        }
        // Ignoring Victim_Mask is no bug where the mask is set.
        ("cong_detect", "BUG_VICTIM_MASK") => {
            let c = CongDetectBlock::random(seed).0;
            c.threshold != 0 && !c.victim_mask
        }
        // A window one cycle short shows only under the stall window rule, with a window to shorten, at the
        // end of a window while congested.
        ("cong_detect", "BUG_STALL_WINDOW") => {
            let c = CongDetectBlock::random(seed).0;
            c.threshold != 0
                && c.root_rule == rtl_model::blocks::cong_detect::RootRule::StallWindow
                && c.stall_window != 0
        }
        // A late expiry shows only when CCTI can rise above CCTI_Min for the timer to lower it, and the timer
        // (up to 65,535 ticks) expires within the bound.
        ("cct_shaper", "BUG_TIMER_LATE") => {
            let c = CctShaperBlock::random(seed).0;
            (1..=100).contains(&c.ccti_timer)
                && c.ccti_increase > 0
                && c.ccti_limit > c.ccti_min.into()
        }
        ("cct_shaper", "BUG_CCTI_LIMIT") => CctShaperBlock::random(seed).0.ccti_increase > 0,
        _ => true,
    }
}

fn million<B: Block>() {
    let m =
        run_random::<B>(1, &RunOpts::new(1_000_000)).unwrap_or_else(|e| panic!("{}: {e}", B::NAME));
    assert_eq!(m.cycles, 1_000_000);
    assert_eq!(m.to_string(), "matched 1000000 cycles");
    // More configurations, shorter runs: the held configuration ports change with the seed.
    for seed in 2..34 {
        let m = run_random::<B>(seed, &RunOpts::new(30_000))
            .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", B::NAME));
        assert_eq!(m.cycles, 30_000);
    }
}

#[test]
fn credit_tx_matches_a_million_random_cycles() {
    million::<CreditTxBlock>();
}

#[test]
fn credit_rx_matches_a_million_random_cycles() {
    million::<CreditRxBlock>();
}

#[test]
fn fecn_marker_matches_a_million_random_cycles() {
    million::<FecnMarkerBlock>();
}

#[test]
fn vl_arb_matches_a_million_random_cycles() {
    million::<VlArbBlock>();
}

#[test]
fn timebase_matches_a_million_random_cycles() {
    million::<TimebaseBlock>();
}

#[test]
fn cong_detect_matches_a_million_random_cycles() {
    million::<CongDetectBlock>();
}

#[test]
fn cct_shaper_matches_a_million_random_cycles() {
    million::<CctShaperBlock>();
}

#[test]
fn fecn_rewrite_matches_a_million_random_cycles_at_8_and_32_byte_beats() {
    million::<FecnRewriteB8Block>();
    million::<FecnRewriteB32Block>();
}

/// A trace of a block with wide held ports (the tables) and wide inputs replays to the same result as the
/// seeded run, and catches the same bug at the same cycle.
fn replay_matches_the_seeded_run<B: Block>(seed: u64, bug: &str, file: &str, len: usize) {
    let dir = std::env::temp_dir().join(format!("cosim-{file}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    let (cfg, stim) = B::random(seed);
    let inputs: Vec<_> = stim.clone().take(len).collect();
    let f = std::fs::File::create(&path).unwrap();
    cosim::trace::write::<B>(std::io::BufWriter::new(f), &cfg, &inputs).unwrap();
    let m = registry::run_trace_file(&path, &RunOpts::new(u64::MAX)).unwrap();
    assert_eq!(
        m.cycles,
        len as u64,
        "{}: replay stops where the trace ends",
        B::NAME
    );
    let bug = RunOpts {
        bug: Some(bug.into()),
        ..RunOpts::new(u64::MAX)
    };
    let from_trace = registry::run_trace_file(&path, &bug).unwrap_err();
    // The seeded run on the pipelined checker: the same first mismatch as the single-threaded replay.
    let from_seed = run::<B, _>(
        &cfg,
        stim,
        &RunOpts {
            cycles: len as u64,
            pipelined: true,
            ..bug
        },
    )
    .unwrap_err();
    assert!(from_trace.is_failure(), "{from_trace}");
    assert_eq!(from_trace.to_string(), from_seed.to_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn vl_arb_replays_a_recorded_trace_with_its_tables() {
    let seed = (1..)
        .find(|&s| exposes("vl_arb", "BUG_WEIGHT_UNIT", s))
        .unwrap();
    replay_matches_the_seeded_run::<VlArbBlock>(seed, "BUG_WEIGHT_UNIT", "arb.csv", 40_000);
}

#[test]
fn cong_detect_and_cct_shaper_replay_recorded_traces() {
    let seed = (1..)
        .find(|&s| exposes("cong_detect", "BUG_THRESHOLD_OFF_BY_ONE", s))
        .unwrap();
    // 40,000 cycles of 1,024-bit fills: a 12 MB trace.
    replay_matches_the_seeded_run::<CongDetectBlock>(
        seed,
        "BUG_THRESHOLD_OFF_BY_ONE",
        "cd.csv",
        40_000,
    );
    let seed = (1..)
        .find(|&s| exposes("cct_shaper", "BUG_CCTI_LIMIT", s))
        .unwrap();
    // The first exposing seed of this bug shows it only after some 47,000 cycles.
    replay_matches_the_seeded_run::<CctShaperBlock>(seed, "BUG_CCTI_LIMIT", "cct.csv", 200_000);
}

/// Runs every bug variant of every block with [`BUG_SEEDS`] seeds whose configuration can show it; each must
/// mismatch before [`BUG_BOUND`] cycles. Prints the worst cycle per variant.
#[test]
fn every_bug_variant_is_caught_within_the_bound() {
    let mut report = Vec::new();
    for m in registry::blocks() {
        assert!(!m.bugs.is_empty(), "{} has no bug variant", m.name);
        for bug in m.bugs {
            let mut worst = 0;
            let seeds: Vec<u64> = (1..)
                .filter(|&s| exposes(m.name, bug, s))
                .take(BUG_SEEDS)
                .collect();
            for seed in seeds {
                let opts = RunOpts {
                    bug: Some(bug.to_string()),
                    ..RunOpts::new(BUG_BOUND)
                };
                match registry::run_random(m.name, seed, &opts) {
                    Err(CosimError::Mismatch(mm)) => worst = worst.max(mm.cycle),
                    Ok(matched) => panic!("{} {bug} seed {seed} went unseen: {matched}", m.name),
                    Err(e) => panic!("{} {bug} seed {seed}: {e}", m.name),
                }
            }
            report.push(format!("{} {bug}: caught by cycle {worst}", m.name));
        }
    }
    println!("{}", report.join("\n"));
    let variants: usize = MODULES
        .iter()
        .filter(|m| m.twin)
        .map(|m| m.bugs.len())
        .sum();
    assert_eq!(report.len(), variants);
}

/// Seeds every bug variant must be caught with, at the default run length.
const EVERY_SEED: std::ops::RangeInclusive<u64> = 1..=32;

/// Every bug variant of `B` is caught with every seed of [`EVERY_SEED`] within [`DEFAULT_CYCLES`], whatever
/// the configuration the seed draws first (the run goes through the block's corner configurations), and
/// the cover point the variant names was hit by then. Prints the latest catch per variant.
fn caught_with_every_seed<B: Block>() {
    let m = cosim::table::module(B::NAME).unwrap();
    for bug in m.bugs {
        let point = <B::Cover as Cover>::EXPOSED_BY
            .iter()
            .find(|(b, _)| b == bug)
            .map(|(_, p)| *p)
            .unwrap_or_else(|| panic!("{} {bug} names no cover point", B::NAME));
        let mut worst = (0, 0);
        for seed in EVERY_SEED {
            let opts = RunOpts {
                bug: Some(bug.to_string()),
                ..RunOpts::new(DEFAULT_CYCLES)
            };
            let (r, cov) = run_schedule::<B>(seed, &opts);
            match r {
                Err(CosimError::Mismatch(mm)) => worst = worst.max((mm.cycle, seed)),
                Ok(matched) => panic!("{} {bug} seed {seed} went unseen: {matched}", B::NAME),
                Err(e) => panic!("{} {bug} seed {seed}: {e}", B::NAME),
            }
            assert!(
                cov.hits_of(point).unwrap() > 0,
                "{} {bug} seed {seed}: caught before its cover point {point} was hit",
                B::NAME
            );
        }
        println!(
            "{} {bug} (exposed by {point}): caught with every seed, the latest at cycle {} (seed {})",
            B::NAME,
            worst.0,
            worst.1
        );
    }
}

#[test]
fn credit_tx_and_credit_rx_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<CreditTxBlock>();
    caught_with_every_seed::<CreditRxBlock>();
}

#[test]
fn timebase_and_fecn_marker_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<TimebaseBlock>();
    caught_with_every_seed::<FecnMarkerBlock>();
}

#[test]
fn vl_arb_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<VlArbBlock>();
}

#[test]
fn cong_detect_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<CongDetectBlock>();
}

#[test]
fn cct_shaper_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<CctShaperBlock>();
}

#[test]
fn fecn_rewrite_bugs_are_caught_with_every_seed() {
    caught_with_every_seed::<FecnRewriteB8Block>();
    caught_with_every_seed::<FecnRewriteB32Block>();
}

/// A clean run with `until_covered` hits every cover point of `B` within [`DEFAULT_CYCLES`] (seeds 1 to 4),
/// stops when it has, and matches on every cycle.
fn covered_within_the_default_length<B: Block>() {
    for seed in 1..=4 {
        let opts = RunOpts {
            until_covered: true,
            ..RunOpts::new(DEFAULT_CYCLES)
        };
        let (r, cov) = run_schedule::<B>(seed, &opts);
        let m = r.unwrap_or_else(|e| panic!("{} seed {seed}: {e}", B::NAME));
        assert!(cov.complete(), "{} seed {seed}:\n{}", B::NAME, cov.table());
        assert_eq!(m.cycles, cov.cycles);
        // Stopped at the end of the configuration that completed it, not at the limit.
        assert!(
            cov.cycles < DEFAULT_CYCLES || B::SEGMENT >= DEFAULT_CYCLES,
            "{}",
            B::NAME
        );
        println!(
            "{} seed {seed}: every point hit in {} cycles, {} configurations",
            B::NAME,
            cov.cycles,
            cov.configs
        );
    }
}

#[test]
fn every_block_covers_every_point_within_the_default_length() {
    covered_within_the_default_length::<CreditTxBlock>();
    covered_within_the_default_length::<CreditRxBlock>();
    covered_within_the_default_length::<TimebaseBlock>();
    covered_within_the_default_length::<FecnMarkerBlock>();
    covered_within_the_default_length::<VlArbBlock>();
    covered_within_the_default_length::<CongDetectBlock>();
    covered_within_the_default_length::<CctShaperBlock>();
    covered_within_the_default_length::<FecnRewriteB8Block>();
    covered_within_the_default_length::<FecnRewriteB32Block>();
}

/// A mismatch in a later configuration names it, and its VCD window's time stamps count from the run's
/// start (each configuration's model instance goes on from the cycle it starts at).
#[test]
fn a_mismatch_in_a_later_configuration_names_it_and_its_vcd_counts_from_the_run_start() {
    let dir = std::env::temp_dir().join(format!("cosim-vcd-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cap.vcd");
    // BUG_FCCL_CAP cannot show in corner 0 (buffer and cap of 1): it is caught in a later configuration.
    let opts = RunOpts {
        bug: Some("BUG_FCCL_CAP".into()),
        vcd: Some(path.clone()),
        ..RunOpts::new(DEFAULT_CYCLES)
    };
    let e = run_random::<CreditRxBlock>(1, &opts).unwrap_err();
    let CosimError::Mismatch(m) = &e else {
        panic!("expected a mismatch, got {e}")
    };
    let start = CreditRxBlock::SEGMENT;
    assert!(m.cycle >= start, "{e}");
    let line = e.to_string();
    assert!(line.contains(" in configuration "), "{line}");
    let (_, from, to) = m.vcd.clone().expect("a VCD window");
    // 64 cycles before, or from the configuration's first cycle if it started later.
    assert!(from <= m.cycle && from + 64 >= m.cycle, "{e}");
    assert_eq!(to, m.cycle + 8);
    let vcd = std::fs::read_to_string(&path).unwrap();
    for t in [10 * from, 10 * to + 5] {
        assert!(vcd.contains(&format!("\n#{t}\n")), "no time stamp {t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mismatch_writes_a_vcd_window_around_it() {
    let dir = std::env::temp_dir().join(format!("cosim-vcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wrap.vcd");
    let opts = RunOpts {
        bug: Some("BUG_CREDIT_WRAP".into()),
        vcd: Some(path.clone()),
        ..RunOpts::new(BUG_BOUND)
    };
    let e = run_random::<CreditTxBlock>(1, &opts).unwrap_err();
    let CosimError::Mismatch(m) = &e else {
        panic!("expected a mismatch, got {e}")
    };
    let (p, from, to) = m.vcd.clone().expect("a VCD window");
    assert_eq!(p, path);
    assert_eq!(from, m.cycle.saturating_sub(64));
    assert_eq!(to, m.cycle + 8);
    let line = e.to_string();
    assert!(
        line.starts_with(&format!(
            "mismatch at cycle {}: port {}: RTL 0x",
            m.cycle, m.port
        )),
        "{line}"
    );
    assert!(line.contains("VCD of cycles"), "{line}");
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("$enddefinitions"));
    assert!(vcd.contains(m.port), "the VCD lacks the port {}", m.port);
    // Time stamps run from 10 * from to 10 * to + 5.
    assert!(
        vcd.contains(&format!("\n#{}\n", 10 * from)),
        "no time stamp for cycle {from}"
    );
    assert!(
        vcd.contains(&format!("\n#{}\n", 10 * to + 5)),
        "no time stamp after cycle {to}"
    );
    assert!(!vcd.contains(&format!("\n#{}\n", 10 * (to + 1))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_of_a_recorded_trace_matches_and_catches_the_same_bug_at_the_same_cycle() {
    let dir = std::env::temp_dir().join(format!("cosim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rx.csv");
    let (cfg, stim) = CreditRxBlock::random(7);
    let inputs: Vec<_> = stim.clone().take(50_000).collect();
    let f = std::fs::File::create(&path).unwrap();
    cosim::trace::write::<CreditRxBlock>(std::io::BufWriter::new(f), &cfg, &inputs).unwrap();

    let m = registry::run_trace_file(&path, &RunOpts::new(u64::MAX)).unwrap();
    assert_eq!(m.cycles, 50_000, "replay stops where the trace ends");

    let bug = RunOpts {
        bug: Some("BUG_ABR_LOAD".into()),
        ..RunOpts::new(u64::MAX)
    };
    let from_trace = registry::run_trace_file(&path, &bug).unwrap_err();
    let from_seed = run::<CreditRxBlock, _>(
        &cfg,
        stim,
        &RunOpts {
            cycles: 50_000,
            ..bug
        },
    )
    .unwrap_err();
    assert_eq!(from_trace.to_string(), from_seed.to_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_names_are_errors_not_failures() {
    let opts = RunOpts {
        bug: Some("BUG_NOPE".into()),
        ..RunOpts::new(10)
    };
    let e = registry::run_random("credit_tx", 1, &opts).unwrap_err();
    assert!(!e.is_failure());
    assert_eq!(
        e.to_string(),
        "block `credit_tx` has no bug variant `BUG_NOPE` (variants: BUG_CREDIT_WRAP BUG_FC_ORDER)"
    );
    let e = registry::run_random("nope", 1, &RunOpts::new(10)).unwrap_err();
    assert!(e.to_string().starts_with("unknown block `nope`"), "{e}");
}

#[test]
fn a_model_moves_to_another_thread() {
    use cosim::dut::Dut;
    let (cfg, mut stim) = CreditTxBlock::random(9);
    let mut rtl = CreditTxBlock::rtl(&cfg, None).unwrap();
    let first = rtl.step(&stim.next().unwrap()).unwrap();
    let (rtl, n) = std::thread::spawn(move || {
        let mut n = 0;
        for i in stim.take(1000) {
            rtl.step(&i).unwrap();
            n += 1;
        }
        (rtl, n)
    })
    .join()
    .unwrap();
    drop(rtl);
    assert_eq!(n, 1000);
    assert_eq!(first.fctbs_o, 0);
}

/// The benchmark's C++ replay loop steps the model over the recorded port structs in turn, from the first
/// again after the last: after `n` cycles its ports equal those of a second model stepped from Rust with the
/// same inputs taken cyclically (stateful blocks: a dropped, repeated or reordered input changes them), for
/// `n` short of, equal to and past the window, on narrow, 64-bit and multi-word ports.
#[test]
fn replay_loop_steps_the_recorded_inputs_in_turn() {
    use cosim::dut::Dut;
    use cosim::ffi::RtlDut;
    fn check<B: Block>()
    where
        <B::Rtl as RtlDut>::Io: PartialEq,
    {
        let (cfg, stim) = B::random(5);
        let ins: Vec<B::In> = stim.take(1000).collect();
        for n in [1u64, 777, 1000, 2333] {
            let mut a = B::rtl(&cfg, None).unwrap();
            let rec = a.record(&ins);
            assert_eq!(rec.len(), ins.len());
            assert!(a.bench_replay(&rec, n).is_some(), "{} n {n}", B::NAME);
            let mut b = B::rtl(&cfg, None).unwrap();
            for i in ins.iter().cycle().take(n as usize) {
                b.step(i).unwrap();
            }
            assert!(*a.parts().1 == *b.parts().1, "{} n {n}", B::NAME);
        }
        let mut a = B::rtl(&cfg, None).unwrap();
        assert_eq!(
            a.bench_replay(&[], 10),
            None,
            "{}: nothing to replay",
            B::NAME
        );
    }
    check::<CreditRxBlock>();
    check::<FecnRewriteB8Block>();
    check::<FecnRewriteB32Block>();
    check::<CongDetectBlock>();
    check::<VlArbBlock>();
}

/// Progress reports of the test below (one test uses it).
static REPORTED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

fn record(done: u64) {
    REPORTED.lock().unwrap().push(done);
}

/// A run in stretches (`RunOpts::progress`) gives what one run gives: the mismatch at the same cycle from
/// the run's start (stretches of 100 cycles, so it lies in a later one), with its VCD window, and a clean run
/// matches all cycles; the reports count up by the stretch, ending at the total. On one thread and two.
#[test]
fn a_run_in_stretches_reports_progress_and_gives_the_same_results() {
    let dir = std::env::temp_dir().join(format!("cosim-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for pipelined in [false, true] {
        let bug = RunOpts {
            bug: Some("BUG_CREDIT_WRAP".into()),
            vcd: Some(dir.join("whole.vcd")),
            pipelined,
            ..RunOpts::new(BUG_BOUND)
        };
        let whole = run_random::<CreditTxBlock>(1, &bug).unwrap_err();
        let CosimError::Mismatch(m) = &whole else {
            panic!("expected a mismatch, got {whole}")
        };
        assert!(m.cycle > 200, "the bug shows at cycle {}", m.cycle);
        REPORTED.lock().unwrap().clear();
        let stretched = run_random::<CreditTxBlock>(
            1,
            &RunOpts {
                vcd: Some(dir.join("stretched.vcd")),
                progress: Some((100, record)),
                ..bug.clone()
            },
        )
        .unwrap_err();
        let CosimError::Mismatch(s) = &stretched else {
            panic!("expected a mismatch, got {stretched}")
        };
        assert_eq!(
            (s.cycle, s.port, s.rtl, s.model),
            (m.cycle, m.port, m.rtl, m.model)
        );
        let (wa, wb) = (m.vcd.as_ref().unwrap(), s.vcd.as_ref().unwrap());
        assert_eq!((wa.1, wa.2), (wb.1, wb.2));
        assert_eq!(
            std::fs::read(&wa.0).unwrap(),
            std::fs::read(&wb.0).unwrap(),
            "the same VCD window"
        );
        let want: Vec<u64> = (1..=m.cycle / 100).map(|k| 100 * k).collect();
        assert_eq!(*REPORTED.lock().unwrap(), want, "pipelined {pipelined}");

        REPORTED.lock().unwrap().clear();
        let clean = RunOpts {
            pipelined,
            progress: Some((1000, record)),
            ..RunOpts::new(10_500)
        };
        let matched = run_random::<CreditRxBlock>(3, &clean).unwrap();
        assert_eq!(matched.cycles, 10_500);
        let mut want: Vec<u64> = (1..=10).map(|k| 1000 * k).collect();
        want.push(10_500);
        assert_eq!(*REPORTED.lock().unwrap(), want, "pipelined {pipelined}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
