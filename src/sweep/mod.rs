//! `ibcycle sweep`: runs a scenario over a grid of key values (`--set KEY=V1,V2,...`), in parallel, in
//! shards, resumably, and merges the points' results into `sweep.csv`.
//!
//! Layout of the output directory:
//! - `sweep.json`: the grid (scenario file and `--set` options), so `--collect` can rebuild it;
//! - `points/<point-id>/`: each point's `summary.json`, `throughput.csv`, `throughput.png` and the
//!   `scenario.toml` it ran. A point is written into `points/.<point-id>.tmp` and renamed into place when
//!   complete, so `points/<point-id>/summary.json` exists only for a finished point; a rerun skips a point
//!   whose directory holds a `summary.json` and the same `scenario.toml` (an edited scenario file or grid
//!   reruns it);
//! - `sweep.csv` (see [`table`]): written once every point of the grid is finished, by whichever run
//!   finishes last, or by `--collect`.
//!
//! Every point's scenario is built and checked before anything runs: a bad key or value stops the sweep
//! with the scenario parser's message (file, line, field) prefixed by the `--set` option at fault.

pub mod grid;
pub mod overrides;
pub mod slurm;
pub mod table;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::json;
use toml_edit::DocumentMut;

pub use grid::{parse_set, parse_shard, Point, SetOption};

use crate::scenario::{self, Scenario};

/// A sweep error: a bad option, scenario or grid, or a file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SweepError(pub String);

/// A checked grid: every point with the scenario text it runs and the parsed scenario.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario file the grid varies.
    pub file: PathBuf,
    /// The `--set` options in the order given.
    pub sets: Vec<SetOption>,
    /// The points in grid order.
    pub points: Vec<Point>,
    /// Per point: the scenario text after its overrides.
    pub texts: Vec<String>,
    /// Per point: the parsed scenario.
    pub scenarios: Vec<Scenario>,
}

/// Builds the scenario text of one set of assignments on `base`.
fn override_text(base: &DocumentMut, assignments: &[(String, String)]) -> Result<String, String> {
    let mut doc = base.clone();
    for (k, v) in assignments {
        overrides::apply(&mut doc, k, &overrides::parse_value(v))?;
    }
    Ok(doc.to_string())
}

/// Reads `file`, applies every point's overrides and parses each point's scenario. Each `--set` value is
/// first tried alone on the file so that an error names the option at fault; then every combination.
pub fn plan(file: &Path, sets: Vec<SetOption>) -> Result<Plan, SweepError> {
    let text = scenario::read_input(file).map_err(|e| SweepError(e.to_string()))?;
    scenario::parse(file, &text).map_err(|e| SweepError(e.to_string()))?;
    let base: DocumentMut = text
        .parse()
        .map_err(|e| SweepError(format!("{}: {e}", file.display())))?;
    for s in &sets {
        for v in &s.values {
            let one = [(s.key.clone(), v.clone())];
            override_text(&base, &one)
                .and_then(|t| {
                    scenario::parse(file, &t)
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| SweepError(format!("--set {}={v}: {e}", s.key)))?;
        }
    }
    let points = grid::points(&sets).map_err(SweepError)?;
    let mut texts = Vec::with_capacity(points.len());
    let mut scenarios = Vec::with_capacity(points.len());
    for p in &points {
        let at = |e: String| {
            let what: Vec<String> = p
                .assignments
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            SweepError(format!("point {} ({}): {e}", p.index, what.join(" ")))
        };
        let t = override_text(&base, &p.assignments).map_err(at)?;
        scenarios.push(scenario::parse(file, &t).map_err(|e| at(e.to_string()))?);
        texts.push(t);
    }
    Ok(Plan {
        file: file.to_path_buf(),
        sets,
        points,
        texts,
        scenarios,
    })
}

/// What a sweep run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Points of this shard run now.
    pub ran: usize,
    /// Points of this shard found finished and skipped.
    pub skipped: usize,
    /// Points that could not run or be written: `(point id, why)`.
    pub failed: Vec<(String, String)>,
    /// Finished points whose integrity check failed: `(point id, what broke)`.
    pub broken: Vec<(String, String)>,
    /// `sweep.csv`, when every point of the grid is now finished.
    pub csv: Option<PathBuf>,
    /// Finished points of the whole grid (all shards).
    pub finished: usize,
}

/// Directory of a point's outputs.
pub fn point_dir(out: &Path, p: &Point) -> PathBuf {
    out.join("points").join(&p.id)
}

/// Whether the point's outputs are complete and were made from `text`. A summary that cannot be read or
/// is not a summary (a disk filled up, a file edited by hand) counts as missing, so the point is redone.
fn is_finished(out: &Path, p: &Point, text: &str) -> bool {
    let dir = point_dir(out, p);
    std::fs::read_to_string(dir.join("summary.json")).is_ok_and(|s| table::figures(&s).is_ok())
        && std::fs::read_to_string(dir.join("scenario.toml")).is_ok_and(|t| t == text)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so readers see
/// the old file or the whole new one.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    // Unique per writer: shards on different nodes may share a pid and write the same file at once.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}-{nanos}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Runs one point and moves its outputs into place. `Ok(Some(why))`: finished, integrity broken.
fn run_point(out: &Path, p: &Point, text: &str, sc: &Scenario) -> Result<Option<String>, String> {
    let tmp = out.join("points").join(format!(".{}.tmp", p.id));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    }
    let r = crate::run::run(sc, false).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("writing {}: {e}", tmp.display());
    crate::run::write_outputs(&r, sc, &tmp).map_err(io)?;
    std::fs::write(tmp.join("scenario.toml"), text).map_err(io)?;
    let dir = point_dir(out, p);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(r.summary.invariants.broken())
}

/// The grid's description as `sweep.json` holds it.
fn manifest(plan: &Plan) -> String {
    let file = std::path::absolute(&plan.file).unwrap_or_else(|_| plan.file.clone());
    let sets: Vec<_> = plan
        .sets
        .iter()
        .map(|s| json!({"key": s.key, "values": s.values}))
        .collect();
    let v = json!({"file": file, "sets": sets, "points": plan.points.len()});
    serde_json::to_string_pretty(&v).expect("plain JSON") + "\n"
}

/// Runs the points of `plan` with `index % shard.1 == shard.0` that are not finished yet on `jobs` threads,
/// writing under `out`; then writes `sweep.csv` if the whole grid is finished. `progress` shows a bar.
pub fn run(
    plan: &Plan,
    out: &Path,
    shard: (usize, usize),
    jobs: usize,
    progress: bool,
) -> Result<Outcome, SweepError> {
    let io = |what: &Path, e: std::io::Error| SweepError(format!("{}: {e}", what.display()));
    std::fs::create_dir_all(out.join("points")).map_err(|e| io(out, e))?;
    let man = out.join("sweep.json");
    write_atomic(&man, manifest(plan).as_bytes()).map_err(|e| io(&man, e))?;
    let mut outcome = Outcome::default();
    let mut todo = Vec::new();
    for (i, p) in plan.points.iter().enumerate() {
        if i % shard.1 != shard.0 {
            continue;
        }
        if is_finished(out, p, &plan.texts[i]) {
            outcome.skipped += 1;
        } else {
            todo.push(i);
        }
    }
    let bar = if progress {
        indicatif::ProgressBar::new(todo.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(todo.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, todo.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = todo.get(k) else { break };
                let r = run_point(out, &plan.points[i], &plan.texts[i], &plan.scenarios[i]);
                results
                    .lock()
                    .expect("no thread panics holding it")
                    .push((i, r));
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut results = results.into_inner().expect("threads joined");
    results.sort_by_key(|r| r.0);
    for (i, r) in results {
        let id = plan.points[i].id.clone();
        match r {
            Ok(broken) => {
                outcome.ran += 1;
                if let Some(why) = broken {
                    outcome.broken.push((id, why));
                }
            }
            Err(e) => outcome.failed.push((id, e)),
        }
    }
    outcome.finished = plan
        .points
        .iter()
        .zip(&plan.texts)
        .filter(|(p, t)| is_finished(out, p, t))
        .count();
    if outcome.finished == plan.points.len() {
        outcome.csv = Some(write_csv(out, &plan.sets, &plan.points)?);
    }
    Ok(outcome)
}

/// Builds `sweep.csv` from the finished points' summaries and writes it atomically.
fn write_csv(out: &Path, sets: &[SetOption], points: &[Point]) -> Result<PathBuf, SweepError> {
    let mut rows = Vec::with_capacity(points.len());
    for p in points {
        let path = point_dir(out, p).join("summary.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SweepError(format!("{}: {e}", path.display())))?;
        let f =
            table::figures(&text).map_err(|e| SweepError(format!("{}: {e}", path.display())))?;
        rows.push((p.assignments.iter().map(|a| a.1.clone()).collect(), f));
    }
    let keys: Vec<String> = sets.iter().map(|s| s.key.clone()).collect();
    let path = out.join("sweep.csv");
    write_atomic(&path, table::csv(&keys, &rows).as_bytes())
        .map_err(|e| SweepError(format!("{}: {e}", path.display())))?;
    Ok(path)
}

/// `--collect DIR`: rebuilds the grid from `DIR/sweep.json` and writes `DIR/sweep.csv` from the points'
/// summaries. Fails, naming the missing points, unless every point is finished.
pub fn collect(dir: &Path) -> Result<PathBuf, SweepError> {
    let man = dir.join("sweep.json");
    let text = std::fs::read_to_string(&man).map_err(|e| {
        SweepError(format!(
            "{}: {e} (not a sweep output directory?)",
            man.display()
        ))
    })?;
    let bad = |why: &str| SweepError(format!("{}: {why}", man.display()));
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let mut sets = Vec::new();
    for s in v["sets"].as_array().ok_or_else(|| bad("no sets array"))? {
        let key = s["key"].as_str().ok_or_else(|| bad("a set without key"))?;
        let values = s["values"]
            .as_array()
            .ok_or_else(|| bad("a set without values"))?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| bad("a value is not a string"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        sets.push(SetOption {
            key: key.to_string(),
            values,
        });
    }
    let points = grid::points(&sets).map_err(|e| bad(&e))?;
    let missing: Vec<&str> = points
        .iter()
        .filter(|p| !point_dir(dir, p).join("summary.json").is_file())
        .map(|p| p.id.as_str())
        .collect();
    if !missing.is_empty() {
        let shown = missing
            .iter()
            .take(5)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        return Err(SweepError(format!(
            "{}: {} of {} points are not finished ({shown}{}); rerun the sweep (or its shards) to finish them",
            dir.display(),
            missing.len(),
            points.len(),
            if missing.len() > 5 { ", ..." } else { "" }
        )));
    }
    write_csv(dir, &sets, &points)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "duration_us = 10\n[settings]\nsample_interval_us = 5\n[chain]\nswitches = 1\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xDDR\"\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\n";

    fn scratch(name: &str) -> (PathBuf, PathBuf) {
        let d =
            std::env::temp_dir().join(format!("ibcycle-sweep-unit-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("u.toml");
        std::fs::write(&f, TEXT).unwrap();
        (d, f)
    }

    #[test]
    fn plan_applies_overrides_and_names_the_bad_option() {
        let (d, f) = scratch("plan");
        let p = plan(&f, vec![parse_set("flow.A.start_us=0,4").unwrap()]).unwrap();
        let starts: Vec<u64> = p.scenarios.iter().map(|s| s.flows[0].start_us).collect();
        assert_eq!(starts, [0, 4]);
        // A key the file lacks is added at the end of its section: line 4, after sample_interval_us.
        let e = plan(&f, vec![parse_set("settings.data_vls=1,0").unwrap()]).unwrap_err();
        assert!(
            e.0.starts_with("--set settings.data_vls=0: ")
                && e.0.contains("u.toml:4: settings.data_vls: 0"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn run_skips_finished_points_and_writes_the_csv_when_complete() {
        let (d, f) = scratch("run");
        let out = d.join("o");
        let p = plan(&f, vec![parse_set("seed=1,2,3").unwrap()]).unwrap();
        let o = run(&p, &out, (1, 2), 2, false).unwrap();
        assert_eq!(
            (o.ran, o.skipped, o.finished, o.csv.is_some()),
            (1, 0, 1, false)
        );
        let o = run(&p, &out, (0, 1), 2, false).unwrap();
        assert_eq!((o.ran, o.skipped, o.finished), (2, 1, 3));
        assert!(o.failed.is_empty() && o.broken.is_empty(), "{o:?}");
        let csv = std::fs::read_to_string(o.csv.unwrap()).unwrap();
        assert_eq!(csv.lines().count(), 4, "{csv}");
        assert!(csv.starts_with("seed,A_gbps,"), "{csv}");
        assert_eq!(collect(&out).unwrap(), out.join("sweep.csv"));
        std::fs::remove_dir_all(&d).ok();
    }
}
