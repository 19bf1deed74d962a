//! UDP header (RFC 768, 8 bytes), which carries RoCEv2 to destination port 4791.
//!
//! ```text
//! bytes 0-1  Source Port       (RoCEv2: an entropy value for ECMP, often derived from the QP)
//! bytes 2-3  Destination Port  (RoCEv2: 4791)
//! bytes 4-5  Length            (header + payload, bytes)
//! bytes 6-7  Checksum          (masked in the ICRC)
//! ```
//!
//! The UDP checksum is not computed here. RoCEv2 senders commonly send 0 ("no checksum"; Linux rxe and the
//! ConnectX capture in the tests do), relying on the ICRC; the field is carried as a plain value in
//! [`Repr::checksum`] so a packet round-trips whatever it holds.

use super::{check_len, Error, Result};

/// The UDP destination port of RoCEv2 (IANA "roce").
pub const ROCEV2_PORT: u16 = 4791;

mod field {
    use crate::wire::Field;

    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = field::CHECKSUM.end;

/// A read/write view of a UDP datagram.
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

    /// Checks that the 8-byte header is present, that Length >= 8 (`BadField` otherwise) and that the buffer
    /// holds Length bytes (`Truncated` otherwise). After `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        let buf = self.buffer.as_ref();
        check_len("udp", buf, HEADER_LEN)?;
        let len = usize::from(self.len());
        if len < HEADER_LEN {
            return Err(Error::BadField {
                header: "udp",
                field: "length",
                value: len as u32,
            });
        }
        check_len("udp", buf, len)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn be16(&self, f: core::ops::Range<usize>) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        self.be16(field::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        self.be16(field::DST_PORT)
    }

    /// Length: header plus payload, in bytes.
    pub fn len(&self) -> u16 {
        self.be16(field::LENGTH)
    }

    /// True when Length says there is no payload.
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }

    /// Checksum as carried (0 = none).
    pub fn checksum(&self) -> u16 {
        self.be16(field::CHECKSUM)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The payload: bytes 8 to Length.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_be16(&mut self, f: core::ops::Range<usize>, value: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the source port.
    pub fn set_src_port(&mut self, value: u16) {
        self.set_be16(field::SRC_PORT, value);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, value: u16) {
        self.set_be16(field::DST_PORT, value);
    }

    /// Sets Length.
    pub fn set_len(&mut self, value: u16) {
        self.set_be16(field::LENGTH, value);
    }

    /// Sets the checksum field as is.
    pub fn set_checksum(&mut self, value: u16) {
        self.set_be16(field::CHECKSUM, value);
    }

    /// The payload (bytes 8 to Length), writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port ([`ROCEV2_PORT`] for RoCEv2).
    pub dst_port: u16,
    /// Payload length in bytes; `emit` saturates the Length field at 65535.
    pub payload_len: usize,
    /// The checksum field as carried; not computed by this module. RoCEv2 senders commonly send 0.
    pub checksum: u16,
}

impl Repr {
    /// Reads the header after the length checks; every port and checksum value is accepted.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload_len: usize::from(packet.len()) - HEADER_LEN,
            checksum: packet.checksum(),
        })
    }

    /// Bytes the header takes (8); the payload follows.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header; the payload is left alone.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len(u16::try_from(HEADER_LEN + self.payload_len).unwrap_or(u16::MAX));
        packet.set_checksum(self.checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // UDP header of the RoCEv2 CNP captured on a ConnectX-4 Lx (secdev/scapy test/contrib/roce.uts): source
    // port 0, destination 4791 (0x12b7), Length 40, checksum 0; then the CNP opcode byte.
    static PACKET_BYTES: [u8; 9] = [0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81];

    fn repr() -> Repr {
        Repr {
            src_port: 0,
            dst_port: ROCEV2_PORT,
            payload_len: 32,
            checksum: 0,
        }
    }

    fn full_packet() -> Vec<u8> {
        let mut v = PACKET_BYTES.to_vec();
        v.resize(40, 0);
        v
    }

    #[test]
    fn deconstruct() {
        let buf = full_packet();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.src_port(), 0);
        assert_eq!(p.dst_port(), 4791);
        assert_eq!(p.len(), 40);
        assert!(!p.is_empty());
        assert_eq!(p.checksum(), 0);
        assert_eq!(p.payload().len(), 32);
        assert_eq!(p.payload()[0], 0x81);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 9];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_src_port(0);
        p.set_dst_port(ROCEV2_PORT);
        p.set_len(40);
        p.set_checksum(0);
        buf[8] = 0x81;
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
        let mut buf = [0xa5u8; 9];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..8], PACKET_BYTES[..8]);
        assert_eq!(buf[8], 0xa5);
    }

    #[test]
    fn errors() {
        let buf = full_packet();
        assert_eq!(
            Packet::new_checked(&buf[..39]),
            Err(Error::Truncated {
                header: "udp",
                need: 40,
                have: 39
            })
        );
        assert_eq!(
            Packet::new_checked(&[0, 0, 0, 0, 0, 7, 0, 0][..]),
            Err(Error::BadField {
                header: "udp",
                field: "length",
                value: 7
            })
        );
        assert!(matches!(
            Packet::new_checked(&buf[..7]),
            Err(Error::Truncated { need: 8, .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Any header whose Length covers itself round-trips (the test appends the payload Length announces).
        #[test]
        fn emit_parse_round_trip(h in proptest::array::uniform8(any::<u8>()), plen in 0u16..64) {
            let mut b = h.to_vec();
            b[4..6].copy_from_slice(&(plen + 8).to_be_bytes());
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
                let len = b.len() as u16;
                b[4..6].copy_from_slice(&len.to_be_bytes());
            }
            match Packet::new_checked(&b[..]) {
                Ok(p) => {
                    let r = Repr::parse(&p).unwrap();
                    prop_assert_eq!(r.payload_len, p.payload().len());
                }
                Err(Error::BadField { field, value, .. }) => {
                    prop_assert!(field == "length" && value < 8)
                }
                Err(Error::Truncated { need, have, .. }) => prop_assert!(need > have),
            }
        }
    }
}
