//! `fecn_rewrite` traces at one beat width (`fecn_rewrite_b8`, `fecn_rewrite_b32`: the RTL parameter
//! `BeatBytes`, which the testbench takes as its own parameter). Configuration line: `0 beat_bytes` (no
//! configuration port; the testbench checks it against its parameter); cycle line:
//! `1 rst_ni valid_i sop_i eop_i bytes_i data_i mark_i valid_o sop_o eop_o bytes_o data_o ebp_o vcrc_errs_o`,
//! `data_*` as
//! `8 * beat_bytes` bits, byte `k` at bits `[8k +: 8]`.
//!
//! Stimulus: a packet stream, mostly well-formed IB packets (`4n + 2` bytes, LNH 2 or 3, a correct VCRC, FECN
//! mostly clear) of 26 to 302 bytes, now and then up to 4,178 (the 4096-byte MTU), half of them marked; some
//! raw packets (LNH 0, 1), wrong VCRCs, lengths that are no IB length (a last beat of 1 byte) and packets cut
//! short by the next `sop_i`. Idle cycles (`valid_i` low, junk on the other inputs) come between and within
//! packets at a rate that changes now and then; `bytes_i` on beats other than the last and `mark_i` after the
//! first beat are junk. Rare resets inside a segment.

use crate::io;
use crate::pack::{h, Packed, Rng};
use rtl_model::blocks::fecn_rewrite::{Config, FecnRewrite, In, BEAT_MAX};
use rtl_model::clocked::Clocked;
use rtl_model::crc::vcrc::fill_vcrc;
use std::io::Write;

/// Largest packet: LRH, GRH, BTH, RETH, a 4096-byte payload, ICRC and VCRC.
const PKT_MAX: u64 = 4178;

/// The packet stream of one segment.
struct Stream {
    pkt: Vec<u8>,
    pos: usize,
    mark: bool,
    gap_pct: u64,
}

impl Stream {
    fn new_packet(&mut self, rng: &mut Rng) {
        let words = if rng.chance(1, 20) {
            rng.range(5, (PKT_MAX - 2) / 4)
        } else {
            rng.range(6, 75)
        };
        let mut len = (4 * words + 2) as usize;
        if rng.chance(1, 20) {
            len = rng.range(1, 400) as usize;
        }
        self.pkt.clear();
        self.pkt.extend((0..len).map(|_| rng.next() as u8));
        let lnh = match rng.below(10) {
            0 => rng.below(2) as u8,
            1..=5 => 2,
            _ => 3,
        };
        if len > 1 {
            self.pkt[1] = (self.pkt[1] & !3) | lnh;
        }
        // FECN mostly clear on arrival, so setting it shows (a set one stays set either way).
        for at in [12, 52] {
            if at < len && rng.chance(4, 5) {
                self.pkt[at] &= 0x7f;
            }
        }
        if !rng.chance(1, 10) {
            fill_vcrc(&mut self.pkt);
        }
        self.mark = rng.chance(1, 2);
        self.pos = 0;
    }

    /// The next cycle's inputs (reset high; the caller decides resets).
    fn next(&mut self, rng: &mut Rng, w: usize) -> In {
        let mut junk = In {
            rst_ni: true,
            valid_i: false,
            sop_i: rng.chance(1, 2),
            eop_i: rng.chance(1, 2),
            bytes_i: rng.next() as u8,
            data_i: [0; BEAT_MAX],
            mark_i: rng.chance(1, 2),
        };
        for b in junk.data_i.iter_mut() {
            *b = rng.next() as u8;
        }
        if rng.chance(1, 500) {
            self.gap_pct = [0, 5, 30, 80][rng.below(4) as usize];
        }
        if rng.chance(self.gap_pct, 100) {
            return junk;
        }
        if self.pos >= self.pkt.len() || (self.pos > 0 && rng.chance(1, 2000)) {
            self.new_packet(rng);
        }
        let end = (self.pos + w).min(self.pkt.len());
        let n = end - self.pos;
        junk.data_i[..n].copy_from_slice(&self.pkt[self.pos..end]);
        let eop = end == self.pkt.len();
        let i = In {
            valid_i: true,
            sop_i: self.pos == 0,
            eop_i: eop,
            bytes_i: if eop && !rng.chance(1, 50) {
                n as u8
            } else {
                junk.bytes_i
            },
            mark_i: if self.pos == 0 {
                self.mark
            } else {
                junk.mark_i
            },
            ..junk
        };
        self.pos = end;
        i
    }
}

/// The beat's first `w` bytes as one packed field.
fn data(d: &[u8; BEAT_MAX], w: usize) -> String {
    let mut p = Packed::new();
    for &b in &d[..w] {
        p.push(b.into(), 8);
    }
    p.hex()
}

/// One segment of `len` cycles at `beat` bytes per beat.
pub fn segment(rng: &mut Rng, len: u64, beat: u8, w: &mut dyn Write) -> Result<(), String> {
    let cfg = Config { beat_bytes: beat };
    let mut m = FecnRewrite::new(cfg).map_err(|e| e.to_string())?;
    let bw = m.bytes_width();
    writeln!(w, "0 {}", h(beat)).map_err(io)?;
    let mut s = Stream {
        pkt: Vec::new(),
        pos: 0,
        mark: false,
        gap_pct: 5,
    };
    let wb = usize::from(beat);
    let mut rst_left = 0u64;
    for c in 0..len {
        let mut i = s.next(rng, wb);
        if c == 0 {
            rst_left = 1;
        } else if rst_left == 0 && rng.chance(1, 3000) {
            rst_left = rng.range(1, 3);
        }
        if rst_left > 0 {
            rst_left -= 1;
            i.rst_ni = false;
            // After a reset the block starts afresh; so does the stream (a new packet with sop_i).
            s.pos = s.pkt.len();
        }
        // The port holds `bw` bits of `bytes_i`; the model masks the rest, as the port does.
        let bytes_port = i.bytes_i & ((1u16 << bw) - 1) as u8;
        let o = m.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(i.valid_i),
            h(i.sop_i),
            h(i.eop_i),
            h(bytes_port),
            data(&i.data_i, wb),
            h(i.mark_i),
            h(o.valid_o),
            h(o.sop_o),
            h(o.eop_o),
            h(o.bytes_o),
            data(&o.data_o, wb),
            h(o.ebp_o),
            h(o.vcrc_errs_o)
        )
        .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace exercises what the bug variants break: FECN set in marked packets of both header kinds
    /// (byte 12 and byte 52 of a packet change) and regenerated VCRCs, at both widths.
    #[test]
    fn marked_local_and_global_packets_get_rewritten() {
        for beat in [8u8, 32] {
            let mut buf = Vec::new();
            segment(&mut Rng::new(4), 5000, beat, &mut buf).unwrap();
            let text = String::from_utf8(buf).unwrap();
            let rows: Vec<Vec<&str>> = text
                .lines()
                .skip(1)
                .map(|l| l.split(' ').collect())
                .collect();
            // Output beat of row k+1 against input beat of row k: a changed beat is a rewrite.
            let changed = rows
                .windows(2)
                .filter(|w| w[0][2] == "1" && w[1][8] == "1" && w[0][6] != w[1][12])
                .count();
            let marked = rows
                .iter()
                .filter(|r| r[2] == "1" && r[3] == "1" && r[7] == "1")
                .count();
            assert!(changed > 50, "beat {beat}: {changed} rewritten beats");
            assert!(marked > 20, "beat {beat}: {marked} marked packets");
        }
    }
}
