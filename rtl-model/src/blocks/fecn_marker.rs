//! `fecn_marker`: whether the packet starting on one (output port, VL) gets its FECN bit set.
//!
//! A packet is *eligible* when the port-VL is in the marking state (`cong_detect` `mark_state_o`) and the packet
//! is at least `Packet_Size` (64-byte units; 0 = all sizes) long. `Marking_Rate` is "the mean number of packets
//! between markings" (reference, CC MADs); how it is counted is the designer's choice, here [`MarkMode`].
//!
//! | port           | dir | width | meaning                                                                |
//! |----------------|-----|-------|------------------------------------------------------------------------|
//! | `rst_ni`       | in  | 1     | synchronous reset, active low                                          |
//! | `pkt_valid_i`  | in  | 1     | a packet starts on this port-VL this cycle                             |
//! | `pkt_bytes_i`  | in  | 13    | its length in bytes                                                    |
//! | `mark_state_i` | in  | 1     | the port-VL is in the marking state                                    |
//! | `mark_o`       | out | 1     | set FECN on this packet                                                |
//! | `cfg_err_o`    | out | 1     | configuration rule broken ([`Config::cfg_err`]; 0 for a built block)   |
//!
//! Held-constant configuration ports in the RTL: `packet_size` (8), `marking_rate` (16), `mode` (1),
//! `lfsr_seed` (16) and `lfsr_thresh` (17), the last precomputed here ([`FecnMarker::lfsr_thresh`]) so that
//! neither model nor RTL divides per packet.
//!
//! State: `cnt_q` (16 bits), `lfsr_q` (16 bits, never 0).
//!
//! Designer choices, named:
//! - [`MarkMode::Counter`]: eligible packets are counted modulo `marking_rate + 1` and the *first* packet of
//!   each cycle of `k + 1` is marked ([`COUNTER_MARKS_FIRST`]): the first eligible packet after a quiet period
//!   is marked at once. `marking_rate = 0` marks every eligible packet. The count survives the marking state
//!   going away and coming back (only eligible packets move it).
//! - [`MarkMode::Lfsr`]: a 16-bit maximal-length Galois LFSR, polynomial x^16 + x^14 + x^13 + x^11 + 1
//!   (right shift, toggle mask [`LFSR_TAPS`] = 0xB400), period 65535. Per eligible packet the current value is
//!   compared, `mark = lfsr_q < lfsr_thresh` with `lfsr_thresh = floor(65536 / (marking_rate + 1))`, then the
//!   LFSR advances by [`LFSR_LEAP`] = 16 shifts. Over a period exactly `lfsr_thresh - 1` of the 65535 values
//!   mark, a mean of about `marking_rate` unmarked packets between marks. The 16-shift leap (gcd(16, 65535) = 1,
//!   so the leap still visits every state) makes consecutive compare values share no bits; with one shift a
//!   small value `v` is followed by `v >> 1`, so marks would come in bursts.

use super::{flag, mask, ConfigError};
use crate::clocked::Clocked;

/// Toggle mask of the Galois LFSR (x^16 + x^14 + x^13 + x^11 + 1).
pub const LFSR_TAPS: u16 = 0xB400;
/// Shifts per eligible packet.
pub const LFSR_LEAP: u32 = 16;
/// Default LFSR seed.
pub const LFSR_SEED_DEFAULT: u16 = 0xACE1;
/// In counter mode the mark is on the first packet of each cycle of `marking_rate + 1`.
pub const COUNTER_MARKS_FIRST: bool = true;
/// Width of `pkt_bytes_i`, bits.
pub const BYTES_WIDTH: u32 = 13;
/// `cfg_err_o` bit: `lfsr_seed` is 0 (the LFSR would stick at 0; the RTL resets it to
/// [`LFSR_SEED_DEFAULT`] instead).
pub const CFG_ERR_SEED_ZERO: u8 = 1 << 0;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 1;

/// How `marking_rate` is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkMode {
    /// Exactly one in `marking_rate + 1` eligible packets, the first of each cycle.
    #[default]
    Counter,
    /// Pseudo-random, probability about `1 / (marking_rate + 1)` per eligible packet.
    Lfsr,
}

/// Static configuration (held-constant ports in the RTL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Packet_Size in 64-byte units: shorter packets are never marked; 0 marks all sizes.
    pub packet_size: u8,
    /// Marking_Rate: mean number of unmarked eligible packets between marks.
    pub marking_rate: u16,
    /// Counting method.
    pub mode: MarkMode,
    /// LFSR reset value (nonzero).
    pub lfsr_seed: u16,
}

impl Default for Config {
    /// The Mellanox CC manager's defaults: marking_rate 0xA, packet_size 0x200 bytes (8 units).
    fn default() -> Self {
        Config {
            packet_size: 8,
            marking_rate: 0xA,
            mode: MarkMode::Counter,
            lfsr_seed: LFSR_SEED_DEFAULT,
        }
    }
}

impl Config {
    /// The configuration rules this configuration breaks, a bit per rule ([`CFG_ERR_SEED_ZERO`]): what the
    /// RTL shows on `cfg_err_o` for these held ports. [`Config::validate`] refuses exactly these.
    pub fn cfg_err(&self) -> u8 {
        flag(self.lfsr_seed == 0, CFG_ERR_SEED_ZERO)
    }

    /// `floor(65536 / (marking_rate + 1))`, 17 bits: the RTL's `lfsr_thresh` port
    /// ([`FecnMarker::lfsr_thresh`] of a built block).
    pub fn lfsr_thresh(&self) -> u32 {
        65536 / (u32::from(self.marking_rate) + 1)
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.lfsr_seed == 0 {
            return Err(ConfigError::Invalid {
                setting: "lfsr_seed",
                value: 0,
                reason: "an LFSR seeded with 0 stays at 0",
            });
        }
        Ok(())
    }
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// A packet starts this cycle.
    pub pkt_valid_i: bool,
    /// Its length in bytes (13 bits).
    pub pkt_bytes_i: u16,
    /// The port-VL is in the marking state.
    pub mark_state_i: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Set FECN on the packet starting this cycle.
    pub mark_o: bool,
    /// Configuration rules broken ([`Config::cfg_err`]): 0 for every block built, as [`Config::validate`]
    /// refuses the rest; the RTL computes it from its held ports.
    pub cfg_err_o: u8,
}

/// FECN marking decision of one (output port, VL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FecnMarker {
    cfg: Config,
    thresh: u32,
    /// Eligible packets in the current cycle of `marking_rate + 1` (counter mode).
    pub cnt_q: u16,
    /// LFSR state (LFSR mode).
    pub lfsr_q: u16,
}

/// One Galois shift.
pub const fn lfsr_shift(s: u16) -> u16 {
    let out = s & 1;
    let s = s >> 1;
    if out != 0 {
        s ^ LFSR_TAPS
    } else {
        s
    }
}

/// The per-packet advance: [`LFSR_LEAP`] shifts (one XOR network in the RTL).
pub const fn lfsr_leap(mut s: u16) -> u16 {
    let mut k = 0;
    while k < LFSR_LEAP {
        s = lfsr_shift(s);
        k += 1;
    }
    s
}

/// [`lfsr_leap`] of every low byte (`[0]`) and every high byte (`[1]`) of the state. The shifts are linear
/// over GF(2) (XORs only, as the RTL's network), so the leap of a state is the XOR of the leaps of its two
/// bytes: two lookups instead of 16 dependent shifts, cheap enough that a step computes the leap whether or
/// not a packet is eligible and selects, instead of branching on the packet.
const LEAP: [[u16; 256]; 2] = {
    let mut t = [[0u16; 256]; 2];
    let mut x = 0;
    while x < 256 {
        t[0][x] = lfsr_leap(x as u16);
        t[1][x] = lfsr_leap((x as u16) << 8);
        x += 1;
    }
    t
};

/// [`lfsr_leap`] by [`LEAP`].
#[inline]
fn leap_by_table(s: u16) -> u16 {
    LEAP[0][usize::from(s as u8)] ^ LEAP[1][usize::from(s >> 8)]
}

impl FecnMarker {
    /// Builds the block in its reset state, precomputing `lfsr_thresh`.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(FecnMarker {
            cfg,
            thresh: cfg.lfsr_thresh(),
            cnt_q: 0,
            lfsr_q: cfg.lfsr_seed,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// `floor(65536 / (marking_rate + 1))`, 17 bits: the value the RTL gets on its `lfsr_thresh` port.
    pub fn lfsr_thresh(&self) -> u32 {
        self.thresh
    }
}

impl Clocked for FecnMarker {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        if !i.rst_ni {
            self.cnt_q = 0;
            self.lfsr_q = self.cfg.lfsr_seed;
            return Out::default();
        }
        let bytes = u32::from(i.pkt_bytes_i) & mask(BYTES_WIDTH);
        let size_ok = bytes >= u32::from(self.cfg.packet_size) * 64;
        let eligible = i.pkt_valid_i & i.mark_state_i & size_ok;
        // The next state is worked out whether or not the packet is eligible and then selected, as the
        // RTL's multiplexers do: a branch on the packet (a third of the cycles, at random, in the
        // co-simulation) was mispredicted about every other packet.
        let mark = match self.cfg.mode {
            MarkMode::Counter => {
                let next = if self.cnt_q >= self.cfg.marking_rate {
                    0
                } else {
                    self.cnt_q + 1
                };
                let m = self.cnt_q == 0;
                self.cnt_q = if eligible { next } else { self.cnt_q };
                m
            }
            MarkMode::Lfsr => {
                let m = u32::from(self.lfsr_q) < self.thresh;
                let next = leap_by_table(self.lfsr_q);
                self.lfsr_q = if eligible { next } else { self.lfsr_q };
                m
            }
        };
        Out {
            mark_o: eligible & mark,
            cfg_err_o: 0,
        }
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn skip(&mut self, _n: u64) {
        // Only eligible packets move the state.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn table_leap_equals_sixteen_shifts() {
        for x in 0..=u16::MAX {
            assert_eq!(leap_by_table(x), lfsr_leap(x), "state {x:#06x}");
        }
    }

    fn pkt(bytes: u16) -> In {
        In {
            rst_ni: true,
            pkt_valid_i: true,
            pkt_bytes_i: bytes,
            mark_state_i: true,
        }
    }

    fn marker(mode: MarkMode, rate: u16) -> FecnMarker {
        FecnMarker::new(Config {
            packet_size: 0,
            marking_rate: rate,
            mode,
            lfsr_seed: LFSR_SEED_DEFAULT,
        })
        .unwrap()
    }

    #[test]
    fn counter_marks_first_of_each_k_plus_one() {
        for k in [0u16, 1, 2, 5, 10] {
            let mut m = marker(MarkMode::Counter, k);
            let marks: Vec<bool> = (0..3 * (usize::from(k) + 1))
                .map(|_| m.step(&pkt(64)).mark_o)
                .collect();
            let expect: Vec<bool> = (0..marks.len())
                .map(|n| n % (usize::from(k) + 1) == 0)
                .collect();
            assert_eq!(marks, expect, "k = {k}");
        }
    }

    #[test]
    fn counter_only_counts_eligible_packets() {
        let mut m = marker(MarkMode::Counter, 2);
        assert!(m.step(&pkt(64)).mark_o);
        // Not in the marking state, not valid: no count.
        let quiet = In {
            mark_state_i: false,
            ..pkt(64)
        };
        assert!(!m.step(&quiet).mark_o);
        assert!(
            !m.step(&In {
                pkt_valid_i: false,
                ..pkt(64)
            })
            .mark_o
        );
        assert_eq!(m.cnt_q, 1);
        assert!(!m.step(&pkt(64)).mark_o);
        assert!(!m.step(&pkt(64)).mark_o);
        assert!(m.step(&pkt(64)).mark_o);
    }

    #[test]
    fn packet_size_boundary() {
        let mut m = FecnMarker::new(Config {
            marking_rate: 0,
            ..Config::default()
        })
        .unwrap();
        // packet_size 8: 512 bytes is the shortest packet marked.
        assert!(!m.step(&pkt(511)).mark_o);
        assert!(m.step(&pkt(512)).mark_o);
        // 13-bit port: 0x2000 | 100 reads as 100 bytes.
        assert!(!m.step(&pkt(0x2000 | 100)).mark_o);
    }

    #[test]
    fn lfsr_thresholds() {
        assert_eq!(marker(MarkMode::Lfsr, 0).lfsr_thresh(), 65536);
        assert_eq!(marker(MarkMode::Lfsr, 1).lfsr_thresh(), 32768);
        assert_eq!(marker(MarkMode::Lfsr, 10).lfsr_thresh(), 5957);
        assert_eq!(marker(MarkMode::Lfsr, 100).lfsr_thresh(), 648);
        assert_eq!(marker(MarkMode::Lfsr, 0xffff).lfsr_thresh(), 1);
        // rate 0: every eligible packet, since every LFSR value is below 65536.
        let mut m = marker(MarkMode::Lfsr, 0);
        assert!((0..100).all(|_| m.step(&pkt(64)).mark_o));
    }

    #[test]
    fn lfsr_is_maximal_and_leap_visits_every_state() {
        let mut seen = vec![false; 65536];
        let (mut s, mut t) = (1u16, 1u16);
        for _ in 0..65535 {
            assert!(!seen[usize::from(s)], "period shorter than 65535");
            seen[usize::from(s)] = true;
            s = lfsr_shift(s);
            t = lfsr_leap(t);
        }
        assert_eq!(s, 1);
        assert_eq!(
            t, 1,
            "16 shifts a packet still cycles through all 65535 states"
        );
        assert!(!seen[0]);
        assert_eq!(lfsr_shift(1), 0xB400);
        assert_eq!(lfsr_shift(2), 1);
    }

    #[test]
    fn lfsr_mean_gap_over_200k_packets() {
        // Within 3% of k; the exact mean over whole periods is 65535 / (thresh - 1) - 1
        // (1.00003, 10.003, 100.29).
        for k in [1u16, 10, 100] {
            let mut m = marker(MarkMode::Lfsr, k);
            let (mut marks, mut after_mark, mut prev) = (0u32, 0u32, false);
            for _ in 0..200_000 {
                let mk = m.step(&pkt(64)).mark_o;
                if mk {
                    marks += 1;
                    if prev {
                        after_mark += 1;
                    }
                }
                prev = mk;
            }
            let mean_gap = f64::from(200_000 - marks) / f64::from(marks);
            let k = f64::from(k);
            assert!(
                (mean_gap - k).abs() <= 0.03 * k,
                "k {k}: mean gap {mean_gap}"
            );
            // No bursts: a mark follows a mark about as often as any packet is marked.
            let p = 1.0 / (k + 1.0);
            let q = f64::from(after_mark) / f64::from(marks);
            assert!(
                (q - p).abs() < 0.05 + 0.2 * p,
                "k {k}: P(mark | mark) = {q}, p = {p}"
            );
        }
    }

    #[test]
    fn reset_and_seed() {
        let mut m = marker(MarkMode::Lfsr, 3);
        m.step(&pkt(64));
        assert_ne!(m.lfsr_q, LFSR_SEED_DEFAULT);
        assert!(
            !m.step(&In {
                rst_ni: false,
                ..pkt(64)
            })
            .mark_o
        );
        assert_eq!((m.lfsr_q, m.cnt_q), (LFSR_SEED_DEFAULT, 0));
        assert!(FecnMarker::new(Config {
            lfsr_seed: 0,
            ..Config::default()
        })
        .is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Packets shorter than Packet_Size are never marked and not even counted (the state does not move),
        /// in either mode and whatever came before.
        #[test]
        fn short_packets_never_marked(
            packet_size in 1u8..=255,
            rate in prop_oneof![Just(0u16), 0u16..4, any::<u16>()],
            lfsr in any::<bool>(),
            seed in 1u16..=u16::MAX,
            prefix in proptest::collection::vec((any::<bool>(), 0u16..8192, any::<bool>()), 0..30),
            below in prop_oneof![Just(1u16), 1u16..=16320],
        ) {
            let mut m = FecnMarker::new(Config {
                packet_size,
                marking_rate: rate,
                mode: if lfsr { MarkMode::Lfsr } else { MarkMode::Counter },
                lfsr_seed: seed,
            }).unwrap();
            for &(v, b, s) in &prefix {
                m.step(&In { rst_ni: true, pkt_valid_i: v, pkt_bytes_i: b, mark_state_i: s });
            }
            let min_len = u16::from(packet_size) * 64;
            let short = min_len.saturating_sub(below).min(8191);
            let before = m.clone();
            let o = m.step(&pkt(short));
            prop_assert!(!o.mark_o);
            prop_assert_eq!(&m, &before, "a short packet moved the marking state");
            // The shortest eligible packet is marked or counted (when the 13-bit port can carry it).
            if min_len <= 8191 {
                let o = m.step(&pkt(min_len));
                prop_assert!(o.mark_o || m != before, "the shortest eligible packet was ignored");
            }
        }
    }
}
