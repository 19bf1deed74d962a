//! Names of switches and HCAs as a scenario's flows and keys give them: the node's name in the scenario,
//! and for a fabric read from `ibnetdiscover` (`[topology] ibnetdiscover`) also its node description or a
//! GUID (node or port, `0x` and leading zeros optional). A name that matches nothing, or a description
//! several nodes share, is an error that lists the closest names.

use std::collections::HashMap;

use crate::import::ibnetdiscover::Fabric;
use crate::topology::{End, Topology};

/// Resolves names against a topology and, where it came from `ibnetdiscover`, its fabric.
pub struct Names<'a> {
    topo: &'a Topology,
    fabric: Option<&'a Fabric>,
    /// Every node by its scenario name: generated traffic looks up hundreds of thousands of flows' ends.
    by_name: HashMap<&'a str, End>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Switch,
    Hca,
}

impl<'a> Names<'a> {
    pub fn new(topo: &'a Topology, fabric: Option<&'a Fabric>) -> Self {
        let mut by_name = HashMap::with_capacity(topo.switches.len() + topo.hcas.len());
        // HCAs first, then switches over them: the order `Topology::find` resolves a shared name in.
        for (hca, h) in topo.hcas.iter().enumerate() {
            by_name.insert(h.name.as_str(), End::Hca { hca });
        }
        for (switch, s) in topo.switches.iter().enumerate() {
            by_name.insert(s.name.as_str(), End::Switch { switch, port: 0 });
        }
        Names {
            topo,
            fabric,
            by_name,
        }
    }

    /// The HCA `text` names; the error says why not, without the key.
    pub fn hca(&self, text: &str) -> Result<usize, String> {
        match self.find(text, Kind::Hca)? {
            End::Hca { hca } => Ok(hca),
            End::Switch { .. } => Err(format!("{text:?} is a switch, not an HCA")),
        }
    }

    /// The switch `text` names; the error says why not, without the key.
    pub fn switch(&self, text: &str) -> Result<usize, String> {
        match self.find(text, Kind::Switch)? {
            End::Switch { switch, .. } => Ok(switch),
            End::Hca { .. } => Err(format!("{text:?} is an HCA, not a switch")),
        }
    }

    fn find(&self, text: &str, want: Kind) -> Result<End, String> {
        if let Some(&e) = self.by_name.get(text) {
            return Ok(e);
        }
        let what = match want {
            Kind::Switch => "switch",
            Kind::Hca => "HCA",
        };
        if let Some(f) = self.fabric {
            // Descriptions: the wanted kind first, so a switch and an HCA sharing one resolve as asked.
            let hcas: Vec<usize> = (0..f.hcas.len())
                .filter(|&h| f.hcas[h].desc == text)
                .collect();
            let sws: Vec<usize> = (0..f.switches.len())
                .filter(|&s| f.switches[s].desc == text)
                .collect();
            let (mine, other) = match want {
                Kind::Hca => (&hcas, &sws),
                Kind::Switch => (&sws, &hcas),
            };
            let list = |v: &[usize], k: Kind| -> Vec<String> {
                v.iter()
                    .map(|&i| match k {
                        Kind::Hca => {
                            format!("{:?} (GUID 0x{:016x})", f.hcas[i].name, f.hcas[i].guid)
                        }
                        Kind::Switch => format!(
                            "{:?} (GUID 0x{:016x})",
                            f.switches[i].name, f.switches[i].guid
                        ),
                    })
                    .collect()
            };
            match mine.len() {
                1 => return Ok(self.end(mine[0], want)),
                0 => {}
                n => {
                    return Err(format!(
                    "{text:?} is the description of {n} {what}s: {}; name one by its name or GUID",
                    list(mine, want).join(", ")
                ))
                }
            }
            if let Some(&i) = other.first() {
                let k = if want == Kind::Hca {
                    Kind::Switch
                } else {
                    Kind::Hca
                };
                return Ok(self.end(i, k));
            }
            if let Some(g) = parse_guid(text) {
                let h: Vec<usize> = (0..f.hcas.len())
                    .filter(|&h| f.hcas[h].guid == g || f.hcas[h].port_guid == Some(g))
                    .collect();
                if let [h] = h.as_slice() {
                    return Ok(End::Hca { hca: *h });
                }
                if let Some(s) = f.switches.iter().position(|s| s.guid == g) {
                    return Ok(End::Switch { switch: s, port: 0 });
                }
                return Err(format!(
                    "no {what} has GUID 0x{g:016x} (node GUIDs and, for HCAs, the imported port's GUID){}",
                    self.close(text, want)
                ));
            }
        }
        Err(format!(
            "no {what} named {text:?}{}",
            self.close(text, want)
        ))
    }

    fn end(&self, i: usize, k: Kind) -> End {
        match k {
            Kind::Hca => End::Hca { hca: i },
            Kind::Switch => End::Switch { switch: i, port: 0 },
        }
    }

    /// `"; closest: "a", "b", "c"`: up to three names (and descriptions) of the wanted kind nearest to
    /// `text` by edit distance; empty when there are none.
    fn close(&self, text: &str, want: Kind) -> String {
        let mut cands: Vec<&str> = match want {
            Kind::Hca => self.topo.hcas.iter().map(|h| h.name.as_str()).collect(),
            Kind::Switch => self.topo.switches.iter().map(|s| s.name.as_str()).collect(),
        };
        if let Some(f) = self.fabric {
            match want {
                Kind::Hca => cands.extend(f.hcas.iter().map(|h| h.desc.as_str())),
                Kind::Switch => cands.extend(f.switches.iter().map(|s| s.desc.as_str())),
            }
        }
        cands.sort_unstable();
        cands.dedup();
        let mut scored: Vec<(usize, &str)> = cands
            .into_iter()
            .map(|c| (edit_distance(text, c), c))
            .collect();
        scored.sort_unstable();
        let best: Vec<String> = scored
            .iter()
            .take(3)
            .map(|(_, c)| format!("{c:?}"))
            .collect();
        if best.is_empty() {
            String::new()
        } else {
            format!("; closest: {}", best.join(", "))
        }
    }
}

/// A GUID as a user writes it: `0x` and 1 to 16 hex digits, or 16 hex digits alone.
pub fn parse_guid(text: &str) -> Option<u64> {
    let t = text.trim();
    let hex = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) if !h.is_empty() && h.len() <= 16 => h,
        Some(_) => return None,
        None if t.len() == 16 => t,
        None => return None,
    };
    u64::from_str_radix(hex, 16).ok()
}

/// Levenshtein distance over characters, with the cost bounded by the lengths (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_and_distances() {
        assert_eq!(parse_guid("0x2c90300000011"), Some(0x2c90300000011));
        assert_eq!(parse_guid("0002c90300000011"), Some(0x2c90300000011));
        assert_eq!(parse_guid("2c90300000011"), None);
        assert_eq!(parse_guid("0x"), None);
        assert_eq!(edit_distance("node1", "node12"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
