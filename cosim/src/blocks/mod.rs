//! The blocks the co-simulation knows: for each, the seeded stimulus generator, the port lists of its
//! `In`/`Out`, its configuration as held RTL ports and (with the `verilator` feature) the adapter to its
//! Verilated model. Adding a block: a table entry in [`crate::table`], a file here implementing [`Block`],
//! and one line in [`crate::registry`].

pub mod cct_shaper;
pub mod cong_detect;
pub mod credit_rx;
pub mod credit_tx;
pub mod fecn_marker;
pub mod fecn_rewrite;
pub mod timebase;
pub mod vl_arb;

use crate::check::CosimError;
use crate::cover::Cover;
#[cfg(feature = "verilator")]
use crate::cover::Coverage;
use crate::ports::{Ports, Wide};
use rtl_model::clocked::Clocked;
use std::fmt::Debug;

/// One block under co-simulation: everything the generic runner needs to build both sides and drive them.
pub trait Block {
    /// Module name in `hdl/` and in the port table.
    const NAME: &'static str;
    /// The Rust block's configuration (held input ports of the RTL).
    type Config: Clone + Debug;
    /// Input ports (`Send`: the checker runs the stimulus and the model on a second thread).
    type In: Ports + Debug + Default + Send + Sync;
    /// Output ports.
    type Out: Ports + PartialEq + Debug + Send;
    /// The Rust block.
    type Model: Clocked<In = Self::In, Out = Self::Out> + Send;
    /// The seeded random stimulus (an endless iterator; cloning it replays the same inputs).
    type Stim: Iterator<Item = Self::In> + Clone + Send;
    /// The block's cover points and their sampler.
    type Cover: Cover<Config = Self::Config, In = Self::In, Out = Self::Out, Model = Self::Model>;
    /// How many corner configurations [`Block::configure`] knows (0..CORNERS).
    const CORNERS: u32;
    /// Cycles of one configuration in a run's schedule ([`segment`]; a block whose every configuration
    /// shows its behaviours quickly takes short stretches, so a run applies many).
    const SEGMENT: u64 = 16_384;

    /// The Rust block in its reset state.
    fn model(cfg: &Self::Config) -> Result<Self::Model, CosimError>;
    /// A configuration and stimulus determined by `seed`: corner configuration `corner` (its corner
    /// settings fixed, the other settings drawn from `seed`), or, for `None`, one drawn wholly at random.
    fn configure(seed: u64, corner: Option<u32>) -> (Self::Config, Self::Stim);
    /// A random configuration and stimulus, both determined by `seed` (one configuration for a whole
    /// stimulus: port traces and the single-configuration tests).
    fn random(seed: u64) -> (Self::Config, Self::Stim) {
        Self::configure(seed, None)
    }
    /// The configuration as held-port values (port-table names), for port traces.
    fn config_ports(cfg: &Self::Config) -> Vec<(&'static str, Wide)>;
    /// The configuration from held-port values (each already checked to fit its port); every held port must
    /// be given.
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Self::Config, String>;

    /// The adapter to the Verilated model.
    #[cfg(feature = "verilator")]
    type Rtl: crate::ffi::RtlDut<In = Self::In, Out = Self::Out>;
    /// The Verilated model (clean RTL, or the bug variant `bug`), configured and after a power-on reset.
    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Self::Config, bug: Option<&str>) -> Result<Self::Rtl, CosimError>;
}

/// One configuration of a run's schedule.
#[derive(Debug, Clone)]
pub struct Segment<C, S> {
    /// Its place in the schedule (0-based).
    pub index: u64,
    /// The corner configuration it is, or `None` for a wholly random one.
    pub corner: Option<u32>,
    /// The configuration.
    pub cfg: C,
    /// Its stimulus.
    pub stim: S,
    /// Cycles it runs for (the run's last may be cut short).
    pub len: u64,
}

// SplitMix64's finaliser: seeds of a run's configurations that share no stream with each other or with
// the run's seed.
use rtl_model::rng::mix64 as mix;

/// Configuration `k` of the run with seed `seed`: even places go through `B`'s corner configurations in
/// turn (every corner within the first `2 * CORNERS` configurations, for every seed), odd places are drawn
/// wholly at random; each runs [`Block::SEGMENT`] cycles, on a stimulus of its own seed. The run resets the
/// RTL and the model and applies the configuration at the start of each (a fresh model instance with the
/// new held ports and its power-on reset edge: the RTL's configuration ports are held, read at reset).
pub fn segment<B: Block>(seed: u64, k: u64) -> Segment<B::Config, B::Stim> {
    let corner =
        (k.is_multiple_of(2) && B::CORNERS > 0).then(|| ((k / 2) % u64::from(B::CORNERS)) as u32);
    let s = mix(seed ^ mix(k.wrapping_add(0x5e9_3e47)));
    let (cfg, stim) = B::configure(s, corner);
    Segment {
        index: k,
        corner,
        cfg,
        stim,
        len: B::SEGMENT,
    }
}

/// `cfg`'s held ports as a port trace carries them (name, value): what `config_from_ports` reads back
/// (for the round-trip tests of every block).
#[cfg(test)]
pub(crate) fn held_pairs<B: Block>(cfg: &B::Config) -> Vec<(String, Wide)> {
    B::config_ports(cfg)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// Looks up `name` among `pairs`, naming the missing port in the error.
pub(crate) fn held_wide(pairs: &[(String, Wide)], name: &str) -> Result<Wide, String> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("config line lacks {name}"))
}

/// [`held_wide`] of a port of at most 64 bits.
pub(crate) fn held(pairs: &[(String, Wide)], name: &str) -> Result<u64, String> {
    held_wide(pairs, name).map(|v| v.low_u64())
}

/// All-ones mask of `bits` bits (`bits < 32`).
pub(crate) const fn mask(bits: u32) -> u32 {
    (1u32 << bits) - 1
}

/// Cycles of a run unless told otherwise (`ibcycle cosim`'s `--cycles`): long enough for every block's
/// schedule to go through its corner configurations, reach every cover point and catch every bug variant
/// with any seed (cosim/tests/lockstep.rs checks seeds 1 to 32).
pub const DEFAULT_CYCLES: u64 = 1_000_000;

/// How a co-simulation run is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOpts {
    /// Cycles to compare at most.
    pub cycles: u64,
    /// RTL bug variant to run instead of the clean RTL.
    pub bug: Option<String>,
    /// Where to write a VCD around the first mismatch.
    pub vcd: Option<std::path::PathBuf>,
    /// Cycles before the mismatch the VCD shows.
    pub before: u64,
    /// Cycles after the mismatch the VCD shows.
    pub after: u64,
    /// Run the stimulus and the Rust model on a second thread, batches ahead of the RTL
    /// ([`crate::check::lockstep_pipelined`]; same results). Off in [`RunOpts::new`] (the tests run many
    /// co-simulations at once); `ibcycle cosim` turns it on when the machine has a second CPU (then it is within
    /// the speed target for every block and faster than one thread for most: cosim/README.md, Speed).
    pub pipelined: bool,
    /// Progress: `(every, report)` runs the checker in stretches of `every` cycles and calls `report` with
    /// the cycles matched so far after each (same results: the stimulus and both sides carry on from
    /// stretch to stretch, and a mismatch is reported at its cycle from the run's start).
    pub progress: Option<(u64, fn(u64))>,
    /// Stop as soon as every cover point was hit (at a configuration's end), before `cycles` if need be.
    pub until_covered: bool,
}

impl RunOpts {
    /// `cycles` cycles of the clean RTL, no VCD; a VCD window (when set) is 64 cycles before to 8 after.
    pub fn new(cycles: u64) -> Self {
        RunOpts {
            cycles,
            bug: None,
            vcd: None,
            before: 64,
            after: 8,
            pipelined: false,
            progress: None,
            until_covered: false,
        }
    }
}

/// Co-simulates block `B` with configuration `cfg` on `stim` (one configuration for the whole run: port
/// traces): lockstep ([`crate::check::lockstep`], or [`crate::check::lockstep_pipelined`] with
/// `opts.pipelined`) until `opts.cycles` cycles matched, the stimulus ended, or the first mismatch, after
/// which the RTL is re-run on the same stimulus with tracing on from `opts.before` cycles before the mismatch
/// to `opts.after` cycles after it, into `opts.vcd`.
#[cfg(feature = "verilator")]
pub fn run<B: Block, S>(
    cfg: &B::Config,
    stim: S,
    opts: &RunOpts,
) -> Result<crate::check::Matched, CosimError>
where
    S: Iterator<Item = B::In> + Clone + Send,
{
    run_covered::<B, S>(cfg, stim, opts).0
}

/// [`run`], with the coverage the run reached.
#[cfg(feature = "verilator")]
pub fn run_covered<B: Block, S>(
    cfg: &B::Config,
    stim: S,
    opts: &RunOpts,
) -> (Result<crate::check::Matched, CosimError>, Coverage)
where
    S: Iterator<Item = B::In> + Clone + Send,
{
    let mut cov = Coverage::new::<B::Cover>(B::NAME);
    let r = stretch::<B, S>(cfg, stim, opts.cycles, 0, opts, &mut cov)
        .map(|cycles| crate::check::Matched { cycles });
    (r, cov)
}

/// Co-simulates `B` on the configurations of `seed`'s schedule ([`segment`]) in turn, each from a reset,
/// until `opts.cycles` cycles matched (or, with `opts.until_covered`, every cover point was hit) or the first
/// mismatch, which names the configuration it came in.
#[cfg(feature = "verilator")]
pub fn run_random<B: Block>(
    seed: u64,
    opts: &RunOpts,
) -> Result<crate::check::Matched, CosimError> {
    run_schedule::<B>(seed, opts).0
}

/// [`run_random`], with the coverage the run reached (up to the mismatch, if there is one).
#[cfg(feature = "verilator")]
pub fn run_schedule<B: Block>(
    seed: u64,
    opts: &RunOpts,
) -> (Result<crate::check::Matched, CosimError>, Coverage) {
    let mut cov = Coverage::new::<B::Cover>(B::NAME);
    let mut done = 0;
    let mut k = 0;
    while done < opts.cycles && !(opts.until_covered && cov.complete()) {
        let seg = segment::<B>(seed, k);
        let n = seg.len.min(opts.cycles - done);
        match stretch::<B, _>(&seg.cfg, seg.stim, n, done, opts, &mut cov) {
            Ok(c) => done += c,
            Err(CosimError::Mismatch(mut m)) => {
                m.config = Some(match seg.corner {
                    Some(c) => format!("configuration {k} (corner {c}) from cycle {done}"),
                    None => format!("configuration {k} (random) from cycle {done}"),
                });
                return (Err(CosimError::Mismatch(m)), cov);
            }
            Err(e) => return (Err(e), cov),
        }
        k += 1;
    }
    (Ok(crate::check::Matched { cycles: done }), cov)
}

/// One configuration's stretch of a run, starting `start` cycles into it: a fresh RTL model and Rust block
/// configured with `cfg`, stepped in lockstep on `stim` for at most `n` cycles; its hits go into `cov`.
/// Returns the cycles matched; a mismatch or halt is reported at its cycle from the run's start.
#[cfg(feature = "verilator")]
fn stretch<B: Block, S>(
    cfg: &B::Config,
    stim: S,
    n: u64,
    start: u64,
    opts: &RunOpts,
    cov: &mut Coverage,
) -> Result<u64, CosimError>
where
    S: Iterator<Item = B::In> + Clone + Send,
{
    use crate::ffi::RtlDut;
    let mut rtl = B::rtl(cfg, opts.bug.as_deref())?;
    rtl.parts().0.time_at(start);
    let mut model = crate::cover::Covered::<_, B::Cover>::new(B::model(cfg)?, cfg);
    let mut inputs = stim.clone();
    let (every, report) = opts.progress.unwrap_or((u64::MAX, |_| {}));
    let mut done = 0;
    let result = loop {
        let m = (n - done).min(every.max(1));
        let r = if opts.pipelined {
            crate::check::lockstep_pipelined(&mut rtl, &mut model, &mut inputs, m)
        } else {
            crate::check::lockstep(&mut rtl, &mut model, &mut inputs, m)
        };
        match r {
            Ok(c) => {
                done += c;
                report(start + done);
                if c < m || done >= n {
                    break Ok(done);
                }
            }
            Err(e) => break Err(e.after(done)),
        }
    };
    cov.add(&model.hits(), done);
    match result {
        Ok(cycles) => Ok(cycles),
        Err(CosimError::Mismatch(mut m)) => {
            if let Some(path) = &opts.vcd {
                let (a, b) = vcd_window::<B, S>(cfg, stim, opts, m.cycle, start, path)?;
                m.vcd = Some((path.clone(), a + start, b + start));
            }
            Err(CosimError::Mismatch(m).after(start))
        }
        Err(e) => Err(e.after(start)),
    }
}

/// Replays `stim` into a fresh RTL model, tracing cycles `cycle - before ..= cycle + after` of the stretch
/// (VCD time stamps from the run's start, `start` cycles before the stretch's).
#[cfg(feature = "verilator")]
fn vcd_window<B: Block, S: Iterator<Item = B::In>>(
    cfg: &B::Config,
    mut stim: S,
    opts: &RunOpts,
    cycle: u64,
    start: u64,
    path: &std::path::Path,
) -> Result<(u64, u64), CosimError> {
    use crate::dut::Dut;
    use crate::ffi::RtlDut;
    let from = cycle.saturating_sub(opts.before);
    let mut rtl = B::rtl(cfg, opts.bug.as_deref())?;
    rtl.parts().0.time_at(start);
    for c in 0..from {
        let i = stim.next().unwrap_or_default();
        rtl.step(&i)
            .map_err(|kind| CosimError::Halted { cycle: c, kind })?;
    }
    rtl.trace_open(path)?;
    let mut last = from;
    for c in from..=cycle + opts.after {
        let Some(i) = stim.next() else { break };
        last = c;
        if rtl.step(&i).is_err() {
            break;
        }
    }
    rtl.trace_close();
    Ok((from, last))
}

#[cfg(test)]
mod tests {
    use super::credit_rx::CreditRxBlock;
    use crate::cover::{Kind, MAX_POINTS};

    /// Every bug variant of the table names one cover point of its block that exists and can be hit; the
    /// points have distinct names and fit the counters; the corners are drawn as declared.
    fn cover_declared<B: Block>() {
        let m = module(B::NAME).unwrap();
        let pts = <B::Cover as Cover>::POINTS;
        assert!(pts.len() <= MAX_POINTS, "{}: too many points", B::NAME);
        for (k, p) in pts.iter().enumerate() {
            assert!(
                pts[..k].iter().all(|q| q.name != p.name),
                "{}: {} twice",
                B::NAME,
                p.name
            );
        }
        let exposed = <B::Cover as Cover>::EXPOSED_BY;
        assert_eq!(exposed.len(), m.bugs.len(), "{}", B::NAME);
        for bug in m.bugs {
            let named: Vec<_> = exposed.iter().filter(|(b, _)| b == bug).collect();
            assert_eq!(named.len(), 1, "{} {bug}: names no cover point", B::NAME);
            let p = pts.iter().find(|p| p.name == named[0].1);
            assert!(
                p.is_some_and(|p| p.kind != Kind::Never),
                "{} {bug}: {} is not a point to cover",
                B::NAME,
                named[0].1
            );
        }
        for k in 0..2 * u64::from(B::CORNERS) + 4 {
            let s = segment::<B>(7, k);
            assert_eq!(s.corner.is_some(), k % 2 == 0 && B::CORNERS > 0);
            assert_eq!(s.len, B::SEGMENT);
        }
    }

    #[test]
    fn every_bug_variant_names_a_cover_point() {
        cover_declared::<CreditTxBlock>();
        cover_declared::<CreditRxBlock>();
        cover_declared::<super::timebase::TimebaseBlock>();
        cover_declared::<super::fecn_marker::FecnMarkerBlock>();
        cover_declared::<super::vl_arb::VlArbBlock>();
        cover_declared::<super::cong_detect::CongDetectBlock>();
        cover_declared::<super::cct_shaper::CctShaperBlock>();
        cover_declared::<super::fecn_rewrite::FecnRewriteB8Block>();
        cover_declared::<super::fecn_rewrite::FecnRewriteB32Block>();
    }

    /// Corner configurations are valid configurations of the Rust block, whatever the seed.
    #[test]
    fn corner_configurations_are_valid() {
        fn check<B: Block>() {
            for seed in 0..40 {
                for c in 0..B::CORNERS {
                    let (cfg, _) = B::configure(seed, Some(c));
                    assert!(B::model(&cfg).is_ok(), "{} corner {c}: {cfg:?}", B::NAME);
                }
            }
        }
        check::<CreditTxBlock>();
        check::<CreditRxBlock>();
        check::<super::timebase::TimebaseBlock>();
        check::<super::fecn_marker::FecnMarkerBlock>();
        check::<super::vl_arb::VlArbBlock>();
        check::<super::cong_detect::CongDetectBlock>();
        check::<super::cct_shaper::CctShaperBlock>();
    }
    use super::credit_tx::CreditTxBlock;
    use super::*;
    use crate::table::{module, Dir};

    /// The `Ports` field lists follow the port table, which the RTL shim is generated from.
    fn ports_follow_table<B: Block>() {
        let m = module(B::NAME).unwrap();
        let names = |d: Dir| -> Vec<&str> {
            m.ports
                .iter()
                .filter(|p| p.dir == d)
                .map(|p| p.name)
                .collect()
        };
        assert_eq!(<B::In as Ports>::NAMES, names(Dir::In).as_slice());
        assert_eq!(<B::Out as Ports>::NAMES, names(Dir::Out).as_slice());
        let (cfg, _) = B::random(1);
        let held: Vec<&str> = B::config_ports(&cfg).iter().map(|(k, _)| *k).collect();
        assert_eq!(held, names(Dir::Held));
    }

    #[test]
    fn port_lists_match_the_table() {
        ports_follow_table::<CreditTxBlock>();
        ports_follow_table::<CreditRxBlock>();
        ports_follow_table::<super::timebase::TimebaseBlock>();
        ports_follow_table::<super::fecn_marker::FecnMarkerBlock>();
        ports_follow_table::<super::vl_arb::VlArbBlock>();
        ports_follow_table::<super::cong_detect::CongDetectBlock>();
        ports_follow_table::<super::cct_shaper::CctShaperBlock>();
        ports_follow_table::<super::fecn_rewrite::FecnRewriteB8Block>();
        ports_follow_table::<super::fecn_rewrite::FecnRewriteB32Block>();
    }

    #[test]
    fn config_ports_round_trip() {
        for seed in 0..50 {
            let (c, _) = CreditRxBlock::random(seed);
            let pairs = held_pairs::<CreditRxBlock>(&c);
            assert_eq!(CreditRxBlock::config_from_ports(&pairs).unwrap(), c);
            assert!(c.validate().is_ok());
            let (c, _) = CreditTxBlock::random(seed);
            let pairs = held_pairs::<CreditTxBlock>(&c);
            assert_eq!(CreditTxBlock::config_from_ports(&pairs).unwrap(), c);
        }
    }
}

/// The random stimulus reaches the behaviours a co-simulation must compare (so "matched N cycles" means
/// something): checked on the Rust block, no Verilator needed.
#[cfg(test)]
mod coverage {
    use super::credit_rx::CreditRxBlock;
    use super::credit_tx::CreditTxBlock;
    use super::*;

    #[test]
    fn credit_tx_stimulus_reaches_wraps_refusals_errors_and_resets() {
        let (cfg, stim) = CreditTxBlock::random(1);
        let mut m = CreditTxBlock::model(&cfg).unwrap();
        let (mut ok, mut refused, mut err, mut resets, mut wraps, mut fc_with_req) =
            (0, 0, 0, 0, 0, 0);
        let mut last = 0u16;
        for i in stim.take(1_000_000) {
            let o = m.step(&i);
            ok += u32::from(o.send_ok_o);
            refused += u32::from(i.rst_ni && i.req_valid_i && !o.send_ok_o);
            err += u32::from(o.err_o);
            resets += u32::from(!i.rst_ni);
            fc_with_req += u32::from(i.fc_valid_i && i.req_valid_i);
            wraps += u32::from(i.rst_ni && o.fctbs_o < last);
            last = o.fctbs_o;
        }
        assert!(
            ok > 100_000 && refused > 10_000,
            "ok {ok} refused {refused}"
        );
        assert!(
            err > 50 && resets > 3 && fc_with_req > 10_000,
            "err {err} resets {resets}"
        );
        assert!(wraps > 100, "FCTBS wrapped only {wraps} times");
    }

    #[test]
    fn credit_rx_stimulus_reaches_full_buffer_cap_errors_and_packets() {
        let mut seen_full = false;
        let mut seen_cap = false;
        let (mut overflow, mut drain_err, mut sends, mut fc_with_rx) = (0, 0, 0, 0);
        for seed in 1..=8 {
            let (cfg, stim) = CreditRxBlock::random(seed);
            let mut m = CreditRxBlock::model(&cfg).unwrap();
            for i in stim.take(200_000) {
                let o = m.step(&i);
                seen_full |= i.rst_ni && o.free_o == 0;
                seen_cap |= o.free_o > cfg.fccl_cap;
                overflow += u32::from(o.overflow_o);
                drain_err += u32::from(o.drain_err_o);
                sends += u32::from(o.fc_send_o);
                fc_with_rx += u32::from(i.fc_valid_i && i.blk_rx_i & 0x7f != 0);
            }
        }
        assert!(seen_full && seen_cap);
        assert!(
            overflow > 100 && drain_err > 100,
            "overflow {overflow} drain_err {drain_err}"
        );
        assert!(
            sends > 10_000 && fc_with_rx > 1000,
            "sends {sends} fc_with_rx {fc_with_rx}"
        );
    }
}
