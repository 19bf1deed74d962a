use clap::Parser;

#[cfg(feature = "cosim")]
mod cli_cosim;

/// ibcycle: cycle-level, bit-accurate InfiniBand / RoCEv2 switch and HCA models with congestion control.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[cfg(feature = "cosim")]
    #[command(subcommand)]
    command: Option<cli_cosim::Command>,
}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    #[cfg(feature = "cosim")]
    if let Some(cmd) = _cli.command {
        std::process::exit(cli_cosim::run(cmd));
    }
    Ok(())
}
