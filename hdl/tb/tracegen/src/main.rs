//! `tracegen BLOCK CYCLES SEED FILE`: writes a trace of random stimulus and the Rust block's outputs for the
//! Icarus testbench `hdl/tb/BLOCK_tb.sv`, which drives the RTL twin with it and compares every output.
//!
//! A trace is a sequence of segments. Each segment starts with a configuration line (`0 ...`, the held-constant
//! configuration ports) and continues with cycle lines (`1 inputs... outputs...`, all fields hex); its first
//! cycle has `rst_ni` low, so the RTL returns to its reset state under the new configuration while the Rust
//! side starts from a freshly built block. Field order per block is in each block's module.

mod cct_shaper;
mod cong_detect;
mod credit_rx;
mod credit_tx;
mod fecn_marker;
mod fecn_rewrite;
mod pack;
mod timebase;
mod vl_arb;

use pack::Rng;
use std::io::{BufWriter, Write};

/// The blocks this tool knows, in the order `run.sh` checks them.
const BLOCKS: [&str; 9] = [
    "vl_arb",
    "cong_detect",
    "fecn_marker",
    "cct_shaper",
    "timebase",
    "fecn_rewrite_b8",
    "fecn_rewrite_b32",
    "credit_tx",
    "credit_rx",
];

/// One segment's length bounds, cycles: long enough for timers to expire, short enough for many configs.
const SEGMENT_MIN: u64 = 500;
const SEGMENT_MAX: u64 = 5000;

fn usage() -> String {
    format!(
        "usage: tracegen BLOCK CYCLES SEED FILE (BLOCK one of {})",
        BLOCKS.join(", ")
    )
}

fn parse_u64(what: &str, s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("{what} ({s}) is not a non-negative integer\n{}", usage()))
}

/// Writes `cycles` cycle lines of `block` in segments.
fn write_trace(block: &str, cycles: u64, rng: &mut Rng, w: &mut dyn Write) -> Result<(), String> {
    let mut done = 0;
    while done < cycles {
        let len = rng.range(SEGMENT_MIN, SEGMENT_MAX).min(cycles - done);
        match block {
            "vl_arb" => vl_arb::segment(rng, len, w),
            "cong_detect" => cong_detect::segment(rng, len, w),
            "fecn_marker" => fecn_marker::segment(rng, len, w),
            "cct_shaper" => cct_shaper::segment(rng, len, w),
            "timebase" => timebase::segment(rng, len, w),
            "fecn_rewrite_b8" => fecn_rewrite::segment(rng, len, 8, w),
            "fecn_rewrite_b32" => fecn_rewrite::segment(rng, len, 32, w),
            "credit_tx" => credit_tx::segment(rng, len, w),
            "credit_rx" => credit_rx::segment(rng, len, w),
            _ => Err(format!("unknown block {block}\n{}", usage())),
        }?;
        done += len;
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [block, cycles, seed, file] = args.as_slice() else {
        return Err(usage());
    };
    if !BLOCKS.contains(&block.as_str()) {
        return Err(format!("unknown block {block}\n{}", usage()));
    }
    let cycles = parse_u64("CYCLES", cycles)?;
    let seed = parse_u64("SEED", seed)?;
    let f = std::fs::File::create(file).map_err(|e| format!("cannot create {file}: {e}"))?;
    let mut w = BufWriter::new(f);
    write_trace(block, cycles, &mut Rng::new(seed), &mut w)?;
    w.flush().map_err(|e| format!("cannot write {file}: {e}"))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("tracegen: {e}");
        std::process::exit(2);
    }
}

/// Formats a write error.
pub fn io(e: std::io::Error) -> String {
    format!("write error: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields after the line kind on a (configuration, cycle) line, as each testbench's `$fscanf` reads them.
    fn fields(block: &str) -> (usize, usize) {
        match block {
            "vl_arb" => (7, 8),
            "cong_detect" => (5, 8),
            "fecn_marker" => (5, 5),
            "cct_shaper" => (7, 8),
            "fecn_rewrite_b8" | "fecn_rewrite_b32" => (1, 12),
            "credit_tx" => (1, 11),
            "credit_rx" => (4, 11),
            _ => (2, 3),
        }
    }

    #[test]
    fn traces_have_the_cycles_and_fields_the_testbenches_read() {
        for block in BLOCKS {
            let mut buf = Vec::new();
            write_trace(block, 12_000, &mut Rng::new(3), &mut buf).unwrap();
            let text = String::from_utf8(buf).unwrap();
            let (cfg_fields, cycle_fields) = fields(block);
            let (mut configs, mut cycles, mut after_config) = (0, 0, false);
            for line in text.lines() {
                let tok: Vec<&str> = line.split(' ').collect();
                assert!(
                    tok.iter()
                        .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit())),
                    "{block}: {line}"
                );
                match tok[0] {
                    "0" => {
                        assert_eq!(tok.len() - 1, cfg_fields, "{block}: {line}");
                        configs += 1;
                        after_config = true;
                    }
                    "1" => {
                        assert_eq!(tok.len() - 1, cycle_fields, "{block}: {line}");
                        // Each segment starts in reset, so the RTL state matches a freshly built block.
                        if after_config {
                            assert_eq!(tok[1], "0", "{block}: segment does not start in reset");
                        }
                        after_config = false;
                        cycles += 1;
                    }
                    k => panic!("{block}: line kind {k}"),
                }
            }
            assert_eq!(cycles, 12_000, "{block}");
            assert!(configs >= 3, "{block}: {configs} segments");
        }
    }

    #[test]
    fn same_seed_same_trace_and_bad_arguments_are_errors() {
        let gen = |seed| {
            let mut buf = Vec::new();
            write_trace("cct_shaper", 600, &mut Rng::new(seed), &mut buf).unwrap();
            buf
        };
        assert_eq!(gen(5), gen(5));
        assert_ne!(gen(5), gen(6));
        let err = write_trace("nope", 10, &mut Rng::new(1), &mut Vec::new()).unwrap_err();
        assert!(err.starts_with("unknown block nope"), "{err}");
        assert!(parse_u64("CYCLES", "-3")
            .unwrap_err()
            .starts_with("CYCLES (-3)"));
    }
}
