//! Decodes the sample captures with tshark (an independent implementation of every layout) and checks that
//! each decoded field equals the value the model emitted, and that every CRC tshark shows is the one the
//! model's `crc` module verifies.
//!
//! Needs tshark: the whole file runs only with the `external-tools` feature (on in the README's test command), and then fails
//! loudly when tshark is missing.
#![cfg(feature = "external-tools")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rtl_model::samples::{write_samples, Expect, Sample};

fn tshark_available() {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .map(|o| o.status.success());
    assert!(
        matches!(ok, Ok(true)),
        "tshark is not installed: run ./scripts/test (installs it), or `apt-get install tshark`"
    );
}

/// Runs tshark on `pcap` and returns, per frame, the value of each requested field (last occurrence: Wireshark repeats a bytes field inside its subtree, and the innermost is the whole one).
fn decode(pcap: &Path, fields: &[&str]) -> Vec<BTreeMap<String, String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .args(["-o", "ip.check_checksum:TRUE"])
        .args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=l"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let vals: Vec<&str> = line.split('|').collect();
            assert_eq!(vals.len(), fields.len(), "tshark line {line:?}");
            fields
                .iter()
                .zip(vals)
                .filter(|(_, v)| !v.is_empty())
                .map(|(f, v)| (f.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// tshark prints integers in decimal or `0x` hex by field base, booleans as 0/1 or True/False, byte
/// fields as hex without separators.
fn as_number(s: &str) -> Option<u64> {
    match s {
        "True" => Some(1),
        "False" => Some(0),
        _ => s
            .strip_prefix("0x")
            .map_or_else(|| s.parse().ok(), |h| u64::from_str_radix(h, 16).ok()),
    }
}

fn check_capture(path: &Path, samples: &[Sample]) {
    let mut fields: Vec<&str> = vec!["_ws.malformed", "_ws.expert"];
    for s in samples {
        for e in &s.expect {
            if !fields.contains(&e.field()) {
                fields.push(e.field());
            }
        }
    }
    let frames = decode(path, &fields);
    assert_eq!(
        frames.len(),
        samples.len(),
        "{}: frame count",
        path.display()
    );
    let mut checked = 0;
    for (i, (frame, sample)) in frames.iter().zip(samples).enumerate() {
        let what = format!("{} frame {} ({})", path.display(), i + 1, sample.name);
        assert!(
            !frame.contains_key("_ws.malformed"),
            "{what}: tshark reports it malformed"
        );
        for e in &sample.expect {
            let got = frame
                .get(e.field())
                .unwrap_or_else(|| panic!("{what}: tshark shows no field {}", e.field()));
            match e {
                Expect::Num(f, want) => {
                    let n = as_number(got).unwrap_or_else(|| panic!("{what}: {f} = {got:?}"));
                    assert_eq!(
                        n, *want,
                        "{what}: field {f}: tshark {got}, emitted {want:#x}"
                    );
                }
                Expect::ByteAt(f, index, want) => {
                    let hex = got.replace(':', "");
                    let byte = hex
                        .get(2 * index..2 * index + 2)
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .unwrap_or_else(|| panic!("{what}: {f} = {got:?} has no byte {index}"));
                    assert_eq!(
                        byte, *want,
                        "{what}: field {f} byte {index}: tshark {byte:#04x}, emitted {want:#04x}"
                    );
                }
                Expect::Text(f, want) => {
                    assert_eq!(got, want, "{what}: field {f}");
                }
            }
            checked += 1;
        }
    }
    assert!(
        checked > samples.len() * 3,
        "too few fields compared: {checked}"
    );
}

#[test]
fn tshark_decodes_every_sample_with_the_emitted_values() {
    tshark_available();
    let dir = std::env::temp_dir().join(format!("ibcycle-samples-{}", std::process::id()));
    let set = write_samples(&dir).expect("write samples");
    assert!(set.ib.len() >= 8 && set.roce.len() >= 4);
    check_capture(&dir.join("ib.pcap"), &set.ib);
    check_capture(&dir.join("roce.pcap"), &set.roce);
    std::fs::remove_dir_all(&dir).ok();
}
