//! The "queueing" mode of `ibcycle run` (validation target T1, thesis-003-digest.md): the thesis' analytic
//! models simulated on their own, event by event in integer cycles with seeded samples from hca-model's
//! traffic generator, and compared with their reference solutions.
//!
//! - `[tandem]`: the credit-based flow control CTMC (one VL, per-packet credits, zero credit latency,
//!   exponential service), one run per node-2 capacity `m`; reference: the CTMC solved numerically.
//! - `[ge_queue]`: the GE/GE/1/N queue, one run per arrival rate; reference: the maximum-entropy formulas.
//!
//! What is exact and what is statistical: the CTMC solution and the ME formulas are exact computations (unit
//! tests check them against the digest's numbers); the simulations are estimates with a 95% confidence
//! interval from batch means (`ci95` in `summary.json`). The CTMC is the simulated model's exact law (up to
//! integer-cycle rounding of samples, below 1e-5 relative at 1e6 cycles per time unit), so the two must agree
//! within statistical error; the ME formulas are an approximation (the thesis reports 5-10% error).
//!
//! The tandem's credits are rtl-model's clocked `credit_tx` / `credit_rx` blocks (one 64-byte block per
//! packet, a flow-control packet on every FCCL change, no wire delay), stepped only at cycles where something
//! happens: 1e5 time units of 1e6 cycles would be 1e11 clock edges. A freed credit is usable two cycles
//! later (the blocks' registers), 2e-6 time units, which the CTMC's zero credit latency does not resolve.
//!
//! ```toml
//! name = "thesis-ctmc"
//! seed = 3
//! warmup_units = 1000      # model time units ignored at the start
//! duration_units = 100000  # measured time units after the warm-up
//! batches = 20             # batch means
//! [tandem]
//! lambda = 5.0
//! mu1 = 6.0
//! mu2 = 8.0
//! n = 12
//! m = [2, 3, 4, 6, 8, 11]
//! ```
//! or `[ge_queue]` with `lambda = [2.0, 4.0, 6.0]`, `mu = 8.0`, `ca2 = 5.0`, `cs2 = 7.0`, `capacity = 8`.

pub mod credits;
pub mod ge;
pub mod sampler;
pub mod stats;
pub mod tandem;

use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::scenario::ScenarioError;

/// Cycles per model time unit (1 ms at 1 GHz).
pub const UNIT_CYCLES: u64 = 1_000_000;
/// Most time units of a run (warm-up and measured time together): 10^12 cycles, below the model's 2^40.
pub const MAX_UNITS: u64 = 1_000_000;

/// How long a queueing run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLength {
    /// Time units before measuring.
    pub warmup_units: u64,
    /// Measured time units.
    pub duration_units: u64,
    /// Batches the measured time is cut into.
    pub batches: usize,
}

impl RunLength {
    /// Warm-up in cycles.
    pub fn warmup_cycles(&self) -> u64 {
        self.warmup_units * UNIT_CYCLES
    }

    /// One batch in cycles.
    pub fn batch_cycles(&self) -> u64 {
        self.duration_units * UNIT_CYCLES / self.batches.max(1) as u64
    }
}

/// A queueing model file as read.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueingFile {
    /// Name (`name`, or the file stem).
    pub name: String,
    /// Seed of every run (each run derives its own).
    pub seed: u64,
    /// Run length.
    pub length: RunLength,
    /// The model and its runs.
    pub model: Model,
}

/// The model of a queueing file.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// The tandem CTMC, one run per entry.
    Tandem(Vec<tandem::Tandem>),
    /// The GE/GE/1/N queue, one run per entry.
    Ge(Vec<ge::GeQueue>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Option<String>,
    #[serde(default = "one")]
    seed: u64,
    warmup_units: Spanned<u64>,
    duration_units: Spanned<u64>,
    #[serde(default = "twenty")]
    batches: Spanned<u32>,
    tandem: Option<Spanned<TandemEntry>>,
    ge_queue: Option<Spanned<GeEntry>>,
}

fn one() -> u64 {
    1
}

fn twenty() -> Spanned<u32> {
    Spanned::new(0..0, 20)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TandemEntry {
    lambda: f64,
    mu1: f64,
    mu2: f64,
    n: u32,
    m: Vec<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GeEntry {
    lambda: Vec<f64>,
    mu: f64,
    ca2: f64,
    cs2: f64,
    capacity: u32,
}

/// Whether `text` is a queueing model file (it has a `[tandem]` or `[ge_queue]` table).
pub fn is_queueing(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("tandem") || t.contains_key("ge_queue"))
}

/// Parses a queueing file; errors name file, line and field.
pub fn parse(path: &Path, text: &str) -> Result<QueueingFile, ScenarioError> {
    let line = |pos: usize| text[..pos.min(text.len())].matches('\n').count() + 1;
    let at = |span: Range<usize>, message: String| ScenarioError {
        file: path.to_path_buf(),
        line: line(span.start),
        message,
    };
    let f: File = toml::from_str(text).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: e.span().map_or(0, |s| line(s.start)),
        message: e.message().to_string(),
    })?;
    if *f.duration_units.get_ref() == 0 {
        return Err(at(
            f.duration_units.span(),
            "duration_units: must be above 0".into(),
        ));
    }
    // Both in cycles must stay below the model's 2^40-cycle horizon (docs/scenario-format.md, "Limits
    // and warnings").
    let (warm, dur) = (*f.warmup_units.get_ref(), *f.duration_units.get_ref());
    if warm > MAX_UNITS {
        return Err(at(
            f.warmup_units.span(),
            format!("warmup_units: {warm} is not in 0..={MAX_UNITS}"),
        ));
    }
    if dur > MAX_UNITS - warm {
        return Err(at(
            f.duration_units.span(),
            format!(
                "duration_units: {dur} is not in 1..={} (warmup_units + duration_units at most {MAX_UNITS})",
                MAX_UNITS - warm
            ),
        ));
    }
    let batches = *f.batches.get_ref();
    if !(2..=1000).contains(&batches) {
        return Err(at(
            f.batches.span(),
            format!("batches: {batches} is not in 2..=1000"),
        ));
    }
    // Rates become thousandths per time unit: at least 0.001, at most 1e6 (a mean gap of 1 cycle).
    let rate = |v: f64, field: &str, span: Range<usize>| {
        if (0.001..=1.0e6).contains(&v) {
            Ok((v * 1000.0).round() as u64)
        } else {
            Err(at(
                span,
                format!("{field}: {v} is not a rate in 0.001 ..= 1e6 per time unit"),
            ))
        }
    };
    let scv = |v: f64, field: &str, span: Range<usize>| {
        if (1.0..=1.0e6).contains(&v) {
            Ok((v * 1000.0).round() as u32)
        } else {
            Err(at(
                span,
                format!("{field}: {v} is not in 1 ..= 1e6 (GE needs C^2 >= 1)"),
            ))
        }
    };
    let model = match (&f.tandem, &f.ge_queue) {
        (Some(t), None) => {
            let (e, sp) = (t.get_ref(), t.span());
            let (lambda, mu1, mu2) = (
                rate(e.lambda, "tandem.lambda", sp.clone())?,
                rate(e.mu1, "tandem.mu1", sp.clone())?,
                rate(e.mu2, "tandem.mu2", sp.clone())?,
            );
            if !(1..=1000).contains(&e.n) {
                return Err(at(sp, format!("tandem.n: {} is not in 1..=1000", e.n)));
            }
            if e.m.is_empty() || e.m.iter().any(|m| !(1..=1000).contains(m)) {
                return Err(at(
                    sp,
                    format!("tandem.m: {:?} is not a list of 1..=1000", e.m),
                ));
            }
            if let Some(&m) =
                e.m.iter()
                    .find(|&&m| (e.n as usize + 1) * (m as usize + 1) > tandem::MAX_STATES)
            {
                return Err(at(
                    sp,
                    format!(
                        "tandem: n = {} and m = {m} give more than {} CTMC states (the exact solution is dense)",
                        e.n,
                        tandem::MAX_STATES
                    ),
                ));
            }
            Model::Tandem(
                e.m.iter()
                    .map(|&m| tandem::Tandem {
                        lambda_milli: lambda,
                        mu1_milli: mu1,
                        mu2_milli: mu2,
                        n: e.n,
                        m,
                    })
                    .collect(),
            )
        }
        (None, Some(g)) => {
            let (e, sp) = (g.get_ref(), g.span());
            let mu = rate(e.mu, "ge_queue.mu", sp.clone())?;
            let (ca2, cs2) = (
                scv(e.ca2, "ge_queue.ca2", sp.clone())?,
                scv(e.cs2, "ge_queue.cs2", sp.clone())?,
            );
            if !(1..=100_000).contains(&e.capacity) {
                return Err(at(
                    sp,
                    format!("ge_queue.capacity: {} is not in 1..=100000", e.capacity),
                ));
            }
            if e.lambda.is_empty() {
                return Err(at(sp, "ge_queue.lambda: give at least one rate".into()));
            }
            let mut runs = Vec::new();
            for &l in &e.lambda {
                let lambda_milli = rate(l, "ge_queue.lambda", sp.clone())?;
                if lambda_milli >= mu {
                    // The ME formulas need rho < 1 (L_inf of the open queue).
                    return Err(at(
                        sp,
                        format!("ge_queue.lambda: {l} is not below mu ({})", e.mu),
                    ));
                }
                runs.push(ge::GeQueue {
                    lambda_milli,
                    mu_milli: mu,
                    ca2_milli: ca2,
                    cs2_milli: cs2,
                    capacity: e.capacity,
                });
            }
            Model::Ge(runs)
        }
        _ => {
            return Err(at(
                0..0,
                "give exactly one of [tandem] or [ge_queue]".into(),
            ))
        }
    };
    Ok(QueueingFile {
        name: f.name.unwrap_or_else(|| {
            path.file_stem()
                .map_or_else(|| "queueing".into(), |s| s.to_string_lossy().into_owned())
        }),
        seed: f.seed,
        length: RunLength {
            warmup_units: *f.warmup_units.get_ref(),
            duration_units: *f.duration_units.get_ref(),
            batches: batches as usize,
        },
        model,
    })
}

/// One tandem run in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TandemRun {
    /// Node 2 capacity.
    pub m: u32,
    /// Simulated, with 95% confidence intervals.
    pub simulated: tandem::Metrics<stats::Estimate>,
    /// Violations the credit blocks flagged (zero in a correct model).
    pub credit_violations: u64,
    /// The CTMC's exact values.
    pub exact: tandem::Metrics<f64>,
}

/// One GE/GE/1/N run in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeRun {
    /// Arrival rate per time unit.
    pub lambda: f64,
    /// Simulated, with 95% confidence intervals.
    pub simulated: ge::Metrics<stats::Estimate>,
    /// The maximum-entropy approximation.
    pub max_entropy: ge::Metrics<f64>,
}

/// `summary.json` of a queueing run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueingSummary {
    /// File name.
    pub scenario: String,
    /// Measured model time units per run.
    pub duration_units: u64,
    /// Batches per run.
    pub batches: usize,
    /// Tandem runs (empty for a GE file).
    pub tandem: Vec<TandemRun>,
    /// GE runs (empty for a tandem file).
    pub ge_queue: Vec<GeRun>,
}

/// Runs every model run of `q`; an error names a setting the credit blocks reject.
pub fn run(q: &QueueingFile) -> Result<QueueingSummary, String> {
    let seed = |k: usize| crate::fabric::traffic::flow_seed(q.seed, k);
    let mut s = QueueingSummary {
        scenario: q.name.clone(),
        duration_units: q.length.duration_units,
        batches: q.length.batches,
        tandem: Vec::new(),
        ge_queue: Vec::new(),
    };
    match &q.model {
        Model::Tandem(runs) => {
            for (k, t) in runs.iter().enumerate() {
                let sim = tandem::simulate(t, &q.length, seed(k))?;
                s.tandem.push(TandemRun {
                    m: t.m,
                    simulated: sim.metrics,
                    credit_violations: sim.credit_violations,
                    exact: tandem::exact(t),
                });
            }
        }
        Model::Ge(runs) => {
            for (k, g) in runs.iter().enumerate() {
                s.ge_queue.push(GeRun {
                    lambda: g.lambda_milli as f64 / 1000.0,
                    simulated: ge::simulate(g, &q.length, seed(k)),
                    max_entropy: ge::max_entropy(g),
                });
            }
        }
    }
    Ok(s)
}

/// `ibcycle run` on a queueing file: `None` when `file` is not one (or unreadable: the scenario loader
/// reports that), else the exit status after writing `summary.json` into `out`.
pub fn cli(file: &Path, out: &Path) -> Option<ExitCode> {
    // An unreadable file, or one that is not a regular file of bounded size, is left to the scenario loader,
    // which reports why.
    let text = crate::scenario::read_input(file).ok()?;
    if !is_queueing(&text) {
        return None;
    }
    let q = match parse(file, &text) {
        Ok(q) => q,
        Err(e) => {
            eprintln!("ibcycle run: {e}");
            return Some(ExitCode::FAILURE);
        }
    };
    let s = match run(&q) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ibcycle run: {}: {e}", file.display());
            return Some(ExitCode::FAILURE);
        }
    };
    for t in &s.tandem {
        let (a, e) = (&t.simulated, &t.exact);
        println!(
            "m={}: L1 {:.4}±{:.4} (exact {:.4})  L2 {:.4}±{:.4} ({:.4})  T {:.4}±{:.4} ({:.4})",
            t.m, a.l1.mean, a.l1.ci95, e.l1, a.l2.mean, a.l2.ci95, e.l2, a.t.mean, a.t.ci95, e.t
        );
    }
    for g in &s.ge_queue {
        let (a, e) = (&g.simulated, &g.max_entropy);
        println!(
            "lambda={}: U {:.4}±{:.4} (ME {:.4})  L {:.4}±{:.4} ({:.4})  P(N) {:.4}±{:.4} ({:.4})",
            g.lambda,
            a.u.mean,
            a.u.ci95,
            e.u,
            a.l.mean,
            a.l.ci95,
            e.l,
            a.p_full.mean,
            a.p_full.ci95,
            e.p_full
        );
    }
    // Staged beside `out` and renamed into place, as a fabric run's outputs are.
    let write = || -> Result<(), String> {
        let staging = crate::run::output::Staging::new(out)?;
        let json = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
        std::fs::write(staging.dir().join("summary.json"), json + "\n")
            .map_err(|e| e.to_string())?;
        staging.commit().map_err(|e| e.to_string())
    };
    if let Err(e) = write() {
        eprintln!("ibcycle run: writing {}: {e}", out.display());
        return Some(ExitCode::FAILURE);
    }
    let violations: u64 = s.tandem.iter().map(|t| t.credit_violations).sum();
    if violations != 0 {
        eprintln!("ibcycle run: the credit blocks flagged {violations} violations");
        return Some(ExitCode::FAILURE);
    }
    println!("wrote {}", out.display());
    Some(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTMC: &str = "seed = 3\nwarmup_units = 10\nduration_units = 100\n[tandem]\nlambda = 5.0\nmu1 = 6.0\nmu2 = 8.0\nn = 12\nm = [2, 3]\n";

    #[test]
    fn reads_both_models_and_names_bad_values() {
        assert!(is_queueing(CTMC) && !is_queueing("duration_us = 5\n"));
        let q = parse(Path::new("d/t.toml"), CTMC).unwrap();
        assert_eq!((q.name.as_str(), q.length.batches), ("t", 20));
        let Model::Tandem(r) = &q.model else {
            panic!("tandem expected")
        };
        assert_eq!((r.len(), r[1].m, r[0].lambda_milli), (2, 3, 5000));
        let ge = "warmup_units = 1\nduration_units = 10\n[ge_queue]\nlambda = [2.0]\nmu = 8.0\nca2 = 5.0\ncs2 = 7.0\ncapacity = 8\n";
        assert!(matches!(
            parse(Path::new("g.toml"), ge).unwrap().model,
            Model::Ge(_)
        ));
        let err = |t: &str| parse(Path::new("q.toml"), t).unwrap_err().to_string();
        for (bad, want) in [
            (CTMC.replace("m = [2, 3]", "m = [0]"), "q.toml:4: tandem.m: [0]"),
            (CTMC.replace("mu1 = 6.0", "mu1 = 0.0"), "q.toml:4: tandem.mu1: 0"),
            (CTMC.replace("duration_units = 100", "duration_units = 0"), "q.toml:3: duration_units"),
            (CTMC.replace("duration_units = 100", "duration_units = 18446744073709551"), "q.toml:3: duration_units: 18446744073709551 is not in 1..=999990"),
            (CTMC.replace("warmup_units = 10", "warmup_units = 18446744073709551"), "q.toml:2: warmup_units: 18446744073709551 is not in 0..=1000000"),
            (CTMC.replace("n = 12", "n = 12\nk = 1"), "q.toml:9: unknown field `k`"),
            (format!("{CTMC}batches = 1\n"), "unknown field `batches`"),
            (ge.replace("ca2 = 5.0", "ca2 = 0.5"), "q.toml:3: ge_queue.ca2: 0.5"),
            (ge.replace("[2.0]", "[9.0]"), "ge_queue.lambda: 9 is not below mu"),
            (format!("{CTMC}[ge_queue]\nlambda = [1.0]\nmu = 2.0\nca2 = 1.0\ncs2 = 1.0\ncapacity = 2\n"), "exactly one"),
        ] {
            let e = err(&bad);
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }
}
