//! IPv6 fixed header (RFC 8200, 40 bytes), the network header of RoCEv2 over IPv6.
//!
//! ```text
//! bytes 0-3   Version [31:28] = 6, Traffic Class [27:20] (DSCP [27:22], ECN [21:20]), Flow Label [19:0]
//! bytes 4-5   Payload Length (bytes after this 40-byte header)
//! byte 6      Next Header (17 = UDP)
//! byte 7      Hop Limit
//! bytes 8-23  Source Address
//! bytes 24-39 Destination Address
//! ```
//!
//! Traffic Class, Flow Label and Hop Limit are masked in the RoCEv2 ICRC. Extension headers are not parsed:
//! RoCEv2 puts UDP right after the fixed header. IPv6 has no header checksum, so marking CE is a plain write.

use super::ipv4::{Ecn, IpProtocol};
use super::{check_len, Error, Result};

mod field {
    use crate::wire::Field;

    pub const VER_TC_FLOW: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
}

/// Length of the IPv6 fixed header.
pub const HEADER_LEN: usize = field::DST_ADDR.end;

const FLOW_LABEL_MASK: u32 = 0x000f_ffff;

/// A read/write view of an IPv6 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without any check; for buffers sized with [`Repr::buffer_len`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the 40-byte header and the Payload Length bytes after it are present (`Truncated`
    /// otherwise). After `Ok`, no accessor panics. The version is checked by [`Repr::parse`].
    pub fn check_len(&self) -> Result<()> {
        let buf = self.buffer.as_ref();
        check_len("ipv6", buf, HEADER_LEN)?;
        check_len("ipv6", buf, HEADER_LEN + usize::from(self.payload_len()))
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word0(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::VER_TC_FLOW];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    /// Version field (6 for a valid packet).
    pub fn version(&self) -> u8 {
        (self.word0() >> 28) as u8
    }

    /// Traffic Class (DSCP and ECN together).
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }

    /// DSCP, Traffic Class \[7:2\].
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// ECN, Traffic Class \[1:0\].
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.traffic_class())
    }

    /// Flow Label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.word0() & FLOW_LABEL_MASK
    }

    /// Payload Length: bytes after the fixed header.
    pub fn payload_len(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LENGTH];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// Next Header.
    pub fn next_header(&self) -> IpProtocol {
        IpProtocol::from(self.buffer.as_ref()[field::NXT_HDR])
    }

    /// Hop Limit.
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// Source address.
    pub fn src_addr(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC_ADDR]);
        a
    }

    /// Destination address.
    pub fn dst_addr(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST_ADDR]);
        a
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The payload: Payload Length bytes after the header (bytes beyond, such as Ethernet padding, excluded).
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + usize::from(self.payload_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_word0(&mut self, value: u32) {
        self.buffer.as_mut()[field::VER_TC_FLOW].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the version nibble; keeps Traffic Class and Flow Label.
    pub fn set_version(&mut self, value: u8) {
        let w = (self.word0() & 0x0fff_ffff) | (u32::from(value & 0x0f) << 28);
        self.set_word0(w);
    }

    /// Sets Traffic Class; keeps version and Flow Label.
    pub fn set_traffic_class(&mut self, value: u8) {
        let w = (self.word0() & 0xf00f_ffff) | (u32::from(value) << 20);
        self.set_word0(w);
    }

    /// Sets DSCP (low six bits of `value`); keeps ECN.
    pub fn set_dscp(&mut self, value: u8) {
        let tc = (self.traffic_class() & 0x03) | (value << 2);
        self.set_traffic_class(tc);
    }

    /// Sets ECN; keeps DSCP.
    pub fn set_ecn(&mut self, value: Ecn) {
        let tc = (self.traffic_class() & 0xfc) | value.bits();
        self.set_traffic_class(tc);
    }

    /// Marks the packet Congestion Experienced. Nothing else changes: IPv6 has no header checksum and the
    /// Traffic Class is masked in the ICRC. Whether the packet may be marked is the caller's decision.
    pub fn set_ecn_ce(&mut self) {
        self.set_ecn(Ecn::Ce);
    }

    /// Sets Flow Label (low 20 bits of `value`); keeps version and Traffic Class.
    pub fn set_flow_label(&mut self, value: u32) {
        let w = (self.word0() & !FLOW_LABEL_MASK) | (value & FLOW_LABEL_MASK);
        self.set_word0(w);
    }

    /// Sets Payload Length.
    pub fn set_payload_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Next Header.
    pub fn set_next_header(&mut self, value: IpProtocol) {
        self.buffer.as_mut()[field::NXT_HDR] = value.into();
    }

    /// Sets Hop Limit.
    pub fn set_hop_limit(&mut self, value: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = value;
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, value: [u8; 16]) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&value);
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, value: [u8; 16]) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&value);
    }

    /// The payload (Payload Length bytes after the header), writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of an IPv6 fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source address.
    pub src_addr: [u8; 16],
    /// Destination address.
    pub dst_addr: [u8; 16],
    /// Next Header.
    pub next_header: IpProtocol,
    /// Payload Length in bytes; `emit` saturates it at 65535 (no jumbograms).
    pub payload_len: usize,
    /// Hop Limit.
    pub hop_limit: u8,
    /// DSCP, Traffic Class \[7:2\] (6 bits; upper bits are dropped by `emit`).
    pub dscp: u8,
    /// ECN, Traffic Class \[1:0\].
    pub ecn: Ecn,
    /// Flow Label (20 bits; upper bits are dropped by `emit`).
    pub flow_label: u32,
}

impl Repr {
    /// Reads the header after the length check; `BadField` for a version other than 6. Every Traffic Class,
    /// Flow Label and Next Header value is accepted (unknown Next Header codes are kept).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != 6 {
            return Err(Error::BadField {
                header: "ipv6",
                field: "version",
                value: u32::from(packet.version()),
            });
        }
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: usize::from(packet.payload_len()),
            hop_limit: packet.hop_limit(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            flow_label: packet.flow_label(),
        })
    }

    /// Bytes the header takes (40); the payload follows.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 40-byte header; the payload is left alone.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let tc = ((self.dscp & 0x3f) << 2) | self.ecn.bits();
        packet.set_word0((6 << 28) | (u32::from(tc) << 20) | (self.flow_label & FLOW_LABEL_MASK));
        packet.set_payload_len(u16::try_from(self.payload_len).unwrap_or(u16::MAX));
        packet.set_next_header(self.next_header);
        packet.set_hop_limit(self.hop_limit);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The IPv6 header of scapy's "RoCE over IPv6" example (polybassa/scapy-1, a fork of secdev/scapy,
    // test/contrib/roce.uts at 10a61b8b64621b9590933ccdccca6139c9dd26a5): tc=226, fl=0x1face, plen=44, nh=17,
    // hlim=255, 2022::1023 -> 2023::1024; bytes worked out by hand from those fields, then the first two bytes
    // of the UDP header (sport 49152).
    // 226 = 0xe2: DSCP 56, ECN 0b10 (ECT(0)). Word 0 = 6 << 28 | 0xe2 << 20 | 0x1face = 0x6e21face.
    static PACKET_BYTES: [u8; 42] = [
        0x6e, 0x21, 0xfa, 0xce, 0x00, 0x2c, 0x11, 0xff, // ver/tc/flow, plen, nh, hlim
        0x20, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x23, // src
        0x20, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x24, // dst
        0xc0, 0x00,
    ];

    fn src() -> [u8; 16] {
        let mut a = [0u8; 16];
        a[0] = 0x20;
        a[1] = 0x22;
        a[14] = 0x10;
        a[15] = 0x23;
        a
    }

    fn dst() -> [u8; 16] {
        let mut a = src();
        a[1] = 0x23;
        a[15] = 0x24;
        a
    }

    fn repr() -> Repr {
        Repr {
            src_addr: src(),
            dst_addr: dst(),
            next_header: IpProtocol::Udp,
            payload_len: 44,
            hop_limit: 255,
            dscp: 56,
            ecn: Ecn::Ect0,
            flow_label: 0x1face,
        }
    }

    fn full_packet() -> Vec<u8> {
        let mut v = PACKET_BYTES.to_vec();
        v.resize(HEADER_LEN + 44, 0x11);
        v
    }

    #[test]
    fn deconstruct() {
        let buf = full_packet();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 226);
        assert_eq!(p.dscp(), 56);
        assert_eq!(p.ecn(), Ecn::Ect0);
        assert_eq!(p.flow_label(), 0x1face);
        assert_eq!(p.payload_len(), 44);
        assert_eq!(p.next_header(), IpProtocol::Udp);
        assert_eq!(p.hop_limit(), 255);
        assert_eq!(p.src_addr(), src());
        assert_eq!(p.dst_addr(), dst());
        assert_eq!(p.payload().len(), 44);
        assert_eq!(&p.payload()[..2], &[0xc0, 0x00]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 42];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_version(6);
        p.set_traffic_class(226);
        p.set_flow_label(0x1face);
        p.set_payload_len(44);
        p.set_next_header(IpProtocol::Udp);
        p.set_hop_limit(255);
        p.set_src_addr(src());
        p.set_dst_addr(dst());
        buf[40] = 0xc0;
        buf[41] = 0x00;
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn parse() {
        let buf = full_packet();
        assert_eq!(
            Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(),
            repr()
        );
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 41];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..40], PACKET_BYTES[..40]);
        assert_eq!(buf[40], 0xa5);
    }

    #[test]
    fn sub_fields_keep_neighbours() {
        let mut buf = full_packet();
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.set_ecn_ce();
        // TC 0xe2 -> 0xe3: byte 0 keeps 0x6e, byte 1 becomes 0x31, the flow label stays.
        assert_eq!(&buf[..4], &[0x6e, 0x31, 0xfa, 0xce]);
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.set_dscp(0);
        assert_eq!(&buf[..4], &[0x60, 0x31, 0xfa, 0xce]);
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.set_flow_label(0xfff_ffff);
        assert_eq!(&buf[..4], &[0x60, 0x3f, 0xff, 0xff]);
    }

    #[test]
    fn errors() {
        let mut buf = full_packet();
        assert_eq!(
            Packet::new_checked(&buf[..83]),
            Err(Error::Truncated {
                header: "ipv6",
                need: 84,
                have: 83
            })
        );
        assert!(matches!(
            Packet::new_checked(&buf[..39]),
            Err(Error::Truncated { need: 40, .. })
        ));
        buf[0] = 0x4e;
        assert_eq!(
            Repr::parse(&Packet::new_checked(&buf[..]).unwrap()),
            Err(Error::BadField {
                header: "ipv6",
                field: "version",
                value: 4
            })
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Any 40 bytes with version 6 round-trip; the restriction is only the version nibble (and a payload
        /// as long as Payload Length, which the test appends).
        #[test]
        fn emit_parse_round_trip(h in proptest::collection::vec(any::<u8>(), HEADER_LEN), plen in 0u16..64) {
            let mut b = h;
            b[0] = (b[0] & 0x0f) | 0x60;
            b[4..6].copy_from_slice(&plen.to_be_bytes());
            b.resize(HEADER_LEN + usize::from(plen), 0x5a);
            let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(&out[..], &b[..HEADER_LEN]);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96), fix_len in any::<bool>()) {
            let mut b = b;
            if fix_len && b.len() >= HEADER_LEN {
                let plen = (b.len() - HEADER_LEN) as u16;
                b[4..6].copy_from_slice(&plen.to_be_bytes());
            }
            match Packet::new_checked(&b[..]) {
                Ok(p) => {
                    prop_assert_eq!(p.payload().len(), usize::from(p.payload_len()));
                    match Repr::parse(&p) {
                        Ok(_) => prop_assert_eq!(p.version(), 6),
                        Err(e) => prop_assert!(matches!(e, Error::BadField { field: "version", .. }), "{:?}", e),
                    }
                }
                Err(e) => prop_assert!(matches!(e, Error::Truncated { .. }), "{:?}", e),
            }
        }
    }
}
