use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: a fabric's state is many small per-port vectors, and mimalloc packs
/// them more closely (size-class pages), so a step touches fewer pages and cache lines. It costs some peak
/// memory; docs/performance.md has the trade measured.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's option setter, exported by the library the `mimalloc` crate links in.
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_arena_eager_commit` in mimalloc's `mi_option_t` (the same in its v2 and v3).
const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

/// Turns off mimalloc's eager commit of its arenas. With it on (its default on Linux) the arenas are
/// mapped committed and advised for transparent huge pages, so a 4 KiB page a fabric's build touches
/// brings in a 2 MiB one: the 11,664-node fat tree peaked at 2.6 GiB (0.6 GiB of it used) and its build
/// spent most of its time zeroing pages, with no gain in stepping speed (docs/performance.md). Run as a
/// constructor, before the runtime's first allocation reserves the first arena (set in `main`, that
/// arena, 1 GiB, stayed eagerly committed and the tree still peaked at 1.4 GiB); arenas then commit on
/// demand.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static LAZY_ARENA_COMMIT: extern "C" fn() = lazy_arena_commit;

#[cfg(target_os = "linux")]
extern "C" fn lazy_arena_commit() {
    // SAFETY: `mi_option_set` only stores the value in mimalloc's option table (it may run before
    // mimalloc's own initialisation, which reads the environment for options not set so); the index is a
    // valid `mi_option_t`.
    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
}

use clap::{Parser, Subcommand};

mod cli_bench;
#[cfg(feature = "cosim")]
mod cli_cosim;
#[cfg(feature = "cosim")]
mod cli_rtlcheck;
mod cli_sweep;

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
    /// Run a scenario file and write DIR/summary.json, DIR/throughput.csv, DIR/throughput.png and DIR/cnp.csv.
    ///
    /// The run fails (exit status 1) on a bad scenario or when the integrity check finds a lost packet, a
    /// leaked credit or a lossless violation. A progress bar is shown only when stderr is a terminal.
    Run {
        /// The scenario file (TOML; see docs/scenario-format.md).
        file: PathBuf,
        /// Directory to write the outputs into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Capture a link's packets (both directions) into DIR/<link>.pcap for Wireshark/tshark.
        ///
        /// LINK is a link by its ends (`S1:8-S2:8`, either order), by one end (`H4`: the HCA's link; `S2:2`:
        /// the link on that switch port), or `all`. Repeatable. IB links are written as ibdump does (pcap
        /// link type ERF, InfiniBand records; flow-control packets as link records), with headers as the
        /// switch rewrote them (VL, FECN/BECN), CNPs as IB CNPs, exact ICRC/VCRC and the deterministic
        /// payload. Timestamps are simulated time. `:` in file names becomes `_` (S1_8-S2_8.pcap).
        #[arg(long = "pcap", value_name = "LINK")]
        pcap: Vec<String>,
        /// Write the per-clock signals of a block into DIR/waves.vcd (value changes only).
        ///
        /// BLOCK is a switch port (`S2:2`: its congestion state, root/victim, marking state, VoQ fill,
        /// input buffer, credits and packet starts/marks, per VL) or an HCA (`H1`: each of its flows' CCTI,
        /// its credits and receive buffer per VL). Repeatable; all go into one file. Timescale 1 ps.
        #[arg(long = "vcd", value_name = "BLOCK")]
        vcd: Vec<String>,
        /// Trace a switch port-VL into DIR/trace-<switch>_<port>-vl<VL>.csv (e.g. `S2:2:0`).
        ///
        /// Columns: cycle, congested, root, victim, voq_fill, buf_used, credits_avail, marks,
        /// packets_started (the last two cumulative). One row per change: a row is written whenever a
        /// value differs from the row before, so every value holds until the next row. Repeatable.
        #[arg(long = "trace", value_name = "PORT:VL")]
        trace: Vec<String>,
        /// Threads for stepping the fabric (results are identical for any count). They pay on fabrics of
        /// tens of switches and more, with a core each; on a fabric of a few switches the windows between
        /// them cost more than their work (docs/performance.md).
        #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
        threads: u64,
        /// Record what the fabric hands SWITCH each cycle (packet heads, flow-control packets) and its
        /// configuration into DIR/port-trace-<SWITCH>.txt: a switch port trace (replay through the switch
        /// RTL with `ibcycle cosim ib_switch --replay FILE`; format in cosim/src/switch_trace.rs). Recorded
        /// by a second run of the scenario after the normal one.
        #[arg(long = "port-trace", value_name = "SWITCH")]
        port_trace: Option<String>,
        /// Refuse, before building the fabric, a run whose estimated memory exceeds SIZE (bytes, or with
        /// K, M, G or T; default: half of the machine's memory). The estimate counts the switches, HCAs
        /// and wires, the samples and the message latencies the run keeps (src/run/memory.rs).
        #[arg(long = "max-memory", value_name = "SIZE", value_parser = ibcycle::run::memory::parse_size)]
        max_memory: Option<u64>,
    },
    /// Measure the simulator's speed on a fixed fabric (see docs/performance.md).
    Bench(cli_bench::Args),
    #[cfg(feature = "cosim")]
    #[command(flatten)]
    Cosim(cli_cosim::Command),
    /// Check your own switch RTL against the golden model through a port map (see docs/rtl-check.md).
    ///
    /// Verilates the files the map names, drives the RTL and the golden model from the same traffic (a
    /// scenario's at one switch, random, or a port trace) and checks every packet with a transaction-level
    /// scoreboard. Prints "N packets checked on P ports, no violation" or the first violation with a VCD
    /// around it; exits 1 on a violation, 2 when it cannot run (Verilator missing, a bad map).
    #[cfg(feature = "cosim")]
    RtlCheck(cli_rtlcheck::Args),
    /// Run a scenario over a grid of key values, in parallel or as shards of a Slurm job array, and write
    /// DIR/sweep.csv (one row per point) and each point's outputs under DIR/points/.
    Sweep(cli_sweep::Args),
    /// Write a scenario file from what a real fabric's tools print (see docs/simulate-your-cluster.md).
    #[command(subcommand)]
    Import(ibcycle::import::Command),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // With IBCYCLE_PARSE_ONLY set the command line is only parsed (and refused if wrong), never run:
    // tests/docs.rs checks every command the documentation shows against the real parser this way.
    if std::env::var_os("IBCYCLE_PARSE_ONLY").is_some() {
        return ExitCode::SUCCESS;
    }
    match cli.command {
        Command::Run {
            file,
            out,
            pcap,
            vcd,
            trace,
            threads,
            port_trace,
            max_memory,
        } => ibcycle::run::cli_full(
            &file,
            &out,
            &ibcycle::run::ObserveOpts { pcap, vcd, trace },
            threads as usize,
            port_trace.as_deref(),
            max_memory,
        ),
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
        #[cfg(feature = "cosim")]
        Command::RtlCheck(a) => cli_rtlcheck::run(a),
        Command::Sweep(a) => cli_sweep::run(a),
        Command::Import(c) => ibcycle::import::cli(c),
    }
}
