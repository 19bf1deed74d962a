//! Link flow-control packet, 6 bytes, sent per VL to advertise credits (layout of Wireshark's
//! `dissect_infiniband_link`).
//!
//! ```text
//! byte 0   [7:4] Op (0 normal, 1 init)   [3:0] FCTBS[11:8]
//! byte 1   FCTBS[7:0]     (flow control total blocks sent, 64-byte blocks, mod 4096)
//! byte 2   [7:4] VL       [3:0] FCCL[11:8]
//! byte 3   FCCL[7:0]      (flow control credit limit)
//! byte 4-5 LPCRC          (over bytes 0-3; order [`LPCRC_BYTE_ORDER`])
//! ```
//!
//! [`Repr`] keeps every bit, unknown Op codes and the LPCRC bytes included, so `emit(parse(b)) == b` for every
//! 6-byte `b`; parse does not check the LPCRC. To send a packet, emit it and then call
//! [`Packet::fill_lpcrc`]. The LPCRC algorithm and byte order are assumptions (see [`crate::crc::vcrc`]).

use super::{check_len, Field, Result};
use crate::crc::vcrc::{lpcrc, LPCRC_BYTE_ORDER};

const HEADER: &str = "FlowCtl";

/// Length of a flow-control packet in bytes.
pub const PACKET_LEN: usize = 6;

mod field {
    use super::Field;
    /// Op `[15:12]`, FCTBS `[11:0]` of a big-endian 16-bit word.
    pub const OP_FCTBS: Field = 0..2;
    /// VL `[15:12]`, FCCL `[11:0]` of a big-endian 16-bit word.
    pub const VL_FCCL: Field = 2..4;
    pub const LPCRC: Field = 4..6;
    /// Bytes the LPCRC covers.
    pub const COVERED: Field = 0..4;
}

/// Flow-control operation (4 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// 0: normal flow control.
    Normal,
    /// 1: flow control init.
    Init,
    /// 2..=15: reserved, kept.
    Unknown(u8),
}

impl From<u8> for Op {
    /// Uses the low 4 bits.
    fn from(value: u8) -> Op {
        match value & 0x0F {
            0 => Op::Normal,
            1 => Op::Init,
            other => Op::Unknown(other),
        }
    }
}

impl From<Op> for u8 {
    fn from(op: Op) -> u8 {
        match op {
            Op::Normal => 0,
            Op::Init => 1,
            Op::Unknown(other) => other & 0x0F,
        }
    }
}

/// A view of a flow-control packet at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`PACKET_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds the 6 bytes.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 6 bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), PACKET_LEN)
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word(&self, f: Field) -> u16 {
        let b = &self.buffer.as_ref()[f];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Operation.
    pub fn op(&self) -> Op {
        Op::from((self.word(field::OP_FCTBS) >> 12) as u8)
    }

    /// Flow control total blocks sent (12 bits).
    pub fn fctbs(&self) -> u16 {
        self.word(field::OP_FCTBS) & 0x0FFF
    }

    /// Virtual lane (4 bits).
    pub fn vl(&self) -> u8 {
        (self.word(field::VL_FCCL) >> 12) as u8
    }

    /// Flow control credit limit (12 bits).
    pub fn fccl(&self) -> u16 {
        self.word(field::VL_FCCL) & 0x0FFF
    }

    /// The LPCRC value held in bytes 4-5 (decoded with [`LPCRC_BYTE_ORDER`]).
    pub fn lpcrc(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::LPCRC];
        LPCRC_BYTE_ORDER.from_bytes([b[0], b[1]])
    }

    /// Whether the LPCRC field matches bytes 0-3.
    pub fn verify_lpcrc(&self) -> bool {
        self.lpcrc() == lpcrc(&self.buffer.as_ref()[field::COVERED])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_word(&mut self, f: Field, value: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Op, keeping FCTBS.
    pub fn set_op(&mut self, value: Op) {
        let w = (self.word(field::OP_FCTBS) & 0x0FFF) | (u16::from(u8::from(value)) << 12);
        self.set_word(field::OP_FCTBS, w);
    }

    /// Sets FCTBS (low 12 bits of `value`), keeping Op.
    pub fn set_fctbs(&mut self, value: u16) {
        let w = (self.word(field::OP_FCTBS) & 0xF000) | (value & 0x0FFF);
        self.set_word(field::OP_FCTBS, w);
    }

    /// Sets VL (low 4 bits of `value`), keeping FCCL.
    pub fn set_vl(&mut self, value: u8) {
        let w = (self.word(field::VL_FCCL) & 0x0FFF) | (u16::from(value & 0x0F) << 12);
        self.set_word(field::VL_FCCL, w);
    }

    /// Sets FCCL (low 12 bits of `value`), keeping VL.
    pub fn set_fccl(&mut self, value: u16) {
        let w = (self.word(field::VL_FCCL) & 0xF000) | (value & 0x0FFF);
        self.set_word(field::VL_FCCL, w);
    }

    /// Writes `value` into the LPCRC field as it is (no computation).
    pub fn set_lpcrc(&mut self, value: u16) {
        self.buffer.as_mut()[field::LPCRC].copy_from_slice(&LPCRC_BYTE_ORDER.to_bytes(value));
    }

    /// Computes the LPCRC over bytes 0-3 and writes it.
    pub fn fill_lpcrc(&mut self) {
        let crc = lpcrc(&self.buffer.as_ref()[field::COVERED]);
        self.set_lpcrc(crc);
    }
}

/// The fields of a flow-control packet, the LPCRC bytes included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Operation.
    pub op: Op,
    /// Flow control total blocks sent (12 bits).
    pub fctbs: u16,
    /// Virtual lane (4 bits).
    pub vl: u8,
    /// Flow control credit limit (12 bits).
    pub fccl: u16,
    /// LPCRC as found (parse) or to be written (emit); use [`Packet::fill_lpcrc`] to compute it.
    pub lpcrc: u16,
}

impl Repr {
    /// Reads a flow-control packet. Only a short buffer fails; the LPCRC is not checked (see
    /// [`Packet::verify_lpcrc`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            op: packet.op(),
            fctbs: packet.fctbs(),
            vl: packet.vl(),
            fccl: packet.fccl(),
            lpcrc: packet.lpcrc(),
        })
    }

    /// Bytes [`Repr::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        PACKET_LEN
    }

    /// Writes every field, the LPCRC as given; out-of-range values are cut to their field width.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_op(self.op);
        packet.set_fctbs(self.fctbs);
        packet.set_vl(self.vl);
        packet.set_fccl(self.fccl);
        packet.set_lpcrc(self.lpcrc);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;
    use proptest::prelude::*;

    /// Normal, FCTBS 0x123, VL 2, FCCL 0x456, LPCRC 0x846a (computed by an independent script with the VCRC
    /// parameters) stored least significant byte first.
    static PACKET_BYTES: [u8; 6] = [0x01, 0x23, 0x24, 0x56, 0x6a, 0x84];

    fn packet_repr() -> Repr {
        Repr {
            op: Op::Normal,
            fctbs: 0x123,
            vl: 2,
            fccl: 0x456,
            lpcrc: 0x846a,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.op(), Op::Normal);
        assert_eq!(p.fctbs(), 0x123);
        assert_eq!(p.vl(), 2);
        assert_eq!(p.fccl(), 0x456);
        assert_eq!(p.lpcrc(), 0x846a);
        assert!(p.verify_lpcrc());
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 6];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_op(Op::Normal);
        p.set_fctbs(0x123);
        p.set_vl(2);
        p.set_fccl(0x456);
        p.fill_lpcrc();
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p), Ok(packet_repr()));
    }

    #[test]
    fn emit() {
        let repr = packet_repr();
        let mut buf = [0xa5u8; 6];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 6);
    }

    #[test]
    fn op_codes() {
        let mut buf = PACKET_BYTES;
        Packet::new_unchecked(&mut buf[..]).set_op(Op::Init);
        assert_eq!(buf[0], 0x11);
        Packet::new_unchecked(&mut buf[..]).set_op(Op::Unknown(0xf));
        assert_eq!(buf[0], 0xf1);
        assert_eq!(Packet::new_unchecked(&buf[..]).op(), Op::Unknown(0xf));
        assert_eq!(Packet::new_unchecked(&buf[..]).fctbs(), 0x123);
        assert!(!Packet::new_unchecked(&buf[..]).verify_lpcrc());
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..5]),
            Err(Error::Truncated {
                header: "FlowCtl",
                need: 6,
                have: 5
            })
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(bytes in any::<[u8; 6]>()) {
            let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; 6];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, bytes);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p)) {
                Ok(_) => prop_assert!(bytes.len() >= PACKET_LEN),
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Truncated { header: "FlowCtl", need: PACKET_LEN, have: bytes.len() }
                ),
            }
        }

        #[test]
        fn lpcrc_fill_verify_and_single_bit_flip(bytes in any::<[u8; 6]>(), bit in 0usize..48) {
            let mut buf = bytes;
            Packet::new_unchecked(&mut buf[..]).fill_lpcrc();
            prop_assert_eq!(&buf[..4], &bytes[..4]);
            prop_assert!(Packet::new_unchecked(&buf[..]).verify_lpcrc());
            buf[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(!Packet::new_unchecked(&buf[..]).verify_lpcrc());
        }
    }
}
