//! Links that run slower than their ports could, from `iblinkinfo`'s default output beside the
//! `ibnetdiscover` file (which gives each link's active width and speed only).
//!
//! iblinkinfo prints a header per node (`Switch: 0x<guid> <description>:` or `CA: <description>:`) and a line
//! per port:
//!
//! ```text
//!            1    1[  ] ==( 4X           5.0 Gbps Active/  LinkUp)==>       3    1[  ] "node1 HCA-1" ( Could be 10.0 Gbps)
//!       0x0002c90300000011      3    1[  ] ==( 4X  5.0 Gbps Active/  LinkUp)==>  1    1[  ] "leaf1" ( Could be 10.0 Gbps)
//! ```
//!
//! (a CA's lines start with the port's GUID; then the LID, the port and its external number, the link's
//! active width, speed and states, and the peer's LID, port and description). The closing parentheses hold
//! `Could be <width>` and/or `Could be <speed>` when the link runs below the most both ends support.

use std::path::Path;

use super::ibnetdiscover::{Fabric, ImportError};
use crate::topology::End;

/// A port iblinkinfo says could run faster: which node (a switch GUID, or a CA port's GUID), which port,
/// what it could be, and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remark {
    pub line: usize,
    pub switch_guid: Option<u64>,
    pub ca_port_guid: Option<u64>,
    pub port: u8,
    pub could_be: String,
}

/// What iblinkinfo's output says: the ports it marks, and the switches it lists (GUID, header line).
pub type Marks = (Vec<Remark>, Vec<(u64, usize)>);

/// Reads iblinkinfo's default output; an error is the line and what is wrong.
pub fn parse(text: &str) -> Result<Marks, (usize, String)> {
    let mut out = Vec::new();
    let mut switches = Vec::new();
    // The current node: Some(guid) for a switch, None for a CA (its lines carry their port GUIDs).
    let mut node: Option<Option<u64>> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Switch:") {
            let hex = rest
                .trim_start()
                .strip_prefix("0x")
                .map(|h| {
                    h.split(|c: char| !c.is_ascii_hexdigit())
                        .next()
                        .unwrap_or("")
                })
                .filter(|h| !h.is_empty() && h.len() <= 16)
                .ok_or_else(|| {
                    (
                        line,
                        format!("not a switch header (Switch: 0x<guid> <description>:): {t:?}"),
                    )
                })?;
            let guid = u64::from_str_radix(hex, 16).expect("hex digits");
            switches.push((guid, line));
            node = Some(Some(guid));
            continue;
        }
        if t.starts_with("CA:") {
            node = Some(None);
            continue;
        }
        if t.starts_with("Router:") {
            return Err((
                line,
                "a router; the model has switches and channel adapters only".into(),
            ));
        }
        let Some(arrow) = t.find("==(") else {
            return Err((
                line,
                format!(
                    "not a line of iblinkinfo's default output (a Switch: or CA: header, or a port line with \
                     ==( ... )==>): {t:?}"
                ),
            ));
        };
        let Some(this) = node else {
            return Err((line, "a port line before any Switch: or CA: header".into()));
        };
        let bad = || {
            (
                line,
                format!("a port line iblinkinfo does not print: {t:?}"),
            )
        };
        let head = &t[..arrow];
        let mut f = head.split_whitespace();
        let port_guid = if this.is_none() {
            let g = f
                .next()
                .and_then(|g| g.strip_prefix("0x"))
                .and_then(|g| u64::from_str_radix(g, 16).ok())
                .ok_or_else(bad)?;
            Some(g)
        } else {
            None
        };
        f.next()
            .and_then(|lid| lid.parse::<u16>().ok())
            .ok_or_else(bad)?;
        let port: u8 = f
            .next()
            .and_then(|p| p.split('[').next())
            .and_then(|p| p.parse().ok())
            .ok_or_else(bad)?;
        // The remarks: the last parentheses of the line.
        let remark = t
            .rfind('(')
            .filter(|&o| o > arrow)
            .and_then(|o| t[o + 1..].strip_suffix(')'))
            .map(str::trim);
        let Some(remark) = remark else {
            if t.ends_with("\"Port not available\"") {
                continue;
            }
            return Err(bad());
        };
        if remark.contains("Could be") {
            out.push(Remark {
                line,
                switch_guid: this,
                ca_port_guid: port_guid,
                port,
                could_be: remark.split_whitespace().collect::<Vec<_>>().join(" "),
            });
        }
    }
    Ok((out, switches))
}

/// Adds to `fabric`'s notes a warning for every imported link whose end iblinkinfo (the text of `path`)
/// marks as able to run faster, naming both files' lines. A marked port that is not an imported link's end
/// is noted as such; a switch the ibnetdiscover file does not have is an error.
pub fn apply(fabric: &mut Fabric, path: &Path, text: &str) -> Result<usize, ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let (remarks, switches) = parse(text).map_err(|(l, m)| err(l, m))?;
    // Another fabric's output would mark the wrong links: every switch it lists must be this fabric's.
    if let Some((g, line)) = switches
        .iter()
        .find(|(g, _)| !fabric.switches.iter().any(|s| s.guid == *g))
    {
        return Err(err(
            *line,
            format!("switch 0x{g:016x} is not a switch of the ibnetdiscover file"),
        ));
    }
    let mut warned = vec![false; fabric.links.len()];
    let mut count = 0;
    for r in &remarks {
        let end = match (r.switch_guid, r.ca_port_guid) {
            (Some(g), _) => {
                let s = fabric
                    .switches
                    .iter()
                    .position(|s| s.guid == g)
                    .ok_or_else(|| {
                        err(
                            r.line,
                            format!("switch 0x{g:016x} is not a switch of the ibnetdiscover file"),
                        )
                    })?;
                Some(End::Switch {
                    switch: s,
                    port: r.port,
                })
            }
            (None, Some(g)) => fabric
                .hcas
                .iter()
                .position(|h| h.port_guid == Some(g))
                .map(|hca| End::Hca { hca }),
            (None, None) => None,
        };
        let link = end.and_then(|e| fabric.links.iter().position(|l| l.a == e || l.b == e));
        match link {
            Some(l) if !warned[l] => {
                warned[l] = true;
                count += 1;
                let k = &fabric.links[l];
                let note = format!(
                    "warning: line {}: the link {} - {} runs at {}, slower than its ports could: iblinkinfo \
                     ({}:{}) says {:?}",
                    k.line,
                    fabric.end_name(k.a),
                    fabric.end_name(k.b),
                    k.rate,
                    path.display(),
                    r.line,
                    r.could_be
                );
                fabric.notes.push(note);
            }
            Some(_) => {}
            None => fabric.notes.push(format!(
                "{}:{}: iblinkinfo says {:?} of a port that is no imported link's end",
                path.display(),
                r.line,
                r.could_be
            )),
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_remarks() {
        let text = "Switch: 0x0002c90200400001 MF0;leaf1:IS5030/U1:\n           1    1[  ] ==( 4X           5.0 Gbps Active/  LinkUp)==>       3    1[  ] \"node1 HCA-1\" ( Could be 10.0 Gbps)\n           1    3[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n           1    8[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       2    8[  ] \"leaf2\" ( )\nCA: node1 HCA-1:\n      0x0002c90300000011      3    1[  ] ==( 1X           5.0 Gbps Active/  LinkUp)==>       1    1[  ] \"leaf1\" ( Could be 4X Could be 10.0 Gbps)\n";
        let (r, sw) = parse(text).unwrap();
        assert_eq!(sw, vec![(0x2c90200400001, 1)]);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (
                r[0].switch_guid,
                r[0].port,
                r[0].could_be.as_str(),
                r[0].line
            ),
            (Some(0x2c90200400001), 1, "Could be 10.0 Gbps", 2)
        );
        assert_eq!(
            (r[1].ca_port_guid, r[1].port, r[1].could_be.as_str()),
            (Some(0x2c90300000011), 1, "Could be 4X Could be 10.0 Gbps")
        );
        assert_eq!(parse("hello\n").unwrap_err().0, 1);
        assert_eq!(
            parse("   1    1[  ] ==( 4X 5.0 Gbps Active/  LinkUp)==>  3  1[  ] \"x\" ( )\n")
                .unwrap_err()
                .0,
            1
        );
    }
}
