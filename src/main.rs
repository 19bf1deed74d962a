use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli_bench;
#[cfg(feature = "cosim")]
mod cli_cosim;

/// ibcycle: cycle-level, bit-accurate InfiniBand / RoCEv2 switch and HCA models with congestion control.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write sample captures with one packet of every kind the model emits.
    ///
    /// Packets: IB data with and without FECN/BECN, RC ACK with BECN, IB CNP, GRH packet, flow-control packets; RoCEv2 over IPv4/IPv6 with ECN
    /// 00/10/11, RoCEv2 CNP, PFC. Written as DIR/ib.pcap (ERF, as ibdump writes) and DIR/roce.pcap (Ethernet).
    /// Open them with Wireshark or `tshark -V -r DIR/ib.pcap`.
    Samples {
        /// Directory to write the captures into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Run a scenario file and write DIR/summary.json, DIR/throughput.csv and DIR/throughput.png.
    ///
    /// The run fails (exit status 1) on a bad scenario or when the integrity check finds a lost packet, a
    /// leaked credit or a lossless violation. A progress bar is shown only when stderr is a terminal.
    Run {
        /// The scenario file (TOML; see README).
        file: PathBuf,
        /// Directory to write the outputs into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Threads for stepping the fabric (results are identical for any count).
        #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
        threads: u64,
    },
    /// Measure the simulator's speed on a fixed fabric (see README, Performance).
    Bench(cli_bench::Args),
    #[cfg(feature = "cosim")]
    #[command(flatten)]
    Cosim(cli_cosim::Command),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Run { file, out, threads } => {
            ibcycle::run::cli_threads(&file, &out, threads as usize)
        }
        Command::Bench(a) => cli_bench::run(a),
        Command::Samples { out } => match ibcycle::rtl_model::samples::write_samples(&out) {
            Ok(set) => {
                println!(
                    "wrote {} ({} packets) and {} ({} packets)",
                    out.join("ib.pcap").display(),
                    set.ib.len(),
                    out.join("roce.pcap").display(),
                    set.roce.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ibcycle samples: {e}");
                ExitCode::FAILURE
            }
        },
        #[cfg(feature = "cosim")]
        Command::Cosim(c) => ExitCode::from(cli_cosim::run(c) as u8),
    }
}
