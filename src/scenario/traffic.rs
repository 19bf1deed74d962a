//! `[[traffic]]`: flows over a set of hosts by a pattern instead of one `[[flow]]` each, for loading a whole
//! (imported) fabric.
//!
//! ```toml
//! [[traffic]]
//! kind = "shift"        # "all_to_all" | "incast" | "shift" | "permutation" | "bisection"
//! k = 4                 # shift: host i sends to host (i + k) mod n
//! hosts = ["a", "b"]    # optional: these hosts, in this order (default: every HCA in the scenario's order)
//! ```
//!
//! `incast`: every host but `dst` (default the last) to `dst`. `permutation`: a random permutation in which
//! no host sends to itself, drawn from `seed` (default the scenario's). `bisection`: the hosts split into
//! a first and a second half (after a shuffle drawn from `seed` when one is given), host i of the first half
//! paired with host i of the second, a flow each way; with an odd count the last host is left out (a
//! warning). Every flow takes the entry's flow keys (`sl`, `mtu`, `message_bytes`, `start_us`, `stop_us`,
//! `pattern`, `rate`, `scv`) and the id `<id><n>` (`id` defaults to `"<kind>-"`, `"<kind><entry>-"` when
//! two entries share a kind), n from 1; the generated flows follow the `[[flow]]`s and are checked as they
//! are.

use std::ops::Range;

use toml::Spanned;

use super::file::{File, FlowEntry};
use super::names::Names;
use super::{key_span, line_of, ScenarioError};
use crate::topology::Topology;

/// The flows of every `[[traffic]]` entry, and warnings (file, line and key) about them.
pub(super) fn expand(
    file: &File,
    topo: &Topology,
    names: &Names,
    seed: u64,
    path: &std::path::Path,
    text: &str,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<(Vec<FlowEntry>, Vec<String>), ScenarioError> {
    let mut flows = Vec::new();
    let mut warnings = Vec::new();
    for (j, entry) in file.traffic.iter().enumerate() {
        let t = entry.get_ref();
        let span = entry.span();
        let key = |k: &str| key_span(text, span.clone(), k);
        let kind = t.kind.get_ref().as_str();
        let hosts: Vec<usize> = match &t.hosts {
            None => (0..topo.hcas.len()).collect(),
            Some(h) => {
                let mut v = Vec::with_capacity(h.get_ref().len());
                for name in h.get_ref() {
                    let i = names
                        .hca(name)
                        .map_err(|m| at(h.span(), format!("traffic[{j}].hosts: {m}")))?;
                    if v.contains(&i) {
                        return Err(at(
                            h.span(),
                            format!("traffic[{j}].hosts: {name:?} is listed twice"),
                        ));
                    }
                    v.push(i);
                }
                v
            }
        };
        let n = hosts.len();
        let hosts_span = t.hosts.as_ref().map_or(t.kind.span(), |h| h.span());
        if n < 2 {
            return Err(at(
                hosts_span,
                format!("traffic[{j}].hosts: {n} hosts; a traffic pattern needs at least 2"),
            ));
        }
        let unused = |k: &str, present: bool| -> Result<(), ScenarioError> {
            if present {
                return Err(at(
                    key(k),
                    format!("traffic[{j}].{k}: kind {kind:?} takes no {k}"),
                ));
            }
            Ok(())
        };
        let seed_of = |s: &Option<Spanned<u64>>| s.as_ref().map_or(seed, |s| *s.get_ref());
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        match kind {
            "all_to_all" => {
                unused("k", t.k.is_some())?;
                unused("seed", t.seed.is_some())?;
                unused("dst", t.dst.is_some())?;
                for &s in &hosts {
                    for &d in &hosts {
                        if s != d {
                            pairs.push((s, d));
                        }
                    }
                }
            }
            "incast" => {
                unused("k", t.k.is_some())?;
                unused("seed", t.seed.is_some())?;
                let dst = match &t.dst {
                    None => hosts[n - 1],
                    Some(d) => names
                        .hca(d.get_ref())
                        .map_err(|m| at(d.span(), format!("traffic[{j}].dst: {m}")))?,
                };
                pairs.extend(hosts.iter().filter(|&&s| s != dst).map(|&s| (s, dst)));
            }
            "shift" => {
                unused("seed", t.seed.is_some())?;
                unused("dst", t.dst.is_some())?;
                let k = t.k.as_ref().ok_or_else(|| {
                    at(
                        t.kind.span(),
                        format!("traffic[{j}]: kind \"shift\" needs k (1 to {})", n - 1),
                    )
                })?;
                let kv = *k.get_ref();
                if kv == 0 || kv >= n as u64 {
                    return Err(at(
                        k.span(),
                        super::limits::out_of_range(&format!("traffic[{j}].k"), kv, 1, n as u64 - 1)
                            + &format!(" ({n} hosts)"),
                    ));
                }
                let kv = kv as usize;
                pairs.extend((0..n).map(|i| (hosts[i], hosts[(i + kv) % n])));
            }
            "permutation" => {
                unused("k", t.k.is_some())?;
                unused("dst", t.dst.is_some())?;
                let perm = derangement(n, seed_of(&t.seed));
                pairs.extend((0..n).map(|i| (hosts[i], hosts[perm[i]])));
            }
            "bisection" => {
                unused("k", t.k.is_some())?;
                unused("dst", t.dst.is_some())?;
                let mut order: Vec<usize> = hosts.clone();
                if let Some(s) = &t.seed {
                    shuffle(&mut order, *s.get_ref());
                }
                let half = n / 2;
                if n % 2 == 1 {
                    warnings.push(format!(
                        "{}:{}: traffic[{j}]: {n} hosts, an odd count: {:?} is left out of the bisection",
                        path.display(),
                        line_of(text, hosts_span.start),
                        topo.hcas[order[n - 1]].name
                    ));
                }
                for i in 0..half {
                    pairs.push((order[i], order[half + i]));
                    pairs.push((order[half + i], order[i]));
                }
            }
            other => {
                return Err(at(
                    t.kind.span(),
                    format!(
                        "traffic[{j}].kind: {other:?} is not a traffic pattern (all_to_all, incast, shift, \
                         permutation, bisection)"
                    ),
                ))
            }
        }
        let prefix = match &t.id {
            Some(p) => p.get_ref().clone(),
            None if file
                .traffic
                .iter()
                .filter(|e| e.get_ref().kind.get_ref() == kind)
                .count()
                > 1 =>
            {
                format!("{kind}{j}-")
            }
            None => format!("{kind}-"),
        };
        let id_span = t.id.as_ref().map_or(t.kind.span(), |i| i.span());
        for (k, &(s, d)) in pairs.iter().enumerate() {
            let host = |h: usize| Spanned::new(hosts_span.clone(), topo.hcas[h].name.clone());
            flows.push(FlowEntry {
                id: Spanned::new(id_span.clone(), format!("{prefix}{}", k + 1)),
                src: host(s),
                dst: host(d),
                sl: t.sl.clone(),
                mtu: t.mtu.clone(),
                message_bytes: t.message_bytes.clone(),
                start_us: t.start_us.clone(),
                stop_us: t.stop_us.clone(),
                pattern: t.pattern.clone(),
                rate: t.rate.clone(),
                scv: t.scv.clone(),
            });
        }
    }
    Ok((flows, warnings))
}

/// Fisher-Yates with `seed`.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut st = seed;
    for i in (1..v.len()).rev() {
        // Multiply-shift: a draw in 0..=i without a division.
        // SplitMix64: a seed gives the same flows on every machine.
        let j =
            ((u128::from(rtl_model::rng::splitmix64(&mut st)) * (i as u128 + 1)) >> 64) as usize;
        v.swap(i, j);
    }
}

/// A permutation of 0..n (n >= 2) without fixed points: a shuffle drawn from `seed`, then every fixed point
/// swapped with its successor's target (which moves no other entry onto itself).
fn derangement(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    shuffle(&mut p, seed);
    for i in 0..n {
        if p[i] == i {
            let j = (i + 1) % n;
            p.swap(i, j);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derangements_have_no_fixed_point_and_repeat_with_their_seed() {
        for n in 2..40 {
            for seed in 0..20 {
                let p = derangement(n, seed);
                assert!(
                    p.iter().enumerate().all(|(i, &x)| i != x),
                    "{n} {seed}: {p:?}"
                );
                let mut s = p.clone();
                s.sort_unstable();
                assert_eq!(s, (0..n).collect::<Vec<_>>());
                assert_eq!(p, derangement(n, seed));
            }
        }
        assert_ne!(derangement(16, 1), derangement(16, 2));
    }
}
