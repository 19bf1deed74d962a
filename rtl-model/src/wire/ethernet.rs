//! Ethernet II frame header (14 bytes), the outer header of RoCEv2 packets and PFC frames.
//!
//! ```text
//! bytes 0-5    destination MAC
//! bytes 6-11   source MAC
//! bytes 12-13  EtherType (big-endian)
//! bytes 14-    payload
//! ```
//!
//! The frame check sequence is not part of any view here: the model writes frames without FCS (as pcap files
//! of link type Ethernet usually hold them). Minimum-size padding is the job of whoever builds the payload.

use core::fmt;

use super::{check_len, Result};

/// A 48-bit IEEE 802 MAC address, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The broadcast address ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// True for group addresses (I/G bit, the least significant bit of the first byte, set): PFC frames go
    /// to one of these.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// The EtherType field. Codes the model does not decode are kept as `Unknown` so any frame round-trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EtherType {
    /// 0x0800: IPv4 (RoCEv2 over IPv4).
    Ipv4,
    /// 0x86DD: IPv6 (RoCEv2 over IPv6).
    Ipv6,
    /// 0x8808: MAC control (802.3x PAUSE, 802.1Qbb PFC).
    MacControl,
    /// 0x8100: an 802.1Q tag follows. Recognised but not parsed further by [`Packet`].
    Vlan,
    /// Any other value, kept as read.
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(value: u16) -> Self {
        match value {
            0x0800 => EtherType::Ipv4,
            0x86DD => EtherType::Ipv6,
            0x8808 => EtherType::MacControl,
            0x8100 => EtherType::Vlan,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(value: EtherType) -> Self {
        match value {
            EtherType::Ipv4 => 0x0800,
            EtherType::Ipv6 => 0x86DD,
            EtherType::MacControl => 0x8808,
            EtherType::Vlan => 0x8100,
            EtherType::Unknown(other) => other,
        }
    }
}

mod field {
    use crate::wire::Field;

    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: usize = 14;
}

/// Length of the Ethernet II header (no 802.1Q tag, no FCS).
pub const HEADER_LEN: usize = field::PAYLOAD;

/// A read/write view of an Ethernet II frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length; for buffers sized with [`Repr::buffer_len`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds the 14-byte header.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the header; after `Ok` no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len("ethernet", self.buffer.as_ref(), HEADER_LEN)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC address.
    pub fn dst_addr(&self) -> MacAddr {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        MacAddr(a)
    }

    /// Source MAC address.
    pub fn src_addr(&self) -> MacAddr {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        MacAddr(a)
    }

    /// EtherType.
    pub fn ethertype(&self) -> EtherType {
        let d = &self.buffer.as_ref()[field::ETHERTYPE];
        EtherType::from(u16::from_be_bytes([d[0], d[1]]))
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The bytes after the header, through the end of the buffer (including any padding the frame carries).
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the destination MAC address.
    pub fn set_dst_addr(&mut self, value: MacAddr) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&value.0);
    }

    /// Sets the source MAC address.
    pub fn set_src_addr(&mut self, value: MacAddr) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&value.0);
    }

    /// Sets the EtherType.
    pub fn set_ethertype(&mut self, value: EtherType) {
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&u16::from(value).to_be_bytes());
    }

    /// The bytes after the header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

/// The fields of an Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source MAC address.
    pub src_addr: MacAddr,
    /// Destination MAC address.
    pub dst_addr: MacAddr,
    /// EtherType of the payload.
    pub ethertype: EtherType,
}

impl Repr {
    /// Reads the header. Every 14-byte header is valid: an unknown EtherType is kept.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            ethertype: packet.ethertype(),
        })
    }

    /// Bytes the header takes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into the first 14 bytes of the packet's buffer; the payload is left alone.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_dst_addr(self.dst_addr);
        packet.set_src_addr(self.src_addr);
        packet.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Error;
    use proptest::prelude::*;

    // The Ethernet header of a RoCEv2 CNP captured on a ConnectX-4 Lx, from secdev/scapy
    // test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4 Lx"), followed by the first IPv4 byte.
    static FRAME_BYTES: [u8; 15] = [
        0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, 0x45,
    ];

    fn repr() -> Repr {
        Repr {
            dst_addr: MacAddr([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]),
            src_addr: MacAddr([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]),
            ethertype: EtherType::Ipv4,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(p.dst_addr(), MacAddr([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]));
        assert_eq!(p.src_addr(), MacAddr([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]));
        assert_eq!(p.ethertype(), EtherType::Ipv4);
        assert_eq!(p.payload(), &[0x45]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 15];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_dst_addr(MacAddr([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]));
        p.set_src_addr(MacAddr([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]));
        p.set_ethertype(EtherType::Ipv4);
        p.payload_mut()[0] = 0x45;
        assert_eq!(buf, FRAME_BYTES);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 15];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..HEADER_LEN], FRAME_BYTES[..HEADER_LEN]);
        assert_eq!(buf[HEADER_LEN], 0xa5, "emit must not touch the payload");
    }

    #[test]
    fn ethertype_codes() {
        assert_eq!(EtherType::from(0x86dd), EtherType::Ipv6);
        assert_eq!(EtherType::from(0x8808), EtherType::MacControl);
        assert_eq!(EtherType::from(0x8100), EtherType::Vlan);
        assert_eq!(EtherType::from(0x8915), EtherType::Unknown(0x8915));
        assert_eq!(u16::from(EtherType::MacControl), 0x8808);
        assert_eq!(u16::from(EtherType::Unknown(0x88cc)), 0x88cc);
    }

    #[test]
    fn mac_display_and_multicast() {
        assert_eq!(
            MacAddr([0x01, 0x80, 0xc2, 0, 0, 1]).to_string(),
            "01:80:c2:00:00:01"
        );
        assert!(MacAddr([0x01, 0x80, 0xc2, 0, 0, 1]).is_multicast());
        assert!(!repr().src_addr.is_multicast());
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Packet::new_checked(&FRAME_BYTES[..13]),
            Err(Error::Truncated {
                header: "ethernet",
                need: 14,
                have: 13
            })
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(b in proptest::array::uniform14(any::<u8>())) {
            let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, b);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96)) {
            match Packet::new_checked(&b[..]) {
                Ok(p) => {
                    prop_assert!(b.len() >= HEADER_LEN);
                    prop_assert!(Repr::parse(&p).is_ok());
                    prop_assert_eq!(p.payload().len(), b.len() - HEADER_LEN);
                }
                Err(e) => prop_assert!(matches!(e, Error::Truncated { .. }) && b.len() < HEADER_LEN, "{:?}", e),
            }
        }
    }
}
