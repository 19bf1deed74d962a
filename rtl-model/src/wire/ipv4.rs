//! IPv4 header (RFC 791), the network header of RoCEv2 over IPv4.
//!
//! ```text
//! byte 0      Version [7:4] = 4, IHL [3:0] (header length in 4-byte words, >= 5)
//! byte 1      DSCP [7:2], ECN [1:0]          (the old TOS byte; masked in the ICRC)
//! bytes 2-3   Total Length (header + payload, bytes)
//! bytes 4-5   Identification
//! bytes 6-7   [15] reserved (0), [14] DF, [13] MF, [12:0] Fragment Offset (8-byte units)
//! byte 8      TTL                            (masked in the ICRC)
//! byte 9      Protocol (17 = UDP)
//! bytes 10-11 Header Checksum                (masked in the ICRC)
//! bytes 12-15 Source Address
//! bytes 16-19 Destination Address
//! bytes 20-   options, if IHL > 5
//! ```
//!
//! The header checksum (RFC 1071 one's complement of the one's complement sum of the header's 16-bit words) is
//! written here directly: it is a dozen lines, and no crate among the allowed dependencies provides it.
//! Checksums are not checked by `parse`; use [`Packet::verify_checksum`].

use super::{check_len, Error, Result};

/// The two ECN bits (RFC 3168). All four values are meaningful, so there is no unknown case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// 0b00: not ECN-capable transport; a switch must not mark it.
    NotEct = 0,
    /// 0b01: ECN-capable transport, ECT(1).
    Ect1 = 1,
    /// 0b10: ECN-capable transport, ECT(0); what RoCEv2 senders with DCQCN send.
    Ect0 = 2,
    /// 0b11: congestion experienced; set by a congested switch, answered with a CNP by the receiver.
    Ce = 3,
}

impl Ecn {
    /// Decodes the two low bits of `bits`; the upper bits are ignored.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0x03 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The 2-bit code.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// True for ECT(0), ECT(1) and CE: a packet a switch may mark.
    pub const fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

/// The IPv4 Protocol / IPv6 Next Header code. Codes other than UDP are kept as `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpProtocol {
    /// 17: UDP, which carries RoCEv2.
    Udp,
    /// Any other value, kept as read.
    Unknown(u8),
}

impl From<u8> for IpProtocol {
    fn from(value: u8) -> Self {
        match value {
            17 => IpProtocol::Udp,
            other => IpProtocol::Unknown(other),
        }
    }
}

impl From<IpProtocol> for u8 {
    fn from(value: IpProtocol) -> Self {
        match value {
            IpProtocol::Udp => 17,
            IpProtocol::Unknown(other) => other,
        }
    }
}

mod field {
    use crate::wire::Field;

    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// Length of an IPv4 header without options (what [`Repr::emit`] writes).
pub const HEADER_LEN: usize = field::DST_ADDR.end;

const FLAG_RESERVED: u16 = 0x8000;
const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1fff;

/// One's complement sum (RFC 1071) of `data` as big-endian 16-bit words, an odd last byte padded with zero.
/// The result is folded to 16 bits; it is 0 only when every word is 0.
fn ones_complement_sum(data: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// One's complement addition of two 16-bit words (end-around carry).
fn ones_add(a: u16, b: u16) -> u16 {
    let s = u32::from(a) + u32::from(b);
    ((s & 0xffff) + (s >> 16)) as u16
}

/// A read/write view of an IPv4 packet.
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

    /// Checks the buffer against the header's length fields: 20 bytes present, IHL >= 5 (else `BadField`),
    /// the whole header (with options) present, Total Length >= header length (else `BadField`) and no longer
    /// than the buffer (else `Truncated`). After `Ok`, no accessor panics. The version is checked by
    /// [`Repr::parse`], not here, so a view can still show what a bad packet holds.
    pub fn check_len(&self) -> Result<()> {
        let buf = self.buffer.as_ref();
        check_len("ipv4", buf, HEADER_LEN)?;
        let ihl = buf[field::VER_IHL] & 0x0f;
        if ihl < 5 {
            return Err(Error::BadField {
                header: "ipv4",
                field: "ihl",
                value: u32::from(ihl),
            });
        }
        let header_len = usize::from(ihl) * 4;
        check_len("ipv4", buf, header_len)?;
        let total_len = usize::from(self.total_len());
        if total_len < header_len {
            return Err(Error::BadField {
                header: "ipv4",
                field: "total_len",
                value: total_len as u32,
            });
        }
        check_len("ipv4", buf, total_len)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version field (4 for a valid packet).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// IHL: header length in 4-byte words.
    pub fn ihl(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] & 0x0f
    }

    /// Header length in bytes (IHL * 4), options included.
    pub fn header_len(&self) -> usize {
        usize::from(self.ihl()) * 4
    }

    /// DSCP, the upper six bits of the TOS byte.
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }

    /// ECN, the lower two bits of the TOS byte.
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.buffer.as_ref()[field::DSCP_ECN])
    }

    /// Total Length: header plus payload, in bytes.
    pub fn total_len(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LENGTH];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::IDENT];
        u16::from_be_bytes([d[0], d[1]])
    }

    fn flg_off(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::FLG_OFF];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// The reserved flag (bit 15 of bytes 6-7), zero in a valid packet.
    pub fn reserved_flag(&self) -> bool {
        self.flg_off() & FLAG_RESERVED != 0
    }

    /// Don't Fragment; RoCEv2 senders set it.
    pub fn dont_frag(&self) -> bool {
        self.flg_off() & FLAG_DF != 0
    }

    /// More Fragments.
    pub fn more_frags(&self) -> bool {
        self.flg_off() & FLAG_MF != 0
    }

    /// Fragment Offset, in units of 8 bytes (13 bits).
    pub fn frag_offset(&self) -> u16 {
        self.flg_off() & FRAG_OFFSET_MASK
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Protocol of the payload.
    pub fn protocol(&self) -> IpProtocol {
        IpProtocol::from(self.buffer.as_ref()[field::PROTOCOL])
    }

    /// Header checksum as carried.
    pub fn checksum(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::CHECKSUM];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// Source address.
    pub fn src_addr(&self) -> [u8; 4] {
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC_ADDR]);
        a
    }

    /// Destination address.
    pub fn dst_addr(&self) -> [u8; 4] {
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST_ADDR]);
        a
    }

    /// True when the header checksum is right: the one's complement sum of all header words, checksum
    /// included, is 0xffff.
    pub fn verify_checksum(&self) -> bool {
        ones_complement_sum(&self.buffer.as_ref()[..self.header_len()]) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The options, bytes 20 to the header length (empty when IHL = 5).
    pub fn options(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
    }

    /// The payload: from the end of the header to Total Length (bytes beyond it, such as Ethernet padding,
    /// are not included).
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the version nibble.
    pub fn set_version(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (value << 4);
    }

    /// Sets IHL (header length in 4-byte words; low four bits of `value`).
    pub fn set_ihl(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | (value & 0x0f);
    }

    /// Sets DSCP (low six bits of `value`); keeps ECN. Does not update the checksum.
    pub fn set_dscp(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0x03) | (value << 2);
    }

    /// Sets ECN; keeps DSCP. Does not update the checksum (see [`Packet::set_ecn_ce`]).
    pub fn set_ecn(&mut self, value: Ecn) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0xfc) | value.bits();
    }

    /// Sets Total Length.
    pub fn set_total_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Identification.
    pub fn set_ident(&mut self, value: u16) {
        self.buffer.as_mut()[field::IDENT].copy_from_slice(&value.to_be_bytes());
    }

    fn set_flg_off(&mut self, value: u16) {
        self.buffer.as_mut()[field::FLG_OFF].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the reserved flag; keeps the other flags and the offset.
    pub fn set_reserved_flag(&mut self, value: bool) {
        let v = (self.flg_off() & !FLAG_RESERVED) | if value { FLAG_RESERVED } else { 0 };
        self.set_flg_off(v);
    }

    /// Sets Don't Fragment; keeps the other flags and the offset.
    pub fn set_dont_frag(&mut self, value: bool) {
        let v = (self.flg_off() & !FLAG_DF) | if value { FLAG_DF } else { 0 };
        self.set_flg_off(v);
    }

    /// Sets More Fragments; keeps the other flags and the offset.
    pub fn set_more_frags(&mut self, value: bool) {
        let v = (self.flg_off() & !FLAG_MF) | if value { FLAG_MF } else { 0 };
        self.set_flg_off(v);
    }

    /// Sets Fragment Offset (8-byte units; low 13 bits of `value`); keeps the flags.
    pub fn set_frag_offset(&mut self, value: u16) {
        let v = (self.flg_off() & !FRAG_OFFSET_MASK) | (value & FRAG_OFFSET_MASK);
        self.set_flg_off(v);
    }

    /// Sets TTL. Does not update the checksum.
    pub fn set_ttl(&mut self, value: u8) {
        self.buffer.as_mut()[field::TTL] = value;
    }

    /// Sets Protocol.
    pub fn set_protocol(&mut self, value: IpProtocol) {
        self.buffer.as_mut()[field::PROTOCOL] = value.into();
    }

    /// Sets the header checksum field to `value` as is.
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, value: [u8; 4]) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&value);
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, value: [u8; 4]) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&value);
    }

    /// Computes the header checksum over the header (options included, as IHL says) and writes it.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let len = self.header_len();
        let sum = ones_complement_sum(&self.buffer.as_ref()[..len]);
        self.set_checksum(!sum);
    }

    /// Marks the packet Congestion Experienced (ECN = 0b11) and updates the header checksum incrementally
    /// (RFC 1624 eqn. 3: `HC' = ~(~HC + ~m + m')`, `m` the 16-bit word holding the TOS byte before, `m'` after).
    ///
    /// Incremental, not a refill, because that is what a switch pipeline does, and because it keeps a checksum
    /// that was already wrong wrong: a switch must not repair a header corrupted upstream. Whether the packet
    /// may be marked (ECN-capable) is the caller's decision; see [`Ecn::is_ect`]. The ICRC needs no update: the
    /// TOS byte and the checksum are masked in it.
    pub fn set_ecn_ce(&mut self) {
        let word = |b: &[u8]| u16::from_be_bytes([b[field::VER_IHL], b[field::DSCP_ECN]]);
        let old = word(self.buffer.as_ref());
        self.set_ecn(Ecn::Ce);
        let new = word(self.buffer.as_ref());
        let hc = self.checksum();
        self.set_checksum(!ones_add(ones_add(!hc, !old), new));
    }

    /// The payload (end of header to Total Length), writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let range = self.header_len()..usize::from(self.total_len());
        &mut self.buffer.as_mut()[range]
    }
}

/// The fields of an IPv4 header, without options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source address.
    pub src_addr: [u8; 4],
    /// Destination address.
    pub dst_addr: [u8; 4],
    /// Protocol of the payload.
    pub protocol: IpProtocol,
    /// Payload length in bytes (Total Length minus the header). At most 65515: `emit` saturates the Total
    /// Length field at 65535.
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// DSCP (6 bits; upper bits are dropped by `emit`).
    pub dscp: u8,
    /// ECN.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't Fragment.
    pub dont_frag: bool,
    /// More Fragments.
    pub more_frags: bool,
    /// Fragment Offset in 8-byte units (13 bits; upper bits are dropped by `emit`).
    pub frag_offset: u16,
}

impl Repr {
    /// Reads the header after the length checks of [`Packet::check_len`]. `BadField` for a version other
    /// than 4 and for the reserved flag set (RFC 791: must be zero; rejecting it keeps `emit(parse(b)) == b`).
    /// Options (IHL > 5) are skipped and not kept. All ECN and DSCP values are accepted: marking is a
    /// switch's business. The checksum is not checked (see [`Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != 4 {
            return Err(Error::BadField {
                header: "ipv4",
                field: "version",
                value: u32::from(packet.version()),
            });
        }
        if packet.reserved_flag() {
            return Err(Error::BadField {
                header: "ipv4",
                field: "reserved_flag",
                value: 1,
            });
        }
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
            ttl: packet.ttl(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
        })
    }

    /// Bytes the header takes (20: `emit` writes no options); the payload follows.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 20-byte header (IHL 5) with a correct checksum; the payload is left alone.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_version(4);
        packet.set_ihl(5);
        packet.set_dscp(self.dscp);
        packet.set_ecn(self.ecn);
        let total = u16::try_from(HEADER_LEN + self.payload_len).unwrap_or(u16::MAX);
        packet.set_total_len(total);
        packet.set_ident(self.ident);
        packet.set_flg_off(0);
        packet.set_dont_frag(self.dont_frag);
        packet.set_more_frags(self.more_frags);
        packet.set_frag_offset(self.frag_offset);
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // IPv4 header of a RoCEv2 CNP captured on a ConnectX-4 Lx (secdev/scapy test/contrib/roce.uts, "RoCE CNP
    // captured on ConnectX-4 Lx"), then the first 4 of its 40 payload bytes (UDP header start).
    // TOS 0xc2 = DSCP 48, ECN ECT(0); Total Length 60; DF; TTL 64; UDP; checksum 0x9161.
    static PACKET_BYTES: [u8; 24] = [
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11,
        0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7,
    ];

    fn repr() -> Repr {
        Repr {
            src_addr: [10, 0, 17, 1],
            dst_addr: [10, 0, 18, 1],
            protocol: IpProtocol::Udp,
            payload_len: 40,
            ttl: 64,
            dscp: 48,
            ecn: Ecn::Ect0,
            ident: 0x718c,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
        }
    }

    /// The header followed by the 40-byte payload its Total Length announces (payload bytes 0x11).
    fn full_packet() -> Vec<u8> {
        let mut v = PACKET_BYTES[..HEADER_LEN].to_vec();
        v.resize(60, 0x11);
        v
    }

    #[test]
    fn deconstruct() {
        let buf = full_packet();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.ihl(), 5);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.dscp(), 48);
        assert_eq!(p.ecn(), Ecn::Ect0);
        assert_eq!(p.total_len(), 60);
        assert_eq!(p.ident(), 0x718c);
        assert!(p.dont_frag());
        assert!(!p.more_frags());
        assert!(!p.reserved_flag());
        assert_eq!(p.frag_offset(), 0);
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), IpProtocol::Udp);
        assert_eq!(p.checksum(), 0x9161);
        assert_eq!(p.src_addr(), [10, 0, 17, 1]);
        assert_eq!(p.dst_addr(), [10, 0, 18, 1]);
        assert!(p.options().is_empty());
        assert_eq!(p.payload().len(), 40);
        assert!(p.verify_checksum(), "checksum of a captured header");
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 20];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_version(4);
        p.set_ihl(5);
        p.set_dscp(48);
        p.set_ecn(Ecn::Ect0);
        p.set_total_len(60);
        p.set_ident(0x718c);
        p.set_reserved_flag(false);
        p.set_dont_frag(true);
        p.set_more_frags(false);
        p.set_frag_offset(0);
        p.set_ttl(64);
        p.set_protocol(IpProtocol::Udp);
        p.set_src_addr([10, 0, 17, 1]);
        p.set_dst_addr([10, 0, 18, 1]);
        p.fill_checksum();
        assert_eq!(buf, PACKET_BYTES[..20]);
    }

    #[test]
    fn parse() {
        let buf = full_packet();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 21];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..20], PACKET_BYTES[..20]);
        assert_eq!(buf[20], 0xa5);
    }

    /// scapy's RoCE UC example (secdev/scapy test/contrib/roce.uts, "RoCE layer") asserts chksum == 0xb4d5
    /// for this header: tos 0x1, len 64, id 1144, DF, ttl 64, UDP, 192.168.0.7 -> 192.168.0.7.
    #[test]
    fn checksum_matches_scapy() {
        let mut h = [
            0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xa5, 0xa5, 192, 168, 0, 7,
            192, 168, 0, 7,
        ];
        let mut p = Packet::new_unchecked(&mut h[..]);
        assert!(!p.verify_checksum());
        p.fill_checksum();
        assert_eq!(p.checksum(), 0xb4d5);
        assert!(p.verify_checksum());
    }

    /// Marking CE on the captured header: TOS 0xc2 -> 0xc3, so the first word grows by one and the checksum,
    /// its complement, drops by one: 0x9161 -> 0x9160.
    #[test]
    fn ecn_ce_by_hand() {
        let mut buf = full_packet();
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.set_ecn_ce();
        assert_eq!(p.ecn(), Ecn::Ce);
        assert_eq!(p.dscp(), 48);
        assert_eq!(p.checksum(), 0x9160);
        assert!(p.verify_checksum());
    }

    #[test]
    fn options_are_skipped() {
        // IHL 6: one 4-byte option word (NOP NOP NOP EOL), Total Length 28, payload 4 bytes.
        let mut buf = vec![
            0x46, 0x00, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x00, 0x00, 1, 2, 3, 4, 5,
            6, 7, 8, 1, 1, 1, 0, 0xde, 0xad, 0xbe, 0xef,
        ];
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.fill_checksum();
        assert!(p.verify_checksum());
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Repr::parse(&p).unwrap().payload_len, 4);
    }

    #[test]
    fn bad_fields() {
        let mut buf = full_packet();
        buf[0] = 0x44;
        assert_eq!(
            Packet::new_checked(&buf[..]),
            Err(Error::BadField {
                header: "ipv4",
                field: "ihl",
                value: 4
            })
        );
        buf[0] = 0x65;
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(
            Repr::parse(&p),
            Err(Error::BadField {
                header: "ipv4",
                field: "version",
                value: 6
            })
        );
        buf[0] = 0x45;
        buf[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert_eq!(
            Packet::new_checked(&buf[..]),
            Err(Error::BadField {
                header: "ipv4",
                field: "total_len",
                value: 19
            })
        );
        buf[2..4].copy_from_slice(&61u16.to_be_bytes());
        assert_eq!(
            Packet::new_checked(&buf[..]),
            Err(Error::Truncated {
                header: "ipv4",
                need: 61,
                have: 60
            })
        );
        buf[2..4].copy_from_slice(&60u16.to_be_bytes());
        buf[6] |= 0x80;
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert!(matches!(
            Repr::parse(&p),
            Err(Error::BadField {
                field: "reserved_flag",
                ..
            })
        ));
        assert!(matches!(
            Packet::new_checked(&buf[..19]),
            Err(Error::Truncated { need: 20, .. })
        ));
    }

    /// A random 20-byte header made valid for the round trip: version 4, IHL 5, reserved flag clear, Total
    /// Length = 20 + payload, checksum filled; followed by the payload.
    fn valid_packet() -> impl Strategy<Value = Vec<u8>> {
        (proptest::array::uniform20(any::<u8>()), 0usize..64).prop_map(|(h, plen)| {
            let mut v = h.to_vec();
            v.resize(HEADER_LEN + plen, 0x5a);
            let mut p = Packet::new_unchecked(&mut v[..]);
            p.set_version(4);
            p.set_ihl(5);
            p.set_reserved_flag(false);
            p.set_total_len((HEADER_LEN + plen) as u16);
            p.fill_checksum();
            v
        })
    }

    /// A random header with IHL 5..=15 (random options), random payload and a correct checksum.
    fn packet_with_options() -> impl Strategy<Value = Vec<u8>> {
        (5u8..=15, proptest::collection::vec(any::<u8>(), 60 + 16)).prop_map(|(ihl, mut v)| {
            let hl = usize::from(ihl) * 4;
            v.truncate(hl + 16);
            let mut p = Packet::new_unchecked(&mut v[..]);
            p.set_version(4);
            p.set_ihl(ihl);
            p.set_total_len((hl + 16) as u16);
            p.fill_checksum();
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(b in valid_packet()) {
            let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            prop_assert_eq!(r.payload_len, b.len() - HEADER_LEN);
            let mut out = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(&out[..], &b[..HEADER_LEN]);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96)) {
            match Packet::new_checked(&b[..]) {
                Ok(p) => {
                    let total = usize::from(p.total_len());
                    prop_assert!(p.header_len() >= HEADER_LEN && p.header_len() <= total && total <= b.len());
                    match Repr::parse(&p) {
                        Ok(r) => prop_assert_eq!(r.payload_len, p.payload().len()),
                        Err(e) => prop_assert!(matches!(e, Error::BadField { .. }), "{:?}", e),
                    }
                }
                Err(Error::Truncated { need, have, .. }) => prop_assert!(need > have && have == b.len()),
                Err(Error::BadField { field, .. }) => prop_assert!(field == "ihl" || field == "total_len"),
            }
        }

        /// Same, with the length field pointed inside the buffer so the accepting paths are reached too.
        #[test]
        fn parse_never_panics_plausible_length(
            mut b in proptest::collection::vec(any::<u8>(), 4..96),
            slack in 0usize..8,
        ) {
            let total = (b.len() + slack).saturating_sub(4) as u16;
            b[2..4].copy_from_slice(&total.to_be_bytes());
            if let Ok(p) = Packet::new_checked(&b[..]) {
                prop_assert_eq!(p.payload().len(), usize::from(total) - p.header_len());
                prop_assert_eq!(p.options().len(), p.header_len() - HEADER_LEN);
                let _ = Repr::parse(&p);
            }
        }

        #[test]
        fn fill_then_verify(mut b in packet_with_options(), bit in 0usize..(60 * 8)) {
            prop_assert!(Packet::new_checked(&b[..]).unwrap().verify_checksum());
            // One flipped header bit must be caught: the sum moves by +-2^k, never by 0 mod 0xffff.
            let hl = Packet::new_checked(&b[..]).unwrap().header_len();
            let bit = bit % (hl * 8);
            // Not the IHL nibble: that changes which bytes are summed, no longer a one-bit error.
            prop_assume!(!(4..8).contains(&bit));
            b[bit / 8] ^= 0x80 >> (bit % 8);
            if let Ok(p) = Packet::new_checked(&b[..]) {
                prop_assert!(!p.verify_checksum());
            }
        }

        #[test]
        fn ecn_ce_keeps_checksum_valid(b in packet_with_options()) {
            let mut marked = b.clone();
            let mut p = Packet::new_checked(&mut marked[..]).unwrap();
            p.set_ecn_ce();
            prop_assert!(p.verify_checksum());
            prop_assert_eq!(p.ecn(), Ecn::Ce);
            // The incremental update agrees with a full recomputation.
            let incremental = p.checksum();
            p.fill_checksum();
            prop_assert_eq!(incremental, p.checksum());
            // Nothing but the ECN bits and the checksum changed.
            for (i, (x, y)) in b.iter().zip(marked.iter()).enumerate() {
                match i {
                    1 => prop_assert_eq!(x & 0xfc, y & 0xfc),
                    10 | 11 => {}
                    _ => prop_assert_eq!(x, y),
                }
            }
        }
    }
}
