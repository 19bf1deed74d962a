//! Writes `DIR/ib.pcap` and `DIR/roce.pcap`: at least one packet of every kind the model emits (see
//! `rtl_model::samples`). Usage: `cargo run -p rtl-model --example emit_samples -- DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: emit_samples DIR");
        return ExitCode::from(2);
    };
    match rtl_model::samples::write_samples(&dir) {
        Ok(set) => {
            for (file, samples) in [("ib.pcap", &set.ib), ("roce.pcap", &set.roce)] {
                println!("{}: {} packets", dir.join(file).display(), samples.len());
                for s in samples {
                    println!("  {:4} bytes  {}", s.bytes.len(), s.name);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("emit_samples: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
