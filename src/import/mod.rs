//! `ibcycle import`: scenario files from what tools on a real fabric print.

use std::path::PathBuf;
use std::process::ExitCode;

pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod lfts;

/// What to import.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Write a scenario with the topology `ibnetdiscover` printed (its default topology format, or the
    /// ports report of `ibnetdiscover -p`).
    ///
    /// Every switch (with the port count the file gives), every channel adapter (named by its node
    /// description where that is unique and usable as a name, else `H-<guid>`), every link once with its
    /// width and speed. Both ends of a link must agree. A multi-port adapter is imported with its first
    /// connected port; its other ports are listed as not imported. The minimum-hop routes (or with
    /// `--updown` up/down routes) are checked for credit loops. The scenario has no flows unless `--incast`,
    /// `--all-to-all`, `--shift`, `--permutation` or `--bisection` is given. In a ports report
    /// every CA port is an HCA of its own (the report does not say which ports share an adapter).
    Ibnetdiscover {
        /// The file `ibnetdiscover` wrote.
        file: PathBuf,
        /// The scenario file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Add saturating flows from every other HCA to the last HCA of the file.
        #[arg(long, group = "traffic")]
        incast: bool,
        /// Add a saturating flow from every HCA to every other.
        #[arg(long, group = "traffic")]
        all_to_all: bool,
        /// Add a `[[traffic]]` shift: HCA i sends to HCA (i + K) mod n.
        #[arg(long, value_name = "K", group = "traffic")]
        shift: Option<u64>,
        /// Add a `[[traffic]]` random permutation (no HCA to itself) drawn from SEED.
        #[arg(long, value_name = "SEED", group = "traffic")]
        permutation: Option<u64>,
        /// Add a `[[traffic]]` bisection: the first half of the HCAs with the second, pair by pair, both ways.
        #[arg(long, group = "traffic")]
        bisection: bool,
        /// Route up/down instead of minimum-hop (for fabrics that are not trees: rings, meshes); the roots
        /// are written into the scenario.
        #[arg(long)]
        updown: bool,
        /// A root of the up/down routing (a switch's name, description or GUID; repeatable); default: the
        /// switches farthest from every host, or the lowest GUID when every switch has hosts.
        #[arg(long, value_name = "SWITCH", requires = "updown")]
        root: Vec<String>,
        /// iblinkinfo's output for the same fabric: links it marks as slower than their ports could run
        /// are reported (ibnetdiscover's output gives only the active width and speed).
        #[arg(long, value_name = "FILE")]
        iblinkinfo: Option<PathBuf>,
    },
}

/// Runs an import command; errors and notes go to stderr.
pub fn cli(cmd: Command) -> ExitCode {
    match cmd {
        Command::Ibnetdiscover {
            file,
            out,
            incast,
            all_to_all,
            shift,
            permutation,
            bisection,
            updown,
            root,
            iblinkinfo,
        } => {
            use ibnetdiscover::Flows;
            let flows = if incast {
                Flows::Incast
            } else if all_to_all {
                Flows::AllToAll
            } else if let Some(k) = shift {
                Flows::Shift(k)
            } else if let Some(seed) = permutation {
                Flows::Permutation(seed)
            } else if bisection {
                Flows::Bisection
            } else {
                Flows::None
            };
            let routing = if updown {
                ibnetdiscover::Routing::UpDown(root)
            } else {
                ibnetdiscover::Routing::MinHop
            };
            let opts = ibnetdiscover::Options {
                flows,
                routing,
                iblinkinfo,
            };
            match ibnetdiscover::import_file_with(&file, &opts) {
                Ok(imported) => {
                    for note in &imported.notes {
                        eprintln!("ibcycle import: {note}");
                    }
                    if opts.iblinkinfo.is_none() {
                        eprintln!("ibcycle import: {}", ibnetdiscover::NO_CAPABILITIES);
                    }
                    // Written beside the target and renamed, so a failed write leaves no half a file.
                    let mut tmp = out.clone().into_os_string();
                    tmp.push(".tmp");
                    let tmp = PathBuf::from(tmp);
                    if let Err(e) = std::fs::write(&tmp, &imported.toml)
                        .and_then(|()| std::fs::rename(&tmp, &out))
                    {
                        std::fs::remove_file(&tmp).ok();
                        eprintln!("ibcycle import: {}: {e}", out.display());
                        return ExitCode::FAILURE;
                    }
                    println!(
                        "wrote {}: {} switches, {} HCAs, {} links",
                        out.display(),
                        imported.switches,
                        imported.hcas,
                        imported.links
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("ibcycle import: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
