//! Applying one `--set KEY=VALUE` to a scenario's TOML text before the scenario is parsed, so that every key
//! the scenario format knows can be swept and the scenario parser's own checks (and messages) apply.
//!
//! Keys are TOML paths: `seed`, `switch_cc.threshold`, `settings.switch_vl_buf_blocks`. An array of tables
//! (`[[flow]]`, `[[switch]]`, `[[hca]]`, `[[link]]`) is indexed by position (`link.1.rate`) or by the
//! element's `id` or `name` (`flow.F2.start_us`, `switch.S1.ports`). A key inside a section the file lacks
//! creates the section (its other keys keep their defaults); a misspelt key is left for the scenario parser,
//! which rejects unknown keys. Values are TOML literals (`12`, `true`, `"4xDDR"`, `["H1", "S1:2"]`); a value
//! that is not a TOML literal is taken as a string, so `rate=4xDDR` needs no quotes.
//!
//! Editing uses `toml_edit`, which keeps the file's layout: an error in an overridden file still points at
//! the line of the original file.

use toml_edit::{DocumentMut, Item, TableLike, Value};

/// Reads a `--set` value as a TOML literal, or as a string when it is not one.
pub fn parse_value(text: &str) -> Value {
    text.trim()
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(text.trim()))
}

/// Sets `key` (a dotted path) to `value` in `doc`. Fails, naming the part of the key, when the path runs
/// into a value that is not a table or names an array element that does not exist. One of opensm's
/// congestion-control keys by its own name (`cc_sw_cong_setting_threshold`, `congestion_control`, ...) is
/// `cc.opensm.<key>`: it overrides the scenario's `opensm.conf` as a line at its end would.
pub fn apply(doc: &mut DocumentMut, key: &str, value: &Value) -> Result<(), String> {
    let aliased;
    let key = if !key.contains('.') && (key.starts_with("cc_") || key == "congestion_control") {
        aliased = format!("cc.opensm.{key}");
        aliased.as_str()
    } else {
        key
    };
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!(
            "{key:?} is not a key path (parts separated by '.')"
        ));
    }
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    let mut walked = String::new();
    let mut i = 0;
    while i + 1 < parts.len() {
        let part = parts[i];
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(part);
        if table.get(part).is_none() {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            table.insert(part, Item::Table(t));
        }
        let item = table.get_mut(part).expect("inserted above");
        if item.is_array_of_tables() {
            let array = item.as_array_of_tables_mut().expect("checked");
            i += 1;
            let sel = parts[i];
            let found = match sel.parse::<usize>() {
                Ok(n) => (n < array.len()).then_some(n),
                Err(_) => array.iter().position(|t| {
                    ["id", "name"]
                        .iter()
                        .any(|k| t.get(k).and_then(Item::as_str) == Some(sel))
                }),
            };
            let Some(n) = found else {
                return Err(format!(
                    "{key}: no [[{walked}]] with index, id or name {sel:?} ({} in the file)",
                    array.len()
                ));
            };
            walked.push('.');
            walked.push_str(sel);
            table = array.get_mut(n).expect("index checked");
        } else if item.is_table_like() {
            table = item.as_table_like_mut().expect("checked");
        } else {
            return Err(format!("{key}: {walked} is a value, not a section"));
        }
        i += 1;
    }
    let Some(last) = parts.get(i) else {
        return Err(format!(
            "{key}: names an array element, not a key inside it"
        ));
    };
    match table.get_mut(last) {
        Some(Item::Value(old)) => {
            // Keep the spacing and comment around the old value so the file's layout stays the same.
            let decor = old.decor().clone();
            *old = value.clone();
            *old.decor_mut() = decor;
        }
        Some(_) => return Err(format!("{key}: is a section, not a value")),
        None => {
            table.insert(last, Item::Value(value.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\nduration_us = 50 # short\n\n[switch_cc]\nthreshold = 12\n\n[[flow]]\nid = \"F1\"\nsrc = \"H1\"\n[[flow]]\nid = \"F2\"\nstart_us = 400\n";

    fn set(key: &str, v: &str) -> Result<String, String> {
        let mut doc: DocumentMut = TEXT.parse().unwrap();
        apply(&mut doc, key, &parse_value(v))?;
        Ok(doc.to_string())
    }

    #[test]
    fn top_level_and_section_keys_keep_the_layout() {
        let t = set("duration_us", "7").unwrap();
        assert_eq!(t, TEXT.replace("50 # short", "7 # short"));
        let t = set("switch_cc.threshold", "3").unwrap();
        assert_eq!(t, TEXT.replace("threshold = 12", "threshold = 3"));
    }

    #[test]
    fn array_elements_by_id_and_index() {
        let t = set("flow.F2.start_us", "800").unwrap();
        assert_eq!(t, TEXT.replace("start_us = 400", "start_us = 800"));
        let t = set("flow.0.src", "H9").unwrap();
        assert_eq!(t, TEXT.replace("src = \"H1\"", "src = \"H9\""));
        let e = set("flow.F7.start_us", "1").unwrap_err();
        assert!(
            e.contains("no [[flow]] with index, id or name \"F7\""),
            "{e}"
        );
        let e = set("flow.2.start_us", "1").unwrap_err();
        assert!(e.contains("(2 in the file)"), "{e}");
    }

    #[test]
    fn missing_sections_and_keys_are_created() {
        let t = set("hca_cc.ccti_timer", "10").unwrap();
        let back: toml::Value = toml::from_str(&t).unwrap();
        assert_eq!(back["hca_cc"]["ccti_timer"].as_integer(), Some(10));
        assert_eq!(back["flow"][1]["start_us"].as_integer(), Some(400));
        let t = set("seed", "9").unwrap();
        assert!(t.contains("seed = 9"), "{t}");
    }

    #[test]
    fn values_are_literals_or_strings() {
        assert_eq!(parse_value("12").as_integer(), Some(12));
        assert_eq!(parse_value("true").as_bool(), Some(true));
        assert_eq!(parse_value("\"4xDDR\"").as_str(), Some("4xDDR"));
        assert_eq!(parse_value("4xDDR").as_str(), Some("4xDDR"));
        assert_eq!(
            parse_value("[\"H1\", \"S1:2\"]")
                .as_array()
                .map(|a| a.len()),
            Some(2)
        );
    }

    #[test]
    fn paths_through_values_are_rejected() {
        assert!(set("duration_us.x", "1")
            .unwrap_err()
            .contains("is a value"));
        assert!(set("switch_cc", "1").unwrap_err().contains("is a section"));
        assert!(set("flow.F1", "1").unwrap_err().contains("not a key"));
        assert!(set("a..b", "1").unwrap_err().contains("not a key path"));
    }
}
