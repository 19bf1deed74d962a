//! The capture of a fabric run, decoded by tshark (an independent implementation of every IB layout): Cao et
//! al.'s observation method (seed 004: ibdump at H4, Wireshark), on `scenarios/cao-cc-on-quick.toml` shortened to
//! the onset of congestion (H1 alone, then H3 joins at 2000 us; run to 2400 us).
//!
//! Checks on `H4.pcap` (both directions of H4's link): every frame decodes and none is malformed; FECN-marked
//! data packets reach H4 and CNPs (opcode 0x80, BECN set) leave it; every data packet and CNP carries an
//! ICRC and a VCRC that `rtl_model::crc` verifies, and tshark shows those same CRC values; the packet counts
//! agree with the run's summary.
//!
//! Needs tshark: runs only with the `external-tools` feature (on in the README's test command), and then
//! fails loudly when tshark is missing.
#![cfg(feature = "external-tools")]

use std::path::{Path, PathBuf};
use std::process::Command;

use ibcycle::run::{run_observed, ObserveOpts, Observers};
use ibcycle::scenario::load;
use pcap_file::pcap::PcapReader;
use rtl_model::crc::icrc::{ib_covered, verify_icrc};
use rtl_model::crc::vcrc::verify_vcrc;

fn tmp() -> PathBuf {
    std::env::temp_dir().join(format!("ibcycle-cao-capture-{}", std::process::id()))
}

/// tshark's fields of every frame (`|`-separated, last occurrence).
fn tshark(pcap: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=l"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect(
        "tshark is not installed: run ./scripts/test (installs it), or `apt-get install tshark`",
    );
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> u64 {
    s.strip_prefix("0x").map_or_else(
        || s.parse().unwrap_or_else(|_| panic!("{s:?}")),
        |h| u64::from_str_radix(h, 16).unwrap(),
    )
}

#[test]
fn the_h4_capture_decodes_with_fecn_marks_cnps_and_valid_crcs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cao-cc-on-quick.toml");
    let mut sc = load(&path).unwrap();
    sc.duration_us = 2400;
    let out = tmp();
    let opts = ObserveOpts {
        pcap: vec!["H4".into()],
        ..ObserveOpts::default()
    };
    let obs = Observers::open(&opts, &sc, &out).unwrap();
    let (r, written) = run_observed(&sc, false, obs).unwrap();
    written.unwrap();
    let pcap = out.join("H4.pcap");

    // Our own reading of the records: ERF type, then the IB packet.
    let data = std::fs::read(&pcap).unwrap();
    let mut reader = PcapReader::new(&data[..]).unwrap();
    let mut records = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        records.push((p.data[8] & 0x7F, p.data[16..].to_vec()));
    }

    let fields = [
        "erf.types.type",
        "infiniband.lrh.slid",
        "infiniband.lrh.dlid",
        "infiniband.bth.opcode",
        "infiniband.invariant.crc",
        "infiniband.variant.crc",
        "_ws.malformed",
    ];
    let frames = tshark(&pcap, &fields);
    assert_eq!(frames.len(), records.len(), "tshark saw every record");
    let h4 = sc
        .topology
        .hcas
        .iter()
        .position(|h| h.name == "H4")
        .unwrap();
    let h4_lid = u64::from(sc.topology.hca_lid(h4));
    let (mut fecn_data, mut cnps, mut data_to_h4, mut link_pkts) = (0u64, 0u64, 0u64, 0u64);
    for (i, (f, (erf_type, bytes))) in frames.iter().zip(&records).enumerate() {
        let what = format!("frame {}", i + 1);
        assert_eq!(f.len(), fields.len(), "{what}: {f:?}");
        assert!(f[6].is_empty(), "{what}: tshark reports it malformed");
        assert_eq!(num(&f[0]), u64::from(*erf_type), "{what}");
        if *erf_type == 25 {
            link_pkts += 1;
            continue;
        }
        assert_eq!(*erf_type, 21, "{what}");
        // Both CRCs verify on our bytes, and tshark reads the same values at the same places.
        let (kind, covered) = ib_covered(bytes).unwrap();
        assert!(verify_icrc(kind, covered).unwrap(), "{what}: ICRC");
        assert!(verify_vcrc(bytes), "{what}: VCRC");
        let n = bytes.len();
        let opcode = num(&f[3]);
        assert_eq!(opcode, u64::from(bytes[8]), "{what}: opcode");
        if opcode != 0x80 {
            // tshark shows the ICRC's four bytes as one big-endian number (the wire holds it LSB first).
            // (Wireshark 4.0 shows what follows a CNP's BTH as vendor data, without CRC fields.)
            let icrc = u32::from_be_bytes(bytes[n - 6..n - 2].try_into().unwrap());
            let vcrc = u16::from_be_bytes([bytes[n - 2], bytes[n - 1]]);
            assert_eq!(
                num(&f[4]),
                u64::from(icrc),
                "{what}: ICRC as tshark shows it"
            );
            assert_eq!(
                num(&f[5]),
                u64::from(vcrc),
                "{what}: VCRC as tshark shows it"
            );
        }
        let (fecn, becn) = (bytes[12] & 0x80 != 0, bytes[12] & 0x40 != 0);
        if opcode == 0x80 {
            assert!(becn && !fecn, "{what}: a CNP carries BECN");
            assert_eq!(n, 26, "{what}: LRH, BTH, ICRC, VCRC");
            cnps += 1;
        } else {
            assert_eq!(num(&f[2]), h4_lid, "{what}: data on H4's link goes to H4");
            data_to_h4 += 1;
            fecn_data += u64::from(fecn);
        }
    }
    eprintln!(
        "{} frames: {data_to_h4} data to H4 ({fecn_data} with FECN), {cnps} CNPs, {link_pkts} flow-control",
        frames.len()
    );
    assert!(fecn_data > 0 && cnps > 0 && link_pkts > 0);
    // The capture agrees with the run's counters (the capture ends with the run time; a packet whose head
    // was captured may have its tail after it, so data and marks may exceed the delivered ones by the
    // packets in flight on this link: at most 1 per direction).
    let delivered: u64 = r.summary.flows.iter().map(|f| f.delivered_packets).sum();
    let marked: u64 = r.summary.flows.iter().map(|f| f.fecn_marked_rx).sum();
    let sent: u64 = r.summary.flows.iter().map(|f| f.cnp_sent).sum();
    assert!(
        (delivered..=delivered + 1).contains(&data_to_h4),
        "{delivered} vs {data_to_h4}"
    );
    assert!(
        (marked..=marked + 1).contains(&fecn_data),
        "{marked} vs {fecn_data}"
    );
    assert!(
        (sent.saturating_sub(1)..=sent + 1).contains(&cnps),
        "{sent} vs {cnps}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
