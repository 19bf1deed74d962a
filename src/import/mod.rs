//! `ibcycle import`: scenario files from what tools on a real fabric print.

use std::path::PathBuf;
use std::process::ExitCode;

pub mod ibnetdiscover;

/// What to import.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Write a scenario with the topology `ibnetdiscover` printed (its default topology format, or the
    /// ports report of `ibnetdiscover -p`).
    ///
    /// Every switch (with the port count the file gives), every channel adapter (named by its node
    /// description where that is unique and usable as a name, else `H-<guid>`), every link once with its
    /// width and speed. Both ends of a link must agree. A multi-port adapter is imported with its first
    /// connected port; its other ports are listed as not imported. The minimum-hop routes are checked for
    /// credit loops. The scenario has no flows unless `--incast` or `--all-to-all` is given. In a ports report
    /// every CA port is an HCA of its own (the report does not say which ports share an adapter).
    Ibnetdiscover {
        /// The file `ibnetdiscover` wrote.
        file: PathBuf,
        /// The scenario file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Add saturating flows from every other HCA to the last HCA of the file.
        #[arg(long, conflicts_with = "all_to_all")]
        incast: bool,
        /// Add a saturating flow from every HCA to every other.
        #[arg(long)]
        all_to_all: bool,
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
        } => {
            let flows = if incast {
                ibnetdiscover::Flows::Incast
            } else if all_to_all {
                ibnetdiscover::Flows::AllToAll
            } else {
                ibnetdiscover::Flows::None
            };
            match ibnetdiscover::import_file(&file, flows) {
                Ok(imported) => {
                    for note in &imported.notes {
                        eprintln!("ibcycle import: {note}");
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
