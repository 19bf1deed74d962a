//! `timebase` traces. Configuration line: `0 inc_i modulus_i` (the reduced ratio of a random core clock);
//! cycle line: `1 rst_ni tick_o ts_o`.

use crate::io;
use crate::pack::{h, Rng};
use rtl_model::blocks::timebase::{ClockSpec, Config, In, Timebase};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// A random core clock with a tick every 1 to about 3000 cycles, mostly a fractional number of them.
fn clock(rng: &mut Rng) -> ClockSpec {
    match rng.below(5) {
        0 => ClockSpec::FreqKhz(1_000_000),
        1 => ClockSpec::FreqKhz(rng.range(977, 200_000) as u32),
        2 => ClockSpec::FreqKhz(rng.range(977, 3_000_000) as u32),
        3 => ClockSpec::PeriodPs(rng.range(5_000, 1_023_999) as u32),
        _ => ClockSpec::PeriodPs(rng.range(342, 1_023_999) as u32),
    }
}

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let mut tb = Timebase::new(Config { clock: clock(rng) }).map_err(|e| e.to_string())?;
    writeln!(w, "0 {} {}", h(tb.inc()), h(tb.modulus())).map_err(io)?;
    for c in 0..len {
        let i = In {
            rst_ni: c != 0 && !rng.chance(1, 2000),
        };
        let o = tb.step(&i);
        writeln!(w, "1 {} {} {}", h(i.rst_ni), h(o.tick_o), h(o.ts_o)).map_err(io)?;
    }
    Ok(())
}
