//! Where a run's files go: names from a scenario become file names only through [`file_component`], which
//! cannot leave the output directory, and a run writes into a staging directory beside `--out` that
//! [`Staging::commit`] renames into place once every file is complete. A run that fails leaves the previous
//! outputs or none, never a mix of old and new files.

use std::io;
use std::path::{Path, PathBuf};

/// Longest file-name component made from a scenario name, bytes (file systems allow 255; the prefix and
/// suffix around it need the rest).
const MAX_COMPONENT_BYTES: usize = 120;

/// `name` as one file-name component: ASCII letters, digits, `.`, `-` and `+` are kept, everything else
/// (`:`, `/`, `\`, spaces, control and non-ASCII characters) becomes `_`; at most [`MAX_COMPONENT_BYTES`];
/// never empty, `.` or `..`. The result never holds a path separator, so joined to a directory it names a
/// file inside it.
pub fn file_component(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_COMPONENT_BYTES)
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        s = s.replace('.', "_");
        s.push('_');
    }
    s
}

/// The files a run may write into its output directory: an existing `--out` holding only these (and no
/// directories) may be replaced; anything else there is the user's and stops the run before it starts.
fn is_run_output(name: &str) -> bool {
    matches!(
        name,
        "summary.json" | "throughput.csv" | "throughput.png" | "cnp.csv" | "waves.vcd"
    ) || name.ends_with(".pcap")
        || (name.starts_with("trace-") && name.ends_with(".csv"))
        || (name.starts_with("port-trace-") && name.ends_with(".txt"))
}

/// A staging directory beside the output directory. Dropped without [`Staging::commit`], it is removed.
#[derive(Debug)]
pub struct Staging {
    tmp: PathBuf,
    out: PathBuf,
    done: bool,
}

impl Staging {
    /// Checks that `out` is absent, an empty directory or a directory of a run's outputs, and creates the
    /// staging directory beside it.
    pub fn new(out: &Path) -> Result<Self, String> {
        let shown = out.display();
        // The directory is renamed into place as a whole, so it must have a name of its own.
        let Some(base) = out.file_name() else {
            return Err(format!(
                "--out {shown}: give the output directory by name (not `.`, `..` or `/`)"
            ));
        };
        let base = base.to_string_lossy().into_owned();
        match std::fs::symlink_metadata(out) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("--out {shown}: {e}")),
            Ok(m) if !m.is_dir() => {
                return Err(format!(
                    "--out {shown}: exists and is not a directory (a symbolic link or a file)"
                ))
            }
            Ok(_) => {
                let entries = std::fs::read_dir(out).map_err(|e| format!("--out {shown}: {e}"))?;
                for e in entries {
                    let e = e.map_err(|e| format!("--out {shown}: {e}"))?;
                    let name = e.file_name().to_string_lossy().into_owned();
                    let is_file = e.file_type().is_ok_and(|t| t.is_file());
                    if !is_file || !is_run_output(&name) {
                        return Err(format!(
                            "--out {shown}: holds {name:?}, which a run does not write; a run replaces its output directory as a whole, so give a new directory, an empty one or one of an earlier run"
                        ));
                    }
                }
            }
        }
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tmp = parent.join(format!(".{base}.tmp-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        Ok(Staging {
            tmp,
            out: out.to_path_buf(),
            done: false,
        })
    }

    /// The directory to write into.
    pub fn dir(&self) -> &Path {
        &self.tmp
    }

    /// Moves the staged files into place: the previous output directory (if any) is moved aside, the
    /// staging directory renamed to it, and the previous one removed.
    pub fn commit(mut self) -> io::Result<()> {
        let old = self.tmp.with_extension("old");
        let had = self.out.exists();
        if had {
            std::fs::rename(&self.out, &old)?;
        }
        if let Err(e) = std::fs::rename(&self.tmp, &self.out) {
            if had {
                // Put the previous outputs back rather than leave none.
                let _ = std::fs::rename(&old, &self.out);
            }
            return Err(e);
        }
        self.done = true;
        if had {
            std::fs::remove_dir_all(&old)?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_stay_inside_the_directory() {
        assert_eq!(file_component("S1:8-S2:8"), "S1_8-S2_8");
        assert_eq!(file_component("H4"), "H4");
        assert_eq!(file_component("../../evil"), ".._.._evil");
        assert_eq!(file_component(".."), "___");
        assert_eq!(file_component(""), "_");
        assert_eq!(file_component("a\\b/c\0d é"), "a_b_c_d__");
        assert_eq!(file_component(&"x".repeat(1000)).len(), MAX_COMPONENT_BYTES);
        let dir = Path::new("/o");
        for n in ["../x", "/etc/passwd", "..", ".", "a/../../b"] {
            let p = dir.join(file_component(n));
            assert_eq!(p.parent(), Some(dir), "{n:?} -> {}", p.display());
        }
    }

    #[test]
    fn staging_replaces_a_run_directory_and_refuses_others() {
        let root = std::env::temp_dir().join(format!("ibcycle-staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let out = root.join("out");
        let s = Staging::new(&out).unwrap();
        std::fs::write(s.dir().join("summary.json"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "new"
        );
        // A stale capture of an earlier run does not survive the next one.
        std::fs::write(out.join("H1.pcap"), "old").unwrap();
        let s = Staging::new(&out).unwrap();
        std::fs::write(s.dir().join("summary.json"), "newer").unwrap();
        s.commit().unwrap();
        assert!(!out.join("H1.pcap").exists());
        // A failed run (dropped staging) leaves the previous outputs and no staging directory.
        let s = Staging::new(&out).unwrap();
        std::fs::write(s.dir().join("summary.json"), "half").unwrap();
        drop(s);
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "newer"
        );
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
        assert!(Staging::new(Path::new("."))
            .unwrap_err()
            .contains("by name"));
        assert!(Staging::new(&root.join("..")).is_err());
        // A directory holding the user's own files is never replaced.
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        let e = Staging::new(&out).unwrap_err();
        assert!(e.contains("\"notes.txt\""), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
