//! Testbench traces: the co-simulation's own seeded stimulus and the Rust block's outputs, cycle by cycle, as
//! the Icarus testbenches `hdl/tb/<module>_tb.sv` read them. The Icarus replay (`hdl/tb/run.sh`) and the
//! Verilator lockstep run therefore check the RTL on the same stimulus generators ([`Block::configure`] and
//! its `Stim`), over the same schedule of configurations ([`segment`]), with shorter stretches per
//! configuration (Icarus is slow, and a short run should still pass through several configurations).
//!
//! Format, one line per record, fields separated by single spaces, every value hex without a prefix
//! (`$fscanf("%h")`):
//!
//! ```text
//! 0 <parameters> <held ports>      a configuration: the module's parameter values then its held ports,
//!                                  in port-table order; the cycles after it run under it
//! 1 <inputs> <outputs>             a cycle: the input ports, then the Rust block's output ports, in
//!                                  port-table order ([`crate::table`])
//! ```
//!
//! Each configuration's first cycle has `rst_ni` low (the inputs' default), so the RTL returns to its reset
//! state under the new held ports while the Rust block is freshly built: the reset edge the co-simulation's
//! adapters apply when they build a model.

use crate::blocks::{segment, Block};
use crate::ports::Ports;
use crate::table::{module, Dir};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// Writes `cycles` cycle lines of block `B` from the schedule of `seed`, each configuration running at most
/// `stretch` cycles (and at most its [`Block::SEGMENT`]).
pub fn write<B: Block>(
    mut w: impl Write,
    seed: u64,
    cycles: u64,
    stretch: u64,
) -> Result<(), String> {
    let m = module(B::NAME).ok_or_else(|| format!("{} is not in the port table", B::NAME))?;
    let width = |dir: Dir| -> Vec<u32> {
        m.ports
            .iter()
            .filter(|p| p.dir == dir)
            .map(|p| p.width)
            .collect()
    };
    let (held, ins, outs) = (width(Dir::Held), width(Dir::In), width(Dir::Out));
    let io = |e: std::io::Error| format!("write error: {e}");
    let mut line = String::new();
    let mut done = 0;
    let mut k = 0;
    while done < cycles {
        let seg = segment::<B>(seed, k);
        k += 1;
        let len = stretch.min(seg.len).min(cycles - done).max(1);
        let mut model = B::model(&seg.cfg).map_err(|e| e.to_string())?;
        line.clear();
        line.push('0');
        for (_, v) in m.params {
            line.push_str(&format!(" {v:x}"));
        }
        let ports = B::config_ports(&seg.cfg);
        if ports.len() != held.len() {
            return Err(format!(
                "{}: config_ports does not give every held port",
                B::NAME
            ));
        }
        for ((_, v), w) in ports.iter().zip(&held) {
            line.push_str(&format!(" {:x}", v.masked(*w)));
        }
        writeln!(w, "{line}").map_err(io)?;
        let reset = B::In::default();
        for i in std::iter::once(reset).chain(seg.stim).take(len as usize) {
            let o = model.step(&i);
            line.clear();
            line.push('1');
            for (n, w) in ins.iter().enumerate() {
                line.push_str(&format!(" {:x}", i.get(n).masked(*w)));
            }
            for (n, w) in outs.iter().enumerate() {
                line.push_str(&format!(" {:x}", o.get(n).masked(*w)));
            }
            writeln!(w, "{line}").map_err(io)?;
        }
        done += len;
    }
    Ok(())
}

/// [`write`] for the block named `name` (a block of the registry; each has an Icarus testbench).
pub fn write_named(
    name: &str,
    w: impl Write,
    seed: u64,
    cycles: u64,
    stretch: u64,
) -> Result<(), String> {
    use crate::blocks::*;
    match name {
        "credit_tx" => write::<credit_tx::CreditTxBlock>(w, seed, cycles, stretch),
        "credit_rx" => write::<credit_rx::CreditRxBlock>(w, seed, cycles, stretch),
        "timebase" => write::<timebase::TimebaseBlock>(w, seed, cycles, stretch),
        "fecn_marker" => write::<fecn_marker::FecnMarkerBlock>(w, seed, cycles, stretch),
        "vl_arb" => write::<vl_arb::VlArbBlock>(w, seed, cycles, stretch),
        "cong_detect" => write::<cong_detect::CongDetectBlock>(w, seed, cycles, stretch),
        "cct_shaper" => write::<cct_shaper::CctShaperBlock>(w, seed, cycles, stretch),
        "fecn_rewrite_b8" => write::<fecn_rewrite::FecnRewriteB8Block>(w, seed, cycles, stretch),
        "fecn_rewrite_b32" => write::<fecn_rewrite::FecnRewriteB32Block>(w, seed, cycles, stretch),
        other => Err(format!(
            "no testbench trace for {other} (blocks: credit_tx credit_rx timebase fecn_marker vl_arb \
             cong_detect cct_shaper fecn_rewrite_b8 fecn_rewrite_b32)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line has the fields the testbench reads (parameters and held ports on a configuration line;
    /// inputs and outputs on a cycle line), every configuration starts in reset, and a seed gives the same
    /// trace every time.
    #[test]
    fn traces_have_the_fields_the_testbenches_read() {
        for m in crate::registry::blocks() {
            let count = |d: Dir| m.ports.iter().filter(|p| p.dir == d).count();
            let gen = |seed| {
                let mut buf = Vec::new();
                write_named(m.name, &mut buf, seed, 3000, 700).unwrap();
                String::from_utf8(buf).unwrap()
            };
            let text = gen(3);
            let (mut configs, mut cycles, mut first) = (0, 0, false);
            for line in text.lines() {
                let tok: Vec<&str> = line.split(' ').collect();
                assert!(
                    tok.iter()
                        .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit())),
                    "{}: {line}",
                    m.name
                );
                match tok[0] {
                    "0" => {
                        assert_eq!(
                            tok.len() - 1,
                            m.params.len() + count(Dir::Held),
                            "{}",
                            m.name
                        );
                        configs += 1;
                        first = true;
                    }
                    "1" => {
                        assert_eq!(
                            tok.len() - 1,
                            count(Dir::In) + count(Dir::Out),
                            "{}",
                            m.name
                        );
                        if first {
                            assert_eq!(
                                tok[1], "0",
                                "{}: a configuration starts out of reset",
                                m.name
                            );
                        }
                        first = false;
                        cycles += 1;
                    }
                    k => panic!("{}: line kind {k}", m.name),
                }
            }
            assert_eq!(cycles, 3000, "{}", m.name);
            assert_eq!(configs, 5, "{}", m.name);
            assert_eq!(text, gen(3), "{}", m.name);
            assert_ne!(text, gen(4), "{}", m.name);
        }
        assert!(write_named("ib_switch", Vec::new(), 1, 10, 10).is_err());
    }
}
