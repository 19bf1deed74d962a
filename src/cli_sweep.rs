//! The `ibcycle sweep` subcommand: options, and the messages and exit status around
//! [`ibcycle::sweep`].

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use ibcycle::sweep::{self, slurm};

/// Options of `ibcycle sweep`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scenario file whose keys are varied.
    #[arg(required_unless_present = "collect")]
    file: Option<PathBuf>,
    /// A key of the scenario file (TOML path: `switch_cc.threshold`, `hca_cc.ccti_timer`,
    /// `settings.switch_vl_buf_blocks`, `flow.F2.start_us`, `link.0.rate`, `seed`, `duration_us`, ...) and
    /// the values it takes (TOML literals; bare words are strings). Repeat for more keys: the grid is every
    /// combination, the first --set varying slowest.
    #[arg(long = "set", value_name = "KEY=V1,V2,...")]
    set: Vec<String>,
    /// Output directory: DIR/sweep.csv, DIR/points/<point-id>/ (created if missing). Finished points found
    /// there are not run again.
    #[arg(long, value_name = "DIR", required_unless_present = "collect")]
    out: Option<PathBuf>,
    /// Points run at once (threads); default: the number of CPUs.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Run only the points whose grid index % N == I (0 <= I < N), e.g. one task of a job array.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["slurm", "slurm_dry_run"])]
    shard: Option<String>,
    /// Merge the finished points under DIR into DIR/sweep.csv (after shards ran separately).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["file", "set", "out", "jobs", "shard", "slurm", "slurm_dry_run"])]
    collect: Option<PathBuf>,
    /// Instead of running: write DIR/sweep.sbatch (a Slurm job array, one task per shard) and submit it
    /// with sbatch.
    #[arg(long)]
    slurm: bool,
    /// Like --slurm but only write DIR/sweep.sbatch.
    #[arg(long, conflicts_with = "slurm")]
    slurm_dry_run: bool,
    /// An sbatch option for the array, e.g. --slurm-opt=--partition=long (repeatable).
    #[arg(long = "slurm-opt", value_name = "OPT", allow_hyphen_values = true)]
    slurm_opt: Vec<String>,
    /// Array tasks (shards); default: one per point, at most 1001.
    #[arg(long, value_name = "N")]
    slurm_tasks: Option<usize>,
}

/// Runs the subcommand; exit status 1 on any error, failed point or broken integrity check.
pub fn run(a: Args) -> ExitCode {
    match go(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ibcycle sweep: {e}");
            ExitCode::FAILURE
        }
    }
}

fn go(a: Args) -> Result<ExitCode, String> {
    if let Some(dir) = &a.collect {
        let csv = sweep::collect(dir).map_err(|e| e.to_string())?;
        println!("wrote {}", csv.display());
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(file), Some(out)) = (&a.file, &a.out) else {
        return Err("give a scenario FILE and --out DIR, or --collect DIR".into());
    };
    if !(a.slurm || a.slurm_dry_run) && (!a.slurm_opt.is_empty() || a.slurm_tasks.is_some()) {
        return Err("--slurm-opt and --slurm-tasks need --slurm or --slurm-dry-run".into());
    }
    let sets = a
        .set
        .iter()
        .map(|s| sweep::parse_set(s))
        .collect::<Result<Vec<_>, _>>()?;
    let shard = a.shard.as_deref().map_or(Ok((0, 1)), sweep::parse_shard)?;
    let jobs = match a.jobs {
        Some(0) => return Err("--jobs 0: must be at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let plan = sweep::plan(file, sets).map_err(|e| e.to_string())?;
    if a.slurm || a.slurm_dry_run {
        return slurm_script(&a, &plan, file, out);
    }
    // `jobs` points run at once: the largest point times the jobs must fit the machine's share.
    let limit = ibcycle::run::memory::default_limit() / jobs.min(plan.points.len()).max(1) as u64;
    for (p, sc) in plan.points.iter().zip(&plan.scenarios) {
        ibcycle::run::memory::check(sc, limit).map_err(|e| {
            format!(
                "point {} with --jobs {jobs}: {}",
                p.index,
                e.replace("--max-memory", "its share of the memory")
            )
        })?;
    }
    let o = sweep::run(&plan, out, shard, jobs, std::io::stderr().is_terminal())
        .map_err(|e| e.to_string())?;
    println!(
        "{} points: {} run now, {} already finished (shard {}/{})",
        plan.points.len(),
        o.ran,
        o.skipped,
        shard.0,
        shard.1
    );
    for (id, e) in &o.failed {
        eprintln!("ibcycle sweep: point {id}: {e}");
    }
    for (id, why) in &o.broken {
        eprintln!("ibcycle sweep: point {id}: integrity check failed: {why}");
    }
    match &o.csv {
        Some(p) => println!("wrote {}", p.display()),
        None => println!(
            "{} of {} points finished; sweep.csv is written when all are (or: ibcycle sweep --collect {})",
            o.finished,
            plan.points.len(),
            out.display()
        ),
    }
    Ok(if o.failed.is_empty() && o.broken.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn slurm_script(
    a: &Args,
    plan: &sweep::Plan,
    file: &std::path::Path,
    out: &std::path::Path,
) -> Result<ExitCode, String> {
    let tasks = match a.slurm_tasks {
        Some(0) => return Err("--slurm-tasks 0: must be at least 1".into()),
        Some(n) if n > slurm::MAX_TASKS => {
            return Err(format!("--slurm-tasks {n}: at most {}", slurm::MAX_TASKS))
        }
        Some(n) => n,
        None => plan.points.len().min(slurm::MAX_TASKS),
    };
    let abs =
        |p: &std::path::Path| std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()));
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the ibcycle binary: {e}"))?;
    let (file, out) = (abs(file)?, abs(out)?);
    std::fs::create_dir_all(out.join("slurm")).map_err(|e| format!("{}: {e}", out.display()))?;
    let text = slurm::script(&exe, &file, &plan.sets, &out, tasks, &a.slurm_opt);
    let path = out.join("sweep.sbatch");
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "wrote {} ({} points in {tasks} array tasks)",
        path.display(),
        plan.points.len()
    );
    if a.slurm {
        let id = slurm::submit(&path)?;
        println!(
            "submitted job {id}; when it is done: {}/sweep.csv",
            out.display()
        );
        println!(
            "(if a task failed or was cancelled: sbatch {} reruns only the missing points)",
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
