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
//!
//! Rewrite (IBA layout: LRH 8 bytes, GRH 40 when LRH LNH = 3, BTH; FECN is bit 7 of BTH byte 4):
//! - FECN: a marked packet with LNH 2 (local) or 3 (global) gets bit 7 of packet byte 12 or 52 set; raw
//!   packets (LNH 0, 1) have no BTH and are never touched.
//! - VCRC: the last two bytes of every packet become the VCRC of the bytes before them, in
//!   [`crate::crc::vcrc::VCRC_BYTE_ORDER`]; an unmarked packet with a correct VCRC passes unchanged.
//!
//! Designer choices, named:
//! - The VCRC must lie in the last beat. IB packets are `4n + 2` bytes and beats start at a packet's first
//!   byte, so with `beat_bytes` a multiple of 4 ([`Config::validate`]) the last beat has at least 2 bytes; a
//!   last beat of 1 valid byte (no IB packet) passes without a VCRC rewrite.
//! - One cycle of latency, no back-pressure.
//! - A beat without `sop_i` continues the current packet (offsets saturate at 65535). Bytes past `bytes_i` in
//!   the last beat pass unchanged, and so does `data_i` while `valid_i` is low.
//!
//! State: `off_q` (bytes before this beat), `crc_q` (VCRC register over them, reset 0xFFFF), `lnh_q`,
//! `mark_q`, and the output registers.

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
    /// VCRC register over them.
    pub crc_q: u16,
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

/// One byte into a VCRC register.
#[inline]
fn crc_byte(crc: u16, b: u8) -> u16 {
    (crc >> 8) ^ CRC_TABLE[usize::from((crc as u8) ^ b)]
}

impl FecnRewrite {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(FecnRewrite {
            cfg,
            off_q: 0,
            crc_q: 0xFFFF,
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
        u32::from(self.cfg.beat_bytes)
            .next_power_of_two()
            .trailing_zeros()
            + u32::from(self.cfg.beat_bytes.is_power_of_two())
    }
}

impl Clocked for FecnRewrite {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        let out = self.out_q;
        if !i.rst_ni {
            *self = FecnRewrite::new(self.cfg).unwrap_or_else(|_| unreachable!("validated in new"));
            return Out::default();
        }
        let w = usize::from(self.cfg.beat_bytes);
        let bw = self.bytes_width();
        let bytes = i.bytes_i & ((1u16 << bw) - 1) as u8;
        let mut data = [0u8; BEAT_MAX];
        data[..w].copy_from_slice(&i.data_i[..w]);
        if i.valid_i {
            let off = if i.sop_i { 0 } else { self.off_q };
            let lnh = if i.sop_i { i.data_i[1] & 3 } else { self.lnh_q };
            let mark = if i.sop_i { i.mark_i } else { self.mark_q };
            let mut crc = if i.sop_i { 0xFFFF } else { self.crc_q };
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
            for (k, b) in data[..n].iter_mut().enumerate() {
                if fecn_at == Some(off.saturating_add(k as u16)) {
                    *b |= FECN_BIT;
                }
                if !i.eop_i || k + 2 < n {
                    crc = crc_byte(crc, *b);
                }
            }
            if i.eop_i && n >= 2 {
                data[n - 2..n].copy_from_slice(&VCRC_BYTE_ORDER.to_bytes(!crc));
            }
            self.off_q = off.saturating_add(w as u16);
            self.crc_q = crc;
            self.lnh_q = lnh;
            self.mark_q = mark;
        }
        self.out_q = Out {
            valid_o: i.valid_i,
            sop_o: i.sop_i,
            eop_o: i.eop_i,
            bytes_o: bytes,
            data_o: data,
        };
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
    use crate::crc::vcrc::{fill_vcrc, vcrc, VCRC_LEN};

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
        let w = usize::from(b.config().beat_bytes);
        let mut got = Vec::new();
        let beats: Vec<&[u8]> = p.chunks(w).collect();
        let mut take = |o: Out| {
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
        got
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

    #[test]
    fn table_crc_equals_the_bit_loop() {
        for crc in [0u16, 0xffff, 0x1234, 0x8001] {
            for b in 0..=255u8 {
                assert_eq!(crc_byte(crc, b), crc_byte_bitwise(crc, b));
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
