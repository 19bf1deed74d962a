//! `fecn_rewrite` under co-simulation, at two beat widths (RTL parameter `BeatBytes`): 8 bytes
//! (`fecn_rewrite_b8`, where FECN's byte lies in a later beat than LNH's) and 32 bytes (`fecn_rewrite_b32`,
//! where a local packet's FECN byte is in the first beat). Each width is its own Verilated model.
//!
//! The stimulus is a stream of packets: mostly well-formed IB packets (`4n + 2` bytes, LNH 2 or 3, a correct
//! VCRC) of 26 to 300 bytes, now and then up to 4,178 (the largest at the 4096-byte MTU), marked at random;
//! some raw packets (LNH 0, 1), packets with a wrong VCRC, any length (including a last beat of 1 byte), and
//! packets cut short by the next `sop_i`. Gaps with `valid_i` low (and junk data) come between and within
//! packets, in levels of 0, 5, 30 or 80% that change about every 500 cycles; bytes past the end of the last
//! beat and `bytes_i` on other beats are junk. Rare resets of 1-3 cycles.

use super::Block;
use crate::check::CosimError;
use crate::cover::{count, event, Cover, Hits, Point};
use crate::ports::{PortValue, Ports, Wide};
use crate::rng::Rng;
use rtl_model::blocks::fecn_rewrite::{Config, FecnRewrite, In, Out, BEAT_MAX};
use rtl_model::crc::vcrc::fill_vcrc;

/// Largest packet generated: 4,178 bytes (LRH, GRH, BTH, RETH, 4096-byte payload, ICRC, VCRC).
const PKT_MAX: usize = 4178;

fn data_wide(d: &[u8; BEAT_MAX]) -> Wide {
    let mut w = Wide::ZERO;
    for (k, &b) in (0u32..).zip(d) {
        w.set_field(8 * k, 8, b.into());
    }
    w
}

fn wide_data(w: &Wide) -> [u8; BEAT_MAX] {
    let mut d = [0u8; BEAT_MAX];
    for (k, b) in (0u32..).zip(d.iter_mut()) {
        *b = w.field(8 * k, 8) as u8;
    }
    d
}

impl Ports for In {
    const NAMES: &'static [&'static str] = &[
        "rst_ni", "valid_i", "sop_i", "eop_i", "bytes_i", "data_i", "mark_i",
    ];

    fn get(&self, i: usize) -> Wide {
        match i {
            0 => self.rst_ni.into(),
            1 => self.valid_i.into(),
            2 => self.sop_i.into(),
            3 => self.eop_i.into(),
            4 => self.bytes_i.into(),
            5 => data_wide(&self.data_i),
            6 => self.mark_i.into(),
            _ => Wide::ZERO,
        }
    }

    fn from_values(v: &[Wide]) -> Self {
        let at = |k: usize| v.get(k).copied().unwrap_or_default();
        In {
            rst_ni: bool::from_wide(&at(0)),
            valid_i: bool::from_wide(&at(1)),
            sop_i: bool::from_wide(&at(2)),
            eop_i: bool::from_wide(&at(3)),
            bytes_i: u8::from_wide(&at(4)),
            data_i: wide_data(&at(5)),
            mark_i: bool::from_wide(&at(6)),
        }
    }
}

impl Ports for Out {
    const NAMES: &'static [&'static str] = &[
        "valid_o",
        "sop_o",
        "eop_o",
        "bytes_o",
        "data_o",
        "ebp_o",
        "vcrc_errs_o",
    ];

    fn get(&self, i: usize) -> Wide {
        match i {
            0 => self.valid_o.into(),
            1 => self.sop_o.into(),
            2 => self.eop_o.into(),
            3 => self.bytes_o.into(),
            4 => data_wide(&self.data_o),
            5 => self.ebp_o.into(),
            6 => self.vcrc_errs_o.into(),
            _ => Wide::ZERO,
        }
    }

    fn from_values(v: &[Wide]) -> Self {
        let at = |k: usize| v.get(k).copied().unwrap_or_default();
        Out {
            valid_o: bool::from_wide(&at(0)),
            sop_o: bool::from_wide(&at(1)),
            eop_o: bool::from_wide(&at(2)),
            bytes_o: u8::from_wide(&at(3)),
            data_o: wide_data(&at(4)),
            ebp_o: bool::from_wide(&at(5)),
            vcrc_errs_o: u16::from_wide(&at(6)),
        }
    }
}

/// Seeded random packet stream for `fecn_rewrite` (see the module docs).
#[derive(Debug, Clone)]
pub struct FecnRewriteStim {
    rng: Rng,
    w: usize,
    /// The packet being sent in `pkt[..len]`; the buffer is allocated once, [`BEAT_MAX`] bytes longer than the
    /// largest packet, so a beat is always read as whole 8-byte words (see `next`).
    pkt: Vec<u8>,
    len: usize,
    pos: usize,
    mark: bool,
    rst_left: u32,
    gap_pct: u64,
}

impl FecnRewriteStim {
    /// A new packet into `self.pkt`.
    fn new_packet(&mut self) {
        let r = &mut self.rng;
        let words = if r.one_in(20) {
            r.range(5, (PKT_MAX as u64 - 2) / 4)
        } else {
            r.range(6, 75)
        } as usize;
        let mut len = 4 * words + 2;
        if r.one_in(20) {
            len = r.range(1, 400) as usize; // not an IB length: the last beat may hold a single byte
        }
        self.len = len;
        // Whole words, one draw each, the last one past `len` into the buffer's spare bytes (which no beat
        // passes on: bytes past the packet's end are masked): a shorter last piece was a `memmove` call.
        for c in self.pkt[..len.next_multiple_of(8)].chunks_exact_mut(8) {
            c.copy_from_slice(&r.next_u64().to_le_bytes());
        }
        let lnh = match r.below(10) {
            0 => r.below(2) as u8,
            1..=5 => 2,
            _ => 3,
        };
        if len > 1 {
            self.pkt[1] = (self.pkt[1] & !3) | lnh;
        }
        // FECN mostly clear on arrival (a set one stays set whether marked or not).
        for at in [12, 52] {
            if at < len && r.pct(80) {
                self.pkt[at] &= 0x7f;
            }
        }
        if !r.one_in(10) {
            fill_vcrc(&mut self.pkt[..len]);
        }
        self.mark = r.pct(50);
        self.pos = 0;
    }
}

impl Iterator for FecnRewriteStim {
    type Item = In;

    // Inlined into the lockstep loop, which then builds the `In` in place: called out of line, its return
    // slot was written in pieces and read back as wider words (a store-forwarding stall every cycle).
    #[inline(always)]
    fn next(&mut self) -> Option<In> {
        // One draw decides the cycle's events (bit fields of `ev`: reset 0..15, gap-level change 15..24 and its
        // level 24..26, gap 26..33, packet cut 33..44, junk `bytes_i` 44..50 and its value 50..58, junk mark
        // 58); a second is the junk on the data port, spread over the beat by a fixed per-lane pattern.
        let ev = self.rng.next_u64();
        let field = |at: u32, bits: u32| (ev >> at) & ((1 << bits) - 1);
        let noise = self.rng.next_u64();
        let mut data = [0u8; BEAT_MAX];
        for (k, c) in (0u64..).zip(data.chunks_exact_mut(8)) {
            c.copy_from_slice(&(noise ^ k.wrapping_mul(0x1d1d_1d1d_1d1d_1d1d)).to_le_bytes());
        }
        if self.rst_left == 0 && field(0, 15) == 0 {
            self.rst_left = 1 + (ev >> 62) as u32 % 3;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            return Some(In {
                rst_ni: false,
                valid_i: noise & 1 != 0,
                sop_i: noise & 2 != 0,
                eop_i: noise & 4 != 0,
                bytes_i: (noise >> 8) as u8,
                data_i: data,
                mark_i: noise & 8 != 0,
            });
        }
        // About 1 in 500 cycles a new gap level.
        if field(15, 9) == 0 {
            self.gap_pct = [0, 5, 30, 80][field(24, 2) as usize];
        }
        // `gap_pct` percent of cycles (as 128ths) carry no beat.
        if field(26, 7) * 100 < self.gap_pct * 128 {
            return Some(In {
                rst_ni: true,
                valid_i: false,
                sop_i: noise & 2 != 0,
                eop_i: noise & 4 != 0,
                bytes_i: (noise >> 8) as u8,
                data_i: data,
                mark_i: noise & 8 != 0,
            });
        }
        // About 1 in 2000 beats cuts the packet short with the next start.
        if self.pos >= self.len || (self.pos > 0 && field(33, 11) == 0) {
            self.new_packet();
        }
        let end = (self.pos + self.w).min(self.len);
        let n = end - self.pos;
        // The beat's n packet bytes over the noise, word by word in registers: a byte copy of variable length
        // into `data` followed by the wide loads that pass `data` on stalled every cycle (store forwarding).
        // Only the beat's words: past them no packet byte is kept (`keep` 0), so those words stay noise.
        let word = |b: &[u8], at: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(a)
        };
        for (j, c) in data
            .chunks_exact_mut(8)
            .take(self.w.div_ceil(8))
            .enumerate()
        {
            let at = self.pos + 8 * j;
            let keep = n.saturating_sub(8 * j).min(8);
            let mask = if keep == 8 {
                !0
            } else {
                (1u64 << (8 * keep)) - 1
            };
            let v = (word(&self.pkt, at) & mask) | (word(c, 0) & !mask);
            c.copy_from_slice(&v.to_le_bytes());
        }
        let eop = end == self.len;
        let i = In {
            rst_ni: true,
            valid_i: true,
            sop_i: self.pos == 0,
            eop_i: eop,
            // About 1 in 64 last beats (and every other beat) carries junk byte counts.
            bytes_i: if eop && field(44, 6) != 0 {
                n as u8
            } else {
                field(50, 8) as u8
            },
            data_i: data,
            // Only the first beat's mark counts; later ones are junk.
            mark_i: if self.pos == 0 {
                self.mark
            } else {
                field(58, 1) != 0
            },
        };
        self.pos = end;
        Some(i)
    }
}

/// The stimulus and configuration of beat width `w`.
fn random(seed: u64, w: u8) -> (Config, FecnRewriteStim) {
    let stim = FecnRewriteStim {
        rng: Rng::new(seed ^ 0xfec_5eed),
        w: w.into(),
        pkt: vec![0; PKT_MAX + BEAT_MAX],
        len: 0,
        pos: 0,
        mark: false,
        rst_left: 0,
        gap_pct: 5,
    };
    (Config { beat_bytes: w }, stim)
}

/// `fecn_rewrite`'s cover points (both beat widths).
#[derive(Debug, Clone, Copy)]
pub struct FecnRewriteCover;

/// What `fecn_rewrite`'s sampler keeps.
#[derive(Debug, Clone, Copy)]
pub struct FecnRewriteCovState {
    beat: u8,
    in_packet: bool,
}

impl Cover for FecnRewriteCover {
    const POINTS: &'static [Point] = &[
        event("packet", "a packet starts"),
        event("marked_packet", "a packet to be marked (FECN set) starts"),
        event(
            "packet_end",
            "a packet's last beat leaves (its VCRC rewritten)",
        ),
        event("one_byte_end", "a last beat of 1 byte leaves"),
        event("full_beat_end", "a last beat of a full beat leaves"),
        event("cut_short", "a packet starts before the last one ended"),
        event("gap_in_packet", "a cycle without a beat inside a packet"),
        event("reset", "a reset cycle"),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_VCRC_BYTE_ORDER", "packet_end"),
        ("BUG_FECN_BIT", "marked_packet"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = FecnRewrite;
    type State = FecnRewriteCovState;

    fn begin(c: &Config, _: &mut Hits) -> FecnRewriteCovState {
        FecnRewriteCovState {
            beat: c.beat_bytes,
            in_packet: false,
        }
    }

    #[inline(always)]
    fn sample(st: &mut FecnRewriteCovState, _: &FecnRewrite, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        let beat = on & i.valid_i;
        let end = on & o.valid_o & o.eop_o;
        count(h, 0, beat & i.sop_i);
        count(h, 1, beat & i.sop_i & i.mark_i);
        count(h, 2, end);
        count(h, 3, end & (o.bytes_o == 1));
        count(h, 4, end & (o.bytes_o == st.beat));
        count(h, 5, beat & i.sop_i & st.in_packet);
        count(h, 6, on & !i.valid_i & st.in_packet);
        count(h, 7, !on);
        if beat {
            st.in_packet = !i.eop_i;
        }
        if !on {
            st.in_packet = false;
        }
    }
}

/// One `Block` (and RTL adapter) per beat width: the width is an RTL parameter, so each is its own model
/// with its own port struct.
macro_rules! fecn_rewrite_block {
    ($block:ident, $rtl:ident, $name:literal, $w:literal, $io:ident, $variants:ident) => {
        #[doc = concat!("`fecn_rewrite` with ", stringify!($w), "-byte beats as a co-simulation [`Block`].")]
        #[derive(Debug, Clone, Copy)]
        pub struct $block;

        impl Block for $block {
            const NAME: &'static str = $name;
            type Config = Config;
            type In = In;
            type Out = Out;
            type Model = FecnRewrite;
            type Stim = FecnRewriteStim;
            type Cover = FecnRewriteCover;
            /// The beat width is the only setting, and a parameter of the model: no configurations to
            /// go through, so a run resets the block only every quarter million cycles.
            const CORNERS: u32 = 0;
            const SEGMENT: u64 = 1 << 18;

            fn model(cfg: &Config) -> Result<FecnRewrite, CosimError> {
                FecnRewrite::new(*cfg).map_err(|e| CosimError::Config {
                    block: Self::NAME,
                    msg: e.to_string(),
                })
            }

            fn configure(seed: u64, _: Option<u32>) -> (Config, FecnRewriteStim) {
                random(seed, $w)
            }

            /// The beat width is a parameter of the Verilated model, not a port.
            fn config_ports(_: &Config) -> Vec<(&'static str, Wide)> {
                Vec::new()
            }

            fn config_from_ports(_: &[(String, Wide)]) -> Result<Config, String> {
                Ok(Config { beat_bytes: $w })
            }

            #[cfg(feature = "verilator")]
            type Rtl = rtl::$rtl;

            #[cfg(feature = "verilator")]
            fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::$rtl, CosimError> {
                rtl::$rtl::new(cfg, bug)
            }
        }

        #[cfg(feature = "verilator")]
        impl rtl::$rtl {
            /// Builds the model and applies one power-on reset edge.
            pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
                use crate::dut::Dut;
                if cfg.beat_bytes != $w {
                    return Err(CosimError::Config {
                        block: $name,
                        msg: format!("beat_bytes {} but this model is built for {}", cfg.beat_bytes, $w),
                    });
                }
                let bits = FecnRewrite::new(*cfg)
                    .map_err(|e| CosimError::Config {
                        block: $name,
                        msg: e.to_string(),
                    })?
                    .bytes_width();
                let m = crate::ffi::Rtl::new($name, crate::ffi::$variants, bug)?;
                let mut s = rtl::$rtl {
                    m,
                    io: crate::ffi::$io::default(),
                    bytes_mask: (1 << bits) - 1,
                };
                s.step(&In::default())
                    .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
                s.m.time_zero();
                Ok(s)
            }
        }

        #[cfg(feature = "verilator")]
        impl rtl::$rtl {
            /// Writes one cycle's inputs (masked to the port widths) into the port struct.
            #[inline]
            fn drive(&mut self, i: &In) {
                let io = &mut self.io;
                io.rst_ni = i.rst_ni.into();
                io.valid_i = i.valid_i.into();
                io.sop_i = i.sop_i.into();
                io.eop_i = i.eop_i.into();
                io.bytes_i = u32::from(i.bytes_i) & self.bytes_mask;
                rtl::put_data(&mut io.data_i, &i.data_i[..$w]);
                io.mark_i = i.mark_i.into();
            }

            /// The outputs the RTL showed in its last step (data bytes past the beat are 0).
            fn outputs(&self) -> Out {
                let io = &self.io;
                let mut data_o = [0u8; BEAT_MAX];
                rtl::get_data(&io.data_o, &mut data_o[..$w]);
                Out {
                    valid_o: io.valid_o != 0,
                    sop_o: io.sop_o != 0,
                    eop_o: io.eop_o != 0,
                    bytes_o: io.bytes_o as u8,
                    data_o,
                    ebp_o: io.ebp_o != 0,
                    vcrc_errs_o: io.vcrc_errs_o as u16,
                }
            }
        }

        #[cfg(feature = "verilator")]
        impl crate::dut::Dut for rtl::$rtl {
            type In = In;
            type Out = Out;

            #[inline]
            fn step(&mut self, i: &In) -> Result<Out, crate::dut::Halt> {
                self.drive(i);
                self.m.step(&mut self.io)?;
                Ok(self.outputs())
            }

            /// Compares the data port word by word with the model's bytes (and the model's bytes past the
            /// beat with 0, as [`Self::outputs`] reads them) instead of building two 32-byte arrays a beat.
            #[inline]
            fn step_check(
                &mut self,
                i: &In,
                e: &Out,
            ) -> Result<Option<Out>, crate::dut::Halt> {
                self.drive(i);
                self.m.step(&mut self.io)?;
                let io = &self.io;
                let same = ((io.valid_o != 0) == e.valid_o)
                    & ((io.sop_o != 0) == e.sop_o)
                    & ((io.eop_o != 0) == e.eop_o)
                    & (io.bytes_o as u8 == e.bytes_o)
                    & ((io.ebp_o != 0) == e.ebp_o)
                    & (io.vcrc_errs_o as u16 == e.vcrc_errs_o)
                    & rtl::data_equal(&io.data_o, &e.data_o);
                Ok(if same { None } else { Some(self.outputs()) })
            }
        }

        #[cfg(feature = "verilator")]
        impl crate::ffi::RtlDut for rtl::$rtl {
            type Io = crate::ffi::$io;
            fn load(&mut self, i: &Self::In) {
                self.drive(i);
            }

            fn parts(&mut self) -> (&mut crate::ffi::Rtl<crate::ffi::$io>, &mut crate::ffi::$io) {
                (&mut self.m, &mut self.io)
            }
        }
    };
}

/// The adapters to the Verilated models: the data port is a `u64` (8-byte beats) or `[u32; N]` words.
#[cfg(feature = "verilator")]
pub mod rtl {
    use crate::ffi::{FecnRewriteB32Io, FecnRewriteB8Io, Rtl};
    use rtl_model::blocks::fecn_rewrite::BEAT_MAX;

    /// The Verilated `fecn_rewrite` with 8-byte beats.
    #[derive(Debug)]
    pub struct FecnRewriteB8Rtl {
        pub(super) m: Rtl<FecnRewriteB8Io>,
        pub(super) io: FecnRewriteB8Io,
        pub(super) bytes_mask: u32,
    }

    /// The Verilated `fecn_rewrite` with 32-byte beats.
    #[derive(Debug)]
    pub struct FecnRewriteB32Rtl {
        pub(super) m: Rtl<FecnRewriteB32Io>,
        pub(super) io: FecnRewriteB32Io,
        pub(super) bytes_mask: u32,
    }

    /// A data port of the generated struct: byte k at bits [8k +: 8].
    pub trait Bytes {
        /// Writes `b` into the port.
        fn put(&mut self, b: &[u8]);
        /// Reads the port into `b`.
        fn get(&self, b: &mut [u8]);
        /// Whether the port equals the first bytes of `b` and the rest of `b` is 0 (what [`Bytes::get`] into
        /// a zeroed array gives), compared a 64-bit word at a time.
        fn equal(&self, b: &[u8; BEAT_MAX]) -> bool;
    }

    /// Word `k` (bytes `8k..8k + 8`, little-endian) of a beat.
    #[inline]
    fn word(b: &[u8; BEAT_MAX], k: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[8 * k..8 * k + 8]);
        u64::from_le_bytes(a)
    }

    impl Bytes for u64 {
        #[inline]
        fn put(&mut self, b: &[u8]) {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            *self = u64::from_le_bytes(a);
        }
        #[inline]
        fn get(&self, b: &mut [u8]) {
            b.copy_from_slice(&self.to_le_bytes());
        }
        #[inline]
        fn equal(&self, b: &[u8; BEAT_MAX]) -> bool {
            (*self ^ word(b, 0)) | word(b, 1) | word(b, 2) | word(b, 3) == 0
        }
    }

    impl<const N: usize> Bytes for [u32; N] {
        #[inline]
        fn put(&mut self, b: &[u8]) {
            for (w, c) in self.iter_mut().zip(b.chunks_exact(4)) {
                *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        #[inline]
        fn get(&self, b: &mut [u8]) {
            for (w, c) in self.iter().zip(b.chunks_exact_mut(4)) {
                c.copy_from_slice(&w.to_le_bytes());
            }
        }
        #[inline]
        fn equal(&self, b: &[u8; BEAT_MAX]) -> bool {
            let mut diff = 0u64;
            for k in 0..BEAT_MAX / 8 {
                let port = if 2 * k + 1 < N {
                    u64::from(self[2 * k]) | u64::from(self[2 * k + 1]) << 32
                } else if 2 * k < N {
                    u64::from(self[2 * k])
                } else {
                    0
                };
                diff |= port ^ word(b, k);
            }
            diff == 0
        }
    }

    /// See [`Bytes::put`].
    #[inline]
    pub fn put_data<P: Bytes>(p: &mut P, b: &[u8]) {
        p.put(b)
    }

    /// See [`Bytes::get`].
    #[inline]
    pub fn get_data<P: Bytes>(p: &P, b: &mut [u8]) {
        p.get(b)
    }

    /// See [`Bytes::equal`].
    #[inline]
    pub fn data_equal<P: Bytes>(p: &P, b: &[u8; BEAT_MAX]) -> bool {
        p.equal(b)
    }
}

fecn_rewrite_block!(
    FecnRewriteB8Block,
    FecnRewriteB8Rtl,
    "fecn_rewrite_b8",
    8,
    FecnRewriteB8Io,
    FECN_REWRITE_B8_VARIANTS
);
fecn_rewrite_block!(
    FecnRewriteB32Block,
    FecnRewriteB32Rtl,
    "fecn_rewrite_b32",
    32,
    FecnRewriteB32Io,
    FECN_REWRITE_B32_VARIANTS
);

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::clocked::Clocked;

    /// The stream carries marked and unmarked local and global packets to their end, and the model rewrites
    /// FECN in some (checked on the Rust block, no Verilator needed).
    #[test]
    fn stimulus_reaches_marked_packets_of_both_headers_and_both_widths() {
        for w in [8u8, 32] {
            let (cfg, stim) = random(1, w);
            let mut m = FecnRewrite::new(cfg).unwrap();
            let (mut eops, mut changed, mut short_last) = (0, 0, 0);
            let mut prev = In::default();
            for i in stim.take(200_000) {
                let o = m.step(&i);
                eops += u32::from(o.valid_o && o.eop_o);
                if o.valid_o
                    && prev.valid_i
                    && o.data_o[..usize::from(w)] != prev.data_i[..usize::from(w)]
                {
                    changed += 1;
                }
                short_last += u32::from(i.valid_i && i.eop_i && i.bytes_i == 1);
                prev = i;
            }
            assert!(eops > 2000, "w {w}: {eops} packets");
            assert!(changed > 500, "w {w}: {changed} beats rewritten");
            assert!(short_last > 5, "w {w}: {short_last} one-byte last beats");
        }
    }

    #[test]
    fn bytes_port_widths_are_the_models() {
        for (w, name) in [(8u8, "fecn_rewrite_b8"), (32, "fecn_rewrite_b32")] {
            let m = crate::table::module(name).unwrap();
            let port = m.ports.iter().find(|p| p.name == "bytes_i").unwrap();
            let b = FecnRewrite::new(Config { beat_bytes: w }).unwrap();
            assert_eq!(port.width, b.bytes_width(), "{name}");
        }
    }

    /// The in-place data comparison of the lockstep path agrees with reading the port into a zeroed beat
    /// and comparing arrays (the report path), for both port shapes: equal beats, one differing byte
    /// anywhere, and junk past the port's bytes.
    #[cfg(feature = "verilator")]
    #[test]
    fn in_place_data_comparison_agrees_with_the_array_comparison() {
        use super::rtl::{data_equal, get_data, Bytes};
        fn check<P: Bytes>(port: &P, w: usize, mut b: [u8; BEAT_MAX]) {
            let read = |p: &P| {
                let mut a = [0u8; BEAT_MAX];
                get_data(p, &mut a[..w]);
                a
            };
            assert!(data_equal(port, &read(port)));
            for k in 0..BEAT_MAX {
                let mut c = read(port);
                c[k] ^= 1 << (k % 8);
                assert!(!data_equal(port, &c), "byte {k} of {w}");
            }
            assert_eq!(data_equal(port, &b), read(port) == b);
            b[..w].copy_from_slice(&read(port)[..w]);
            assert_eq!(data_equal(port, &b), read(port) == b);
        }
        let mut r = Rng::new(3);
        for _ in 0..200 {
            let mut b = [0u8; BEAT_MAX];
            for c in b.chunks_exact_mut(8) {
                c.copy_from_slice(&r.next_u64().to_le_bytes());
            }
            check(&r.next_u64(), 8, b);
            let mut words = [0u32; 8];
            for w in &mut words {
                *w = r.next_u64() as u32;
            }
            check(&words, 32, b);
        }
    }

    #[test]
    fn ports_round_trip() {
        let (_, stim) = random(2, 32);
        for i in stim.take(300) {
            let v: Vec<Wide> = (0..In::NAMES.len()).map(|k| i.get(k)).collect();
            assert_eq!(In::from_values(&v), i);
        }
    }
}
