//! Functional coverage of a co-simulation run: the cover points each block declares (configuration bins,
//! counted once per configuration the run applies, and events, counted once per cycle they happen in), how
//! often each was hit, and the report (a table for stderr, JSON for `--coverage FILE`).
//!
//! Events are sampled on the Rust side ([`Covered`] wraps the block and looks at each cycle's inputs and
//! outputs after its step), so the RTL's model is untouched; with the pipelined checker the sampling runs on
//! the second thread, with the stimulus and the block.

use crate::dut::{Dut, Halt};
use rtl_model::clocked::Clocked;

/// Most cover points a block may declare (the per-cycle counters are a fixed array, indexed by constants,
/// so sampling costs no bounds checks).
pub const MAX_POINTS: usize = 40;

/// Per-point hit counters of one block.
pub type Hits = [u64; MAX_POINTS];

/// Whether a cover point is counted per configuration or per cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A configuration bin: counted once for each configuration the run applies that falls in it.
    Config,
    /// An event: counted once in each cycle it happens in.
    Event,
    /// An event the correct design never shows (a protocol violation): counted like an event, left out of
    /// completeness; a hit names a stimulus or model fault.
    Never,
}

/// One cover point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Short name (unique within the block), as in the report and in a bug variant's `exposed_by`.
    pub name: &'static str,
    /// Configuration bin or event.
    pub kind: Kind,
    /// What hitting it means.
    pub what: &'static str,
}

/// A configuration bin.
pub const fn bin(name: &'static str, what: &'static str) -> Point {
    Point {
        name,
        kind: Kind::Config,
        what,
    }
}

/// An event.
pub const fn event(name: &'static str, what: &'static str) -> Point {
    Point {
        name,
        kind: Kind::Event,
        what,
    }
}

/// An event the correct design never shows.
pub const fn never(name: &'static str, what: &'static str) -> Point {
    Point {
        name,
        kind: Kind::Never,
        what,
    }
}

/// A block's cover points, its sampler and which point exposes each of its bug variants.
pub trait Cover {
    /// The cover points (at most [`MAX_POINTS`]); indices into [`Hits`] follow this order.
    const POINTS: &'static [Point];
    /// Per bug variant (table name), the cover point whose hit the variant needs to show.
    const EXPOSED_BY: &'static [(&'static str, &'static str)];
    /// The configuration under test.
    type Config;
    /// Input ports.
    type In;
    /// Output ports.
    type Out;
    /// The Rust block (the sampler may read its state: some events are decided inside it).
    type Model;
    /// What the sampler keeps from cycle to cycle (and the configuration facts it needs, worked out once).
    type State: Send;
    /// Counts the configuration bins `cfg` falls in and returns the sampler's state for a run of `cfg`.
    fn begin(cfg: &Self::Config, hits: &mut Hits) -> Self::State;
    /// Counts the events of one cycle (`i` driven, `o` seen before the edge, `m` the block after the edge).
    fn sample(st: &mut Self::State, m: &Self::Model, i: &Self::In, o: &Self::Out, hits: &mut Hits);
}

/// `hits[k] += c` without a branch (the sampler's one operation).
#[inline(always)]
pub fn count(hits: &mut Hits, k: usize, c: bool) {
    hits[k] += u64::from(c);
}

/// The index of point `name` in `points`.
pub fn index(points: &[Point], name: &str) -> Option<usize> {
    points.iter().position(|p| p.name == name)
}

/// The Rust block with its coverage sampler: steps the block, then counts the cycle's events.
///
/// (Tried: a mask of the cycle's events, run-length coded, added to the counters when it changes: slower,
/// as the masks change every few cycles and the compare is mispredicted: `fecn_marker` 92% to 81% of the
/// C++ loop, `credit_rx` 72% to 69%.)
#[derive(Debug)]
pub struct Covered<M, C: Cover> {
    /// The block.
    pub model: M,
    /// The sampler's state.
    pub state: C::State,
    /// Hits so far (configuration bins of the configuration it was built with, events of its cycles).
    hits: Hits,
}

impl<M, C: Cover> Covered<M, C> {
    /// `model`, configured with `cfg`, with its configuration bins counted.
    pub fn new(model: M, cfg: &C::Config) -> Self {
        let mut hits = [0; MAX_POINTS];
        let state = C::begin(cfg, &mut hits);
        Covered { model, state, hits }
    }

    /// Hits so far: the configuration bins of the configuration it was built with and the events of its
    /// cycles.
    pub fn hits(&self) -> Hits {
        self.hits
    }
}

impl<M, C> Dut for Covered<M, C>
where
    M: Clocked,
    C: Cover<In = M::In, Out = M::Out, Model = M>,
{
    type In = M::In;
    type Out = M::Out;

    #[inline]
    fn step(&mut self, i: &M::In) -> Result<M::Out, Halt> {
        let o = self.model.step(i);
        C::sample(&mut self.state, &self.model, i, &o, &mut self.hits);
        Ok(o)
    }
}

/// The coverage of a run: per point, how often it was hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Block name.
    pub block: &'static str,
    /// Its cover points.
    pub points: &'static [Point],
    /// Which point exposes each bug variant.
    pub exposed_by: &'static [(&'static str, &'static str)],
    /// Hits per point (same order).
    pub hits: Vec<u64>,
    /// Configurations applied.
    pub configs: u64,
    /// Cycles compared.
    pub cycles: u64,
}

impl Coverage {
    /// No hits yet, for block `C`.
    pub fn new<C: Cover>(block: &'static str) -> Self {
        Coverage {
            block,
            points: C::POINTS,
            exposed_by: C::EXPOSED_BY,
            hits: vec![0; C::POINTS.len()],
            configs: 0,
            cycles: 0,
        }
    }

    /// Adds the hits of one configuration's stretch of `cycles` cycles.
    pub fn add(&mut self, hits: &Hits, cycles: u64) {
        for (h, n) in self.hits.iter_mut().zip(hits) {
            *h += n;
        }
        self.configs += 1;
        self.cycles += cycles;
    }

    /// Whether every point to cover (all but [`Kind::Never`]) was hit.
    pub fn complete(&self) -> bool {
        self.missed().is_empty()
    }

    /// The points to cover that were not hit.
    pub fn missed(&self) -> Vec<&'static Point> {
        self.points
            .iter()
            .zip(&self.hits)
            .filter(|(p, &h)| h == 0 && p.kind != Kind::Never)
            .map(|(p, _)| p)
            .collect()
    }

    /// Hits of point `name` (`None`: the block has no such point).
    pub fn hits_of(&self, name: &str) -> Option<u64> {
        index(self.points, name).map(|k| self.hits[k])
    }

    /// The bug variants that name `point` as what exposes them.
    fn bugs_of(&self, point: &str) -> Vec<&'static str> {
        self.exposed_by
            .iter()
            .filter(|(_, p)| *p == point)
            .map(|(b, _)| *b)
            .collect()
    }

    /// The table: one line per point (kind, hits, name, the bug variants it exposes, what it means), then
    /// the totals and the points left.
    pub fn table(&self) -> String {
        let mut s = format!(
            "coverage of {}: {} configurations, {} cycles\n{:<6} {:>12}  {:<28} {}\n",
            self.block, self.configs, self.cycles, "kind", "hits", "point", "what (exposes)"
        );
        for (p, h) in self.points.iter().zip(&self.hits) {
            let bugs = self.bugs_of(p.name);
            let kind = kind_name(p.kind);
            let bugs = if bugs.is_empty() {
                String::new()
            } else {
                format!(" ({})", bugs.join(", "))
            };
            s += &format!("{kind:<6} {h:>12}  {:<28} {}{bugs}\n", p.name, p.what);
        }
        let to_cover = self.points.iter().filter(|p| p.kind != Kind::Never).count();
        let missed: Vec<_> = self.missed().iter().map(|p| p.name).collect();
        s += &format!("{} of {to_cover} points hit", to_cover - missed.len());
        if !missed.is_empty() {
            s += &format!("; not hit: {}", missed.join(", "));
        }
        s
    }

    /// The report as JSON: block, configurations, cycles, complete, and per point its name, kind, hits,
    /// meaning and the bug variants it exposes.
    pub fn to_json(&self) -> serde_json::Value {
        let points: Vec<_> = self
            .points
            .iter()
            .zip(&self.hits)
            .map(|(p, &h)| {
                serde_json::json!({
                    "name": p.name,
                    "kind": kind_name(p.kind),
                    "hits": h,
                    "what": p.what,
                    "exposes": self.bugs_of(p.name),
                })
            })
            .collect();
        serde_json::json!({
            "block": self.block,
            "configurations": self.configs,
            "cycles": self.cycles,
            "complete": self.complete(),
            "missed": self.missed().iter().map(|p| p.name).collect::<Vec<_>>(),
            "points": points,
        })
    }
}

/// The kind as the report names it.
fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Config => "config",
        Kind::Event => "event",
        Kind::Never => "never",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block that outputs its input.
    struct Model;
    impl Clocked for Model {
        type In = u32;
        type Out = u32;
        fn step(&mut self, i: &u32) -> u32 {
            *i
        }
        fn idle_input(&self) -> u32 {
            0
        }
    }

    struct Two;
    impl Cover for Two {
        const POINTS: &'static [Point] = &[bin("big", "a big config"), event("odd", "odd input")];
        const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[("BUG_ODD", "odd")];
        type Config = u32;
        type In = u32;
        type Out = u32;
        type Model = Model;
        type State = ();
        fn begin(cfg: &u32, hits: &mut Hits) {
            count(hits, 0, *cfg > 10);
        }
        fn sample(_: &mut (), _: &Model, i: &u32, _: &u32, hits: &mut Hits) {
            count(hits, 1, i % 2 == 1);
        }
    }

    #[test]
    fn table_and_json_say_what_was_hit_and_what_was_not() {
        let mut c = Coverage::new::<Two>("two");
        let mut m = Covered::<Model, Two>::new(Model, &3);
        for i in [1, 3, 5, 2, 4, 7, 9, 0, 0, 1] {
            m.step(&i).unwrap();
        }
        c.add(&m.hits(), 10);
        assert!(!c.complete());
        let t = c.table();
        assert!(t.contains("1 of 2 points hit; not hit: big"), "{t}");
        assert!(t.contains("odd input (BUG_ODD)"), "{t}");
        let j = c.to_json();
        assert_eq!(j["points"][1]["hits"], 6);
        assert_eq!(j["missed"][0], "big");
        assert_eq!(j["points"][1]["exposes"][0], "BUG_ODD");
        let m = Covered::<Model, Two>::new(Model, &30);
        c.add(&m.hits(), 0);
        assert!(c.complete() && c.configs == 2 && c.cycles == 10);
    }
}
