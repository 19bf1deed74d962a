//! `credit_rx`: the receiver side of IB link-level flow control for one VL.
//!
//! The receiver counts blocks received (ABR, 12 bits), tracks free buffer space in 64-byte blocks, and
//! advertises `FCCL = ABR + min(free, fccl_cap)` (mod 4096) in flow-control packets. On a flow-control packet
//! from the transmitter it sets `ABR := FCTBS` (the IB resynchronisation after lost blocks; on a lossless model
//! link it never changes the value). Facts from the reference ("VL arbitration, SL2VL, credits", OMNeT model).
//!
//! | port           | dir | width | meaning                                                                 |
//! |----------------|-----|-------|-------------------------------------------------------------------------|
//! | `rst_ni`       | in  | 1     | synchronous reset, active low                                           |
//! | `blk_rx_i`     | in  | 7     | data blocks received this cycle                                         |
//! | `fc_valid_i`   | in  | 1     | a flow-control packet from the transmitter arrived                      |
//! | `fc_fctbs_i`   | in  | 12    | its FCTBS                                                               |
//! | `blk_free_i`   | in  | 7     | blocks drained from the buffer this cycle                               |
//! | `abr_o`        | out | 12    | adjusted blocks received (`abr_q`)                                      |
//! | `free_o`       | out | 16    | free buffer blocks (`free_q`)                                           |
//! | `fccl_o`       | out | 12    | `(abr_q + min(free_q, fccl_cap)) mod 4096`                              |
//! | `fc_send_o`    | out | 1     | a flow-control packet carrying `fccl_o` goes out this cycle             |
//! | `overflow_o`   | out | 1     | `blk_rx_i > free_q`: more data than space, a lossless violation         |
//! | `drain_err_o`  | out | 1     | `blk_free_i` above the blocks held: the buffer model is inconsistent    |
//! | `cfg_err_o`    | out | 4     | configuration rules broken, a bit per rule ([`Config::cfg_err`])         |
//!
//! State: `abr_q` (12), `free_q` (16), `timer_q` (16, cycles until the periodic packet), `last_fccl_q` (12,
//! FCCL of the last packet sent).
//!
//! Designer choices, named:
//! - [`Config::fccl_cap`] (default [`FCCL_CAP`] = 2048): the advertised credit never runs more than 2048
//!   blocks ahead of ABR, so the transmitter's 12-bit "fits" check (`credit_tx::CREDIT_WINDOW`) is never
//!   ambiguous.
//! - [`FcPolicy`]: periodic packets every [`Config::fc_interval`] cycles, optionally also whenever FCCL differs
//!   from the last one sent. Any packet restarts the periodic timer.
//! - The first flow-control packet leaves in the first cycle after reset (timer resets to 0), which is how the
//!   transmitter gets its initial credit.
//! - Same-cycle order: blocks received in the cycle of a flow-control packet count after it
//!   (`ABR := FCTBS + blk_rx_i`); a link must present them in that order. Blocks received then drained in one
//!   cycle are allowed (cut-through): `free := min(sat(free - blk_rx) + blk_free, buf_blocks)`.
//! - On overflow `free_q` saturates at 0; on a drain error it saturates at `buf_blocks`; both raise a flag.

use super::{check_max, flag, mask, ConfigError};
use crate::clocked::Clocked;

/// Largest FCCL lead over ABR that keeps the transmitter's 12-bit check unambiguous.
pub const FCCL_CAP: u16 = 2048;
/// Width of `blk_rx_i` and `blk_free_i`, bits.
pub const BLK_WIDTH: u32 = 7;
const FC_MASK: u16 = 0xfff;
/// `cfg_err_o` bit: `buf_blocks` is 0 (no buffer).
pub const CFG_ERR_BUF_ZERO: u8 = 1 << 0;
/// `cfg_err_o` bit: `fc_interval` is 0 (the RTL then sends a flow-control packet every cycle).
pub const CFG_ERR_INTERVAL_ZERO: u8 = 1 << 1;
/// `cfg_err_o` bit: `fccl_cap` is 0 (no credit ever granted).
pub const CFG_ERR_CAP_ZERO: u8 = 1 << 2;
/// `cfg_err_o` bit: `fccl_cap` is above [`FCCL_CAP`] (the RTL then caps at [`FCCL_CAP`]).
pub const CFG_ERR_CAP_ABOVE: u8 = 1 << 3;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 4;

/// When flow-control packets go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FcPolicy {
    /// Every `fc_interval` cycles.
    Periodic,
    /// Every `fc_interval` cycles, and in any cycle where FCCL differs from the last one sent. The default of
    /// a switch configuration.
    #[default]
    PeriodicAndOnChange,
}

/// Static configuration (held-constant ports in the RTL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Buffer size of this VL in 64-byte blocks (1..=65535).
    pub buf_blocks: u16,
    /// Cycles between periodic flow-control packets (1..=65535).
    pub fc_interval: u16,
    /// When packets go out.
    pub policy: FcPolicy,
    /// Largest credit advertised beyond ABR (at most [`FCCL_CAP`]).
    pub fccl_cap: u16,
}

impl Config {
    /// A periodic receiver with the standard cap.
    pub fn new(buf_blocks: u16, fc_interval: u16) -> Self {
        Config {
            buf_blocks,
            fc_interval,
            policy: FcPolicy::Periodic,
            fccl_cap: FCCL_CAP,
        }
    }

    /// The configuration rules this configuration breaks, a bit per rule ([`CFG_ERR_BUF_ZERO`],
    /// [`CFG_ERR_INTERVAL_ZERO`], [`CFG_ERR_CAP_ZERO`], [`CFG_ERR_CAP_ABOVE`]): what the RTL shows on
    /// `cfg_err_o` for these held ports (`fccl_cap` as its 12-bit port carries it). [`Config::validate`]
    /// refuses exactly the configurations with a bit set, among those the ports can carry.
    pub fn cfg_err(&self) -> u8 {
        let cap = self.fccl_cap & FC_MASK;
        flag(self.buf_blocks == 0, CFG_ERR_BUF_ZERO)
            | flag(self.fc_interval == 0, CFG_ERR_INTERVAL_ZERO)
            | flag(cap == 0, CFG_ERR_CAP_ZERO)
            | flag(cap > FCCL_CAP, CFG_ERR_CAP_ABOVE)
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.buf_blocks == 0 {
            return Err(ConfigError::Invalid {
                setting: "buf_blocks",
                value: 0,
                reason: "a buffer holds at least one block",
            });
        }
        if self.fc_interval == 0 {
            return Err(ConfigError::Invalid {
                setting: "fc_interval",
                value: 0,
                reason: "periodic flow-control packets need an interval of at least one cycle",
            });
        }
        check_max("fccl_cap", self.fccl_cap.into(), FCCL_CAP.into())?;
        if self.fccl_cap == 0 {
            return Err(ConfigError::Invalid {
                setting: "fccl_cap",
                value: 0,
                reason: "a cap of 0 never grants credit",
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
    /// Blocks received (7 bits).
    pub blk_rx_i: u8,
    /// A flow-control packet from the transmitter arrived.
    pub fc_valid_i: bool,
    /// Its FCTBS (12 bits).
    pub fc_fctbs_i: u16,
    /// Blocks drained (7 bits).
    pub blk_free_i: u8,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Adjusted blocks received.
    pub abr_o: u16,
    /// Free blocks.
    pub free_o: u16,
    /// Credit limit advertised.
    pub fccl_o: u16,
    /// A flow-control packet goes out this cycle.
    pub fc_send_o: bool,
    /// More blocks arrived than were free.
    pub overflow_o: bool,
    /// More blocks drained than held.
    pub drain_err_o: bool,
    /// Configuration rules broken ([`Config::cfg_err`]): 0 for every block built, as
    /// [`Config::validate`] refuses the rest; the RTL computes it from its held ports.
    pub cfg_err_o: u8,
}

/// The receiver's credit accounting for one VL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditRx {
    cfg: Config,
    /// Adjusted blocks received, mod 4096.
    pub abr_q: u16,
    /// Free buffer blocks.
    pub free_q: u16,
    /// Cycles until the next periodic packet (0: one goes out this cycle).
    pub timer_q: u16,
    /// FCCL carried by the last packet sent.
    pub last_fccl_q: u16,
}

impl CreditRx {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(CreditRx {
            cfg,
            abr_q: 0,
            free_q: cfg.buf_blocks,
            timer_q: 0,
            last_fccl_q: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn reset(&mut self) {
        self.abr_q = 0;
        self.free_q = self.cfg.buf_blocks;
        self.timer_q = 0;
        self.last_fccl_q = 0;
    }

    /// [`Clocked::skip`] of `n` cycles followed by one step on idle inputs (its outputs returned), when the
    /// `n` cycles hold no event (`n <= next_event()`): what a switch does at a timer fire it applied late.
    /// The same state and outputs as the two calls (a property test compares them), without their
    /// separate checks: with no event in the skip only the timer moves, and an idle step moves neither ABR
    /// nor the free count.
    #[inline]
    pub fn skip_then_idle_step(&mut self, n: u64) -> Out {
        debug_assert!(
            self.next_event().is_some_and(|e| e >= n),
            "an event inside the skip"
        );
        // No event in the skip: no send, so the timer counts down by `n` (and is at least `n`).
        self.timer_q -= n as u16;
        let fccl = self.fccl();
        let send = self.send_due(fccl);
        if send {
            self.timer_q = self.cfg.fc_interval - 1;
            self.last_fccl_q = fccl;
        } else {
            self.timer_q = self.timer_q.saturating_sub(1);
        }
        Out {
            abr_o: self.abr_q,
            free_o: self.free_q,
            fccl_o: fccl,
            fc_send_o: send,
            overflow_o: false,
            drain_err_o: false,
            cfg_err_o: 0,
        }
    }

    /// The FCCL a flow-control packet sent now would carry: `(abr_q + min(free_q, fccl_cap)) mod 4096`
    /// (`fccl_o` of a step now).
    pub fn fccl_now(&self) -> u16 {
        self.fccl()
    }

    fn fccl(&self) -> u16 {
        self.abr_q.wrapping_add(self.free_q.min(self.cfg.fccl_cap)) & FC_MASK
    }

    /// Whether blocks received in idle cycles may be counted late with [`CreditRx::absorb`]: the advertised
    /// credit cannot move when a block arrives (`fccl_cap` covers the whole buffer, so FCCL = ABR + free
    /// stays put as ABR rises and free falls by the same amount) and `blocks` more cannot overflow.
    pub fn can_absorb(&self, blocks: u16) -> bool {
        self.cfg.fccl_cap >= self.cfg.buf_blocks && blocks <= self.free_q
    }

    /// Counts `blocks` received in earlier cycles whose steps were otherwise idle (or skipped), as those
    /// steps would have: exact when [`CreditRx::can_absorb`] held for them (then a block changes no output:
    /// not FCCL, so not `fc_send_o`; not `overflow_o`), and it commutes with [`Clocked::skip`]. This lets a
    /// switch or endpoint count a packet's blocks at its next event instead of waking for each block.
    pub fn absorb(&mut self, blocks: u16) {
        debug_assert!(self.can_absorb(blocks), "absorb past the free blocks");
        self.abr_q = self.abr_q.wrapping_add(blocks) & FC_MASK;
        self.free_q -= blocks.min(self.free_q);
    }

    fn send_due(&self, fccl: u16) -> bool {
        self.timer_q == 0
            || (self.cfg.policy == FcPolicy::PeriodicAndOnChange && fccl != self.last_fccl_q)
    }
}

impl Clocked for CreditRx {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        if !i.rst_ni {
            self.reset();
            return Out {
                abr_o: 0,
                free_o: self.cfg.buf_blocks,
                fccl_o: self.fccl(),
                ..Out::default()
            };
        }
        let blk_rx = u16::from(i.blk_rx_i) & mask(BLK_WIDTH) as u16;
        let blk_free = u16::from(i.blk_free_i) & mask(BLK_WIDTH) as u16;
        let fccl = self.fccl();
        let send = self.send_due(fccl);
        let free_mid = self.free_q.saturating_sub(blk_rx);
        let held = self.cfg.buf_blocks.saturating_sub(free_mid);
        let out = Out {
            abr_o: self.abr_q,
            free_o: self.free_q,
            fccl_o: fccl,
            fc_send_o: send,
            overflow_o: blk_rx > self.free_q,
            drain_err_o: blk_free > held,
            cfg_err_o: 0,
        };
        let abr_base = if i.fc_valid_i {
            i.fc_fctbs_i & FC_MASK
        } else {
            self.abr_q
        };
        self.abr_q = abr_base.wrapping_add(blk_rx) & FC_MASK;
        self.free_q = free_mid + blk_free.min(held);
        if send {
            self.timer_q = self.cfg.fc_interval - 1;
            self.last_fccl_q = fccl;
        } else {
            self.timer_q = self.timer_q.saturating_sub(1);
        }
        out
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn next_event(&self) -> Option<u64> {
        if self.send_due(self.fccl()) {
            Some(0)
        } else {
            Some(self.timer_q.into())
        }
    }

    fn skip(&mut self, mut n: u64) {
        if n == 0 {
            return;
        }
        if self.send_due(self.fccl()) {
            let idle = self.idle_input();
            self.step(&idle);
            n -= 1;
        }
        // Idle from here: FCCL is constant and equals last_fccl_q, so only the periodic timer fires.
        let t = u64::from(self.timer_q);
        if n <= t {
            self.timer_q = (t - n) as u16;
        } else {
            let period = u64::from(self.cfg.fc_interval);
            let after_reload = n - t - 1;
            self.timer_q = (period - 1 - after_reload % period) as u16;
            self.last_fccl_q = self.fccl();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run() -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    /// `validate` and the RTL's rule (`cfg_err`) refuse the same configurations, over every edge of each
    /// range the ports carry.
    #[test]
    fn validate_refuses_exactly_the_cfg_err_configurations() {
        for buf_blocks in [0, 1, 2, u16::MAX] {
            for fc_interval in [0, 1, 2, u16::MAX] {
                for fccl_cap in [0, 1, 2047, 2048, 2049, 4095] {
                    for policy in [FcPolicy::Periodic, FcPolicy::PeriodicAndOnChange] {
                        let c = Config {
                            buf_blocks,
                            fc_interval,
                            policy,
                            fccl_cap,
                        };
                        assert_eq!(c.validate().is_err(), c.cfg_err() != 0, "{c:?}");
                    }
                }
            }
        }
        let c = |fccl_cap| Config {
            fccl_cap,
            ..Config::new(0, 0)
        };
        assert_eq!(c(2048).cfg_err(), CFG_ERR_BUF_ZERO | CFG_ERR_INTERVAL_ZERO);
        assert_eq!(
            c(0).cfg_err(),
            CFG_ERR_BUF_ZERO | CFG_ERR_INTERVAL_ZERO | CFG_ERR_CAP_ZERO
        );
        assert_eq!(
            c(2049).cfg_err(),
            CFG_ERR_BUF_ZERO | CFG_ERR_INTERVAL_ZERO | CFG_ERR_CAP_ABOVE
        );
    }

    #[test]
    fn first_packet_after_reset_then_periodic() {
        let mut rx = CreditRx::new(Config::new(100, 4)).unwrap();
        let sends: Vec<bool> = (0..10).map(|_| rx.step(&run()).fc_send_o).collect();
        assert_eq!(
            sends,
            [true, false, false, false, true, false, false, false, true, false]
        );
        assert_eq!(rx.step(&run()).fccl_o, 100);
    }

    #[test]
    fn fccl_is_capped_at_2048_ahead() {
        let mut rx = CreditRx::new(Config::new(5000, 10)).unwrap();
        let o = rx.step(&run());
        assert_eq!((o.free_o, o.fccl_o), (5000, 2048));
        rx.abr_q = 4000;
        // 4000 + 2048 = 6048 = 1952 mod 4096.
        assert_eq!(rx.step(&run()).fccl_o, 1952);
        assert!(CreditRx::new(Config {
            fccl_cap: 2049,
            ..Config::new(10, 10)
        })
        .is_err());
    }

    #[test]
    fn receive_drain_and_abr_wrap() {
        let mut rx = CreditRx::new(Config::new(200, 1000)).unwrap();
        rx.abr_q = 4090;
        rx.step(&In {
            blk_rx_i: 10,
            ..run()
        });
        assert_eq!((rx.abr_q, rx.free_q), (4, 190));
        let o = rx.step(&In {
            blk_free_i: 4,
            ..run()
        });
        // fccl = 4 + 190 = 194.
        assert_eq!((o.abr_o, o.free_o, o.fccl_o), (4, 190, 194));
        assert_eq!(rx.free_q, 194);
        // FC packet with FCTBS 50 and 3 blocks the same cycle: the blocks count after it.
        rx.step(&In {
            fc_valid_i: true,
            fc_fctbs_i: 50,
            blk_rx_i: 3,
            ..run()
        });
        assert_eq!((rx.abr_q, rx.free_q), (53, 191));
    }

    #[test]
    fn overflow_and_drain_error_flags() {
        let mut rx = CreditRx::new(Config::new(8, 1000)).unwrap();
        let o = rx.step(&In {
            blk_rx_i: 9,
            ..run()
        });
        assert!(o.overflow_o && !o.drain_err_o);
        assert_eq!(rx.free_q, 0);
        let o = rx.step(&In {
            blk_free_i: 9,
            ..run()
        });
        assert!(o.drain_err_o && !o.overflow_o);
        assert_eq!(rx.free_q, 8);
        // Receive 5 and drain the same 5 in one cycle: legal cut-through.
        let o = rx.step(&In {
            blk_rx_i: 5,
            blk_free_i: 5,
            ..run()
        });
        assert!(!o.overflow_o && !o.drain_err_o);
        assert_eq!(rx.free_q, 8);
    }

    #[test]
    fn on_change_policy_sends_when_fccl_moves() {
        let mut rx = CreditRx::new(Config {
            policy: FcPolicy::PeriodicAndOnChange,
            ..Config::new(100, 50)
        })
        .unwrap();
        assert!(rx.step(&run()).fc_send_o);
        assert!(
            !rx.step(&In {
                blk_rx_i: 2,
                ..run()
            })
            .fc_send_o
        );
        // ABR +2 and free -2: FCCL unchanged, no packet. Draining moves FCCL: a packet the next cycle.
        assert!(
            !rx.step(&In {
                blk_free_i: 2,
                ..run()
            })
            .fc_send_o
        );
        let o = rx.step(&run());
        assert!(o.fc_send_o);
        assert_eq!(o.fccl_o, 102);
        assert!(!rx.step(&run()).fc_send_o);
        // Periodic mode would have waited for the timer.
        let mut p = CreditRx::new(Config::new(100, 50)).unwrap();
        p.step(&run());
        p.step(&In {
            blk_free_i: 0,
            blk_rx_i: 2,
            ..run()
        });
        p.step(&In {
            blk_free_i: 2,
            ..run()
        });
        assert!(!p.step(&run()).fc_send_o);
    }

    #[test]
    fn reset_gates_send() {
        let mut rx = CreditRx::new(Config::new(30, 3)).unwrap();
        rx.step(&In {
            blk_rx_i: 4,
            ..run()
        });
        let o = rx.step(&In {
            rst_ni: false,
            blk_rx_i: 1,
            ..In::default()
        });
        assert_eq!(
            (o.fc_send_o, o.abr_o, o.free_o, o.fccl_o),
            (false, 0, 30, 30)
        );
        assert_eq!((rx.abr_q, rx.free_q, rx.timer_q), (0, 30, 0));
    }

    #[test]
    fn config_errors() {
        assert_eq!(
            CreditRx::new(Config::new(0, 1)).unwrap_err().to_string(),
            "buf_blocks (0) is invalid: a buffer holds at least one block"
        );
        assert!(CreditRx::new(Config::new(1, 0)).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Blocks arriving one per cycle in otherwise idle cycles and counted late with `absorb` (then a
        /// `skip`) leave the same state as stepping them, whenever `can_absorb` allowed it.
        #[test]
        fn absorb_equals_stepping_blocks(
            buf in 1u16..=600,
            interval in 1u16..=50,
            prefix in proptest::collection::vec((0u8..8, 0u8..8), 0..20),
            arrivals in proptest::collection::vec(any::<bool>(), 1..80),
        ) {
            let mut a = CreditRx::new(Config {
                policy: FcPolicy::PeriodicAndOnChange,
                ..Config::new(buf, interval)
            }).unwrap();
            for &(rx_b, fr) in &prefix {
                a.step(&In { rst_ni: true, blk_rx_i: rx_b.min(a.free_q as u8), blk_free_i: fr, ..run() });
            }
            let total = arrivals.iter().filter(|&&x| x).count() as u16;
            prop_assume!(a.can_absorb(total));
            let mut b = a.clone();
            let mut outs_a = Vec::new();
            for &x in &arrivals {
                outs_a.push(a.step(&In { blk_rx_i: u8::from(x), ..run() }).fc_send_o);
            }
            let mut c = b.clone();
            let mut outs_c = Vec::new();
            for _ in &arrivals {
                outs_c.push(c.step(&run()).fc_send_o);
            }
            // The blocks change no send decision...
            prop_assert_eq!(outs_a, outs_c);
            // ...and counting them late gives the stepped state.
            b.absorb(total);
            b.skip(arrivals.len() as u64);
            prop_assert_eq!(a, b);
        }

        /// `skip_then_idle_step(n)` equals `skip(n)` and an idle step, for every `n` up to the next event,
        /// after a random busy prefix, under both policies.
        #[test]
        fn skip_then_idle_step_equals_the_two_calls(
            buf in 1u16..=600,
            interval in 1u16..=50,
            on_change in any::<bool>(),
            prefix in proptest::collection::vec((0u8..8, 0u8..8, any::<bool>()), 0..20),
            frac in 0u64..=100,
        ) {
            let policy = if on_change { FcPolicy::PeriodicAndOnChange } else { FcPolicy::Periodic };
            let mut a = CreditRx::new(Config { policy, ..Config::new(buf, interval) }).unwrap();
            for &(rx_b, fr, fc) in &prefix {
                a.step(&In {
                    rst_ni: true,
                    blk_rx_i: rx_b.min(a.free_q as u8),
                    blk_free_i: fr,
                    fc_valid_i: fc,
                    fc_fctbs_i: u16::from(rx_b) * 7,
                });
            }
            let n = a.next_event().unwrap() * frac / 100;
            let mut b = a.clone();
            a.skip(n);
            let oa = a.step(&run());
            let ob = b.skip_then_idle_step(n);
            prop_assert_eq!(oa, ob);
            prop_assert_eq!(a, b);
        }

        /// `skip(n)` leaves the same state as `n` idle steps, after a random busy prefix.
        #[test]
        fn skip_equals_idle_steps(
            buf in 1u16..=3000,
            interval in 1u16..=200,
            on_change in any::<bool>(),
            prefix in proptest::collection::vec((0u8..8, 0u8..8, any::<bool>(), 0u16..4096, any::<bool>()), 0..20),
            n in 0u64..700,
        ) {
            let mut a = CreditRx::new(Config {
                policy: if on_change { FcPolicy::PeriodicAndOnChange } else { FcPolicy::Periodic },
                ..Config::new(buf, interval)
            }).unwrap();
            for &(rx_b, fr, fc, fctbs, rst) in &prefix {
                a.step(&In { rst_ni: !rst, blk_rx_i: rx_b, fc_valid_i: fc, fc_fctbs_i: fctbs, blk_free_i: fr });
            }
            let mut b = a.clone();
            let ev = a.next_event().unwrap();
            let first = a.clone().step(&run());
            for k in 0..n {
                let o = b.step(&run());
                if k < ev {
                    prop_assert_eq!(o, first, "output changed at idle edge {} before next_event {}", k, ev);
                } else if k == ev {
                    prop_assert!(o.fc_send_o);
                }
            }
            a.skip(n);
            prop_assert_eq!(a, b);
        }
    }
}
