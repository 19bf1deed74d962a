//! The sample captures read back: every CRC in them verifies with the model's own `crc` module (runs
//! without external tools; `tshark_samples.rs` checks the same files against tshark).

use std::path::Path;

use rtl_model::samples::write_samples;

/// Reads a capture back and checks every CRC with the model's own `crc` module: ICRC and VCRC of IB data
/// packets, LPCRC of link packets, ICRC of RoCEv2 frames. Returns how many CRCs were checked.
fn verify_crcs(path: &Path) -> usize {
    use pcap_file::pcap::PcapReader;
    use rtl_model::capture::{ERF_HEADER_LEN, ERF_TYPE_INFINIBAND, ERF_TYPE_INFINIBAND_LINK};
    use rtl_model::crc::{icrc, vcrc};
    use rtl_model::wire::flow_ctl;

    let mut reader = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let erf = reader.header().datalink == pcap_file::DataLink::ERF;
    let mut checked = 0;
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        let d = &p.data[..];
        if !erf {
            if let Ok((kind, covered)) = icrc::roce_covered(d) {
                assert!(
                    icrc::verify_icrc(kind, covered).unwrap(),
                    "{}: ICRC",
                    path.display()
                );
                checked += 1;
            }
            continue;
        }
        let body = &d[ERF_HEADER_LEN..];
        match d[8] {
            ERF_TYPE_INFINIBAND => {
                let (kind, covered) = icrc::ib_covered(body).unwrap();
                assert!(
                    icrc::verify_icrc(kind, covered).unwrap(),
                    "ICRC of {body:02x?}"
                );
                assert_eq!(covered.len() + 2, body.len(), "VCRC follows the ICRC");
                assert!(vcrc::verify_vcrc(body), "VCRC of {body:02x?}");
                checked += 2;
            }
            ERF_TYPE_INFINIBAND_LINK => {
                let fc = flow_ctl::Packet::new_checked(&body[..flow_ctl::PACKET_LEN]).unwrap();
                assert!(fc.verify_lpcrc(), "LPCRC of {body:02x?}");
                checked += 1;
            }
            t => panic!("unexpected ERF type {t}"),
        }
    }
    checked
}

#[test]
fn every_crc_in_the_sample_captures_verifies() {
    let dir = std::env::temp_dir().join(format!("ibcycle-crcs-{}", std::process::id()));
    let set = write_samples(&dir).expect("write samples");
    let ib = verify_crcs(&dir.join("ib.pcap"));
    let roce = verify_crcs(&dir.join("roce.pcap"));
    std::fs::remove_dir_all(&dir).ok();
    // Two CRCs per IB data packet, one per link packet; one per RoCEv2 frame (the PFC frame has none).
    let links = set.ib.iter().filter(|s| s.link_packet).count();
    assert_eq!(ib, 2 * (set.ib.len() - links) + links);
    assert_eq!(roce, set.roce.len() - 1);
}
