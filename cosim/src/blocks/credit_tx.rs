//! `credit_tx` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus behaves like a sender with a shadow of the credit state it creates (it decides every take
//! and every flow-control packet, so it knows FCTBS and FCCL without looking at the DUT): in busy phases it
//! requests packets of 1-66 blocks and takes them when they fit (now and then it takes without credit, to
//! exercise `err_o`); stall phases hold a request without taking (back-pressure); idle phases drive nothing
//! but noise on the data ports. Flow-control packets carry an FCCL mostly within 0-2200 blocks ahead of FCTBS
//! (so the 2048 window and 12-bit wrap are crossed constantly), sometimes right at the 2048 boundary and
//! sometimes random. Rare resets of 1-3 cycles, with noise on every other input.

use super::{held, mask, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::impl_ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::credit_tx::{fits, Config, CreditTx, In, Out, BLOCKS_WIDTH, FC_WIDTH};

impl_ports!(In {
    rst_ni,
    fc_valid_i,
    fc_fccl_i,
    req_valid_i,
    req_blocks_i,
    take_i
});
impl_ports!(Out {
    fctbs_o,
    fccl_o,
    avail_o,
    send_ok_o,
    err_o
});

/// `credit_tx` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct CreditTxBlock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Busy,
    Stall,
    Idle,
}

/// Seeded random stimulus for `credit_tx` (see the module docs).
#[derive(Debug, Clone)]
pub struct CreditTxStim {
    rng: Rng,
    cfg: Config,
    fctbs: u16,
    fccl: u16,
    /// Blocks of the pending request (a u32, not a u8: a byte store next to `fccl` was reloaded as part of a
    /// wider load the next cycle, a store-forwarding stall of a sixth of the stimulus's time).
    want: u32,
    mode: Mode,
    mode_left: u32,
    rst_left: u32,
}

impl CreditTxStim {
    /// Stimulus for a block configured with `cfg`, starting from reset state.
    pub fn new(seed: u64, cfg: Config) -> Self {
        CreditTxStim {
            rng: Rng::new(seed),
            cfg,
            fctbs: 0,
            fccl: cfg.fccl_reset,
            want: 0,
            mode: Mode::Busy,
            mode_left: 0,
            rst_left: 0,
        }
    }
}

impl Iterator for CreditTxStim {
    type Item = In;

    // Inlined into the lockstep loop: the call and its register saves were a tenth of the stimulus.
    #[inline(always)]
    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        let fc_m = mask(FC_WIDTH) as u16;
        // One draw decides every yes/no event of the cycle (bit fields of `ev`), a second (`amt`) the amounts
        // (a request's blocks from its low half, an FCCL lead from its high half). Both are drawn every cycle
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
            self.fctbs = 0;
            self.fccl = self.cfg.fccl_reset;
            self.want = 0;
            let n = r.next_u64();
            return Some(In {
                rst_ni: false,
                fc_valid_i: n & 1 != 0,
                fc_fccl_i: (n >> 8) as u16,
                req_valid_i: n & 2 != 0,
                req_blocks_i: (n >> 24) as u8,
                take_i: n & 4 != 0,
            });
        }
        if self.mode_left == 0 {
            self.mode = match r.below(10) {
                0..=5 => Mode::Busy,
                6..=7 => Mode::Stall,
                _ => Mode::Idle,
            };
            self.mode_left = r.range(1, 200) as u32;
        }
        self.mode_left -= 1;

        let mut i = In {
            rst_ni: true,
            ..In::default()
        };
        let fc_bits = if self.mode == Mode::Idle { 6 } else { 4 };
        if field(17, fc_bits) == 0 {
            let fccl = match field(23, 4) % 10 {
                0..=6 => self.fctbs.wrapping_add(Rng::scale(amt >> 32, 2201) as u16),
                7..=8 => self
                    .fctbs
                    .wrapping_add(2040 + Rng::scale(amt >> 32, 17) as u16),
                _ => r.next_u64() as u16,
            } & fc_m;
            // Now and then garbage above the port's 12 bits, which both sides must ignore.
            let noise = if field(27, 5) == 0 {
                (field(32, 4) as u16) << 12
            } else {
                0
            };
            i.fc_valid_i = true;
            i.fc_fccl_i = fccl | noise;
        }
        match self.mode {
            Mode::Idle => {
                // Data ports float while nothing is valid.
                i.req_blocks_i = (ev >> 40) as u8;
            }
            Mode::Busy | Mode::Stall => {
                // A new request after each take: 1-66 blocks, or now and then any 8-bit value (bit 7 is
                // beyond the port).
                if self.want == 0 {
                    self.want = if field(36, 6) == 0 {
                        (ev >> 48) as u8 as u32
                    } else {
                        1 + Rng::scale(amt & 0xffff_ffff, 66) as u32
                    };
                }
                i.req_valid_i = true;
                i.req_blocks_i = self.want as u8;
                let blocks = i.req_blocks_i & mask(BLOCKS_WIDTH) as u8;
                let ok = fits(self.fccl, self.fctbs, blocks);
                // Take 90% of what fits, and 1 in 256 of what does not (an error the RTL must flag).
                i.take_i = self.mode == Mode::Busy
                    && if ok {
                        field(42, 7) < 115
                    } else {
                        field(49, 8) == 0
                    };
                if i.take_i {
                    self.fctbs = self.fctbs.wrapping_add(blocks.into()) & fc_m;
                    self.want = 0;
                }
            }
        }
        if i.fc_valid_i {
            self.fccl = i.fc_fccl_i & fc_m;
        }
        Some(i)
    }
}

impl Block for CreditTxBlock {
    const NAME: &'static str = "credit_tx";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CreditTx;
    type Stim = CreditTxStim;
    type Cover = CreditTxCover;

    fn model(cfg: &Config) -> Result<CreditTx, CosimError> {
        CreditTx::new(*cfg).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 2;
    /// A configuration's fresh model and reset cost as much as a few thousand cycles of stepping, so a
    /// segment this long keeps them a small part of the run (cosim/README.md, Speed).
    const SEGMENT: u64 = 32_768;

    /// Corners: FCCL after reset 0 (no credit until the first FC packet) and 4,095 (the largest).
    fn configure(seed: u64, corner: Option<u32>) -> (Config, CreditTxStim) {
        let mut r = Rng::new(seed ^ 0xc0f1_9000);
        let mut cfg = Config {
            fccl_reset: if r.pct(50) { 0 } else { r.below(4096) as u16 },
        };
        match corner {
            Some(0) => cfg.fccl_reset = 0,
            Some(_) => cfg.fccl_reset = 4095,
            None => {}
        }
        (cfg, CreditTxStim::new(seed, cfg))
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        vec![("fccl_reset_i", cfg.fccl_reset.into())]
    }

    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        Ok(Config {
            fccl_reset: held(v, "fccl_reset_i")? as u16,
        })
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::CreditTxRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::CreditTxRtl, CosimError> {
        rtl::CreditTxRtl::new(cfg, bug)
    }
}

/// `credit_tx`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct CreditTxCover;

impl Cover for CreditTxCover {
    const POINTS: &'static [Point] = &[
        bin(
            "fccl_reset_zero",
            "FCCL after reset 0 (no credit until an FC packet)",
        ),
        bin("fccl_reset_max", "FCCL after reset 4,095"),
        event("fctbs_wrap", "FCTBS wraps past 4,095 (12 bits)"),
        event(
            "fc_with_request",
            "an FC packet in the same cycle as a send request",
        ),
        event(
            "credit_window_wraps",
            "a request whose modular credit check differs from a plain comparison (window across the wrap)",
        ),
        event(
            "credit_limit",
            "a request refused: the credit limit is reached",
        ),
        event("credit_zero", "no credit available"),
        event("error", "err_o"),
        event("reset", "a reset cycle"),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_CREDIT_WRAP", "credit_window_wraps"),
        ("BUG_FC_ORDER", "fc_with_request"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CreditTx;
    /// The last FCTBS seen.
    type State = u16;

    fn begin(c: &Config, h: &mut Hits) -> u16 {
        count(h, 0, c.fccl_reset == 0);
        count(h, 1, c.fccl_reset == 4095);
        0
    }

    #[inline(always)]
    fn sample(last: &mut u16, _: &CreditTx, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        count(h, 2, on & (o.fctbs_o < *last));
        count(h, 3, on & i.fc_valid_i & i.req_valid_i);
        let b = i.req_blocks_i & 0x7f;
        let plain = u32::from(o.fctbs_o) + u32::from(b) <= u32::from(o.fccl_o);
        count(
            h,
            4,
            on & i.req_valid_i & (plain != fits(o.fccl_o, o.fctbs_o, b)),
        );
        count(h, 5, on & i.req_valid_i & !o.send_ok_o);
        count(h, 6, on & (o.avail_o == 0));
        count(h, 7, on & o.err_o);
        count(h, 8, !on);
        *last = o.fctbs_o;
    }
}

/// The adapter to the Verilated `credit_tx`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::dut::Dut;
    use crate::ffi::{CreditTxIo, Rtl, CREDIT_TX_VARIANTS};

    /// The Verilated `credit_tx` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct CreditTxRtl {
        m: Rtl<CreditTxIo>,
        io: CreditTxIo,
    }

    impl CreditTxRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "credit_tx",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("credit_tx", CREDIT_TX_VARIANTS, bug)?;
            let io = CreditTxIo {
                fccl_reset_i: u32::from(cfg.fccl_reset) & mask(FC_WIDTH),
                ..CreditTxIo::default()
            };
            let mut s = CreditTxRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl CreditTxRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            io.fc_valid_i = i.fc_valid_i.into();
            io.fc_fccl_i = u32::from(i.fc_fccl_i) & mask(FC_WIDTH);
            io.req_valid_i = i.req_valid_i.into();
            io.req_blocks_i = u32::from(i.req_blocks_i) & mask(BLOCKS_WIDTH);
            io.take_i = i.take_i.into();
        }
    }

    crate::rtl_dut!(CreditTxRtl [CreditTxIo]: In => Out {
        fctbs_o: |v| *v as u16,
        fccl_o: |v| *v as u16,
        avail_o: |v| *v as u16,
        send_ok_o: |v| *v != 0,
        err_o: |v| *v != 0,
    });
}
