//! `two_counter_marker`: the ECN marker of seed 003 (section 3.3.1, after its refs [13, 109]), one per output
//! link of an input-buffered switch:
//!
//! > two counters are needed for each output link. The first counter cnt1 records the current number of
//! > packets in the switch that are waiting for the output link. The second counter cnt2 records the number
//! > of subsequent packets that need to be marked ... cnt2 is initialized to zero. Whenever the buffer
//! > becomes full, the value of counter cnt1 is copied to counter cnt2. Then the output port starts marking
//! > the next transmitted packets, decrementing cnt2 at each transmission until it reaches zero again.
//!
//! | port       | dir | width | meaning                                                        |
//! |------------|-----|-------|----------------------------------------------------------------|
//! | `rst_ni`   | in  | 1     | synchronous reset, active low                                  |
//! | `enq_i`    | in  | 1     | a packet for this output entered the switch                    |
//! | `deq_i`    | in  | 1     | a packet leaves on this output                                 |
//! | `full_i`   | in  | 1     | the buffer is full this cycle                                  |
//! | `mark_o`   | out | 1     | mark the packet leaving this cycle (`deq_i && cnt2_q != 0`)    |
//! | `cnt1_o`   | out | 16    | `cnt1_q`                                                       |
//! | `cnt2_o`   | out | 16    | `cnt2_q`                                                       |
//!
//! State: `cnt1_q` (16), `cnt2_q` (16), `full_q` (1, last cycle's `full_i`). No RTL twin yet.
//!
//! Named choices (the thesis leaves them open):
//! - [`Trigger`]: "becomes full" as the rising edge of `full_i` (default), or every cycle it is high.
//! - [`Overwrite`]: a trigger while still marking replaces `cnt2` (default, the literal reading) or is ignored.
//! - The copied value is `cnt1` after this cycle's arrival and departure; a packet leaving in the trigger
//!   cycle is marked only if `cnt2` was already nonzero.
//! - `cnt1` saturates at 0 and at 2^16 - 1 (a departure with nothing counted is a caller error, not a wrap).

use rtl_model::clocked::Clocked;

/// When the copy happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// On the cycle `full_i` rises.
    #[default]
    BecomesFull,
    /// On every cycle `full_i` is high.
    WhileFull,
}

/// What a trigger does while `cnt2` is nonzero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overwrite {
    /// `cnt2 := cnt1` regardless.
    #[default]
    Replace,
    /// Only when `cnt2` is zero.
    IfIdle,
}

/// Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Trigger rule.
    pub trigger: Trigger,
    /// Overwrite rule.
    pub overwrite: Overwrite,
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// A packet arrived for this output.
    pub enq_i: bool,
    /// A packet leaves on this output.
    pub deq_i: bool,
    /// The buffer is full.
    pub full_i: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Mark the departing packet.
    pub mark_o: bool,
    /// Packets waiting.
    pub cnt1_o: u16,
    /// Packets still to mark.
    pub cnt2_o: u16,
}

/// The two-counter marker of one output link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TwoCounterMarker {
    cfg: Config,
    /// Packets waiting for the output.
    pub cnt1_q: u16,
    /// Packets still to mark.
    pub cnt2_q: u16,
    /// `full_i` of the previous cycle.
    pub full_q: bool,
}

impl TwoCounterMarker {
    /// The block in its reset state.
    pub fn new(cfg: Config) -> Self {
        TwoCounterMarker {
            cfg,
            ..Default::default()
        }
    }
}

impl Clocked for TwoCounterMarker {
    type In = In;
    type Out = Out;

    fn step(&mut self, i: &In) -> Out {
        if !i.rst_ni {
            *self = Self::new(self.cfg);
            return Out::default();
        }
        let mark = i.deq_i && self.cnt2_q != 0;
        let out = Out {
            mark_o: mark,
            cnt1_o: self.cnt1_q,
            cnt2_o: self.cnt2_q,
        };
        let mut cnt1 = self.cnt1_q;
        if i.enq_i {
            cnt1 = cnt1.saturating_add(1);
        }
        if i.deq_i {
            cnt1 = cnt1.saturating_sub(1);
        }
        let mut cnt2 = self.cnt2_q - u16::from(mark);
        let fire = match self.cfg.trigger {
            Trigger::BecomesFull => i.full_i && !self.full_q,
            Trigger::WhileFull => i.full_i,
        };
        if fire && (self.cfg.overwrite == Overwrite::Replace || cnt2 == 0) {
            cnt2 = cnt1;
        }
        // cnt2 counts packets among those waiting.
        self.cnt2_q = cnt2.min(cnt1);
        self.cnt1_q = cnt1;
        self.full_q = i.full_i;
        out
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn inp(enq: bool, deq: bool, full: bool) -> In {
        In {
            rst_ni: true,
            enq_i: enq,
            deq_i: deq,
            full_i: full,
        }
    }

    /// By hand: 4 arrivals, the buffer becomes full with the 4th (cnt1 = 4 copied to cnt2), then 6
    /// departures while 2 more arrive: the first 4 departures are marked, the last 2 not.
    #[test]
    fn marks_the_packets_waiting_when_full() {
        let mut m = TwoCounterMarker::new(Config::default());
        for k in 0..4 {
            m.step(&inp(true, false, k == 3));
        }
        assert_eq!((m.cnt1_q, m.cnt2_q), (4, 4));
        let marks: Vec<bool> = (0..6)
            .map(|k| m.step(&inp(k < 2, true, true)).mark_o)
            .collect();
        assert_eq!(marks, [true, true, true, true, false, false]);
        assert_eq!((m.cnt1_q, m.cnt2_q), (0, 0));
    }

    #[test]
    fn trigger_and_overwrite_options() {
        // WhileFull + Replace: staying full re-copies cnt1 every cycle, so every departure is marked.
        let mut m = TwoCounterMarker::new(Config {
            trigger: Trigger::WhileFull,
            overwrite: Overwrite::Replace,
        });
        for _ in 0..3 {
            m.step(&inp(true, false, true));
        }
        let marks: Vec<bool> = (0..3)
            .map(|_| m.step(&inp(true, true, true)).mark_o)
            .collect();
        assert_eq!(marks, [true, true, true]);
        // BecomesFull: staying full does not re-trigger; IfIdle ignores a new edge while marking.
        let mut m = TwoCounterMarker::new(Config {
            trigger: Trigger::BecomesFull,
            overwrite: Overwrite::IfIdle,
        });
        m.step(&inp(true, false, false));
        m.step(&inp(true, false, true)); // copy 2
        m.step(&inp(true, false, false));
        m.step(&inp(true, false, true)); // edge while cnt2 = 2: ignored
        assert_eq!((m.cnt1_q, m.cnt2_q), (4, 2));
        let mut r = TwoCounterMarker::new(Config::default());
        for f in [false, true, false, true] {
            r.step(&inp(true, false, f));
        }
        assert_eq!((r.cnt1_q, r.cnt2_q), (4, 4), "Replace takes the new count");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// cnt2 never exceeds cnt1; a mark only with a departure; marks between triggers never exceed the
        /// count copied at the trigger.
        #[test]
        fn invariants(seq in proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>(), 0u8..50), 0..200),
                      while_full in any::<bool>(), if_idle in any::<bool>()) {
            let mut m = TwoCounterMarker::new(Config {
                trigger: if while_full { Trigger::WhileFull } else { Trigger::BecomesFull },
                overwrite: if if_idle { Overwrite::IfIdle } else { Overwrite::Replace },
            });
            for (enq, deq, full, r) in seq {
                let before = m.cnt2_q;
                let o = m.step(&In { rst_ni: r != 0, enq_i: enq, deq_i: deq, full_i: full });
                prop_assert!(m.cnt2_q <= m.cnt1_q);
                prop_assert!(!o.mark_o || (deq && before > 0));
                if r != 0 && !full {
                    prop_assert_eq!(m.cnt2_q, before - u16::from(o.mark_o).min(before));
                }
            }
        }
    }
}
