//! Global Route Header (GRH), 40 bytes after the LRH when LNH is IBA global; laid out like an IPv6 header.
//!
//! ```text
//! byte 0-3   [31:28] IPVer (6)   [27:20] TClass   [19:0] FlowLabel
//! byte 4-5   PayLen   (bytes from the BTH through the ICRC)
//! byte 6     NxtHdr   (0x1B: IBA transport follows)
//! byte 7     HopLmt
//! byte 8-23  SGID
//! byte 24-39 DGID
//! ```
//!
//! [`Repr::parse`] rejects IPVer != 6 (`BadField`), the one field [`Repr`] does not store; every other bit is
//! kept, so `emit(parse(b)) == b` whenever parse succeeds. NxtHdr is kept as a raw byte and not checked: a
//! packet that carries something else than IBA after a GRH is representable, and the dispatcher decides.
//! PayLen is not checked against the buffer, for the same reason as the LRH's PktLen.

use super::{check_len, Error, Field, Result};

const HEADER: &str = "GRH";

/// Length of the GRH in bytes.
pub const HEADER_LEN: usize = 40;

/// The only IPVer a GRH may carry.
pub const IP_VERSION: u8 = 6;

/// NxtHdr value for "IBA transport header follows".
pub const NXT_HDR_IBA: u8 = 0x1B;

mod field {
    use super::Field;
    /// IPVer `[31:28]`, TClass `[27:20]`, FlowLabel `[19:0]` of a big-endian 32-bit word.
    pub const VER_TC_FLOW: Field = 0..4;
    pub const PAYLEN: Field = 4..6;
    pub const NXTHDR: usize = 6;
    pub const HOPLMT: usize = 7;
    pub const SGID: Field = 8..24;
    pub const DGID: Field = 24..40;
}

/// A 128-bit global identifier: 64-bit subnet prefix, then 64-bit interface ID (port GUID), big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gid(pub [u8; 16]);

impl Gid {
    /// Builds a GID from its subnet prefix and interface ID.
    pub fn new(subnet_prefix: u64, interface_id: u64) -> Gid {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&subnet_prefix.to_be_bytes());
        bytes[8..].copy_from_slice(&interface_id.to_be_bytes());
        Gid(bytes)
    }

    /// Upper 64 bits.
    pub fn subnet_prefix(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        u64::from_be_bytes(b)
    }

    /// Lower 64 bits.
    pub fn interface_id(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[8..]);
        u64::from_be_bytes(b)
    }

    /// The 16 bytes in wire order.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

/// A view of a GRH at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds a whole GRH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 40 GRH bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word0(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::VER_TC_FLOW];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// IP version (4 bits; 6 in a valid GRH).
    pub fn ip_ver(&self) -> u8 {
        (self.word0() >> 28) as u8
    }

    /// Traffic class (8 bits).
    pub fn tclass(&self) -> u8 {
        (self.word0() >> 20) as u8
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000F_FFFF
    }

    /// Payload length in bytes, BTH through ICRC.
    pub fn pay_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::PAYLEN];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Next header code.
    pub fn nxt_hdr(&self) -> u8 {
        self.buffer.as_ref()[field::NXTHDR]
    }

    /// Hop limit.
    pub fn hop_lmt(&self) -> u8 {
        self.buffer.as_ref()[field::HOPLMT]
    }

    /// Source GID.
    pub fn sgid(&self) -> Gid {
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.buffer.as_ref()[field::SGID]);
        Gid(g)
    }

    /// Destination GID.
    pub fn dgid(&self) -> Gid {
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.buffer.as_ref()[field::DGID]);
        Gid(g)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_word0(&mut self, value: u32) {
        self.buffer.as_mut()[field::VER_TC_FLOW].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets IPVer (low 4 bits of `value`), keeping TClass and FlowLabel.
    pub fn set_ip_ver(&mut self, value: u8) {
        let w = (self.word0() & 0x0FFF_FFFF) | (u32::from(value & 0x0F) << 28);
        self.set_word0(w);
    }

    /// Sets TClass, keeping IPVer and FlowLabel.
    pub fn set_tclass(&mut self, value: u8) {
        let w = (self.word0() & 0xF00F_FFFF) | (u32::from(value) << 20);
        self.set_word0(w);
    }

    /// Sets FlowLabel (low 20 bits of `value`), keeping IPVer and TClass.
    pub fn set_flow_label(&mut self, value: u32) {
        let w = (self.word0() & 0xFFF0_0000) | (value & 0x000F_FFFF);
        self.set_word0(w);
    }

    /// Sets PayLen.
    pub fn set_pay_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::PAYLEN].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets NxtHdr.
    pub fn set_nxt_hdr(&mut self, value: u8) {
        self.buffer.as_mut()[field::NXTHDR] = value;
    }

    /// Sets HopLmt.
    pub fn set_hop_lmt(&mut self, value: u8) {
        self.buffer.as_mut()[field::HOPLMT] = value;
    }

    /// Sets the source GID.
    pub fn set_sgid(&mut self, value: Gid) {
        self.buffer.as_mut()[field::SGID].copy_from_slice(&value.0);
    }

    /// Sets the destination GID.
    pub fn set_dgid(&mut self, value: Gid) {
        self.buffer.as_mut()[field::DGID].copy_from_slice(&value.0);
    }
}

/// The fields of a GRH. IPVer is implied (always [`IP_VERSION`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Traffic class.
    pub tclass: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Payload length in bytes, BTH through ICRC.
    pub pay_len: u16,
    /// Next header ([`NXT_HDR_IBA`] for IBA transport).
    pub nxt_hdr: u8,
    /// Hop limit.
    pub hop_lmt: u8,
    /// Source GID.
    pub sgid: Gid,
    /// Destination GID.
    pub dgid: Gid,
}

impl Repr {
    /// Reads a GRH: `Truncated` if short, `BadField` ("IPVer") unless IPVer is 6.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.ip_ver() != IP_VERSION {
            return Err(Error::BadField {
                header: HEADER,
                field: "IPVer",
                value: u32::from(packet.ip_ver()),
            });
        }
        Ok(Repr {
            tclass: packet.tclass(),
            flow_label: packet.flow_label(),
            pay_len: packet.pay_len(),
            nxt_hdr: packet.nxt_hdr(),
            hop_lmt: packet.hop_lmt(),
            sgid: packet.sgid(),
            dgid: packet.dgid(),
        })
    }

    /// Bytes [`Repr::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Length of the header itself (equal to [`Repr::buffer_len`]).
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes every field, IPVer = 6; a flow label wider than 20 bits is cut.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_ip_ver(IP_VERSION);
        packet.set_tclass(self.tclass);
        packet.set_flow_label(self.flow_label);
        packet.set_pay_len(self.pay_len);
        packet.set_nxt_hdr(self.nxt_hdr);
        packet.set_hop_lmt(self.hop_lmt);
        packet.set_sgid(self.sgid);
        packet.set_dgid(self.dgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// IPVer 6, TClass 0xAB, FlowLabel 0x12345, PayLen 24, NxtHdr 0x1B, HopLmt 64,
    /// SGID fe80::2:c903:1:2345, DGID fe80::2:c903:1:6789.
    static PACKET_BYTES: [u8; 40] = [
        0x6a, 0xb1, 0x23, 0x45, 0x00, 0x18, 0x1b, 0x40, //
        0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x23, 0x45, //
        0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x67, 0x89,
    ];

    fn packet_repr() -> Repr {
        Repr {
            tclass: 0xab,
            flow_label: 0x12345,
            pay_len: 24,
            nxt_hdr: NXT_HDR_IBA,
            hop_lmt: 64,
            sgid: Gid::new(0xfe80_0000_0000_0000, 0x0002_c903_0001_2345),
            dgid: Gid::new(0xfe80_0000_0000_0000, 0x0002_c903_0001_6789),
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.ip_ver(), 6);
        assert_eq!(p.tclass(), 0xab);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.pay_len(), 24);
        assert_eq!(p.nxt_hdr(), 0x1b);
        assert_eq!(p.hop_lmt(), 64);
        assert_eq!(p.sgid().subnet_prefix(), 0xfe80_0000_0000_0000);
        assert_eq!(p.sgid().interface_id(), 0x0002_c903_0001_2345);
        assert_eq!(p.dgid().as_bytes()[14..], [0x67, 0x89]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 40];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_ip_ver(6);
        p.set_tclass(0xab);
        p.set_flow_label(0x12345);
        p.set_pay_len(24);
        p.set_nxt_hdr(0x1b);
        p.set_hop_lmt(64);
        p.set_sgid(Gid::new(0xfe80_0000_0000_0000, 0x0002_c903_0001_2345));
        p.set_dgid(Gid::new(0xfe80_0000_0000_0000, 0x0002_c903_0001_6789));
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn word0_setters_keep_neighbours() {
        let mut buf = [0xffu8; 40];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_tclass(0);
        assert_eq!(buf[..4], [0xf0, 0x0f, 0xff, 0xff]);
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_flow_label(0);
        p.set_ip_ver(0);
        assert_eq!(buf[..4], [0x00, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p), Ok(packet_repr()));
    }

    #[test]
    fn emit() {
        let repr = packet_repr();
        let mut buf = [0xa5u8; 40];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 40);
    }

    #[test]
    fn bad_version() {
        let mut buf = PACKET_BYTES;
        buf[0] = 0x4a;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&buf[..])),
            Err(Error::BadField {
                header: "GRH",
                field: "IPVer",
                value: 4
            })
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(mut bytes in any::<[u8; 40]>()) {
            // Force IPVer 6 so every case exercises the round trip; other versions are covered below.
            bytes[0] = (bytes[0] & 0x0f) | 0x60;
            let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; 40];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, bytes);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let res = Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p));
            match res {
                Ok(_) => prop_assert!(bytes.len() >= HEADER_LEN && bytes[0] >> 4 == 6),
                Err(Error::Truncated { header, need, have }) => {
                    prop_assert_eq!((header, need, have), ("GRH", HEADER_LEN, bytes.len()));
                }
                Err(Error::BadField { header, field, value }) => {
                    prop_assert_eq!((header, field), ("GRH", "IPVer"));
                    prop_assert_eq!(value, u32::from(bytes[0] >> 4));
                    prop_assert_ne!(value, 6);
                }
            }
        }
    }
}
