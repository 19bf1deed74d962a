//! `credit_tx` traces. Configuration line: `0 fccl_reset_i`; cycle line:
//! `1 rst_ni fc_valid_i fc_fccl_i req_valid_i req_blocks_i take_i fctbs_o fccl_o avail_o send_ok_o err_o`.
//!
//! Stimulus: requests of 1 to 66 blocks, taken when they fit the credit held (so FCTBS wraps its 12 bits
//! every few hundred cycles) and now and then without credit (`err_o`); flow-control packets with an FCCL
//! a little ahead of FCTBS, right at the 2048-block window's edge, or anywhere, often in the cycle of a
//! request (the same-cycle order matters). Rare resets inside a segment.

use crate::io;
use crate::pack::{h, Rng};
use rtl_model::blocks::credit_tx::{fits, Config, CreditTx, In};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let cfg = Config {
        fccl_reset: match rng.below(3) {
            0 => 0,
            1 => rng.range(1, 200) as u16,
            _ => rng.below(4096) as u16,
        },
    };
    let mut m = CreditTx::new(cfg).map_err(|e| e.to_string())?;
    writeln!(w, "0 {}", h(cfg.fccl_reset)).map_err(io)?;
    // Percent of cycles with a request and with a flow-control packet, redrawn now and then.
    let (mut req_pct, mut fc_pct) = (70, 10);
    for c in 0..len {
        if rng.chance(1, 300) {
            req_pct = [0, 20, 70, 100][rng.below(4) as usize];
            fc_pct = [1, 10, 40][rng.below(3) as usize];
        }
        let blocks = if rng.chance(1, 4) {
            rng.range(1, 66)
        } else {
            rng.range(1, 34)
        } as u8;
        let req = rng.chance(req_pct, 100);
        let ok = fits(m.fccl_q, m.fctbs_q, blocks);
        let fc = rng.chance(fc_pct, 100);
        let fccl = match rng.below(10) {
            0..=6 => m.fctbs_q.wrapping_add(rng.range(0, 2200) as u16),
            7..=8 => m.fctbs_q.wrapping_add(rng.range(2040, 2056) as u16),
            _ => rng.next() as u16,
        } & 0xfff;
        let i = In {
            rst_ni: c != 0 && !rng.chance(1, 5000),
            fc_valid_i: fc,
            fc_fccl_i: fccl,
            req_valid_i: req,
            req_blocks_i: blocks,
            take_i: if rng.chance(1, 100) {
                rng.chance(1, 2)
            } else {
                req && ok
            },
        };
        let o = m.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(i.fc_valid_i),
            h(i.fc_fccl_i),
            h(i.req_valid_i),
            h(i.req_blocks_i),
            h(i.take_i),
            h(o.fctbs_o),
            h(o.fccl_o),
            h(o.avail_o),
            h(o.send_ok_o),
            h(o.err_o)
        )
        .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace reaches what the bug variants break: FCTBS wrapping past 4095, refused requests, takes
    /// without credit, and flow-control packets in the cycle of a request.
    #[test]
    fn counters_wrap_and_credit_is_refused_and_violated() {
        let mut buf = Vec::new();
        segment(&mut Rng::new(2), 20_000, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let (mut wraps, mut refused, mut errs, mut fc_with_req, mut last) = (0, 0, 0, 0, 0u64);
        for l in text.lines().skip(1) {
            let t: Vec<u64> = l
                .split(' ')
                .map(|x| u64::from_str_radix(x, 16).unwrap())
                .collect();
            let (rst, fc, req, fctbs, ok, err) = (t[1], t[2], t[4], t[7], t[10], t[11]);
            wraps += u32::from(rst == 1 && fctbs < last);
            refused += u32::from(req == 1 && ok == 0);
            errs += err;
            fc_with_req += u32::from(fc == 1 && req == 1);
            last = fctbs;
        }
        assert!(wraps > 3, "{wraps} wraps");
        assert!(refused > 100, "{refused} refusals");
        assert!(errs > 10, "{errs} errors");
        assert!(fc_with_req > 100, "{fc_with_req}");
    }
}
