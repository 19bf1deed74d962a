//! `fecn_rewrite`: sets FECN in the BTH of a marked packet on a streaming datapath and regenerates the VCRC.
//!
//! The datapath half of marking: [`super::fecn_marker`] decides *whether* a packet is marked; this block
//! rewrites the packet as it streams past, `beat_bytes` bytes per cycle, and recomputes the per-hop VCRC
//! ([`crate::crc::vcrc::vcrc`]) that the new bit invalidates. Twin of `hdl/fecn_rewrite.sv` (the RTL parameter
//! `BeatBytes` is [`Config::beat_bytes`]).
//!
//! | port      | dir | width          | meaning                                                              |
//! |-----------|-----|----------------|----------------------------------------------------------------------|
//! | `rst_ni`  | in  | 1              | synchronous reset, active low                                        |
//! | `valid_i` | in  | 1              | a beat is on `data_i`                                                |
//! | `sop_i`   | in  | 1              | first beat of a packet (starts a new packet regardless)              |
//! | `eop_i`   | in  | 1              | last beat                                                            |
//! | `bytes_i` | in  | clog2(B+1)     | valid bytes of the last beat; 0 or above B means all                 |
//! | `data_i`  | in  | 8B             | the beat, packet byte `offset + k` in byte `k`                       |
//! | `mark_i`  | in  | 1              | with the first beat: set FECN in this packet                         |
//! | `*_o`     | out | as the inputs  | registered: last cycle's beat, rewritten; 0 while `rst_ni` is low    |
//! | `ebp_o`   | out | 1              | with the last beat: the packet ends bad (wrong or no VCRC)           |
//! | `vcrc_errs_o` | out | 16         | packets ended bad since reset, saturating (a port error counter)     |
//!
//! Rewrite (IBA layout: LRH 8 bytes, GRH 40 when LRH LNH = 3, BTH; FECN is bit 7 of BTH byte 4):
//! - FECN: a marked packet with LNH 2 (local) or 3 (global) gets bit 7 of packet byte 12 or 52 set; raw
//!   packets (LNH 0, 1) have no BTH and are never touched.
//! - VCRC: the received VCRC (the last two bytes, in [`crate::crc::vcrc::VCRC_BYTE_ORDER`]) is checked
//!   against the bytes before them as received. A good packet's last two bytes become the VCRC of the bytes
//!   as rewritten, so an unmarked good packet passes unchanged. A bad one ends bad: `ebp_o` with its last
//!   beat, its VCRC stomped (the complement of the rewritten bytes' VCRC, which never checks good, whatever
//!   the bad bytes were) and `vcrc_errs_o` counts it. A switch never makes a corrupt packet look good.
//!
//! Designer choices, named:
//! - The VCRC must lie in the last beat. IB packets are `4n + 2` bytes and beats start at a packet's first
//!   byte, so with `beat_bytes` a multiple of 4 ([`Config::validate`]) the last beat has at least 2 bytes; a
//!   last beat of 1 valid byte (no IB packet) passes without a VCRC rewrite.
//! - A bad packet is ended bad, not dropped: under cut-through its first beats have left before its VCRC
//!   arrives, so the switch can only end it with the IBA's End Bad Packet delimiter (`ebp_o`) and a VCRC that
//!   fails, for the next receiver to discard, and count it. A packet whose last beat does not hold a whole
//!   VCRC (not `4n + 2` bytes) has none to check and ends bad too.
//! - One cycle of latency, no back-pressure.
//! - A beat without `sop_i` continues the current packet (offsets saturate at 65535). Bytes past `bytes_i` in
//!   the last beat pass unchanged, and so does `data_i` while `valid_i` is low.
//!
//! State: `off_q` (bytes before this beat), `crc_q` and `crc_in_q` (VCRC registers over them as rewritten and
//! as received, reset 0xFFFF), `lnh_q`, `mark_q`, and the output registers (`vcrc_errs_o` among them).

use super::ConfigError;
use crate::clocked::Clocked;
use crate::crc::vcrc::VCRC_BYTE_ORDER;

/// Largest beat, bytes.
pub const BEAT_MAX: usize = 32;
/// Packet byte holding FECN when LNH = 2 (LRH 8 + BTH byte 4).
pub const FECN_OFF_LOCAL: u16 = 12;
/// Packet byte holding FECN when LNH = 3 (LRH 8 + GRH 40 + BTH byte 4).
pub const FECN_OFF_GLOBAL: u16 = 52;
/// FECN's bit in BTH byte 4.
pub const FECN_BIT: u8 = 0x80;
/// The VCRC's table constant (polynomial 0x100B reflected), initial value and final XOR
/// ([`crate::crc::vcrc::VCRC_ALGORITHM`], bit by bit as the RTL computes it).
const VCRC_POLY_REFLECTED: u16 = 0xD008;

/// Static configuration (an RTL parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Bytes per beat: a multiple of 4, 4..=32.
    pub beat_bytes: u8,
}

impl Config {
    /// Checks the beat width.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let b = self.beat_bytes;
        if !(4..=BEAT_MAX as u8).contains(&b) || !b.is_multiple_of(4) {
            return Err(ConfigError::Invalid {
                setting: "beat_bytes",
                value: b.into(),
                reason: "must be a multiple of 4 in 4..=32",
            });
        }
        Ok(())
    }
}

/// Input ports (bytes of `data_i` beyond `beat_bytes` are ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// A beat is valid.
    pub valid_i: bool,
    /// First beat of a packet.
    pub sop_i: bool,
    /// Last beat of a packet.
    pub eop_i: bool,
    /// Valid bytes of the last beat (0 or above `beat_bytes`: all).
    pub bytes_i: u8,
    /// The beat.
    pub data_i: [u8; BEAT_MAX],
    /// Set FECN in this packet (sampled with the first beat).
    pub mark_i: bool,
}

/// Output ports (registered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// With the last beat: the packet ends bad (its received VCRC was wrong, or it had no whole VCRC in its
    /// last beat); its VCRC was stomped, so the next hop discards it.
    pub ebp_o: bool,
    /// Packets ended bad since reset (saturating at 65535), as a port's error counter; counts the packet
    /// whose last beat is on the outputs.
    pub vcrc_errs_o: u16,
    /// Last cycle's `valid_i`.
    pub valid_o: bool,
    /// Last cycle's `sop_i`.
    pub sop_o: bool,
    /// Last cycle's `eop_i`.
    pub eop_o: bool,
    /// Last cycle's `bytes_i` (masked to the port width).
    pub bytes_o: u8,
    /// Last cycle's beat, rewritten (bytes beyond `beat_bytes` are 0).
    pub data_o: [u8; BEAT_MAX],
}

/// The streaming FECN and VCRC rewriter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FecnRewrite {
    cfg: Config,
    /// Bytes of the current packet before the next beat.
    pub off_q: u16,
    /// VCRC register over them as rewritten (what leaves).
    pub crc_q: u16,
    /// VCRC register over them as received (what the incoming VCRC is checked against).
    pub crc_in_q: u16,
    /// The packet's LNH.
    pub lnh_q: u8,
    /// The packet is marked.
    pub mark_q: bool,
    /// Output registers.
    pub out_q: Out,
}

/// One byte into a VCRC register, bit by bit (reflected, LSB first), as the RTL's loop does.
const fn crc_byte_bitwise(mut crc: u16, b: u8) -> u16 {
    crc ^= b as u16;
    let mut k = 0;
    while k < 8 {
        crc = if crc & 1 != 0 {
            (crc >> 1) ^ VCRC_POLY_REFLECTED
        } else {
            crc >> 1
        };
        k += 1;
    }
    crc
}

/// The bytewise table of [`crc_byte_bitwise`] (entry `x` is the register change for low byte `x`): the model
/// runs up to 32 bytes per cycle, and the table is 8 times faster than the bit loop.
const CRC_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut x = 0;
    while x < 256 {
        t[x] = crc_byte_bitwise(0, x as u8);
        x += 1;
    }
    t
};

/// Slice-by-8 tables (4 KB): entry `[k][x]` is the register after byte `x` (into a zero register) and then `k`
/// zero bytes. An 8-byte word then costs 8 independent lookups instead of a chain of 8 dependent ones (each
/// bytewise step waits for the last), which was most of the model's time at 8-byte beats.
const CRC_SLICES: [[u16; 256]; 8] = {
    let mut t = [[0u16; 256]; 8];
    t[0] = CRC_TABLE;
    let mut k = 1;
    while k < 8 {
        let mut x = 0;
        while x < 256 {
            let prev = t[k - 1][x];
            t[k][x] = (prev >> 8) ^ CRC_TABLE[(prev & 0xff) as usize];
            x += 1;
        }
        k += 1;
    }
    t
};

/// One byte into a VCRC register (the reference [`crc_word`] is tested against).
#[cfg(test)]
fn crc_byte(crc: u16, b: u8) -> u16 {
    (crc >> 8) ^ CRC_TABLE[usize::from((crc as u8) ^ b)]
}

/// The first `m` bytes (`m <= 8`) of the little-endian `word` into a VCRC register: equal to `m` bytewise
/// steps. The register is XORed into the first two bytes (the CRC is reflected), and byte `j` then passes
/// `m - 1 - j` more bytes; with fewer than 2 bytes part of the old register is only shifted.
#[inline]
fn crc_word(crc: u16, word: u64, m: usize) -> u16 {
    let x = word ^ u64::from(crc);
    let t = |k: usize, j: u32| CRC_SLICES[k][usize::from((x >> (8 * j)) as u8)];
    match m {
        8 => {
            (t(7, 0) ^ t(6, 1)) ^ (t(5, 2) ^ t(4, 3)) ^ ((t(3, 4) ^ t(2, 5)) ^ (t(1, 6) ^ t(0, 7)))
        }
        0 => crc,
        1 => (crc >> 8) ^ t(0, 0),
        _ => {
            let m = m.min(8);
            let mut c = 0;
            for j in 0..m {
                c ^= t(m - 1 - j, j as u32);
            }
            c
        }
    }
}

/// Mask of the bytes of word `k` (bytes `8k..8k + 8`) that lie in a beat of `w` bytes.
#[inline]
fn lane_mask(w: usize, k: usize) -> u64 {
    match w.saturating_sub(8 * k) {
        0 => 0,
        keep @ 1..=7 => (1u64 << (8 * keep)) - 1,
        _ => !0,
    }
}

impl FecnRewrite {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(FecnRewrite {
            cfg,
            off_q: 0,
            crc_q: 0xFFFF,
            crc_in_q: 0xFFFF,
            lnh_q: 0,
            mark_q: false,
            out_q: Out::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Width of `bytes_i`/`bytes_o`: `clog2(beat_bytes + 1)`.
    pub fn bytes_width(&self) -> u32 {
        bytes_width_of(usize::from(self.cfg.beat_bytes))
    }

    /// One clock edge at beat width `w` (= `cfg.beat_bytes`). Always inlined: [`Clocked::step`] calls it once
    /// per valid width with `w` a constant, so each width gets its own copy with the width's masks, word
    /// count and `bytes_i` width folded in (the same code for every width, so the same behaviour).
    #[inline(always)]
    fn step_w(&mut self, i: &In, w: usize) -> Out {
        let out = self.out_q;
        if !i.rst_ni {
            *self = FecnRewrite::new(self.cfg).unwrap_or_else(|_| unreachable!("validated in new"));
            return Out::default();
        }
        let bw = bytes_width_of(w);
        let bytes = i.bytes_i & ((1u16 << bw) - 1) as u8;
        // The beat as little-endian words, bytes past the beat cleared: a fixed-size copy (a runtime-length
        // byte copy was a `memmove` call every cycle) and whole words for the VCRC.
        let mut words = [0u64; BEAT_MAX / 8];
        for (k, (x, c)) in words.iter_mut().zip(i.data_i.chunks_exact(8)).enumerate() {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            *x = u64::from_le_bytes(a) & lane_mask(w, k);
        }
        let mut vcrc_at = None;
        let mut ebp = false;
        if i.valid_i {
            let off = if i.sop_i { 0 } else { self.off_q };
            let lnh = if i.sop_i { i.data_i[1] & 3 } else { self.lnh_q };
            let mark = if i.sop_i { i.mark_i } else { self.mark_q };
            let (mut crc, mut crc_in) = if i.sop_i {
                (0xFFFF, 0xFFFF)
            } else {
                (self.crc_q, self.crc_in_q)
            };
            let n = if !i.eop_i || bytes == 0 || usize::from(bytes) > w {
                w
            } else {
                usize::from(bytes)
            };
            let fecn_at = match lnh {
                2 if mark => Some(FECN_OFF_LOCAL),
                3 if mark => Some(FECN_OFF_GLOBAL),
                _ => None,
            };
            let received = words;
            // FECN's byte is in this beat when it lies in [off, off + n) (both FECN offsets are far below the
            // 65535 where `off` saturates).
            if let Some(at) = fecn_at {
                if let Some(rel) = at.checked_sub(off).map(usize::from).filter(|&r| r < n) {
                    // Word by word with constant indices (as below): an index computed at run time kept
                    // the words on the stack, and their copy out stalled on the stores.
                    for (k, x) in words.iter_mut().enumerate() {
                        if k == rel / 8 {
                            *x |= u64::from(FECN_BIT) << (8 * (rel % 8));
                        }
                    }
                }
            }
            // The VCRC covers every byte but the last beat's last two: once over the bytes as received (to
            // check the packet's VCRC) and once as rewritten (the VCRC that leaves). The two registers are
            // equal until the FECN bit changes a byte, and each byte's update is invertible, so while they
            // are equal and the beat is unchanged one pass serves both.
            let m = if i.eop_i { n.saturating_sub(2) } else { n };
            let nw = w.div_ceil(8);
            let same = crc == crc_in && words == received;
            for (k, &x) in received[..nw].iter().enumerate() {
                crc_in = crc_word(crc_in, x, m.saturating_sub(8 * k).min(8));
            }
            if same {
                crc = crc_in;
            } else {
                for (k, &x) in words[..nw].iter().enumerate() {
                    crc = crc_word(crc, x, m.saturating_sub(8 * k).min(8));
                }
            }
            if i.eop_i {
                // The received VCRC is the beat's last two bytes; a packet that does not end with a whole
                // VCRC in its last beat (not 4n + 2 bytes) has none to check and ends bad as well.
                let good = n >= 2 && {
                    let b = |j: usize| (received[j / 8] >> (8 * (j % 8))) as u8;
                    VCRC_BYTE_ORDER.from_bytes([b(n - 2), b(n - 1)]) == !crc_in
                };
                ebp = !good;
                if n >= 2 {
                    // A good packet leaves with its regenerated VCRC; a bad one with that VCRC's complement
                    // (stomped), which can never check good, whatever the marking changed.
                    let v = if good { !crc } else { crc };
                    vcrc_at = Some((n - 2, VCRC_BYTE_ORDER.to_bytes(v)));
                }
            }
            self.off_q = off.saturating_add(w as u16);
            self.crc_q = crc;
            self.crc_in_q = crc_in;
            self.lnh_q = lnh;
            self.mark_q = mark;
        }
        // The VCRC goes into the words (a 2-byte store at a variable place in the byte array, read back as
        // part of the wider copy into `out_q`, stalled store forwarding at every packet's end). `at <= w - 2
        // <= 30`, so a VCRC in the last byte of a word (`at` 7, 15 or 23) continues into the next word.
        if let Some((at, v)) = vcrc_at {
            let v = u64::from(u16::from_le_bytes(v));
            let (k, sh) = (at / 8, 8 * (at % 8));
            for (j, x) in words.iter_mut().enumerate() {
                if j == k {
                    *x = (*x & !(0xffff << sh)) | (v << sh);
                } else if j == k + 1 && sh == 56 {
                    *x = (*x & !0xff) | (v >> 8);
                }
            }
        }
        // Straight into the output register, word by word: built on the stack first, the array was copied
        // with 16-byte moves over its 8-byte stores (a stalled store forwarding every cycle).
        let o = &mut self.out_q;
        (o.valid_o, o.sop_o, o.eop_o, o.bytes_o) = (i.valid_i, i.sop_i, i.eop_i, bytes);
        o.ebp_o = ebp;
        o.vcrc_errs_o = o.vcrc_errs_o.saturating_add(ebp.into());
        for (c, x) in o.data_o.chunks_exact_mut(8).zip(words) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        out
    }
}

/// `clog2(w + 1)`: the width of `bytes_i` at beat width `w`.
#[inline]
const fn bytes_width_of(w: usize) -> u32 {
    w.next_power_of_two().trailing_zeros() + w.is_power_of_two() as u32
}

impl Clocked for FecnRewrite {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        // Every width `Config::validate` accepts, each with its constant (the last arm is never taken).
        match self.cfg.beat_bytes {
            4 => self.step_w(i, 4),
            8 => self.step_w(i, 8),
            12 => self.step_w(i, 12),
            16 => self.step_w(i, 16),
            20 => self.step_w(i, 20),
            24 => self.step_w(i, 24),
            28 => self.step_w(i, 28),
            32 => self.step_w(i, 32),
            w => self.step_w(i, usize::from(w)),
        }
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
    use crate::crc::vcrc::{fill_vcrc, vcrc, VCRC_LEN};
    use proptest::prelude::*;

    /// A local IB packet of `len` bytes (4n + 2) with a correct VCRC: LRH with LNH 2, then arbitrary bytes.
    fn packet(len: usize, lnh: u8, seed: u8) -> Vec<u8> {
        let mut p: Vec<u8> = (0..len)
            .map(|k| (k as u8).wrapping_mul(37).wrapping_add(seed))
            .collect();
        p[1] = (p[1] & !3) | lnh;
        p[12] &= !FECN_BIT;
        p[52 % len] &= !FECN_BIT;
        fill_vcrc(&mut p);
        p
    }

    /// Streams `p` through the block in beats, returns the bytes that come out.
    fn stream(b: &mut FecnRewrite, p: &[u8], mark: bool) -> Vec<u8> {
        stream_ends(b, p, mark).0
    }

    /// `stream`, also returning the last beat's `ebp_o` and the error count beside it.
    fn stream_ends(b: &mut FecnRewrite, p: &[u8], mark: bool) -> (Vec<u8>, bool, u16) {
        let w = usize::from(b.config().beat_bytes);
        let mut got = Vec::new();
        let mut end = (false, 0);
        let beats: Vec<&[u8]> = p.chunks(w).collect();
        let mut take = |o: Out| {
            if o.valid_o && o.eop_o {
                end = (o.ebp_o, o.vcrc_errs_o);
            }
            if o.valid_o {
                let n = if o.eop_o && o.bytes_o != 0 {
                    usize::from(o.bytes_o)
                } else {
                    w
                };
                got.extend_from_slice(&o.data_o[..n]);
            }
        };
        for (k, c) in beats.iter().enumerate() {
            let mut data = [0u8; BEAT_MAX];
            data[..c.len()].copy_from_slice(c);
            let o = b.step(&In {
                rst_ni: true,
                valid_i: true,
                sop_i: k == 0,
                eop_i: k + 1 == beats.len(),
                bytes_i: c.len() as u8,
                data_i: data,
                mark_i: mark,
            });
            take(o);
        }
        take(b.step(&b.idle_input()));
        (got, end.0, end.1)
    }

    #[test]
    fn marked_packets_get_fecn_and_a_correct_vcrc_at_every_width() {
        for w in [4u8, 8, 16, 32] {
            let mut b = FecnRewrite::new(Config { beat_bytes: w }).unwrap();
            for (len, lnh) in [(26usize, 2u8), (66, 3), (130, 2), (4178, 3), (22, 1)] {
                let p = packet(len, lnh, w);
                // Unmarked: unchanged (the VCRC was already right).
                assert_eq!(stream(&mut b, &p, false), p, "w {w} len {len}");
                let got = stream(&mut b, &p, true);
                let mut want = p.clone();
                match lnh {
                    2 => want[12] |= FECN_BIT,
                    3 => want[52] |= FECN_BIT,
                    _ => {}
                }
                fill_vcrc(&mut want);
                assert_eq!(got, want, "w {w} len {len} lnh {lnh}");
                let body = got.len() - VCRC_LEN;
                assert_eq!(
                    VCRC_BYTE_ORDER.from_bytes([got[body], got[body + 1]]),
                    vcrc(&got[..body])
                );
            }
        }
    }

    /// A packet with a wrong VCRC never leaves with a good one: whatever its trailing bytes, marked or not,
    /// it ends bad (`ebp_o` with its last beat), its VCRC is stomped, and the error counter counts it.
    #[test]
    fn a_corrupt_packet_is_never_made_good() {
        for w in [4u8, 8, 32] {
            let mut b = FecnRewrite::new(Config { beat_bytes: w }).unwrap();
            let mut errs = 0u16;
            for (len, lnh) in [(26usize, 2u8), (66, 3), (4178, 3)] {
                let good = packet(len, lnh, w);
                for tail in [[0x00, 0x00], [0xbe, 0xef], [0x12, 0x34]] {
                    let mut p = good.clone();
                    p[len - 2..].copy_from_slice(&tail);
                    if p == good {
                        continue;
                    }
                    for mark in [false, true] {
                        let (got, ebp, n) = stream_ends(&mut b, &p, mark);
                        errs += 1;
                        assert!(ebp, "w {w} len {len} tail {tail:?} mark {mark}");
                        assert_eq!(n, errs);
                        assert!(
                            !crate::crc::vcrc::verify_vcrc(&got),
                            "w {w} len {len} tail {tail:?}"
                        );
                    }
                }
                let (got, ebp, n) = stream_ends(&mut b, &good, false);
                assert!(!ebp);
                assert_eq!((got, n), (good, errs));
            }
        }
    }

    #[test]
    fn table_crc_equals_the_bit_loop() {
        for crc in [0u16, 0xffff, 0x1234, 0x8001] {
            for b in 0..=255u8 {
                assert_eq!(crc_byte(crc, b), crc_byte_bitwise(crc, b));
            }
        }
    }

    /// The step as it was before the word-wide VCRC: a runtime-length copy and one bytewise CRC step per byte
    /// (the reference the new step must equal bit for bit, state and outputs).
    fn step_bytewise(b: &mut FecnRewrite, i: &In) -> Out {
        let out = b.out_q;
        if !i.rst_ni {
            *b = FecnRewrite::new(b.cfg).unwrap();
            return Out::default();
        }
        let w = usize::from(b.cfg.beat_bytes);
        let bytes = i.bytes_i & ((1u16 << b.bytes_width()) - 1) as u8;
        let mut data = [0u8; BEAT_MAX];
        data[..w].copy_from_slice(&i.data_i[..w]);
        let mut ebp = false;
        if i.valid_i {
            let off = if i.sop_i { 0 } else { b.off_q };
            let lnh = if i.sop_i { i.data_i[1] & 3 } else { b.lnh_q };
            let mark = if i.sop_i { i.mark_i } else { b.mark_q };
            let mut crc = if i.sop_i { 0xFFFF } else { b.crc_q };
            let mut crc_in = if i.sop_i { 0xFFFF } else { b.crc_in_q };
            let n = if !i.eop_i || bytes == 0 || usize::from(bytes) > w {
                w
            } else {
                usize::from(bytes)
            };
            let fecn_at = match lnh {
                2 if mark => Some(FECN_OFF_LOCAL),
                3 if mark => Some(FECN_OFF_GLOBAL),
                _ => None,
            };
            let received = data;
            for (k, x) in data[..n].iter_mut().enumerate() {
                if !i.eop_i || k + 2 < n {
                    crc_in = crc_byte(crc_in, *x);
                }
                if fecn_at == Some(off.saturating_add(k as u16)) {
                    *x |= FECN_BIT;
                }
                if !i.eop_i || k + 2 < n {
                    crc = crc_byte(crc, *x);
                }
            }
            if i.eop_i {
                let good = n >= 2
                    && VCRC_BYTE_ORDER.from_bytes([received[n - 2], received[n - 1]]) == !crc_in;
                ebp = !good;
                if n >= 2 {
                    let v = if good { !crc } else { crc };
                    data[n - 2..n].copy_from_slice(&VCRC_BYTE_ORDER.to_bytes(v));
                }
            }
            b.off_q = off.saturating_add(w as u16);
            b.crc_q = crc;
            b.crc_in_q = crc_in;
            b.lnh_q = lnh;
            b.mark_q = mark;
        }
        b.out_q = Out {
            valid_o: i.valid_i,
            sop_o: i.sop_i,
            eop_o: i.eop_i,
            bytes_o: bytes,
            data_o: data,
            ebp_o: ebp,
            vcrc_errs_o: b.out_q.vcrc_errs_o.saturating_add(ebp.into()),
        };
        out
    }

    /// A beat from proptest's draws: `flags` bits are reset (rare), valid, sop (1 in 8), eop (1 in 4), mark.
    fn beat(flags: u8, bytes_i: u8, data: &[u8]) -> In {
        let mut data_i = [0u8; BEAT_MAX];
        data_i.copy_from_slice(data);
        In {
            rst_ni: flags & 0x70 != 0,
            valid_i: flags & 1 != 0 || flags & 2 != 0,
            sop_i: flags & 0x1c == 0x1c,
            eop_i: flags & 0x0c == 0x08,
            bytes_i,
            data_i,
            mark_i: flags & 0x80 != 0,
        }
    }

    proptest! {
        /// The word-wide update equals `m` bytewise steps for any register, word and length 0..=8.
        #[test]
        fn word_crc_equals_bytewise(crc in any::<u16>(), word in any::<u64>(), m in 0usize..=8) {
            let want = word.to_le_bytes()[..m].iter().fold(crc, |c, &b| crc_byte(c, b));
            prop_assert_eq!(crc_word(crc, word, m), want);
        }

        /// The block equals the bytewise reference on random beat streams at every width: random data, byte
        /// counts (in and out of range), starts, ends, marks, gaps and resets, with packet starts that make
        /// LNH 2 and 3 common so FECN is set in every lane the offsets reach.
        #[test]
        fn step_equals_the_bytewise_reference(
            w in prop::sample::select(vec![4u8, 8, 12, 16, 20, 24, 28, 32]),
            beats in prop::collection::vec(
                (any::<u8>(), 0u8..40, prop::collection::vec(any::<u8>(), BEAT_MAX)),
                1..120,
            ),
        ) {
            let mut new = FecnRewrite::new(Config { beat_bytes: w }).unwrap();
            let mut old = new.clone();
            for (flags, bytes_i, data) in &beats {
                let mut i = beat(*flags, *bytes_i, data);
                if flags & 0x20 != 0 {
                    i.data_i[1] |= 2;
                }
                prop_assert_eq!(new.step(&i), step_bytewise(&mut old, &i));
                prop_assert_eq!(&new, &old);
            }
        }
    }

    #[test]
    fn bad_widths_are_refused_and_bytes_width_is_clog2() {
        for w in [0u8, 2, 6, 36, 64] {
            assert!(FecnRewrite::new(Config { beat_bytes: w }).is_err(), "{w}");
        }
        for (w, bits) in [(4u8, 3u32), (8, 4), (12, 4), (16, 5), (32, 6)] {
            assert_eq!(
                FecnRewrite::new(Config { beat_bytes: w })
                    .unwrap()
                    .bytes_width(),
                bits
            );
        }
    }
}
