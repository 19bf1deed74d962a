//! `credit_tx`: the transmitter side of IB link-level flow control for one VL.
//!
//! The transmitter counts the 64-byte blocks it has sent (FCTBS, 12 bits, wrapping) and keeps the last credit
//! limit the receiver advertised (FCCL, 12 bits). A packet of `b` blocks may go when
//! `(FCCL - (FCTBS + b)) mod 4096 <= 2048` ([`CREDIT_WINDOW`]; IBTA vol1 7.9.4 as quoted in the reference,
//! unverified): modular distance at most half the counter range means "FCCL is at or ahead of FCTBS + b". This
//! is only unambiguous if the receiver never advertises more than 2048 blocks ahead, which `credit_rx` enforces.
//!
//! | port            | dir | width | meaning                                                              |
//! |-----------------|-----|-------|----------------------------------------------------------------------|
//! | `rst_ni`        | in  | 1     | synchronous reset, active low                                        |
//! | `fc_valid_i`    | in  | 1     | a flow-control packet for this VL arrived this cycle                 |
//! | `fc_fccl_i`     | in  | 12    | its FCCL                                                             |
//! | `req_valid_i`   | in  | 1     | a packet asks to be sent                                             |
//! | `req_blocks_i`  | in  | 7     | its length in 64-byte blocks (at most 66 at a 4096-byte MTU)         |
//! | `take_i`        | in  | 1     | the sender commits: the requested blocks are consumed                |
//! | `fctbs_o`       | out | 12    | total blocks sent, mod 4096 (`fctbs_q`)                              |
//! | `fccl_o`        | out | 12    | last FCCL received (`fccl_q`)                                        |
//! | `avail_o`       | out | 12    | [`avail`]: `d = (fccl_q - fctbs_q) mod 4096` if `d <= 2048`, else 0  |
//! | `send_ok_o`     | out | 1     | `req_valid_i` and the packet fits the credit (check above)           |
//! | `err_o`         | out | 1     | `take_i` without `send_ok_o`: a lossless-flow-control violation      |
//!
//! Designer choices, named:
//! - [`Config::fccl_reset`]: FCCL after reset. The default 0 means no credit until the first flow-control
//!   packet arrives (with FCTBS also 0, a packet of `b >= 1` blocks computes `4096 - b > 2048`).
//! - Same-cycle order: `send_ok_o` is checked against the FCCL held *before* this cycle's flow-control packet;
//!   the new FCCL takes effect from the next cycle (both are registered, as in the RTL).
//! - An erroneous take still advances FCTBS: FCTBS counts blocks that left, and they did leave.

use super::{check_max, mask, ConfigError};
use crate::clocked::Clocked;

/// Width of FCTBS and FCCL, bits.
pub const FC_WIDTH: u32 = 12;
/// Modulus of the flow-control counters.
pub const FC_MOD: u32 = 1 << FC_WIDTH;
/// A packet fits when `(FCCL - (FCTBS + blocks)) mod 4096` is at most this (half the counter range).
pub const CREDIT_WINDOW: u32 = 2048;

/// The credit left, in blocks: `d = (fccl - fctbs) mod 4096` when `d` is within the [`CREDIT_WINDOW`], else 0.
/// A receiver never advertises more than the window ahead, so a larger `d` is an FCCL that trails the blocks
/// already sent (legal on the wire while blocks are in flight): no credit, not about 4,000 blocks of it, which
/// `cong_detect` would take for a root.
#[inline]
pub fn avail(fccl: u16, fctbs: u16) -> u16 {
    let d = fccl.wrapping_sub(fctbs) & (FC_MOD - 1) as u16;
    if u32::from(d) <= CREDIT_WINDOW {
        d
    } else {
        0
    }
}
/// Width of `req_blocks_i`, bits.
pub const BLOCKS_WIDTH: u32 = 7;

/// Static configuration (held-constant ports in the RTL). The default is `fccl_reset = 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Config {
    /// FCCL reset value (12 bits). 0: no credit until the first flow-control packet.
    pub fccl_reset: u16,
}

impl Config {
    /// Checks the settings fit their widths.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max("fccl_reset", self.fccl_reset.into(), (FC_MOD - 1).into())
    }
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// A flow-control packet arrived.
    pub fc_valid_i: bool,
    /// Its FCCL (12 bits; upper bits ignored).
    pub fc_fccl_i: u16,
    /// A packet requests to be sent.
    pub req_valid_i: bool,
    /// Its length in 64-byte blocks (7 bits; upper bits ignored).
    pub req_blocks_i: u8,
    /// The sender commits the requested packet.
    pub take_i: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Blocks sent, mod 4096.
    pub fctbs_o: u16,
    /// Last FCCL received.
    pub fccl_o: u16,
    /// Credit left in blocks, mod 4096.
    pub avail_o: u16,
    /// The requested packet fits the credit.
    pub send_ok_o: bool,
    /// A take without credit happened this cycle.
    pub err_o: bool,
}

/// The transmitter's credit counters for one VL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditTx {
    cfg: Config,
    /// Total blocks sent mod 4096.
    pub fctbs_q: u16,
    /// Last FCCL received.
    pub fccl_q: u16,
}

/// `(fccl - (fctbs + blocks)) mod 4096 <= 2048`.
pub fn fits(fccl: u16, fctbs: u16, blocks: u8) -> bool {
    let need = (u32::from(fctbs) + u32::from(blocks)) & (FC_MOD - 1);
    (u32::from(fccl).wrapping_sub(need) & (FC_MOD - 1)) <= CREDIT_WINDOW
}

impl CreditTx {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(CreditTx {
            cfg,
            fctbs_q: 0,
            fccl_q: cfg.fccl_reset,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
}

impl Clocked for CreditTx {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        let m = mask(FC_WIDTH) as u16;
        if !i.rst_ni {
            self.fctbs_q = 0;
            self.fccl_q = self.cfg.fccl_reset;
            return Out {
                fctbs_o: 0,
                fccl_o: self.cfg.fccl_reset,
                avail_o: avail(self.cfg.fccl_reset, 0),
                send_ok_o: false,
                err_o: false,
            };
        }
        let blocks = i.req_blocks_i & mask(BLOCKS_WIDTH) as u8;
        let send_ok = i.req_valid_i && fits(self.fccl_q, self.fctbs_q, blocks);
        let out = Out {
            fctbs_o: self.fctbs_q,
            fccl_o: self.fccl_q,
            avail_o: avail(self.fccl_q, self.fctbs_q),
            send_ok_o: send_ok,
            err_o: i.take_i && !send_ok,
        };
        if i.take_i {
            self.fctbs_q = self.fctbs_q.wrapping_add(blocks.into()) & m;
        }
        if i.fc_valid_i {
            self.fccl_q = i.fc_fccl_i & m;
        }
        out
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn skip(&mut self, _n: u64) {
        // Nothing moves without a flow-control packet or a take.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::credit_rx::{self, CreditRx, FcPolicy};
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn run() -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn req(blocks: u8, take: bool) -> In {
        In {
            req_valid_i: true,
            req_blocks_i: blocks,
            take_i: take,
            ..run()
        }
    }

    fn tx_at(fctbs: u16, fccl: u16) -> CreditTx {
        let mut tx = CreditTx::new(Config::default()).unwrap();
        tx.fctbs_q = fctbs;
        tx.fccl_q = fccl;
        tx
    }

    #[test]
    fn no_credit_before_first_fc_packet() {
        let mut tx = CreditTx::new(Config::default()).unwrap();
        let o = tx.step(&req(1, false));
        assert!(!o.send_ok_o);
        assert_eq!(o.avail_o, 0);
        // FCCL 10 arrives; a 10-block packet is checked against the old FCCL 0 in the same cycle.
        let o = tx.step(&In {
            fc_valid_i: true,
            fc_fccl_i: 10,
            ..req(10, false)
        });
        assert!(!o.send_ok_o, "same-cycle FC packet must not count yet");
        let o = tx.step(&req(10, true));
        assert!(o.send_ok_o && !o.err_o);
        assert_eq!(o.avail_o, 10);
        let o = tx.step(&req(1, false));
        assert_eq!((o.fctbs_o, o.avail_o, o.send_ok_o), (10, 0, false));
    }

    #[test]
    fn same_cycle_fc_and_take_uses_old_fccl() {
        // fctbs 100, fccl 105: a 5-block take fits the old FCCL; a new FCCL 90 the same cycle is latched after.
        let mut tx = tx_at(100, 105);
        let o = tx.step(&In {
            fc_valid_i: true,
            fc_fccl_i: 90,
            ..req(5, true)
        });
        assert!(o.send_ok_o && !o.err_o);
        assert_eq!((tx.fctbs_q, tx.fccl_q), (105, 90));
        // And the other way: old FCCL too small, new one large: the take is an error.
        let mut tx = tx_at(100, 104);
        let o = tx.step(&In {
            fc_valid_i: true,
            fc_fccl_i: 400,
            ..req(5, true)
        });
        assert!(!o.send_ok_o && o.err_o);
        assert_eq!((tx.fctbs_q, tx.fccl_q), (105, 400));
    }

    /// A trailing FCCL (behind the blocks already sent) is no credit, not a wrapped 4,000 blocks; the window
    /// edge itself (2048 ahead) is still credit.
    #[test]
    fn a_trailing_fccl_reads_as_no_credit() {
        assert_eq!(avail(5, 10), 0, "FCCL 5 blocks behind FCTBS");
        assert_eq!(avail(4, 4090), 10, "ahead across the wrap");
        assert_eq!(avail(2048, 0), 2048);
        assert_eq!(avail(2049, 0), 0);
        let mut tx = tx_at(100, 90);
        let o = tx.step(&req(1, false));
        assert_eq!((o.avail_o, o.send_ok_o), (0, false));
        // A reset FCCL beyond the window reads the same way.
        let mut tx = CreditTx::new(Config { fccl_reset: 3000 }).unwrap();
        let o = tx.step(&In {
            rst_ni: false,
            ..In::default()
        });
        assert_eq!(o.avail_o, 0);
    }

    #[test]
    fn wrap_fctbs_4090_plus_10() {
        // FCTBS 4090 + 10 blocks = 4100 = 4 mod 4096. FCCL 4 fits exactly, FCCL 3 does not.
        let mut tx = tx_at(4090, 4);
        let o = tx.step(&req(10, true));
        assert!(o.send_ok_o);
        assert_eq!(o.avail_o, 10); // (4 - 4090) mod 4096
        assert_eq!(tx.fctbs_q, 4);
        let mut tx = tx_at(4090, 3);
        assert!(!tx.step(&req(10, false)).send_ok_o);
        // FCCL wrapped far ahead: 4090 + 10 -> 4, FCCL 2052: distance 2048, the largest that fits.
        assert!(tx_at(4090, 2052).step(&req(10, false)).send_ok_o);
        // Distance 2049 reads as "behind": refused.
        assert!(!tx_at(4090, 2053).step(&req(10, false)).send_ok_o);
    }

    #[test]
    fn fits_boundaries() {
        assert!(fits(2048, 0, 0));
        assert!(!fits(2049, 0, 0));
        assert!(fits(0, 4095, 1));
        assert!(!fits(0, 4095, 2));
        assert!(fits(100, 90, 10));
        assert!(!fits(100, 91, 10));
    }

    #[test]
    fn take_without_request_is_error_and_widths_mask() {
        let mut tx = tx_at(0, 50);
        let o = tx.step(&In {
            take_i: true,
            req_blocks_i: 3,
            ..run()
        });
        assert!(o.err_o && !o.send_ok_o);
        assert_eq!(tx.fctbs_q, 3);
        // 0x85 masks to 5 blocks; 0xF00A masks to FCCL 10.
        let mut tx = tx_at(0, 50);
        tx.step(&In {
            fc_valid_i: true,
            fc_fccl_i: 0xF00A,
            ..req(0x85, true)
        });
        assert_eq!((tx.fctbs_q, tx.fccl_q), (5, 10));
    }

    #[test]
    fn reset_clears_and_gates_strobes() {
        let mut tx = CreditTx::new(Config { fccl_reset: 7 }).unwrap();
        tx.fctbs_q = 99;
        let o = tx.step(&In {
            rst_ni: false,
            ..req(1, true)
        });
        assert_eq!(
            o,
            Out {
                fctbs_o: 0,
                fccl_o: 7,
                avail_o: 7,
                send_ok_o: false,
                err_o: false
            }
        );
        assert_eq!((tx.fctbs_q, tx.fccl_q), (0, 7));
        assert!(CreditTx::new(Config { fccl_reset: 4096 }).is_err());
    }

    /// One transmitter and one receiver joined by a link with latency: data blocks and the transmitter's FCTBS
    /// packets travel one pipeline (so FCTBS never overtakes data), the receiver's FCCL packets another.
    fn pair_run(
        seed: u64,
        buf: u16,
        interval: u16,
        on_change: bool,
        lat_data: usize,
        lat_fc: usize,
        cycles: u32,
    ) -> Result<u64, TestCaseError> {
        let mut rng = seed | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut tx = CreditTx::new(Config::default()).unwrap();
        let mut rx = CreditRx::new(credit_rx::Config {
            buf_blocks: buf,
            fc_interval: interval,
            policy: if on_change {
                FcPolicy::PeriodicAndOnChange
            } else {
                FcPolicy::Periodic
            },
            fccl_cap: credit_rx::FCCL_CAP,
        })
        .unwrap();
        // (blocks, fctbs packet) per cycle towards the receiver; FCCL packets towards the transmitter.
        let mut fwd: VecDeque<(u8, Option<u16>)> = (0..lat_data).map(|_| (0, None)).collect();
        let mut back: VecDeque<Option<(u16, u64)>> = (0..lat_fc).map(|_| None).collect();
        let (mut sent_abs, mut recv_abs, mut drained_abs, mut granted_abs) =
            (0u64, 0u64, 0u64, 0u64);
        let mut want: u8 = 0;
        for cyc in 0..cycles {
            // Transmitter side.
            if want == 0 && next() % 4 != 0 {
                want = (next() % 66 + 1) as u8;
            }
            let fcp = back.pop_front().unwrap();
            let probe = tx.clone().step(&In {
                req_valid_i: want > 0,
                req_blocks_i: want,
                ..run()
            });
            let take = probe.send_ok_o;
            let o = tx.step(&In {
                fc_valid_i: fcp.is_some(),
                fc_fccl_i: fcp.map_or(0, |p| p.0),
                req_valid_i: want > 0,
                req_blocks_i: want,
                take_i: take,
                ..run()
            });
            prop_assert!(!o.err_o);
            if let Some((_, abs)) = fcp {
                granted_abs = granted_abs.max(abs);
            }
            let fctbs_pkt = (cyc % 97 == 0).then_some(o.fctbs_o);
            if take {
                sent_abs += u64::from(want);
                prop_assert!(
                    sent_abs <= granted_abs,
                    "sent {} past granted {}",
                    sent_abs,
                    granted_abs
                );
                fwd.push_back((want, fctbs_pkt));
                want = 0;
            } else {
                fwd.push_back((0, fctbs_pkt));
            }
            // Receiver side.
            let (blk, fctbs) = fwd.pop_front().unwrap();
            let occupied = recv_abs - drained_abs;
            let drain = if next() % 3 == 0 {
                (next() % 8).min(occupied + u64::from(blk)) as u8
            } else {
                0
            };
            let ro = rx.step(&credit_rx::In {
                rst_ni: true,
                blk_rx_i: blk,
                fc_valid_i: fctbs.is_some(),
                fc_fctbs_i: fctbs.unwrap_or(0),
                blk_free_i: drain,
            });
            prop_assert!(!ro.overflow_o && !ro.drain_err_o);
            prop_assert_eq!(u64::from(ro.abr_o), recv_abs % 4096);
            let free = u64::from(buf) - (recv_abs - drained_abs);
            prop_assert_eq!(u64::from(ro.free_o), free);
            let fccl_abs = recv_abs + free.min(2048);
            prop_assert_eq!(u64::from(ro.fccl_o), fccl_abs % 4096);
            back.push_back(ro.fc_send_o.then_some((ro.fccl_o, fccl_abs)));
            recv_abs += u64::from(blk);
            drained_abs += u64::from(drain);
            prop_assert!(recv_abs - drained_abs <= u64::from(buf));
        }
        Ok(sent_abs)
    }

    #[test]
    fn pair_moves_traffic_across_many_wraps() {
        // 40,000 cycles with a 3000-block buffer: the 12-bit counters wrap many times.
        let sent = pair_run(7, 3000, 50, false, 20, 20, 40_000).unwrap();
        assert!(sent > 5 * 4096, "sent only {sent}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// The transmitter never sends past the credit granted and the receiver never overflows, across
        /// 12-bit wrap-around, for random buffers, FC intervals, link latencies and traffic.
        #[test]
        fn tx_never_sends_past_fccl(
            seed in any::<u64>(),
            buf in 1u16..=4000,
            interval in 1u16..=300,
            on_change in any::<bool>(),
            lat_data in 1usize..=40,
            lat_fc in 1usize..=40,
        ) {
            pair_run(seed, buf, interval, on_change, lat_data, lat_fc, 3000)?;
        }
    }
}
