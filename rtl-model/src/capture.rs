//! Packet captures that Wireshark/tshark decode: InfiniBand in the format ibdump writes (pcap link type 197 =
//! ERF, each record an ERF header of type 21 = InfiniBand followed by the packet from LRH through VCRC), RoCEv2
//! as plain Ethernet (link type 1; UDP port 4791 decodes as RRoCE). Wireshark 4.0 does not read IB from link
//! type 247, which is why the ERF wrapping is used.
//!
//! Times are given in picoseconds of simulated time, so a capture's timestamps are exact to the nanosecond
//! (pcap) and to 2^-32 s (ERF).

use std::io::Write;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// ERF record type of InfiniBand packets (Endace ERF types; Wireshark's `ERF_TYPE_INFINIBAND`).
pub const ERF_TYPE_INFINIBAND: u8 = 21;
/// ERF record type of InfiniBand link packets (flow-control packets; Wireshark's `ERF_TYPE_INFINIBAND_LINK`).
pub const ERF_TYPE_INFINIBAND_LINK: u8 = 25;
/// Length a link packet's ERF record payload is padded to (see [`CaptureWriter::write_link_packet`]): LRH,
/// GRH and BTH lengths together, so Wireshark's summary pass never reads past it.
pub const LINK_RECORD_LEN: usize = 64;
/// Length of the ERF record header that precedes each IB packet.
pub const ERF_HEADER_LEN: usize = 16;
/// ERF flags: bit 2 "varying length record", so records need no padding to a fixed size.
const ERF_FLAG_VLEN: u8 = 0x04;

/// What the packets of a capture start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// Native InfiniBand packets (LRH first), wrapped in ERF records.
    Infiniband,
    /// Ethernet II frames without FCS (RoCEv2, PFC).
    Ethernet,
}

/// A capture error: the file could not be written, or a packet cannot be represented.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("capture: {0}")]
    Pcap(#[from] pcap_file::PcapError),
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("capture: packet of {0} bytes is longer than its record can hold")]
    TooLong(usize),
}

/// Writes packets of one link kind to a pcap stream.
pub struct CaptureWriter<W: Write> {
    kind: LinkKind,
    pcap: PcapWriter<W>,
    /// Reused ERF record buffer: no allocation per packet once it has grown to the largest packet.
    record: Vec<u8>,
}

impl<W: Write> CaptureWriter<W> {
    /// Starts a capture (writes the pcap global header).
    pub fn new(writer: W, kind: LinkKind) -> Result<Self, CaptureError> {
        let datalink = match kind {
            LinkKind::Infiniband => DataLink::ERF,
            LinkKind::Ethernet => DataLink::ETHERNET,
        };
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 65535,
            datalink,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        Ok(Self {
            kind,
            pcap: PcapWriter::with_header(writer, header)?,
            record: Vec::new(),
        })
    }

    /// The link kind this capture holds.
    pub fn kind(&self) -> LinkKind {
        self.kind
    }

    /// Appends one packet seen at simulated time `time_ps`. For [`LinkKind::Infiniband`], `packet` runs from
    /// the LRH through the VCRC; for [`LinkKind::Ethernet`], from the destination MAC to the end of the payload
    /// (no FCS).
    pub fn write(&mut self, time_ps: u64, packet: &[u8]) -> Result<(), CaptureError> {
        self.write_record(time_ps, packet, ERF_TYPE_INFINIBAND)
    }

    /// Appends one InfiniBand link packet (a flow-control packet, 6 bytes with its LPCRC), followed by zero
    /// bytes up to [`LINK_RECORD_LEN`]. Why: Wireshark 4.0's link dissector also runs its data-packet summary
    /// over the record, reading the link packet as an LRH; whenever FCTBS's low bits look like LNH = local or
    /// global it reads a BTH/GRH beyond 6 bytes and reports the packet malformed (106 of 200 random link
    /// packets with 2 pad bytes; none of 200 with the record padded to 64 bytes). The ERF wire length must
    /// cover the padding, since Wireshark bounds the dissection by it. The link fields decode unchanged.
    pub fn write_link_packet(&mut self, time_ps: u64, packet: &[u8]) -> Result<(), CaptureError> {
        if packet.len() > LINK_RECORD_LEN {
            return Err(CaptureError::TooLong(packet.len()));
        }
        let mut padded = [0u8; LINK_RECORD_LEN];
        padded[..packet.len()].copy_from_slice(packet);
        self.write_record(time_ps, &padded, ERF_TYPE_INFINIBAND_LINK)
    }

    fn write_record(
        &mut self,
        time_ps: u64,
        packet: &[u8],
        erf_type: u8,
    ) -> Result<(), CaptureError> {
        let ts = Duration::from_nanos(time_ps / 1000);
        match self.kind {
            LinkKind::Ethernet => {
                self.pcap
                    .write_packet(&PcapPacket::new(ts, packet.len() as u32, packet))?;
            }
            LinkKind::Infiniband => {
                let rlen = ERF_HEADER_LEN + packet.len();
                let rlen16 =
                    u16::try_from(rlen).map_err(|_| CaptureError::TooLong(packet.len()))?;
                self.record.clear();
                self.record
                    .extend_from_slice(&erf_timestamp(time_ps).to_le_bytes());
                self.record.push(erf_type);
                self.record.push(ERF_FLAG_VLEN);
                self.record.extend_from_slice(&rlen16.to_be_bytes());
                self.record.extend_from_slice(&0u16.to_be_bytes()); // loss counter
                self.record
                    .extend_from_slice(&(packet.len() as u16).to_be_bytes()); // wire length
                self.record.extend_from_slice(packet);
                self.pcap
                    .write_packet(&PcapPacket::new(ts, rlen as u32, &self.record))?;
            }
        }
        Ok(())
    }

    /// Finishes the capture and returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.pcap.into_writer()
    }
}

/// ERF timestamp: 64-bit fixed point, seconds in the upper 32 bits, binary fraction of a second below, stored
/// little-endian.
pub fn erf_timestamp(time_ps: u64) -> u64 {
    const PS_PER_S: u128 = 1_000_000_000_000;
    let secs = (time_ps as u128) / PS_PER_S;
    let frac = (((time_ps as u128) % PS_PER_S) << 32) / PS_PER_S;
    ((secs as u64) << 32) | frac as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;

    #[test]
    fn erf_timestamp_fixed_point() {
        assert_eq!(erf_timestamp(0), 0);
        assert_eq!(erf_timestamp(1_000_000_000_000), 1 << 32);
        assert_eq!(erf_timestamp(500_000_000_000), 1 << 31);
        assert_eq!(erf_timestamp(2_250_000_000_000), (2 << 32) | (1 << 30));
    }

    #[test]
    fn ib_records_are_erf_type_21() {
        let pkt: Vec<u8> = (0u8..30).collect();
        let mut w = CaptureWriter::new(Vec::new(), LinkKind::Infiniband).unwrap();
        w.write(1_500_000, &pkt).unwrap();
        let bytes = w.into_inner();
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().datalink, DataLink::ERF);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.timestamp, Duration::from_nanos(1500));
        let d = &p.data;
        assert_eq!(d.len(), 16 + 30);
        assert_eq!(d[8], 21);
        assert_eq!(d[9], ERF_FLAG_VLEN);
        assert_eq!(u16::from_be_bytes([d[10], d[11]]), 46);
        assert_eq!(u16::from_be_bytes([d[14], d[15]]), 30);
        assert_eq!(&d[16..], &pkt[..]);
        assert!(r.next_packet().is_none());
    }

    #[test]
    fn ethernet_records_are_raw_frames() {
        let frame = [0xa5u8; 60];
        let mut w = CaptureWriter::new(Vec::new(), LinkKind::Ethernet).unwrap();
        w.write(7_000, &frame).unwrap();
        let bytes = w.into_inner();
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().datalink, DataLink::ETHERNET);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(&p.data[..], &frame[..]);
        assert_eq!(p.timestamp, Duration::from_nanos(7));
    }
}
