//! The sweep grid: `--set KEY=V1,V2,...` options, their cartesian product in a fixed order, and point ids.
//!
//! Grid order: the first `--set` varies slowest, the last fastest (like nested loops written in option
//! order). A point's index in that order decides its shard (`index % N`) and its row in `sweep.csv`.

use std::fmt::Write as _;

/// One `--set`: a key and the values it takes, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOption {
    /// Dotted TOML path of the swept key.
    pub key: String,
    /// The values, in the order given.
    pub values: Vec<String>,
}

/// One grid point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// Position in grid order.
    pub index: usize,
    /// Directory name under `points/`: the index, then the assignments (made file-name safe).
    pub id: String,
    /// `(key, value)` per `--set`, in option order.
    pub assignments: Vec<(String, String)>,
}

/// Parses one `--set KEY=V1,V2,...`. Commas inside brackets or quotes do not split, so TOML arrays and
/// strings with commas can be values.
pub fn parse_set(text: &str) -> Result<SetOption, String> {
    let (key, values) = text
        .split_once('=')
        .ok_or_else(|| format!("--set {text:?}: expected KEY=V1,V2,..."))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("--set {text:?}: the key is empty"));
    }
    let values = split_values(values);
    if values.iter().any(|v| v.is_empty()) {
        return Err(format!("--set {key}: an empty value in {text:?}"));
    }
    Ok(SetOption {
        key: key.to_string(),
        values,
    })
}

/// Splits at top-level commas (outside `[]`, `{}` and quotes) and trims each value.
fn split_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quote) = (0i32, None::<char>);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// Every point of the grid, in grid order. Fails on a key given twice.
pub fn points(sets: &[SetOption]) -> Result<Vec<Point>, String> {
    for (i, s) in sets.iter().enumerate() {
        if sets[..i].iter().any(|t| t.key == s.key) {
            return Err(format!("--set {}: the key is set twice", s.key));
        }
    }
    let total: usize = sets.iter().map(|s| s.values.len()).product();
    let mut out = Vec::with_capacity(total);
    for index in 0..total {
        // Mixed-radix digits of `index`, last option fastest.
        let mut rest = index;
        let mut assignments = vec![(String::new(), String::new()); sets.len()];
        for (k, s) in sets.iter().enumerate().rev() {
            let n = s.values.len();
            assignments[k] = (s.key.clone(), s.values[rest % n].clone());
            rest /= n;
        }
        out.push(Point {
            index,
            id: point_id(index, &assignments),
            assignments,
        });
    }
    Ok(out)
}

/// Longest assignment part of a point id; ids stay well under file-name limits however many keys are set.
const MAX_ID_TAIL: usize = 96;

/// `0007-switch_cc.threshold=12,seed=3`: readable, unique by index, and different whenever a value differs
/// (a long tail is cut and a hash of the whole assignment list appended).
fn point_id(index: usize, assignments: &[(String, String)]) -> String {
    let mut tail = String::new();
    for (i, (k, v)) in assignments.iter().enumerate() {
        if i > 0 {
            tail.push(',');
        }
        let _ = write!(tail, "{k}={v}");
    }
    let safe: String = tail
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=,+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut id = format!("{index:04}");
    if !safe.is_empty() {
        id.push('-');
        if safe.len() > MAX_ID_TAIL || safe != tail {
            // Cut or changed: add a hash so two different value lists never share a directory.
            let _ = write!(
                id,
                "{}~{:016x}",
                &safe[..safe.len().min(MAX_ID_TAIL)],
                fnv1a(tail.as_bytes())
            );
        } else {
            id.push_str(&safe);
        }
    }
    id
}

/// FNV-1a, 64 bits: a stable hash (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Parses `--shard I/N`.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {text:?}: expected I/N with 0 <= I < N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<usize>().map_err(|_| bad())?,
        n.trim().parse::<usize>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(t: &str) -> SetOption {
        parse_set(t).unwrap()
    }

    #[test]
    fn set_options_split_at_top_level_commas() {
        assert_eq!(set("seed=1,2, 3").values, ["1", "2", "3"]);
        assert_eq!(
            set("link.0.ends=[\"H1\", \"S1:2\"],[\"H1\",\"S1:3\"]").values,
            ["[\"H1\", \"S1:2\"]", "[\"H1\",\"S1:3\"]"]
        );
        assert_eq!(set("name=\"a,b\",c").values, ["\"a,b\"", "c"]);
        assert!(parse_set("seed").unwrap_err().contains("KEY=V1,V2"));
        assert!(parse_set("=1").unwrap_err().contains("key is empty"));
        assert!(parse_set("seed=1,,2").unwrap_err().contains("empty value"));
    }

    #[test]
    fn grid_order_is_last_option_fastest() {
        let p = points(&[set("a=1,2"), set("b=x,y,z")]).unwrap();
        assert_eq!(p.len(), 6);
        let flat: Vec<String> = p
            .iter()
            .map(|p| format!("{}{}", p.assignments[0].1, p.assignments[1].1))
            .collect();
        assert_eq!(flat, ["1x", "1y", "1z", "2x", "2y", "2z"]);
        assert_eq!(p[4].id, "0004-a=2,b=y");
        assert!(points(&[set("a=1"), set("a=2")])
            .unwrap_err()
            .contains("twice"));
        assert_eq!(points(&[]).unwrap().len(), 1, "no --set: the file itself");
    }

    #[test]
    fn ids_are_safe_and_distinct() {
        let p = points(&[set("link.0.rate=\"4xDDR\",4x/DDR,4x_DDR")]).unwrap();
        assert!(p.iter().all(|p| !p.id.contains('/') && !p.id.contains('"')));
        assert_ne!(p[1].id[5..], p[2].id[5..], "{} {}", p[1].id, p[2].id);
        let long = "x".repeat(500);
        let p = points(&[set(&format!("k={long}"))]).unwrap();
        assert!(p[0].id.len() < 130, "{}", p[0].id);
    }

    #[test]
    fn shards() {
        assert_eq!(parse_shard("2/5"), Ok((2, 5)));
        assert!(parse_shard("5/5").is_err());
        assert!(parse_shard("0/0").is_err());
        assert!(parse_shard("a/2").is_err());
    }
}
