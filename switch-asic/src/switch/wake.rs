//! Per-port wake-up cycles of a [`Switch`](super::Switch) with their earliest cycle and the ports holding it
//! kept up to date as the cycles change, so that a step neither rescans every port to find the due ones nor
//! to find the next event.
//!
//! A step of a switch comes at its next event (or earlier, when something is handed in), so the ports due
//! then are exactly those holding the earliest wake-up: [`WakeSet::due`] is then one comparison. Ports only
//! move their own wake-ups later after they were handled, and other ports' wake-ups only move earlier, so
//! the earliest cycle and its holders change cheaply; a full pass is needed only when every holder of the
//! earliest cycle has moved later (in practice: once per step that handled them, instead of the three due
//! scans and two minimum scans per step of plain arrays).

/// A bit per port in a `u64` mask: ports beyond 64 do not exist (`PORTS_MAX`).
fn bit(p: usize) -> u64 {
    1u64.checked_shl(p as u32).unwrap_or(0)
}

/// `BITS[p]` = `bit(p)`: a table the vectorised pass of [`WakeSet::refresh`] loads (a shift by the port
/// number does not vectorise).
const BITS: [u64; 64] = {
    let mut b = [0u64; 64];
    let mut p = 0;
    while p < 64 {
        b[p] = 1 << p;
        p += 1;
    }
    b
};

/// Up to this many ports with a wake-up: the minimum is found by a look at each of them instead of the pass
/// over every port. An unsigned 64-bit minimum takes SSE4.2 about 3.5 instructions a port (two lanes a
/// register, a sign flip before each compare), a look at one port about 5: under light load most of a
/// switch's ports have no wake-up.
const SPARSE: u32 = 16;

/// Wake-up cycles of up to 64 ports, with their minimum and its holders.
#[derive(Debug, Clone)]
pub(super) struct WakeSet {
    at: Vec<u64>,
    /// The ports whose `at` is not `u64::MAX` (never), as bits: a pass over few of them looks only at those.
    finite: u64,
    /// The minimum of `at` (valid unless `stale`).
    min: u64,
    /// The ports whose `at` equals `min` (valid when `known`).
    holders: u64,
    /// Every holder of the minimum moved later since the last pass: `min`/`holders` need one.
    stale: bool,
    /// `holders` is valid (when not `stale`): the holders are found only when a step is due at the minimum,
    /// not after every step that moved them (the next step is often due for the other set of the switch).
    known: bool,
}

impl WakeSet {
    /// `n` ports, all waking at `init`.
    pub(super) fn new(n: usize, init: u64) -> Self {
        let finite = if init == u64::MAX {
            0
        } else {
            crate::port_mask::all_ports(n)
        };
        let mut s = WakeSet {
            at: vec![init; n],
            finite,
            min: u64::MAX,
            holders: 0,
            stale: true,
            known: false,
        };
        s.refresh();
        s
    }

    /// Where the wake-up cycles lie, for a prefetch ([`super::Switch::hot_memory`]).
    pub(super) fn at_ptr(&self) -> *const u8 {
        self.at.as_ptr().cast()
    }

    /// The wake-up cycle of port `p`.
    #[inline]
    pub(super) fn get(&self, p: usize) -> u64 {
        self.at[p]
    }

    /// Port `p` wakes at `w` or earlier.
    #[inline]
    pub(super) fn lower(&mut self, p: usize, w: u64) {
        if w < self.at[p] {
            self.at[p] = w;
            self.finite |= bit(p);
            if !self.stale {
                if w < self.min {
                    self.min = w;
                    self.holders = bit(p);
                    self.known = true;
                } else if w == self.min {
                    self.holders |= bit(p);
                }
            }
        }
    }

    /// Port `p` wakes at `w`.
    #[inline]
    pub(super) fn set(&mut self, p: usize, w: u64) {
        let old = self.at[p];
        if w < old {
            self.lower(p, w);
        } else if w > old {
            self.at[p] = w;
            if w == u64::MAX {
                self.finite &= !bit(p);
            }
            if !self.known {
                // Whether other ports hold the minimum is not known: find it again.
                self.stale |= old == self.min;
            } else if self.holders & bit(p) != 0 {
                self.holders &= !bit(p);
                self.stale = self.holders == 0;
            }
        }
    }

    /// Recomputes the minimum after every holder moved later: a branch-free pass the compiler vectorises
    /// (a single pass for minimum and holders branched on `w < min` at every port, a branch on the data that
    /// the predictor often missed, so separate passes are faster).
    #[inline]
    fn refresh(&mut self) {
        if self.stale {
            self.min = if self.finite.count_ones() <= SPARSE {
                crate::port_mask::ports(self.finite).fold(u64::MAX, |m, p| m.min(self.at[p]))
            } else {
                self.at.iter().copied().fold(u64::MAX, u64::min)
            };
            (self.stale, self.known) = (false, false);
        }
    }

    /// The ports holding the minimum, by a second branch-free pass when they are not known.
    #[inline]
    fn holders(&mut self) -> u64 {
        self.refresh();
        if !self.known {
            let min = self.min;
            self.holders = self
                .at
                .iter()
                .zip(&BITS)
                .fold(0, |h, (&w, &b)| h | if w == min { b } else { 0 });
            self.known = true;
        }
        self.holders
    }

    /// The earliest wake-up cycle (`u64::MAX` when none, or no port).
    #[inline]
    pub(super) fn min(&mut self) -> u64 {
        self.refresh();
        self.min
    }

    /// The ports waking at or before `t`, as bits.
    #[inline]
    pub(super) fn due(&mut self, t: u64) -> u64 {
        self.refresh();
        if t < self.min {
            0
        } else if t == self.min {
            self.holders()
        } else {
            // Only when a wake-up was passed over (a step later than the next event): the plain pass.
            crate::port_mask::due_mask(&self.at, t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port_mask::due_mask;
    use proptest::prelude::*;

    #[test]
    fn holders_follow_lowering_and_raising() {
        let mut s = WakeSet::new(4, 10);
        assert_eq!((s.min(), s.due(10)), (10, 0b1111));
        s.set(1, 20);
        s.lower(2, 5);
        assert_eq!((s.min(), s.due(5), s.due(4)), (5, 0b0100, 0));
        s.set(2, 30);
        assert_eq!((s.min(), s.due(10)), (10, 0b1001));
        assert_eq!(s.due(25), 0b1011, "a later cycle takes every port up to it");
        let mut never = WakeSet::new(3, u64::MAX);
        assert_eq!(never.min(), u64::MAX);
        assert_eq!(
            never.due(u64::MAX),
            0b111,
            "the last cycle takes the ports that never wake too"
        );
    }

    proptest! {
        /// After any sequence of lowerings and settings, the minimum and due sets equal a plain pass over
        /// the cycles (as the switch computed them before), for due cycles below, at and above the minimum.
        #[test]
        fn equals_a_full_pass(
            n in 1usize..=64,
            init in prop_oneof![Just(0u64), Just(u64::MAX), 0u64..300],
            ops in proptest::collection::vec(
                (any::<bool>(), 0usize..64, 0u64..40, 0u8..8),
                0..200,
            ),
        ) {
            let mut s = WakeSet::new(n, init);
            let mut plain = vec![init; n];
            for (lower, p, w, kind) in ops {
                let p = p % n;
                // Mostly close together (ties for the minimum), some spread wider, some at the end of
                // time, some never.
                let w = match kind {
                    0 => u64::MAX,
                    1 => w * 7,
                    2 => w * 50,
                    3 => u64::MAX - 1 - w,
                    _ => w,
                };
                if lower {
                    s.lower(p, w);
                    plain[p] = plain[p].min(w);
                } else {
                    s.set(p, w);
                    plain[p] = w;
                }
                let min = plain.iter().copied().min().unwrap_or(u64::MAX);
                prop_assert_eq!(s.get(p), plain[p]);
                prop_assert_eq!(s.min(), min);
                for t in [min.saturating_sub(1), min, min.saturating_add(1), w] {
                    prop_assert_eq!(s.due(t), due_mask(&plain, t), "t {}", t);
                }
            }
        }
    }
}
