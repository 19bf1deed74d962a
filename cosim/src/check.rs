//! The lockstep checker: both sides get the same inputs every cycle, every output is compared every cycle,
//! and the first difference stops the run.

use crate::dut::{Dut, Halt};
use crate::ports::{first_difference, Ports, Wide};
use std::path::PathBuf;

/// The first cycle where the RTL and the model disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Cycle number from the start of the run (0-based).
    pub cycle: u64,
    /// The first differing output port, in port-table order.
    pub port: &'static str,
    /// The RTL's value (any port width: shown in hex in full).
    pub rtl: Wide,
    /// The model's value.
    pub model: Wide,
    /// The VCD written around the mismatch, with its first and last cycle, when one was asked for.
    pub vcd: Option<(PathBuf, u64, u64)>,
    /// Which configuration of a run's schedule the mismatch came in (for runs of many).
    pub config: Option<String>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mismatch at cycle {}: port {}: RTL 0x{:x}, model 0x{:x}",
            self.cycle, self.port, self.rtl, self.model
        )?;
        if let Some((p, a, b)) = &self.vcd {
            write!(f, " (VCD of cycles {a}..={b} in {})", p.display())?;
        }
        if let Some(c) = &self.config {
            write!(f, " in {c}")?;
        }
        Ok(())
    }
}

/// A successful run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    /// Cycles compared.
    pub cycles: u64,
}

impl std::fmt::Display for Matched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "matched {} cycles", self.cycles)
    }
}

/// Why a co-simulation did not match. [`CosimError::is_failure`] separates a failed check (the RTL disagrees
/// or stopped) from a run that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// Outputs differ (boxed: two port values of up to 2,048 bits would make every `Result` large).
    #[error("{0}")]
    Mismatch(Box<Mismatch>),
    /// The RTL ran `$finish`, `$stop` or `$fatal`; the run cannot count as a pass.
    #[error("the RTL ran {kind} at cycle {cycle}: the run does not count as a pass")]
    Halted {
        /// Cycle of the call.
        cycle: u64,
        /// Which call.
        kind: Halt,
    },
    /// No block of that name.
    #[error("unknown block `{name}` (blocks: {known})")]
    UnknownBlock {
        /// The name given.
        name: String,
        /// The blocks there are.
        known: String,
    },
    /// No bug variant of that name for the block.
    #[error("block `{block}` has no bug variant `{bug}` (variants: {known})")]
    UnknownBug {
        /// The block.
        block: &'static str,
        /// The name given.
        bug: String,
        /// The variants there are.
        known: String,
    },
    /// The block's configuration is invalid.
    #[error("bad configuration of {block}: {msg}")]
    Config {
        /// The block.
        block: &'static str,
        /// What is wrong (names the setting and the value).
        msg: String,
    },
    /// A port-trace file is malformed.
    #[error("{0}")]
    Trace(#[from] crate::trace::TraceError),
    /// Reading or writing a file failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// This build has no Verilated models.
    #[error(
        "this build has no Verilated models: build with the `cosim` feature (needs Verilator 5: \
         `apt-get install verilator`, or run ./scripts/test)"
    )]
    NoVerilator,
}

impl CosimError {
    /// True for a failed check (mismatch, or the RTL stopped), false for a run that could not start.
    pub fn is_failure(&self) -> bool {
        matches!(self, CosimError::Mismatch(_) | CosimError::Halted { .. })
    }

    /// The error of a stretch that started `cycles` cycles into the run, with its cycle counted from the
    /// run's start.
    pub fn after(self, cycles: u64) -> Self {
        match self {
            CosimError::Mismatch(mut m) => {
                m.cycle += cycles;
                CosimError::Mismatch(m)
            }
            CosimError::Halted { cycle, kind } => CosimError::Halted {
                cycle: cycle + cycles,
                kind,
            },
            e => e,
        }
    }
}

/// Steps `rtl` and `model` with the same inputs from `stim` for at most `cycles` cycles (fewer if `stim`
/// ends), comparing every output every cycle. Returns the number of cycles compared, or the first mismatch
/// (without a VCD; `crate::blocks::run` adds one) or the cycle where either side halted.
pub fn lockstep<R, M, S>(
    rtl: &mut R,
    model: &mut M,
    stim: &mut S,
    cycles: u64,
) -> Result<u64, CosimError>
where
    R: Dut,
    M: Dut<In = R::In, Out = R::Out>,
    R::Out: Ports + PartialEq,
    S: Iterator<Item = R::In>,
{
    let mut cycle = 0;
    while cycle < cycles {
        let Some(i) = stim.next() else { break };
        // The model first: the RTL side compares its ports against the model's outputs in place.
        let m = model
            .step(&i)
            .map_err(|kind| CosimError::Halted { cycle, kind })?;
        let r = rtl
            .step_check(&i, &m)
            .map_err(|kind| CosimError::Halted { cycle, kind })?;
        if let Some(r) = r {
            return Err(mismatch(cycle, &r, &m));
        }
        cycle += 1;
    }
    Ok(cycle)
}

/// The report of the first differing port of `r` (RTL) and `m` (model) at `cycle` (out of line: only a failing
/// run gets here).
#[cold]
#[inline(never)]
fn mismatch<O: Ports>(cycle: u64, r: &O, m: &O) -> CosimError {
    // PartialEq and the port list agree unless a Ports impl misses a field: fall back to the first port.
    let k = first_difference(r, m).unwrap_or(0);
    CosimError::Mismatch(Box::new(Mismatch {
        cycle,
        port: O::NAMES[k],
        rtl: r.get(k),
        model: m.get(k),
        vcd: None,
        config: None,
    }))
}

/// Cycles in the first batch of [`lockstep_pipelined`]: the checker waits for it, so it is short; each later
/// batch is twice the last up to [`batch_cap`].
pub const BATCH: usize = 512;

/// Bytes of inputs and outputs a full batch holds at most (three are in flight: they stay in the L2 cache).
pub const BATCH_BYTES: usize = 512 << 10;

/// The largest batch, in cycles, for entries of `entry` bytes: [`BATCH_BYTES`] worth, at least [`BATCH`] and at
/// most 16,384. A hand-over costs the two threads a wake-up each when the producer has run out of batches,
/// tens of microseconds in a virtual machine, so batches must take milliseconds: at 1,024 cycles the fastest
/// blocks lost about a fifth of their speed to it (`timebase` 71% of the C++ loop against 91% now).
pub fn batch_cap(entry: usize) -> usize {
    (BATCH_BYTES / entry.max(1)).clamp(BATCH, 16_384)
}

/// One batch: inputs and the model's outputs for them.
type Batch<I, O> = Vec<(I, Result<O, Halt>)>;

/// [`lockstep`] with the stimulus and the Rust model on a second thread, a batch ahead of the RTL: the same
/// inputs reach both sides, every output of every cycle is compared, and the result (cycles, first mismatch
/// with its cycle, port and values, or a halt) is the same as [`lockstep`]'s; the model may have run up to
/// two batches past a mismatch, which changes nothing the caller sees. The RTL stays on the calling thread
/// (a Verilated model is `Send` but its context is not meant to move per cycle). Batches start at [`BATCH`]
/// cycles (the checker waits for the first) and double up to [`batch_cap`]; three are recycled, so once they
/// have reached it, no allocation.
pub fn lockstep_pipelined<R, M, S>(
    rtl: &mut R,
    model: &mut M,
    stim: S,
    cycles: u64,
) -> Result<u64, CosimError>
where
    R: Dut,
    M: Dut<In = R::In, Out = R::Out> + Send,
    S: Iterator<Item = R::In> + Send,
    R::In: Send,
    R::Out: Ports + PartialEq + Send,
{
    use std::sync::mpsc::sync_channel;
    std::thread::scope(|sc| {
        let (full_tx, full_rx) = sync_channel::<Batch<R::In, R::Out>>(2);
        let (empty_tx, empty_rx) = sync_channel::<Batch<R::In, R::Out>>(3);
        for _ in 0..3 {
            let _ = empty_tx.send(Vec::new());
        }
        let cap = batch_cap(std::mem::size_of::<(R::In, Result<R::Out, Halt>)>());
        sc.spawn(move || {
            let mut stim = stim;
            let mut left = cycles;
            let mut size = BATCH;
            // A closed channel means the checker stopped (mismatch or halt): stop too.
            while let Ok(mut b) = empty_rx.recv() {
                b.clear();
                b.reserve(size);
                while b.len() < size && left > 0 {
                    let Some(i) = stim.next() else {
                        left = 0;
                        break;
                    };
                    let o = model.step(&i);
                    b.push((i, o));
                    left -= 1;
                }
                let last = b.len() < size || left == 0;
                if full_tx.send(b).is_err() || last {
                    break;
                }
                size = (2 * size).min(cap);
            }
        });
        let mut cycle = 0;
        for b in full_rx.iter() {
            for (i, m) in &b {
                let m = m
                    .as_ref()
                    .map_err(|&kind| CosimError::Halted { cycle, kind })?;
                // Compared in place, as in `lockstep`: the RTL's outputs become a struct only on a mismatch.
                let r = rtl
                    .step_check(i, m)
                    .map_err(|kind| CosimError::Halted { cycle, kind })?;
                if let Some(r) = r {
                    return Err(mismatch(cycle, &r, m));
                }
                cycle += 1;
            }
            // The producer may already have stopped: a failed hand-back is fine.
            let _ = empty_tx.send(b);
        }
        Ok(cycle)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::Golden;
    use rtl_model::blocks::credit_tx::{Config, CreditTx, In, Out};

    /// A "broken RTL": the Rust block with `send_ok_o` inverted from cycle `from` on.
    struct Broken {
        inner: Golden<CreditTx>,
        from: u64,
        n: u64,
    }

    impl Dut for Broken {
        type In = In;
        type Out = Out;
        fn step(&mut self, i: &In) -> Result<Out, Halt> {
            let mut o = self.inner.step(i)?;
            if self.n >= self.from {
                o.send_ok_o = !o.send_ok_o;
            }
            self.n += 1;
            Ok(o)
        }
    }

    fn stim() -> impl Iterator<Item = In> + Clone {
        std::iter::repeat(In {
            rst_ni: true,
            ..In::default()
        })
    }

    #[test]
    fn equal_sides_match_all_cycles_and_report_it() {
        let mut a = Golden(CreditTx::new(Config::default()).unwrap());
        let mut b = a.clone();
        let n = lockstep(&mut a, &mut b, &mut stim(), 500).unwrap();
        assert_eq!(n, 500);
        assert_eq!(Matched { cycles: n }.to_string(), "matched 500 cycles");
        // A finite stimulus ends the run early.
        let n = lockstep(&mut a, &mut b, &mut stim().take(7), 500).unwrap();
        assert_eq!(n, 7);
    }

    #[test]
    fn first_mismatch_names_cycle_port_and_both_values_in_hex() {
        let model = Golden(CreditTx::new(Config { fccl_reset: 0xabc }).unwrap());
        let mut rtl = Broken {
            inner: model.clone(),
            from: 321,
            n: 0,
        };
        let mut model = model;
        let e = lockstep(&mut rtl, &mut model, &mut stim(), 1000).unwrap_err();
        let CosimError::Mismatch(m) = &e else {
            panic!("expected a mismatch, got {e}")
        };
        assert_eq!(
            (m.cycle, m.port, m.rtl, m.model),
            (321, "send_ok_o", Wide::from(1u8), Wide::ZERO)
        );
        assert!(e.is_failure());
        assert_eq!(
            e.to_string(),
            "mismatch at cycle 321: port send_ok_o: RTL 0x1, model 0x0"
        );
    }

    #[test]
    fn pipelined_gives_the_same_results_as_plain_lockstep() {
        let model = Golden(CreditTx::new(Config { fccl_reset: 0xabc }).unwrap());
        // Batches of 512, 1,024, 2,048, ... cycles: mismatches in the first, second and third batch and in
        // the first at the cap; stimuli ending inside a batch and at a batch's end.
        assert_eq!(BATCH, 512);
        assert_eq!(
            batch_cap(std::mem::size_of::<(In, Result<Out, Halt>)>()),
            16_384
        );
        for (from, len) in [
            (321u64, 5000usize),
            (3 * BATCH as u64 + 7, 10_000),
            (3 * BATCH as u64 + 7, 3 * BATCH + 7),
            (40_000, 60_000),
            (u64::MAX, 2 * BATCH),
            (u64::MAX, 3 * BATCH),
            (u64::MAX, 70_000),
        ] {
            let mk = || Broken {
                inner: model.clone(),
                from,
                n: 0,
            };
            let a = lockstep(
                &mut mk(),
                &mut model.clone(),
                &mut stim().take(len),
                1_000_000,
            );
            let b = lockstep_pipelined(&mut mk(), &mut model.clone(), stim().take(len), 1_000_000);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "from {from} len {len}");
            // A cycle limit inside a batch stops there.
            let c =
                lockstep_pipelined(&mut model.clone(), &mut model.clone(), stim(), 1500).unwrap();
            assert_eq!(c, 1500);
        }
        let e = lockstep_pipelined(
            &mut Broken {
                inner: model.clone(),
                from: 4000,
                n: 0,
            },
            &mut model.clone(),
            stim(),
            u64::MAX,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("mismatch at cycle 4000: port send_ok_o"),
            "{e}"
        );
    }

    #[test]
    fn a_halted_side_is_a_failure_not_a_pass() {
        struct Stops;
        impl Dut for Stops {
            type In = In;
            type Out = Out;
            fn step(&mut self, _: &In) -> Result<Out, Halt> {
                Err(Halt::Finish)
            }
        }
        let mut model = Golden(CreditTx::new(Config::default()).unwrap());
        let e = lockstep(&mut Stops, &mut model, &mut stim(), 10).unwrap_err();
        assert!(matches!(
            e,
            CosimError::Halted {
                cycle: 0,
                kind: Halt::Finish
            }
        ));
        assert!(e.is_failure());
    }
}
