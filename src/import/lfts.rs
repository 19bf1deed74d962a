//! The unicast forwarding tables a subnet manager set, as opensm dumps them (`opensm-lfts.dump`, also what
//! `dump_lfts.sh` and `ibroute` print): per switch a header
//!
//! ```text
//! Unicast lids [0-8] of switch Lid 1 guid 0x0002c90200400001 ('MF0;leaf1:IS5030/U1'):
//! 0x0003 001 # Channel Adapter portguid 0x0002c90300000011: 'node1 HCA-1'
//! 8 lids dumped
//! ```
//!
//! (`ibroute` writes the range in hex, the description in plain parentheses, entries as
//! `0x0003 001 : (Channel Adapter portguid 0x...: 'node1 HCA-1')` after a two-line column header, and
//! `N valid lids dumped`). An entry is a destination LID in hex and the output port in decimal; what follows
//! it only describes the destination and is not read.

use std::collections::HashMap;

/// One switch's table as the dump gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchTable {
    /// The header's line (1-based).
    pub line: usize,
    /// The switch's node GUID and LID.
    pub guid: u64,
    pub lid: u16,
    /// Destination LID -> (output port, line).
    pub entries: HashMap<u16, (u8, usize)>,
}

/// Reads a dump; an error is the 1-based line and what is wrong.
pub fn parse(text: &str) -> Result<Vec<SwitchTable>, (usize, String)> {
    let mut tables: Vec<SwitchTable> = Vec::new();
    let mut open = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Unicast lids [") {
            let bad = || {
                (
                    line,
                    format!(
                        "not a table header (expected: Unicast lids [<first>-<last>] of switch Lid <lid> guid \
                         0x<guid> (<description>):): {t:?}"
                    ),
                )
            };
            let (_, rest) = rest.split_once("] of switch Lid ").ok_or_else(bad)?;
            let (lid, rest) = rest.split_once(" guid ").ok_or_else(bad)?;
            let lid: u16 = lid.trim().parse().map_err(|_| bad())?;
            let rest = rest.trim_start();
            let hex = rest.strip_prefix("0x").ok_or_else(bad)?;
            let end = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            if end == 0 || end > 16 {
                return Err(bad());
            }
            let guid = u64::from_str_radix(&hex[..end], 16).map_err(|_| bad())?;
            let desc = hex[end..].trim();
            if !(desc.is_empty() || desc.starts_with('(') && desc.ends_with("):")) {
                return Err(bad());
            }
            if let Some(other) = tables.iter().find(|s| s.guid == guid) {
                return Err((
                    line,
                    format!(
                        "switch GUID 0x{guid:016x} already has a table at line {}",
                        other.line
                    ),
                ));
            }
            tables.push(SwitchTable {
                line,
                guid,
                lid,
                entries: HashMap::new(),
            });
            open = true;
            continue;
        }
        // ibroute's column header, and the count that closes a table.
        if t.starts_with("Lid ") && t.contains("Out") || t.starts_with("Port") && t.contains("Info")
        {
            continue;
        }
        if t.ends_with("lids dumped") {
            let n = t.split_whitespace().next().unwrap_or("");
            if n.parse::<u32>().is_err() {
                return Err((line, format!("not a table's closing count: {t:?}")));
            }
            open = false;
            continue;
        }
        if t.starts_with("Multicast") {
            return Err((
                line,
                "a multicast table; the routes are the unicast tables (opensm-lfts.dump, ibroute without -M)"
                    .into(),
            ));
        }
        if let Some(hex) = t.strip_prefix("0x") {
            let mut f = hex.split_whitespace();
            let bad = || {
                (
                    line,
                    format!(
                        "not a table entry (expected: 0x<destination lid> <port> and a description): {t:?}"
                    ),
                )
            };
            let lid = f
                .next()
                .and_then(|l| u16::from_str_radix(l, 16).ok())
                .ok_or_else(bad)?;
            let port: u8 = f.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
            if !open {
                return Err((
                    line,
                    "an entry outside a table (no `Unicast lids ... of switch` header before it, or after its \
                     `lids dumped` line)"
                        .into(),
                ));
            }
            let table = tables.last_mut().expect("open: a table exists");
            if let Some((_, other)) = table.entries.insert(lid, (port, line)) {
                return Err((
                    line,
                    format!("LID 0x{lid:04x} was already given at line {other}"),
                ));
            }
            continue;
        }
        return Err((
            line,
            format!("not a line of opensm's forwarding-table dump: {t:?}"),
        ));
    }
    if tables.is_empty() {
        return Err((0, "no `Unicast lids ... of switch` table".into()));
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms() {
        let osm = "Unicast lids [0-3] of switch Lid 1 guid 0x0002c90200400001 ('leaf1'):\n\
                   0x0001 000 # Switch portguid 0x0002c90200400001: 'leaf1'\n\
                   0x0003 001 # Channel Adapter portguid 0x0002c90300000011: 'node1 HCA-1'\n\
                   3 lids dumped\n";
        let t = parse(osm).unwrap();
        assert_eq!((t[0].guid, t[0].lid), (0x2c90200400001, 1));
        assert_eq!(t[0].entries[&3], (1, 3));
        let ibroute = "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x0002c90200400001 (leaf1):\n  Lid  Out   Destination\n       Port     Info \n\
                       0x0003 008 : (Channel Adapter portguid 0x0002c90300000011: 'node1 HCA-1')\n1 valid lids dumped \n";
        assert_eq!(parse(ibroute).unwrap()[0].entries[&3], (8, 4));
        assert_eq!(parse("0x0003 001 # x\n").unwrap_err().0, 1);
        assert_eq!(
            parse(&format!("{osm}0x0003 002 # x\n")).unwrap_err().0,
            5,
            "after the count"
        );
        let dup = osm.replace("0x0001 000", "0x0003 000");
        assert!(parse(&dup)
            .unwrap_err()
            .1
            .contains("already given at line 2"));
        assert_eq!(parse("garbage\n").unwrap_err().0, 1);
        assert_eq!(parse("").unwrap_err().0, 0);
    }
}
