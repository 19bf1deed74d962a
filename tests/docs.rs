//! The documentation stays true to the code: README.md, docs/**/*.md, hdl/README.md and cosim/README.md.
//!
//! - every internal link resolves: the file exists and, for `file.md#anchor` or `#anchor`, the file has a
//!   heading with that anchor (GitHub's slugs);
//! - every command shown in a ```sh, ```bash, ```shell or ```console block that runs ibcycle (`ibcycle ...`,
//!   `target/release/ibcycle ...`, `cargo run [--release] [--features F] -- ...`, also under `mpirun` or
//!   inside `sbatch --wrap '...'`) is accepted by the real command-line parser: the binary parses it with
//!   `IBCYCLE_PARSE_ONLY` set and stops (cosim commands only with the `cosim` feature, which adds that
//!   subcommand);
//! - every repository path the documents name (`scenarios/...`, `tests/...`, `src/...`, ...) exists, and
//!   every scenario file among them loads with the scenario parser;
//! - the scenario format reference (docs/scenario-format.md) names every key the parser accepts, in every
//!   table: the keys are read from the parser itself (its "unknown field, expected one of ..." error), so a
//!   key added to the parser without documentation fails here.
//!
//! The documents hold no Rust code blocks, so there is nothing to compile.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents checked, relative to the repository root.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let r = root();
    let mut docs = vec![
        r.join("README.md"),
        r.join("hdl/README.md"),
        r.join("cosim/README.md"),
    ];
    walk(&r.join("docs"), &mut docs);
    docs
}

/// A Markdown document split into what is prose and what is in fenced code blocks.
struct Doc {
    path: PathBuf,
    /// (line number, text) of lines outside code blocks.
    prose: Vec<(usize, String)>,
    /// (info string, first line number, lines) of every fenced block.
    blocks: Vec<(String, usize, Vec<String>)>,
}

fn read_doc(path: &Path) -> Doc {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut doc = Doc {
        path: path.to_path_buf(),
        prose: Vec::new(),
        blocks: Vec::new(),
    };
    let mut fence: Option<(String, String, usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &mut fence {
            None => {
                if let Some(marker) = ["```", "~~~"].into_iter().find(|m| t.starts_with(m)) {
                    let info = t
                        .trim_start_matches(marker.chars().next().unwrap())
                        .trim()
                        .to_string();
                    fence = Some((marker.to_string(), info, i + 1, Vec::new()));
                } else {
                    doc.prose.push((i + 1, line.to_string()));
                }
            }
            Some((marker, _, _, lines)) => {
                if t.starts_with(marker.as_str())
                    && t.trim_start_matches(marker.chars().next().unwrap())
                        .trim()
                        .is_empty()
                {
                    let (_, info, start, lines) = fence.take().unwrap();
                    doc.blocks.push((info, start, lines));
                } else {
                    lines.push(line.to_string());
                }
            }
        }
    }
    assert!(
        fence.is_none(),
        "{}: a code block is not closed",
        path.display()
    );
    doc
}

/// `[text](target)` → `text`, so that a heading's anchor is made from what it shows.
fn strip_links(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if let Some(close) = after.find("](") {
            if let Some(end) = after[close + 2..].find(')') {
                out.push_str(&after[..close]);
                rest = &after[close + 2 + end + 1..];
                continue;
            }
        }
        out.push('[');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` removed, spaces to `-`.
fn slug(heading: &str) -> String {
    strip_links(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(doc: &Doc) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in &doc.prose {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !t[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(t[hashes..].trim().trim_end_matches('#'));
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// Removes `inline code` so that link-like text inside it is not taken for a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// Link targets of a prose line: inline links and images, and reference definitions.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let t = line.trim_start();
    if t.starts_with('[') {
        if let Some(i) = t.find("]:") {
            if let Some(target) = t[i + 2..].split_whitespace().next() {
                out.push(target.to_string());
            }
        }
    }
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(|c| c == '<' || c == '>').to_string());
        rest = &after[end.min(after.len())..];
    }
    out
}

#[test]
fn every_internal_link_resolves() {
    let docs: Vec<Doc> = documents().iter().map(|p| read_doc(p)).collect();
    let mut anchor_cache: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let dir = doc.path.parent().unwrap();
        for (line_no, line) in &doc.prose {
            for target in link_targets(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    doc.path.clone()
                } else {
                    dir.join(file)
                };
                let at = format!(
                    "{}:{line_no}: {target}",
                    doc.path.strip_prefix(root()).unwrap().display()
                );
                if !path.exists() {
                    broken.push(format!("{at}: no such file"));
                    continue;
                }
                if let Some(a) = anchor {
                    let path = path.canonicalize().unwrap();
                    let set = anchor_cache
                        .entry(path.clone())
                        .or_insert_with(|| anchors(&read_doc(&path)));
                    if !set.contains(a) {
                        broken.push(format!("{at}: no heading with this anchor"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 50,
        "only {checked} links found: is the link extraction broken?"
    );
}

/// Splits a shell line into words and operators (`&&`, `||`, `|`, `;`, redirections dropped with their
/// target), honouring quotes and stopping at a comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut has_word = false;
    let mut chars = line.chars().peekable();
    let mut redirect = false;
    let push =
        |cur: &mut String, has_word: &mut bool, redirect: &mut bool, words: &mut Vec<String>| {
            if *has_word {
                if *redirect {
                    *redirect = false;
                } else {
                    words.push(std::mem::take(cur));
                }
            }
            cur.clear();
            *has_word = false;
        };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                has_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                has_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        d => cur.push(d),
                    }
                }
            }
            '\\' => {
                has_word = true;
                cur.extend(chars.next());
            }
            '#' if !has_word => break,
            c if c.is_whitespace() => push(&mut cur, &mut has_word, &mut redirect, &mut words),
            '>' | '<' => {
                // `2>` and `&>`: the digit or `&` belongs to the redirection.
                if cur.chars().all(|d| d.is_ascii_digit() || d == '&') {
                    cur.clear();
                    has_word = false;
                }
                push(&mut cur, &mut has_word, &mut redirect, &mut words);
                while chars.peek().is_some_and(|&d| d == '>' || d == '&') {
                    chars.next();
                }
                redirect = true;
            }
            '&' | '|' | ';' => {
                push(&mut cur, &mut has_word, &mut redirect, &mut words);
                let mut op = c.to_string();
                if chars.peek() == Some(&c) {
                    op.push(chars.next().unwrap());
                }
                words.push(op);
            }
            c => {
                has_word = true;
                cur.push(c);
            }
        }
    }
    push(&mut cur, &mut has_word, &mut redirect, &mut words);
    words
}

/// The ibcycle arguments of one simple command, if it runs ibcycle.
fn ibcycle_args(words: &[String]) -> Option<Vec<String>> {
    let words: Vec<&String> = words
        .iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect();
    let first = words.first()?;
    if first.as_str() == "cargo" {
        let sub = words.get(1)?;
        if sub.as_str() != "run" {
            return None;
        }
        let dash = words
            .iter()
            .position(|w| w.as_str() == "--")
            .unwrap_or(words.len());
        let opts = &words[2..dash];
        if opts
            .iter()
            .any(|w| ["-p", "--package", "--example", "--bin"].contains(&w.as_str()))
        {
            return None;
        }
        return Some(
            words
                .get(dash + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|w| w.to_string())
                .collect(),
        );
    }
    if let Some(i) = words
        .iter()
        .position(|w| w.rsplit('/').next() == Some("ibcycle"))
    {
        return Some(words[i + 1..].iter().map(|w| w.to_string()).collect());
    }
    None
}

/// Every ibcycle command line shown in a shell block of a document: (where, arguments).
fn commands(doc: &Doc) -> Vec<(String, Vec<String>)> {
    fn collect(words: &[String], at: &str, out: &mut Vec<(String, Vec<String>)>) {
        for cmd in words.split(|w| ["&&", "||", "|", ";", "&"].contains(&w.as_str())) {
            if let Some(args) = ibcycle_args(cmd) {
                out.push((at.to_string(), args));
            } else {
                // A command given as one word to another (`sbatch --wrap '...'`, `sh -c '...'`).
                for w in cmd
                    .iter()
                    .filter(|w| w.contains(' ') && w.contains("ibcycle"))
                {
                    collect(&shell_words(w), at, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (info, start, lines) in &doc.blocks {
        let lang = info
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .unwrap_or("");
        if !["sh", "bash", "shell", "console"].contains(&lang) {
            continue;
        }
        let mut joined: Vec<(usize, String)> = Vec::new();
        let mut continued = false;
        for (i, line) in lines.iter().enumerate() {
            let mut line = line.as_str();
            if lang == "console" && !continued {
                match line.trim_start().strip_prefix("$ ") {
                    Some(l) => line = l,
                    None => continue,
                }
            }
            let (body, more) = match line.trim_end().strip_suffix('\\') {
                Some(b) => (b.to_string(), true),
                None => (line.to_string(), false),
            };
            if continued {
                joined.last_mut().unwrap().1.push_str(&format!(" {body}"));
            } else {
                joined.push((start + 1 + i, body));
            }
            continued = more;
        }
        for (line_no, line) in joined {
            let at = format!(
                "{}:{line_no}",
                doc.path.strip_prefix(root()).unwrap().display()
            );
            collect(&shell_words(&line), &at, &mut out);
        }
    }
    out
}

#[test]
fn every_command_shown_parses() {
    let bin = env!("CARGO_BIN_EXE_ibcycle");
    let mut refused = Vec::new();
    let mut checked = 0;
    let mut skipped = 0;
    for path in documents() {
        for (at, args) in commands(&read_doc(&path)) {
            if matches!(
                args.first().map(String::as_str),
                Some("cosim" | "rtl-check")
            ) && !cfg!(feature = "cosim")
            {
                skipped += 1;
                continue;
            }
            checked += 1;
            let out = Command::new(bin)
                .args(&args)
                .env("IBCYCLE_PARSE_ONLY", "1")
                .current_dir(root())
                .output()
                .unwrap();
            if !out.status.success() {
                refused.push(format!(
                    "{at}: ibcycle {}\n    {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .next()
                        .unwrap_or("")
                ));
            }
        }
    }
    eprintln!("{checked} commands parsed, {skipped} cosim commands skipped (no `cosim` feature)");
    assert!(
        refused.is_empty(),
        "commands the CLI refuses:\n{}",
        refused.join("\n")
    );
    assert!(
        checked > 20,
        "only {checked} commands found: is the extraction broken?"
    );
}

#[test]
fn shell_words_splits_as_the_shell_does() {
    let w = shell_words(
        r#"mpirun -np 2 target/release/ibcycle run "a b.toml" --out x 2>/dev/null && tshark -r 'y z' # c"#,
    );
    assert_eq!(
        w,
        [
            "mpirun",
            "-np",
            "2",
            "target/release/ibcycle",
            "run",
            "a b.toml",
            "--out",
            "x",
            "&&",
            "tshark",
            "-r",
            "y z"
        ]
    );
    let w = shell_words("sbatch --wrap 'mpirun target/release/ibcycle run s.toml --out o' > log");
    assert_eq!(ibcycle_args(&w), None);
    let doc = Doc {
        path: root().join("x.md"),
        prose: vec![],
        blocks: vec![(
            "sh".into(),
            1,
            vec![w
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(" ")],
        )],
    };
    assert_eq!(commands(&doc)[0].1, ["run", "s.toml", "--out", "o"]);
    let w = shell_words("cargo run --release --features cosim -- cosim credit_tx --seed 7");
    assert_eq!(
        ibcycle_args(&w).unwrap(),
        ["cosim", "credit_tx", "--seed", "7"]
    );
    assert_eq!(
        ibcycle_args(&shell_words(
            "cargo run -p rtl-model --example emit_samples -- d"
        )),
        None
    );
    assert_eq!(
        slug("The `rtl-model` kit: [wire](x.md) & more"),
        "the-rtl-model-kit-wire--more"
    );
}

/// Repository paths named in a document: words starting with a top-level directory of the repository.
fn repo_paths(text: &str) -> BTreeSet<String> {
    const TOP: [&str; 11] = [
        "scenarios/",
        "tests/",
        "src/",
        "docs/",
        "hdl/",
        "cosim/",
        "scripts/",
        "rtl-model/",
        "switch-asic/",
        "hca-model/",
        "fuzz/",
    ];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = BTreeSet::new();
    for (i, _) in text.char_indices() {
        if i > 0
            && text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| is_path_char(c) || c == '$' || c == '~')
        {
            continue;
        }
        let rest = &text[i..];
        if !TOP.iter().any(|t| rest.starts_with(t)) {
            continue;
        }
        let end = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
        let next = rest[end..].chars().next();
        // Globs and placeholders (`hdl/*.sv`, `DIR/points/<index>`) are not paths.
        if matches!(next, Some('*') | Some('<') | Some('{')) {
            continue;
        }
        let p = rest[..end].trim_end_matches(['.', ',']);
        out.insert(p.to_string());
    }
    out
}

#[test]
fn every_path_named_exists_and_every_scenario_loads() {
    let r = root();
    let mut missing = Vec::new();
    let mut bad = Vec::new();
    let mut scenarios = 0;
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(&r).unwrap().display().to_string();
        for p in repo_paths(&text) {
            // A crate's own README names its files from the crate's directory (`cosim/README.md`: `src/...`).
            let full = [r.join(&p), path.parent().unwrap().join(&p)]
                .into_iter()
                .find(|f| f.exists());
            let Some(full) = full else {
                missing.push(format!("{name}: {p}"));
                continue;
            };
            if p.starts_with("scenarios/") && p.ends_with(".toml") {
                scenarios += 1;
                let src = std::fs::read_to_string(&full).unwrap();
                let loaded = if ibcycle::queueing::is_queueing(&src) {
                    ibcycle::queueing::parse(&full, &src).map(|_| ())
                } else {
                    ibcycle::scenario::load(&full).map(|_| ())
                };
                if let Err(e) = loaded {
                    bad.push(format!("{name}: {p}: {e}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths named in the documents that do not exist:\n{}",
        missing.join("\n")
    );
    assert!(
        bad.is_empty(),
        "scenarios named in the documents that do not load:\n{}",
        bad.join("\n")
    );
    assert!(scenarios > 10, "only {scenarios} scenario paths found");
}

/// The keys the parser accepts in one table, read from its error for an unknown key.
fn accepted_keys(text: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("ibcycle-docs-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let err = if ibcycle::queueing::is_queueing(text) {
        ibcycle::queueing::parse(&file, text)
            .err()
            .map(|e| e.to_string())
    } else {
        ibcycle::scenario::load(&file).err().map(|e| e.to_string())
    }
    .unwrap_or_else(|| panic!("an unknown key was accepted:\n{text}"));
    let list = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("not an unknown-key error: {err}"))
        .1;
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_scenario_reference_names_every_key() {
    let reference = std::fs::read_to_string(root().join("docs/scenario-format.md")).unwrap();
    let tables = [
        ("top level", "duration_us = 10\nnot_a_key = 1\n"),
        (
            "[settings]",
            "duration_us = 10\n[settings]\nnot_a_key = 1\n",
        ),
        (
            "[settings] vl_arb",
            "duration_us = 10\n[settings]\nvl_arb = { not_a_key = 1 }\n",
        ),
        (
            "[switch_cc]",
            "duration_us = 10\n[switch_cc]\nnot_a_key = 1\n",
        ),
        ("[hca_cc]", "duration_us = 10\n[hca_cc]\nnot_a_key = 1\n"),
        ("[roce]", "duration_us = 10\n[roce]\nnot_a_key = 1\n"),
        (
            "[topology]",
            "duration_us = 10\n[topology]\nnot_a_key = 1\n",
        ),
        ("[cc]", "duration_us = 10\n[cc]\nnot_a_key = 1\n"),
        ("[[flow]]", "duration_us = 10\n[[flow]]\nnot_a_key = 1\n"),
        (
            "[[traffic]]",
            "duration_us = 10\n[[traffic]]\nnot_a_key = 1\n",
        ),
        (
            "[[switch]]",
            "duration_us = 10\n[[switch]]\nnot_a_key = 1\n",
        ),
        (
            "[[switch]] cc",
            "duration_us = 10\n[[switch]]\nname = \"S\"\nports = 4\ncc = { not_a_key = 1 }\n",
        ),
        ("[[hca]]", "duration_us = 10\n[[hca]]\nnot_a_key = 1\n"),
        (
            "[[hca]] cc",
            "duration_us = 10\n[[hca]]\nname = \"H\"\ncc = { not_a_key = 1 }\n",
        ),
        ("[[link]]", "duration_us = 10\n[[link]]\nnot_a_key = 1\n"),
        (
            "[fat_tree]",
            "duration_us = 10\n[fat_tree]\nnot_a_key = 1\n",
        ),
        ("[chain]", "duration_us = 10\n[chain]\nnot_a_key = 1\n"),
        ("queueing top level", "not_a_key = 1\n[tandem]\n"),
        ("[tandem]", "[tandem]\nnot_a_key = 1\n"),
        ("[ge_queue]", "[ge_queue]\nnot_a_key = 1\n"),
    ];
    let mut undocumented = Vec::new();
    for (table, text) in tables {
        let keys = accepted_keys(text);
        assert!(!keys.is_empty(), "{table}: no keys read from the parser");
        for key in keys {
            // A key holding a table is named as its TOML header.
            let forms = [
                format!("`{key}`"),
                format!("`[{key}]`"),
                format!("`[[{key}]]`"),
            ];
            if !forms.iter().any(|f| reference.contains(f.as_str())) {
                undocumented.push(format!("{table}: `{key}`"));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "keys the parser accepts that docs/scenario-format.md does not name:\n{}",
        undocumented.join("\n")
    );
}

/// Every ```toml block is TOML, and a block that is a whole scenario (it has `duration_us` and names no file
/// of a real fabric beside it) loads with the scenario parser.
#[test]
fn every_toml_block_parses_and_every_whole_scenario_loads() {
    let dir = std::env::temp_dir().join(format!("ibcycle-docs-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bad = Vec::new();
    let mut scenarios = 0;
    for path in documents() {
        let doc = read_doc(&path);
        for (info, start, lines) in &doc.blocks {
            if info.as_str() != "toml" {
                continue;
            }
            let at = format!("{}:{start}", path.strip_prefix(root()).unwrap().display());
            let text = lines.join("\n");
            if let Err(e) = text.parse::<toml::Table>() {
                bad.push(format!("{at}: not TOML: {e}"));
                continue;
            }
            let names_a_file = ["ibnetdiscover", "opensm_conf", "lfts", "iblinkinfo"]
                .iter()
                .any(|k| text.contains(k));
            if text.lines().any(|l| l.starts_with("duration_us")) && !names_a_file {
                scenarios += 1;
                let file = dir.join("block.toml");
                std::fs::write(&file, &text).unwrap();
                if let Err(e) = ibcycle::scenario::load(&file) {
                    bad.push(format!("{at}: {e}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "TOML blocks that do not parse or load:\n{}",
        bad.join("\n")
    );
    assert!(
        scenarios >= 1,
        "the scenario format's example was not found"
    );
}

/// Simulated microseconds every command runs for in [`every_command_shown_runs`] (the files keep theirs).
const SHORT_US: u64 = 20;

/// Input files an argument names (scenarios, fabric dumps, traces), as the command would read them.
fn inputs(args: &[String]) -> Vec<&String> {
    let mut v = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let prev = if i > 0 { args[i - 1].as_str() } else { "" };
        let output = ["--out", "--vcd", "--coverage", "--pcap", "--trace"].contains(&prev);
        if !output
            && !a.starts_with('-')
            && [".toml", ".txt", ".csv"].iter().any(|x| a.ends_with(x))
        {
            v.push(a);
        }
    }
    v
}

/// Runs every ibcycle command the documents show, as shown (same arguments, from a copy of the repository's
/// layout: `scenarios/`, `tests/`, `docs/`, `hdl/` linked into a scratch directory per document, commands
/// in document order so a later one finds an earlier one's outputs), with runs shortened to [`SHORT_US`]
/// simulated microseconds by `IBCYCLE_SHORT_RUN_US` (benches too; co-simulations to 1,000 cycles per
/// microsecond). A command must exit 0, except one that runs a bug variant of the RTL (`--rtl-bug`), which
/// runs unshortened and must find the mismatch (exit 1), as must an rtl-check of a fault variant. Left out, each with tests of its own: Slurm submissions and collections
/// (tests/slurm.rs), commands on a user's own files that the repository does not hold (`fabric.toml`,
/// `my.toml`: tests/cluster_import.rs runs the import-then-run flow), co-simulations without the `cosim`
/// feature, and `mpirun` lines (tests/mpi.rs).
#[test]
fn every_command_shown_runs() {
    let bin = env!("CARGO_BIN_EXE_ibcycle");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-run");
    let _ = std::fs::remove_dir_all(&scratch);
    let (mut ran, mut left_out) = (0, Vec::new());
    let mut failed = Vec::new();
    // Each command's wall time: the slowest are printed, to see where this test's time goes.
    let mut slowest = Vec::new();
    for (k, path) in documents().into_iter().enumerate() {
        let doc = read_doc(&path);
        let mpirun: BTreeSet<String> = doc
            .blocks
            .iter()
            .flat_map(|(_, start, lines)| {
                lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.contains("mpirun"))
                    .map(move |(i, _)| format!("{}", start + 1 + i))
            })
            .collect();
        let dir = scratch.join(format!("{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        for sub in ["scenarios", "tests", "docs", "hdl"] {
            std::os::unix::fs::symlink(root().join(sub), dir.join(sub)).unwrap();
        }
        for (at, args) in commands(&doc) {
            let line = at.rsplit(':').next().unwrap().to_string();
            let why = if args.iter().any(|a| a == "--slurm" || a == "--collect") {
                Some("Slurm")
            } else if mpirun.contains(&line) {
                Some("mpirun")
            } else if matches!(
                args.first().map(String::as_str),
                Some("cosim" | "rtl-check")
            ) && !cfg!(feature = "cosim")
            {
                Some("no cosim feature")
            } else if inputs(&args).iter().any(|f| !dir.join(f).exists()) {
                Some("a user's own file")
            } else {
                None
            };
            if let Some(why) = why {
                left_out.push(format!("{at}: {why}: ibcycle {}", args.join(" ")));
                continue;
            }
            ran += 1;
            // A bug variant's run stops at its first mismatch: it runs unshortened, exactly as shown.
            // So does an rtl-check of a fault variant (`--define IBCYCLE_FAULT_<NAME>`), which exits 1 on the
            // violation it finds.
            let bug = args
                .iter()
                .any(|a| a == "--rtl-bug" || a.starts_with("IBCYCLE_FAULT_"));
            let mut cmd = Command::new(bin);
            cmd.args(&args).current_dir(&dir);
            if !bug {
                cmd.env("IBCYCLE_SHORT_RUN_US", SHORT_US.to_string());
            }
            let t0 = std::time::Instant::now();
            let out = cmd.output().unwrap();
            slowest.push((t0.elapsed(), format!("{at}: ibcycle {}", args.join(" "))));
            let want = if bug { 1 } else { 0 };
            if out.status.code() != Some(want) {
                failed.push(format!(
                    "{at}: ibcycle {}: exit {:?}, expected {want}\n    {}",
                    args.join(" "),
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .filter(|l| !l.contains("cut to"))
                        .take(3)
                        .collect::<Vec<_>>()
                        .join("\n    ")
                ));
            }
        }
    }
    eprintln!(
        "{ran} commands ran; left out (each covered by a test of its own):\n  {}",
        left_out.join("\n  ")
    );
    slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (d, what) in slowest.iter().take(8) {
        eprintln!("{:7.1} s  {what}", d.as_secs_f64());
    }
    assert!(
        failed.is_empty(),
        "commands that fail as shown:\n{}",
        failed.join("\n")
    );
    assert!(
        ran > 15,
        "only {ran} commands ran: is the extraction broken?"
    );
}
