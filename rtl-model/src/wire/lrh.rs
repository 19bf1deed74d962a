//! Local Route Header (LRH), the first 8 bytes of every InfiniBand packet.
//!
//! ```text
//! byte 0   [7:4] VL        [3:0] LVer
//! byte 1   [7:4] SL        [3:2] reserved (resv2)   [1:0] LNH
//! byte 2-3 DLID
//! byte 4   [7:3] reserved (resv5)   [2:0] PktLen[10:8]
//! byte 5   PktLen[7:0]     (4-byte words from the LRH start through the ICRC; the VCRC is not counted)
//! byte 6-7 SLID
//! ```
//!
//! Every bit is kept: [`Repr`] holds LVer and both reserved fields, so `emit(parse(b)) == b` for every 8-byte
//! `b`. [`Repr::parse`] accepts any LVer: the model must be able to carry and inspect a packet with an unknown
//! link version (the receiving port decides to drop it, by looking at [`Repr::lver`]), and refusing it here
//! would lose the bits. PktLen is not checked against the buffer by [`Packet::new_checked`] because the fabric
//! often holds the headers of a packet without its payload; [`Packet::check_pkt_len`] checks a whole packet.

use super::{check_len, Error, Field, Result};

const HEADER: &str = "LRH";

/// Length of the LRH in bytes.
pub const HEADER_LEN: usize = 8;

mod field {
    use super::Field;
    /// VL `[7:4]`, LVer `[3:0]`.
    pub const VL_LVER: usize = 0;
    /// SL `[7:4]`, resv2 `[3:2]`, LNH `[1:0]`.
    pub const SL_LNH: usize = 1;
    pub const DLID: Field = 2..4;
    /// resv5 `[15:11]`, PktLen `[10:0]` of the big-endian 16-bit word.
    pub const PKTLEN: Field = 4..6;
    pub const SLID: Field = 6..8;
}

/// Link Next Header: what follows the LRH. Two bits, so every value has a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lnh {
    /// 0: raw packet (no IBA transport).
    Raw,
    /// 1: IP, non-IBA transport.
    IpNonIba,
    /// 2: IBA local: the BTH follows.
    IbaLocal,
    /// 3: IBA global: the GRH follows.
    IbaGlobal,
}

impl From<u8> for Lnh {
    /// Uses the low two bits; the others are not part of the field.
    fn from(value: u8) -> Self {
        match value & 0x03 {
            0 => Lnh::Raw,
            1 => Lnh::IpNonIba,
            2 => Lnh::IbaLocal,
            _ => Lnh::IbaGlobal,
        }
    }
}

impl From<Lnh> for u8 {
    fn from(lnh: Lnh) -> u8 {
        match lnh {
            Lnh::Raw => 0,
            Lnh::IpNonIba => 1,
            Lnh::IbaLocal => 2,
            Lnh::IbaGlobal => 3,
        }
    }
}

/// A view of an LRH at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds a whole LRH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 8 LRH bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Checks a buffer that should hold a whole packet (LRH through ICRC, optionally followed by the VCRC):
    /// `BadField` if PktLen is smaller than the LRH itself, `Truncated` if the buffer is shorter than PktLen
    /// says.
    pub fn check_pkt_len(&self) -> Result<()> {
        self.check_len()?;
        let words = self.pkt_len();
        if usize::from(words) * 4 < HEADER_LEN {
            return Err(Error::BadField {
                header: HEADER,
                field: "PktLen",
                value: u32::from(words),
            });
        }
        check_len(HEADER, self.buffer.as_ref(), self.pkt_len_bytes())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Virtual lane (4 bits).
    pub fn vl(&self) -> u8 {
        self.buffer.as_ref()[field::VL_LVER] >> 4
    }

    /// Link version (4 bits; 0 in IBA 1.x).
    pub fn lver(&self) -> u8 {
        self.buffer.as_ref()[field::VL_LVER] & 0x0F
    }

    /// Service level (4 bits).
    pub fn sl(&self) -> u8 {
        self.buffer.as_ref()[field::SL_LNH] >> 4
    }

    /// The two reserved bits `B1[3:2]`, right-aligned.
    pub fn resv2(&self) -> u8 {
        (self.buffer.as_ref()[field::SL_LNH] >> 2) & 0x03
    }

    /// Link next header.
    pub fn lnh(&self) -> Lnh {
        Lnh::from(self.buffer.as_ref()[field::SL_LNH])
    }

    /// Destination LID.
    pub fn dlid(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::DLID];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The five reserved bits `B4[7:3]`, right-aligned.
    pub fn resv5(&self) -> u8 {
        self.buffer.as_ref()[field::PKTLEN.start] >> 3
    }

    /// Packet length in 4-byte words, LRH through ICRC (11 bits).
    pub fn pkt_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::PKTLEN];
        u16::from_be_bytes([b[0], b[1]]) & 0x07FF
    }

    /// Packet length in bytes, LRH through ICRC (the VCRC's 2 bytes are not included).
    pub fn pkt_len_bytes(&self) -> usize {
        usize::from(self.pkt_len()) * 4
    }

    /// Source LID.
    pub fn slid(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::SLID];
        u16::from_be_bytes([b[0], b[1]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets VL (low 4 bits of `value`), keeping LVer.
    pub fn set_vl(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VL_LVER];
        *b = (*b & 0x0F) | ((value & 0x0F) << 4);
    }

    /// Sets LVer (low 4 bits of `value`), keeping VL.
    pub fn set_lver(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VL_LVER];
        *b = (*b & 0xF0) | (value & 0x0F);
    }

    /// Sets SL (low 4 bits of `value`), keeping resv2 and LNH.
    pub fn set_sl(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::SL_LNH];
        *b = (*b & 0x0F) | ((value & 0x0F) << 4);
    }

    /// Sets the reserved bits `B1[3:2]` (low 2 bits of `value`).
    pub fn set_resv2(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::SL_LNH];
        *b = (*b & 0xF3) | ((value & 0x03) << 2);
    }

    /// Sets LNH, keeping SL and resv2.
    pub fn set_lnh(&mut self, value: Lnh) {
        let b = &mut self.buffer.as_mut()[field::SL_LNH];
        *b = (*b & 0xFC) | u8::from(value);
    }

    /// Sets the destination LID.
    pub fn set_dlid(&mut self, value: u16) {
        self.buffer.as_mut()[field::DLID].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the reserved bits `B4[7:3]` (low 5 bits of `value`), keeping PktLen.
    pub fn set_resv5(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::PKTLEN.start];
        *b = (*b & 0x07) | ((value & 0x1F) << 3);
    }

    /// Sets PktLen in words (low 11 bits of `value`), keeping resv5.
    pub fn set_pkt_len(&mut self, value: u16) {
        let b = &mut self.buffer.as_mut()[field::PKTLEN];
        let [hi, lo] = (value & 0x07FF).to_be_bytes();
        b[0] = (b[0] & 0xF8) | hi;
        b[1] = lo;
    }

    /// Sets the source LID.
    pub fn set_slid(&mut self, value: u16) {
        self.buffer.as_mut()[field::SLID].copy_from_slice(&value.to_be_bytes());
    }
}

/// The fields of an LRH, every bit included (reserved bits and LVer too, so a round trip is exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Virtual lane (4 bits).
    pub vl: u8,
    /// Link version (4 bits).
    pub lver: u8,
    /// Service level (4 bits).
    pub sl: u8,
    /// Reserved `B1[3:2]` (2 bits); 0 when sent.
    pub resv2: u8,
    /// Link next header.
    pub lnh: Lnh,
    /// Destination LID.
    pub dlid: u16,
    /// Reserved `B4[7:3]` (5 bits); 0 when sent.
    pub resv5: u8,
    /// Packet length in 4-byte words, LRH through ICRC (11 bits).
    pub pkt_len: u16,
    /// Source LID.
    pub slid: u16,
}

impl Repr {
    /// Reads an LRH. Only a short buffer fails: every bit pattern is a representable LRH (see the module
    /// documentation for why LVer is not checked here).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            vl: packet.vl(),
            lver: packet.lver(),
            sl: packet.sl(),
            resv2: packet.resv2(),
            lnh: packet.lnh(),
            dlid: packet.dlid(),
            resv5: packet.resv5(),
            pkt_len: packet.pkt_len(),
            slid: packet.slid(),
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

    /// Writes every field; out-of-range values are cut to their field width.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_vl(self.vl);
        packet.set_lver(self.lver);
        packet.set_sl(self.sl);
        packet.set_resv2(self.resv2);
        packet.set_lnh(self.lnh);
        packet.set_dlid(self.dlid);
        packet.set_resv5(self.resv5);
        packet.set_pkt_len(self.pkt_len);
        packet.set_slid(self.slid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// VL 3, LVer 0, SL 5, LNH IBA local, DLID 0x0012, PktLen 0x123 words, SLID 0x0034, reserved 0.
    static PACKET_BYTES: [u8; 8] = [0x30, 0x52, 0x00, 0x12, 0x01, 0x23, 0x00, 0x34];

    /// Same, with LVer 0xA, resv2 0b11, resv5 0b10101 and LNH IBA global: the odd bits must survive.
    static ODD_BYTES: [u8; 8] = [0x3a, 0x5f, 0x00, 0x12, 0xa9, 0x23, 0x00, 0x34];

    fn packet_repr() -> Repr {
        Repr {
            vl: 3,
            lver: 0,
            sl: 5,
            resv2: 0,
            lnh: Lnh::IbaLocal,
            dlid: 0x0012,
            resv5: 0,
            pkt_len: 0x123,
            slid: 0x0034,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.vl(), 3);
        assert_eq!(p.lver(), 0);
        assert_eq!(p.sl(), 5);
        assert_eq!(p.resv2(), 0);
        assert_eq!(p.lnh(), Lnh::IbaLocal);
        assert_eq!(p.dlid(), 0x0012);
        assert_eq!(p.resv5(), 0);
        assert_eq!(p.pkt_len(), 0x123);
        assert_eq!(p.pkt_len_bytes(), 0x123 * 4);
        assert_eq!(p.slid(), 0x0034);

        let odd = Packet::new_checked(&ODD_BYTES[..]).unwrap();
        assert_eq!(odd.lver(), 0xa);
        assert_eq!(odd.resv2(), 0b11);
        assert_eq!(odd.lnh(), Lnh::IbaGlobal);
        assert_eq!(odd.resv5(), 0b10101);
        assert_eq!(odd.pkt_len(), 0x123);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 8];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_vl(3);
        p.set_lver(0);
        p.set_sl(5);
        p.set_resv2(0);
        p.set_lnh(Lnh::IbaLocal);
        p.set_dlid(0x0012);
        p.set_resv5(0);
        p.set_pkt_len(0x123);
        p.set_slid(0x0034);
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn setters_keep_neighbours() {
        let mut buf = [0xffu8; 8];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_pkt_len(0);
        p.set_sl(0);
        assert_eq!(buf, [0xff, 0x0f, 0xff, 0xff, 0xf8, 0x00, 0xff, 0xff]);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p), Ok(packet_repr()));
    }

    #[test]
    fn emit() {
        let repr = packet_repr();
        let mut buf = [0xa5u8; 8];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 8);
        assert_eq!(repr.header_len(), 8);
    }

    #[test]
    fn odd_bits_round_trip() {
        let repr = Repr::parse(&Packet::new_unchecked(&ODD_BYTES[..])).unwrap();
        let mut buf = [0u8; 8];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, ODD_BYTES);
    }

    #[test]
    fn lnh_codes() {
        for (code, lnh) in [
            (0, Lnh::Raw),
            (1, Lnh::IpNonIba),
            (2, Lnh::IbaLocal),
            (3, Lnh::IbaGlobal),
        ] {
            assert_eq!(Lnh::from(code), lnh);
            assert_eq!(u8::from(lnh), code);
        }
    }

    #[test]
    fn truncated_and_pkt_len() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..7]),
            Err(Error::Truncated {
                header: "LRH",
                need: 8,
                have: 7
            })
        );
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&PACKET_BYTES[..3])),
            Err(Error::Truncated {
                header: "LRH",
                need: 8,
                have: 3
            })
        );
        // PktLen 0x123 words = 1164 bytes: 8 are not enough.
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(
            p.check_pkt_len(),
            Err(Error::Truncated {
                header: "LRH",
                need: 1164,
                have: 8
            })
        );
        // PktLen 6 (a CNP) in a 26-byte buffer (with VCRC) is fine; PktLen 1 is below the LRH.
        let mut whole = [0u8; 26];
        whole[..8].copy_from_slice(&PACKET_BYTES);
        Packet::new_unchecked(&mut whole[..]).set_pkt_len(6);
        assert_eq!(Packet::new_unchecked(&whole[..]).check_pkt_len(), Ok(()));
        Packet::new_unchecked(&mut whole[..]).set_pkt_len(1);
        assert_eq!(
            Packet::new_unchecked(&whole[..]).check_pkt_len(),
            Err(Error::BadField {
                header: "LRH",
                field: "PktLen",
                value: 1
            })
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(bytes in any::<[u8; 8]>()) {
            let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; 8];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, bytes);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Packet::new_checked(&bytes[..]) {
                Ok(p) => {
                    prop_assert!(bytes.len() >= HEADER_LEN);
                    prop_assert!(Repr::parse(&p).is_ok());
                    let _ = p.check_pkt_len();
                }
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Truncated { header: "LRH", need: HEADER_LEN, have: bytes.len() }
                ),
            }
            let unchecked = Repr::parse(&Packet::new_unchecked(&bytes[..]));
            prop_assert_eq!(unchecked.is_ok(), bytes.len() >= HEADER_LEN);
        }
    }
}
