//! Datagram Extended Transport Header (DETH), 8 bytes after the BTH of UD packets (and after the RDETH of RD
//! requests).
//!
//! ```text
//! byte 0-3 Q_Key
//! byte 4   reserved (resv8)
//! byte 5-7 SrcQP
//! ```
//!
//! [`Repr`] keeps the reserved byte, so `emit(parse(b)) == b` for every 8-byte `b`.

use super::{check_len, Field, Result};

const HEADER: &str = "DETH";

/// Length of the DETH in bytes.
pub const HEADER_LEN: usize = 8;

mod field {
    use super::Field;
    pub const QKEY: Field = 0..4;
    pub const RESV8: usize = 4;
    pub const SRCQP: Field = 5..8;
}

/// A view of a DETH at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds a whole DETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 8 DETH bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Queue key.
    pub fn qkey(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::QKEY];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The reserved byte.
    pub fn resv8(&self) -> u8 {
        self.buffer.as_ref()[field::RESV8]
    }

    /// Source QP (24 bits).
    pub fn src_qp(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SRCQP];
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the queue key.
    pub fn set_qkey(&mut self, value: u32) {
        self.buffer.as_mut()[field::QKEY].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the reserved byte.
    pub fn set_resv8(&mut self, value: u8) {
        self.buffer.as_mut()[field::RESV8] = value;
    }

    /// Sets the source QP (low 24 bits of `value`).
    pub fn set_src_qp(&mut self, value: u32) {
        self.buffer.as_mut()[field::SRCQP].copy_from_slice(&value.to_be_bytes()[1..]);
    }
}

/// The fields of a DETH, the reserved byte included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Queue key.
    pub qkey: u32,
    /// Reserved byte; 0 when sent.
    pub resv8: u8,
    /// Source QP (24 bits).
    pub src_qp: u32,
}

impl Repr {
    /// Reads a DETH. Only a short buffer fails.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            qkey: packet.qkey(),
            resv8: packet.resv8(),
            src_qp: packet.src_qp(),
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

    /// Writes every field; a source QP wider than 24 bits is cut.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_qkey(self.qkey);
        packet.set_resv8(self.resv8);
        packet.set_src_qp(self.src_qp);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;
    use proptest::prelude::*;

    /// Q_Key 0x80010000 (a controlled Q_Key: MSB set), reserved 0, SrcQP 0x000102.
    static PACKET_BYTES: [u8; 8] = [0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02];

    fn packet_repr() -> Repr {
        Repr {
            qkey: 0x8001_0000,
            resv8: 0,
            src_qp: 0x102,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.qkey(), 0x8001_0000);
        assert_eq!(p.resv8(), 0);
        assert_eq!(p.src_qp(), 0x102);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 8];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_qkey(0x8001_0000);
        p.set_resv8(0);
        p.set_src_qp(0x102);
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
        let mut buf = [0xa5u8; 8];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 8);
        let wide = Repr {
            src_qp: 0xff00_0102,
            ..packet_repr()
        };
        let mut buf = [0xa5u8; 8];
        wide.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
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
            match Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p)) {
                Ok(_) => prop_assert!(bytes.len() >= HEADER_LEN),
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Truncated { header: "DETH", need: HEADER_LEN, have: bytes.len() }
                ),
            }
        }
    }
}
