//! ACK Extended Transport Header (AETH), 4 bytes: the syndrome and the message sequence number of RC/RD
//! acknowledgements and of RDMA READ responses first/last/only.
//!
//! ```text
//! byte 0   Syndrome  ([7:5] type: 000 ACK, 001 RNR NAK, 011 NAK, others reserved; [4:0] value)
//! byte 1-3 MSN
//! ```
//!
//! Syndrome encoding as in Linux rxe `rxe_hdr.h` (`AETH_TYPE_MASK` 0xe0, `AETH_ACK` 0x00, `AETH_RNR_NAK` 0x20,
//! `AETH_NAK` 0x60, `AETH_ACK_UNLIMITED` 0x1f, NAK codes 0x60..0x64). [`Syndrome`] keeps the raw byte, so
//! `emit(parse(b)) == b` for every 4-byte `b`.

use super::{check_len, Field, Result};

const HEADER: &str = "AETH";

/// Length of the AETH in bytes.
pub const HEADER_LEN: usize = 4;

mod field {
    use super::Field;
    pub const SYNDROME: usize = 0;
    pub const MSN: Field = 1..4;
}

/// NAK codes (syndrome bits `[4:0]` when the type is NAK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error.
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5..=31: reserved codes, kept.
    Reserved(u8),
}

impl NakCode {
    /// The 5-bit code.
    pub const fn code(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(c) => c & 0x1f,
        }
    }

    /// Decodes the low 5 bits of `code`.
    pub const fn from_code(code: u8) -> NakCode {
        match code & 0x1f {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            c => NakCode::Reserved(c),
        }
    }
}

/// What a syndrome byte says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyndromeKind {
    /// ACK with the 5-bit credit count code (0x1f: invalid / unlimited credits).
    Ack {
        /// Encoded credit count (a code, not a number of credits).
        credit_code: u8,
    },
    /// Receiver not ready NAK with the 5-bit RNR timer code.
    RnrNak {
        /// Encoded minimum RNR NAK timer.
        timer_code: u8,
    },
    /// NAK with its code.
    Nak(NakCode),
    /// Type bits 010 or 1xx: reserved.
    Reserved,
}

/// An AETH syndrome: the raw byte, with decoding helpers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Syndrome(pub u8);

impl Syndrome {
    /// ACK with credit count code 0x1f (the syndrome Linux rxe sends when it does not count credits).
    pub const ACK_UNLIMITED: Syndrome = Syndrome(0x1f);

    /// ACK with a 5-bit credit count code.
    pub const fn ack(credit_code: u8) -> Syndrome {
        Syndrome(credit_code & 0x1f)
    }

    /// RNR NAK with a 5-bit timer code.
    pub const fn rnr_nak(timer_code: u8) -> Syndrome {
        Syndrome(0x20 | (timer_code & 0x1f))
    }

    /// NAK with a code.
    pub const fn nak(code: NakCode) -> Syndrome {
        Syndrome(0x60 | code.code())
    }

    /// The raw byte.
    pub const fn raw(self) -> u8 {
        self.0
    }

    /// Decodes the type bits `[7:5]` and the value bits `[4:0]`.
    pub const fn kind(self) -> SyndromeKind {
        let value = self.0 & 0x1f;
        match self.0 >> 5 {
            0 => SyndromeKind::Ack { credit_code: value },
            1 => SyndromeKind::RnrNak { timer_code: value },
            3 => SyndromeKind::Nak(NakCode::from_code(value)),
            _ => SyndromeKind::Reserved,
        }
    }

    /// Whether this is an ACK (any credit code).
    pub const fn is_ack(self) -> bool {
        self.0 >> 5 == 0
    }
}

/// A view of an AETH at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds a whole AETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 4 AETH bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Syndrome.
    pub fn syndrome(&self) -> Syndrome {
        Syndrome(self.buffer.as_ref()[field::SYNDROME])
    }

    /// Message sequence number (24 bits).
    pub fn msn(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::MSN];
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the syndrome.
    pub fn set_syndrome(&mut self, value: Syndrome) {
        self.buffer.as_mut()[field::SYNDROME] = value.0;
    }

    /// Sets the MSN (low 24 bits of `value`).
    pub fn set_msn(&mut self, value: u32) {
        self.buffer.as_mut()[field::MSN].copy_from_slice(&value.to_be_bytes()[1..]);
    }
}

/// The fields of an AETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Syndrome (raw byte kept).
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl Repr {
    /// Reads an AETH. Only a short buffer fails: reserved syndromes are kept.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            syndrome: packet.syndrome(),
            msn: packet.msn(),
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

    /// Writes every field; an MSN wider than 24 bits is cut.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_syndrome(self.syndrome);
        packet.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;
    use proptest::prelude::*;

    /// ACK, credit code 0x1f (unlimited), MSN 0x000102.
    static PACKET_BYTES: [u8; 4] = [0x1f, 0x00, 0x01, 0x02];

    fn packet_repr() -> Repr {
        Repr {
            syndrome: Syndrome::ACK_UNLIMITED,
            msn: 0x102,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.syndrome(), Syndrome(0x1f));
        assert_eq!(p.syndrome().kind(), SyndromeKind::Ack { credit_code: 0x1f });
        assert_eq!(p.msn(), 0x102);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 4];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_syndrome(Syndrome::ack(0x1f));
        p.set_msn(0x102);
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
        let mut buf = [0xa5u8; 4];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 4);
    }

    #[test]
    fn syndromes() {
        // rxe values: AETH_NAK_PSN_SEQ_ERROR 0x60 .. AETH_NAK_INV_RD_REQ 0x64, AETH_RNR_NAK 0x20.
        assert_eq!(
            Syndrome(0x60).kind(),
            SyndromeKind::Nak(NakCode::PsnSequenceError)
        );
        assert_eq!(
            Syndrome(0x61).kind(),
            SyndromeKind::Nak(NakCode::InvalidRequest)
        );
        assert_eq!(
            Syndrome(0x62).kind(),
            SyndromeKind::Nak(NakCode::RemoteAccessError)
        );
        assert_eq!(
            Syndrome(0x63).kind(),
            SyndromeKind::Nak(NakCode::RemoteOperationalError)
        );
        assert_eq!(
            Syndrome(0x64).kind(),
            SyndromeKind::Nak(NakCode::InvalidRdRequest)
        );
        assert_eq!(
            Syndrome(0x67).kind(),
            SyndromeKind::Nak(NakCode::Reserved(7))
        );
        assert_eq!(
            Syndrome(0x2e).kind(),
            SyndromeKind::RnrNak { timer_code: 0x0e }
        );
        assert_eq!(Syndrome(0x40).kind(), SyndromeKind::Reserved);
        assert_eq!(Syndrome(0x9f).kind(), SyndromeKind::Reserved);
        assert_eq!(Syndrome::rnr_nak(0x0e), Syndrome(0x2e));
        assert_eq!(Syndrome::nak(NakCode::RemoteAccessError), Syndrome(0x62));
        assert!(Syndrome(0x00).is_ack());
        assert!(!Syndrome(0x60).is_ack());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(bytes in any::<[u8; 4]>()) {
            let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; 4];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, bytes);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p)) {
                Ok(_) => prop_assert!(bytes.len() >= HEADER_LEN),
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Truncated { header: "AETH", need: HEADER_LEN, have: bytes.len() }
                ),
            }
        }

        #[test]
        fn syndrome_constructors_round_trip(b in any::<u8>()) {
            let s = Syndrome(b);
            let rebuilt = match s.kind() {
                SyndromeKind::Ack { credit_code } => Some(Syndrome::ack(credit_code)),
                SyndromeKind::RnrNak { timer_code } => Some(Syndrome::rnr_nak(timer_code)),
                SyndromeKind::Nak(code) => Some(Syndrome::nak(code)),
                SyndromeKind::Reserved => None,
            };
            if let Some(r) = rebuilt {
                prop_assert_eq!(r, s);
            }
        }
    }
}
