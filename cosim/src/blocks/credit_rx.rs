//! `credit_rx` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus keeps a shadow of the buffer occupancy it causes: busy phases receive 1-66 blocks when they
//! fit and drain up to what is held (cut-through included), stall phases receive without draining until the
//! buffer is full (back-pressure; FCCL stops moving), drain phases only drain, idle phases drive nothing.
//! Now and then it overflows the buffer or drains too much, to exercise the error flags, and puts garbage
//! above the 7-bit ports. Flow-control packets mostly carry the FCTBS a lossless link would (ABR unchanged),
//! sometimes a random one (resynchronisation after loss), often in the same cycle as arriving blocks.
//! Configurations mix small and large buffers (so the 2048 cap binds or not), short and long FC intervals,
//! both policies, and, in half of them, a cap below the buffer size (so the cap binds in most). Rare resets
//! of 1-3 cycles, with noise on every other input.

use super::{held, mask, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::impl_ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::credit_rx::{Config, CreditRx, FcPolicy, In, Out, BLK_WIDTH, FCCL_CAP};

impl_ports!(In {
    rst_ni,
    blk_rx_i,
    fc_valid_i,
    fc_fctbs_i,
    blk_free_i
});
impl_ports!(Out {
    abr_o,
    free_o,
    fccl_o,
    fc_send_o,
    overflow_o,
    drain_err_o,
    cfg_err_o
});

/// `credit_rx` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct CreditRxBlock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Busy,
    Stall,
    Drain,
    Idle,
}

/// Seeded random stimulus for `credit_rx` (see the module docs).
#[derive(Debug, Clone)]
pub struct CreditRxStim {
    rng: Rng,
    buf: u64,
    /// Blocks held in the buffer, as the stimulus caused them.
    occ: u64,
    /// ABR as a lossless link would leave it.
    abr: u16,
    mode: Mode,
    mode_left: u32,
    rst_left: u32,
}

impl CreditRxStim {
    /// Stimulus for a block configured with `cfg`, starting from reset state.
    pub fn new(seed: u64, cfg: Config) -> Self {
        CreditRxStim {
            rng: Rng::new(seed),
            buf: cfg.buf_blocks.into(),
            occ: 0,
            abr: 0,
            mode: Mode::Busy,
            mode_left: 0,
            rst_left: 0,
        }
    }
}

/// From the low 32 bits of `v`: 0 with probability 1/2, else uniform in `1..=n` (`1 <= n <= 2^31`).
#[inline]
fn coin_amount(v: u64, n: u64) -> u64 {
    (Rng::scale(v, 2 * n) + 1).saturating_sub(n)
}

impl Iterator for CreditRxStim {
    type Item = In;

    // Inlined into the lockstep loop: the call and its register saves were a tenth of the stimulus.
    #[inline(always)]
    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        let blk_m = mask(BLK_WIDTH) as u64;
        // One draw decides every rarer event of the cycle (bit fields of `ev`), a second (`amt`) the block
        // counts (received from its low half, drained from its high half, each 0 half the time). Both are drawn every cycle
        // whatever happens in it, so the generator's chain runs ahead of the decisions instead of waiting
        // for them: the stimulus costs a fraction of a model eval, and the benchmark measures the
        // co-simulation, not the random numbers.
        let ev = r.next_u64();
        let amt = r.next_u64();
        let field = |at: u32, bits: u32| (ev >> at) & ((1 << bits) - 1);
        if self.rst_left == 0 && field(0, 17) == 0 {
            self.rst_left = 1 + (ev >> 62) as u32 % 3;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            self.occ = 0;
            self.abr = 0;
            let n = r.next_u64();
            return Some(In {
                rst_ni: false,
                blk_rx_i: n as u8,
                fc_valid_i: n & (1 << 8) != 0,
                fc_fctbs_i: (n >> 16) as u16,
                blk_free_i: (n >> 32) as u8,
            });
        }
        if self.mode_left == 0 {
            self.mode = match r.below(10) {
                0..=4 => Mode::Busy,
                5..=6 => Mode::Stall,
                7 => Mode::Drain,
                _ => Mode::Idle,
            };
            self.mode_left = r.range(1, 300) as u32;
        }
        self.mode_left -= 1;

        // Receive in half the cycles of busy and stall phases: 1-66 blocks that fit or, when the buffer is
        // full, now and then 1-66 that overflow it. The coin flip is part of the amount (`coin_amount`), not
        // a branch: a branch on it would be mispredicted in every other cycle.
        let free = self.buf - self.occ;
        let busy_stall = matches!(self.mode, Mode::Busy | Mode::Stall);
        let mut rx = 0;
        if busy_stall && (free > 0 || field(18, 6) == 0) {
            rx = coin_amount(amt, if free > 0 { free.min(66) } else { 66 });
        }
        if busy_stall && field(24, 10) == 0 {
            rx = r.below(128); // anything the port can carry
        }
        let occ_mid = (self.occ + rx).min(self.buf);
        let mut drain = 0;
        if matches!(self.mode, Mode::Busy | Mode::Drain) && occ_mid > 0 {
            drain = coin_amount(amt >> 32, occ_mid.min(66));
        }
        if field(34, 10) == 0 {
            drain = r.below(128); // may drain more than is held
        }
        let mut i = In {
            rst_ni: true,
            blk_rx_i: rx as u8,
            blk_free_i: drain as u8,
            ..In::default()
        };
        if field(44, 6) == 0 {
            i.blk_rx_i |= 0x80; // beyond the 7-bit port
        }
        if field(50, 6) == 0 {
            i.blk_free_i |= 0x80;
        }
        if field(56, 5) == 0 {
            i.fc_valid_i = true;
            i.fc_fctbs_i = if field(61, 3) != 0 {
                self.abr
            } else {
                r.next_u64() as u16
            };
            self.abr = i.fc_fctbs_i;
        } else if self.mode == Mode::Idle {
            i.fc_fctbs_i = (ev >> 8) as u16; // floats while not valid
        }
        let rx_in = u64::from(i.blk_rx_i) & blk_m;
        self.abr = self.abr.wrapping_add(rx_in as u16) & 0xfff;
        let occ_mid = (self.occ + rx_in).min(self.buf);
        self.occ = occ_mid - (u64::from(i.blk_free_i) & blk_m).min(occ_mid);
        Some(i)
    }
}

impl Block for CreditRxBlock {
    const NAME: &'static str = "credit_rx";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CreditRx;
    type Stim = CreditRxStim;
    type Cover = CreditRxCover;

    fn model(cfg: &Config) -> Result<CreditRx, CosimError> {
        CreditRx::new(*cfg).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 6;
    /// A configuration's fresh model and reset cost as much as a few thousand cycles of stepping, so a
    /// segment this long keeps them a small part of the run (cosim/README.md, Speed).
    const SEGMENT: u64 = 32_768;

    fn configure(seed: u64, corner: Option<u32>) -> (Config, CreditRxStim) {
        let mut r = Rng::new(seed ^ 0xc0f1_7000);
        let buf_blocks = match r.below(20) {
            0..=4 => r.range(1, 300),
            5..=11 => r.range(301, 4000),
            _ => r.range(4001, 65535),
        } as u16;
        let fc_interval = match r.below(10) {
            0..=5 => r.range(1, 64),
            6..=8 => r.range(65, 2000),
            _ => r.range(2001, 65535),
        } as u16;
        // Half the configurations cap the credit below the buffer size, so the cap binds in most of them.
        let cap_limit = u64::from(buf_blocks.saturating_sub(1).clamp(1, FCCL_CAP));
        let mut cfg = Config {
            buf_blocks,
            fc_interval,
            policy: if r.pct(50) {
                FcPolicy::Periodic
            } else {
                FcPolicy::PeriodicAndOnChange
            },
            fccl_cap: if r.pct(50) {
                FCCL_CAP
            } else {
                r.range(1, cap_limit) as u16
            },
        };
        // The corners: smallest and largest buffer, cap and interval; a cap far below the buffer (it binds
        // in every cycle); a short periodic timer (it expires every few cycles).
        match corner {
            Some(0) => {
                (cfg.buf_blocks, cfg.fccl_cap, cfg.fc_interval) = (1, 1, 1);
                cfg.policy = FcPolicy::Periodic;
            }
            Some(1) => {
                (cfg.buf_blocks, cfg.fccl_cap, cfg.fc_interval) = (u16::MAX, FCCL_CAP, u16::MAX);
                cfg.policy = FcPolicy::PeriodicAndOnChange;
            }
            Some(2) => {
                cfg.buf_blocks = r.range(64, 65535) as u16;
                cfg.fccl_cap = r.range(1, 8) as u16;
            }
            Some(3) => {
                cfg.fc_interval = r.range(1, 4) as u16;
                cfg.policy = FcPolicy::Periodic;
            }
            Some(4) => {
                cfg.fc_interval = u16::MAX;
                cfg.policy = FcPolicy::Periodic;
            }
            Some(_) => {
                cfg.buf_blocks = r.range(1, 8) as u16;
                cfg.fccl_cap = FCCL_CAP;
                cfg.fc_interval = r.range(1, 16) as u16;
                cfg.policy = FcPolicy::PeriodicAndOnChange;
            }
            None => {}
        }
        (cfg, CreditRxStim::new(seed, cfg))
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        vec![
            ("buf_blocks_i", cfg.buf_blocks.into()),
            ("fc_interval_i", cfg.fc_interval.into()),
            (
                "fc_on_change_i",
                Wide::from(cfg.policy == FcPolicy::PeriodicAndOnChange),
            ),
            ("fccl_cap_i", cfg.fccl_cap.into()),
        ]
    }

    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        Ok(Config {
            buf_blocks: held(v, "buf_blocks_i")? as u16,
            fc_interval: held(v, "fc_interval_i")? as u16,
            policy: if held(v, "fc_on_change_i")? != 0 {
                FcPolicy::PeriodicAndOnChange
            } else {
                FcPolicy::Periodic
            },
            fccl_cap: held(v, "fccl_cap_i")? as u16,
        })
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::CreditRxRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::CreditRxRtl, CosimError> {
        rtl::CreditRxRtl::new(cfg, bug)
    }
}

/// `credit_rx`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct CreditRxCover;

/// What `credit_rx`'s sampler keeps.
#[derive(Debug, Clone, Copy)]
pub struct CreditRxCovState {
    cap: u16,
    periodic: bool,
    /// FCCL of the last flow-control packet sent (`u16::MAX` after a reset: none yet).
    last_sent: u16,
    last_abr: u16,
}

impl Cover for CreditRxCover {
    const POINTS: &'static [Point] = &[
        bin("buf_min", "Buffer of 1 block"),
        bin("buf_max", "Buffer of 65,535 blocks"),
        bin("cap_min", "FCCL cap of 1 block"),
        bin("cap_max", "FCCL cap of 2,048 blocks"),
        bin("cap_below_buf", "cap below the buffer size (it can bind)"),
        bin("interval_min", "FC interval of 1 cycle"),
        bin("interval_max", "FC interval of 65,535 cycles"),
        bin("periodic", "periodic FC packets only"),
        bin("on_change", "FC packets on change and periodically"),
        event(
            "fccl_capped",
            "free blocks above the cap: the advertised credit is the cap's",
        ),
        event("buffer_full", "no block free"),
        event(
            "timer_send",
            "an FC packet sent by the periodic timer (FCCL unchanged)",
        ),
        event(
            "fc_with_rx",
            "an FC packet in the same cycle as received blocks",
        ),
        event(
            "abr_wrap",
            "ABR goes down: it wraps past 4,095 (12 bits) or an FC packet resynchronises it lower",
        ),
        event("overflow", "blocks received beyond the free space"),
        event("drain_error", "blocks drained beyond those held"),
        event("reset", "a reset cycle"),
        event(
            "rx_fills_buffer",
            "the blocks received exactly fill the free space (none on a full buffer)",
        ),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_FCCL_CAP", "fccl_capped"),
        ("BUG_ABR_LOAD", "fc_with_rx"),
        ("BUG_FC_TIMER", "timer_send"),
        ("BUG_OVERFLOW_AT_FULL", "rx_fills_buffer"),
        ("BUG_CAP_CHECK", "cap_max"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CreditRx;
    type State = CreditRxCovState;

    fn begin(c: &Config, h: &mut Hits) -> CreditRxCovState {
        count(h, 0, c.buf_blocks == 1);
        count(h, 1, c.buf_blocks == u16::MAX);
        count(h, 2, c.fccl_cap == 1);
        count(h, 3, c.fccl_cap == FCCL_CAP);
        count(h, 4, c.fccl_cap < c.buf_blocks);
        count(h, 5, c.fc_interval == 1);
        count(h, 6, c.fc_interval == u16::MAX);
        count(h, 7, c.policy == FcPolicy::Periodic);
        count(h, 8, c.policy == FcPolicy::PeriodicAndOnChange);
        CreditRxCovState {
            cap: c.fccl_cap,
            periodic: c.policy == FcPolicy::Periodic,
            last_sent: u16::MAX,
            last_abr: 0,
        }
    }

    #[inline(always)]
    fn sample(st: &mut CreditRxCovState, _: &CreditRx, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        count(h, 9, on & (o.free_o > st.cap));
        count(h, 10, on & (o.free_o == 0));
        count(
            h,
            11,
            on & o.fc_send_o & (st.periodic | (o.fccl_o == st.last_sent)),
        );
        count(h, 12, on & i.fc_valid_i & (i.blk_rx_i & 0x7f != 0));
        count(h, 13, on & (o.abr_o < st.last_abr));
        count(h, 14, on & o.overflow_o);
        count(h, 15, on & o.drain_err_o);
        count(h, 16, !on);
        count(h, 17, on & (u16::from(i.blk_rx_i & 0x7f) == o.free_o));
        st.last_sent = match (on, o.fc_send_o) {
            (false, _) => u16::MAX,
            (true, true) => o.fccl_o,
            (true, false) => st.last_sent,
        };
        st.last_abr = o.abr_o;
    }
}

/// The adapter to the Verilated `credit_rx`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::dut::Dut;
    use crate::ffi::{CreditRxIo, Rtl, CREDIT_RX_VARIANTS};

    /// The Verilated `credit_rx` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct CreditRxRtl {
        m: Rtl<CreditRxIo>,
        io: CreditRxIo,
    }

    impl CreditRxRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "credit_rx",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("credit_rx", CREDIT_RX_VARIANTS, bug)?;
            let io = CreditRxIo {
                buf_blocks_i: cfg.buf_blocks.into(),
                fc_interval_i: cfg.fc_interval.into(),
                fc_on_change_i: u32::from(cfg.policy == FcPolicy::PeriodicAndOnChange),
                fccl_cap_i: u32::from(cfg.fccl_cap) & 0xfff,
                ..CreditRxIo::default()
            };
            let mut s = CreditRxRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl CreditRxRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            io.blk_rx_i = u32::from(i.blk_rx_i) & mask(BLK_WIDTH);
            io.fc_valid_i = i.fc_valid_i.into();
            io.fc_fctbs_i = u32::from(i.fc_fctbs_i) & 0xfff;
            io.blk_free_i = u32::from(i.blk_free_i) & mask(BLK_WIDTH);
        }
    }

    crate::rtl_dut!(CreditRxRtl [CreditRxIo]: In => Out {
        abr_o: |v| *v as u16,
        free_o: |v| *v as u16,
        fccl_o: |v| *v as u16,
        fc_send_o: |v| *v != 0,
        overflow_o: |v| *v != 0,
        drain_err_o: |v| *v != 0,
        cfg_err_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coin_amount_is_zero_half_the_time_else_uniform_up_to_n() {
        let mut r = Rng::new(11);
        for n in [1u64, 5, 66] {
            let mut seen = vec![0u32; n as usize + 1];
            for _ in 0..40_000 {
                let v = coin_amount(r.next_u64(), n);
                assert!(v <= n, "n {n}: {v}");
                seen[v as usize] += 1;
            }
            // 40,000 draws: 20,000 zeros expected (sd 100); within 2%.
            assert!((19_600..=20_400).contains(&seen[0]), "n {n}: {seen:?}");
            let each = 20_000 / n as u32;
            // Each of 1..=n about 20,000 / n times: within 15% (at n = 66, 303 expected, sd about 17).
            assert!(
                seen[1..]
                    .iter()
                    .all(|&c| c.abs_diff(each) * 100 <= 15 * each),
                "n {n}: {seen:?}"
            );
        }
    }
}
