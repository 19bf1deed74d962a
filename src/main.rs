use clap::Parser;

/// ibcycle: cycle-level, bit-accurate InfiniBand / RoCEv2 switch and HCA models with congestion control.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
