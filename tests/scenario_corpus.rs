//! The malformed-scenario corpus (tests/scenario_corpus/*.toml): every file is wrong in one way, and its last
//! line says how the error must read: `# expect: line N: FRAGMENT`. Both the library (`scenario::load`) and
//! the binary (`ibcycle run`: exit status 1, `FILE:N: ...` on stderr, no panic, nothing written) must
//! report that line and fragment.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus files with their expected line and message fragment.
fn corpus() -> Vec<(PathBuf, usize, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenario_corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            // Lossy: a corpus file may hold bytes that are not UTF-8 (binary input); its last line is text.
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            let expect = text
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("# expect: line "))
                .unwrap_or_else(|| panic!("{}: no `# expect: line N: ...` line", f.display()));
            let (line, frag) = expect.split_once(": ").unwrap();
            (f, line.parse().unwrap(), frag.trim().to_string())
        })
        .collect()
}

#[test]
fn the_corpus_covers_the_kinds_of_mistake() {
    let names: Vec<String> = corpus()
        .iter()
        .map(|c| c.0.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for kind in [
        "unknown_",
        "wrong_type_",
        "negative_",
        "zero_rate",
        "dangling_link",
        "flow_to_missing_host",
        "duplicate_",
        "port_out_of_range",
        "missing_",
        "bad_rate_string",
        "self_loop",
        "too_many_ports",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(kind)),
            "no {kind}* file in {names:?}"
        );
    }
    assert!(names.len() >= 40, "{} files", names.len());
}

#[test]
fn the_library_names_file_line_and_field() {
    let mut wrong = Vec::new();
    for (file, line, frag) in corpus() {
        match ibcycle::scenario::load(&file) {
            Ok(_) => wrong.push(format!("{}: accepted", file.display())),
            Err(e) => {
                if e.file != file || e.line != line || !e.message.contains(&frag) {
                    wrong.push(format!(
                        "{}: want line {line} {frag:?}, got {e}",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_binary_fails_cleanly_and_writes_nothing() {
    let out = std::env::temp_dir().join(format!("ibcycle-corpus-{}", std::process::id()));
    let mut wrong = Vec::new();
    for (file, line, frag) in corpus() {
        let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        let at = format!("{}:{line}: ", file.display());
        if r.status.code() != Some(1)
            || !stderr.contains(&at)
            || !stderr.contains(&frag)
            || stderr.contains("panicked")
            || out.exists()
        {
            wrong.push(format!(
                "{}: status {:?}, stderr {stderr:?}",
                file.display(),
                r.status.code()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
