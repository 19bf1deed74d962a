//! `tbtrace BLOCK CYCLES SEED FILE [STRETCH]`: writes a testbench trace ([`cosim::tb_trace`]) of the
//! co-simulation's own seeded stimulus and the Rust block's outputs for the Icarus testbench
//! `hdl/tb/<module>_tb.sv` (`hdl/tb/run.sh` runs it). STRETCH (default 2,000) is the most cycles one
//! configuration runs before the schedule moves to the next.

fn run() -> Result<(), String> {
    let usage = "usage: tbtrace BLOCK CYCLES SEED FILE [STRETCH]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (block, cycles, seed, file, stretch) = match args.as_slice() {
        [b, c, s, f] => (b, c, s, f, "2000"),
        [b, c, s, f, t] => (b, c, s, f, t.as_str()),
        _ => return Err(usage.into()),
    };
    let num = |what: &str, v: &str| -> Result<u64, String> {
        v.parse()
            .map_err(|_| format!("{what} ({v}) is not a non-negative integer\n{usage}"))
    };
    let (cycles, seed, stretch) = (
        num("CYCLES", cycles)?,
        num("SEED", seed)?,
        num("STRETCH", stretch)?,
    );
    let f = std::fs::File::create(file).map_err(|e| format!("cannot create {file}: {e}"))?;
    let mut w = std::io::BufWriter::new(f);
    cosim::tb_trace::write_named(block, &mut w, seed, cycles, stretch.max(1))?;
    std::io::Write::flush(&mut w).map_err(|e| format!("cannot write {file}: {e}"))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("tbtrace: {e}");
        std::process::exit(2);
    }
}
