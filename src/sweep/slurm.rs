//! Slurm job arrays: `ibcycle sweep ... --slurm` writes `DIR/sweep.sbatch`, an array with one task per
//! shard (task `I` of `N` runs `ibcycle sweep ... --shard I/N`), and submits it with `sbatch`.
//!
//! Tasks share `DIR` (it must be on a file system every node sees). Each task skips its finished points, so
//! resubmitting the same script after a cancelled or failed task only runs what is missing; the task that
//! finishes the grid writes `DIR/sweep.csv` (or run `ibcycle sweep --collect DIR`). Task logs go to
//! `DIR/slurm/<job>_<task>.out`. A task uses `$SLURM_CPUS_PER_TASK` threads (1 when unset): ask for more with
//! `--slurm-opt=--cpus-per-task=4`.

use std::path::Path;
use std::process::Command;

use super::SetOption;

/// Largest array Slurm accepts by default (MaxArraySize 1001: indices 0..=1000).
pub const MAX_TASKS: usize = 1001;

/// Quotes `s` for a POSIX shell (single quotes; a single quote becomes `'\''`).
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The batch script. `exe`, `file` and `out` should be absolute: the tasks start in the submit directory
/// but may run on another node.
pub fn script(
    exe: &Path,
    file: &Path,
    sets: &[SetOption],
    out: &Path,
    tasks: usize,
    opts: &[String],
) -> String {
    let mut s = String::from("#!/bin/bash\n# Written by `ibcycle sweep --slurm`: one array task per shard of the grid.\n");
    s.push_str("#SBATCH --job-name=ibcycle-sweep\n");
    s.push_str(&format!("#SBATCH --array=0-{}\n", tasks.saturating_sub(1)));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        out.join("slurm").join("%A_%a.out").display()
    ));
    for o in opts {
        s.push_str(&format!("#SBATCH {o}\n"));
    }
    s.push_str("set -euo pipefail\n");
    let mut cmd = vec![
        shell_quote(&exe.to_string_lossy()),
        "sweep".into(),
        shell_quote(&file.to_string_lossy()),
    ];
    for set in sets {
        cmd.push("--set".into());
        cmd.push(shell_quote(&format!(
            "{}={}",
            set.key,
            set.values.join(",")
        )));
    }
    cmd.push("--out".into());
    cmd.push(shell_quote(&out.to_string_lossy()));
    cmd.push("--jobs".into());
    cmd.push("\"${SLURM_CPUS_PER_TASK:-1}\"".into());
    cmd.push("--shard".into());
    cmd.push(format!("\"$SLURM_ARRAY_TASK_ID/{tasks}\""));
    s.push_str("exec ");
    s.push_str(&cmd.join(" "));
    s.push('\n');
    s
}

/// Submits `script` with `sbatch --parsable` and returns the job id.
pub fn submit(script: &Path) -> Result<String, String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .output()
        .map_err(|e| format!("cannot start sbatch (is Slurm installed and on PATH?): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sbatch {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let id = String::from_utf8_lossy(&out.stdout);
    // `--parsable` prints "jobid" or "jobid;cluster".
    Ok(id.trim().split(';').next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn script_has_one_task_per_shard_and_the_options() {
        let sets = [SetOption {
            key: "flow.F2.start_us".into(),
            values: vec!["0".into(), "400".into()],
        }];
        let s = script(
            Path::new("/opt/ibcycle"),
            Path::new("/x/s.toml"),
            &sets,
            Path::new("/x/out dir"),
            4,
            &["--partition=debug".into()],
        );
        assert!(s.starts_with("#!/bin/bash\n"), "{s}");
        assert!(s.contains("#SBATCH --array=0-3\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=debug\n"), "{s}");
        assert!(
            s.contains("#SBATCH --output=/x/out dir/slurm/%A_%a.out\n"),
            "{s}"
        );
        assert!(
            s.contains("exec '/opt/ibcycle' sweep '/x/s.toml' --set 'flow.F2.start_us=0,400' --out '/x/out dir' --jobs \"${SLURM_CPUS_PER_TASK:-1}\" --shard \"$SLURM_ARRAY_TASK_ID/4\"\n"),
            "{s}"
        );
    }
}
