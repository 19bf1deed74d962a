//! IEEE 802.1Qbb Priority-based Flow Control (PFC) frame: the MAC control payload after an Ethernet header
//! with EtherType 0x8808, sent to 01-80-C2-00-00-01.
//!
//! ```text
//! bytes 0-1    MAC Control Opcode = 0x0101 (PFC; 0x0001 would be an 802.3x PAUSE)
//! bytes 2-3    class-enable vector: byte 2 reserved (0), byte 3 bit i = priority i's time is valid
//! bytes 4-19   time[0] .. time[7], 16 bits each, in quanta of 512 bit times
//! bytes 20-45  pad to the 46-byte minimum Ethernet payload, zero
//! ```
//!
//! A PFC frame on the wire is 14 (header) + 46 (this payload) + 4 (FCS) = 64 bytes; the model writes no FCS.
//! A time of 0 resumes the priority. How long a quantum lasts in clock cycles depends on the link rate and is
//! the fabric's business, not this module's: here is only [`quanta_to_bit_times`].
//!
//! Parsing is strict: the reserved byte and the pad must be zero (`BadField` otherwise), so that every accepted
//! payload round-trips through [`Repr`] bit for bit.

use super::ethernet::MacAddr;
use super::{check_len, Error, Result};

/// Destination MAC of PFC (and PAUSE) frames: the MAC control multicast address 01-80-C2-00-00-01.
pub const PFC_DST_MAC: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);

/// MAC Control Opcode of a PFC frame.
pub const OPCODE_PFC: u16 = 0x0101;

/// Bit times in one pause quantum.
pub const BIT_TIMES_PER_QUANTUM: u32 = 512;

/// Converts a pause time in quanta to bit times (at most 65535 * 512 = 33,553,920).
pub const fn quanta_to_bit_times(quanta: u16) -> u32 {
    quanta as u32 * BIT_TIMES_PER_QUANTUM
}

mod field {
    use crate::wire::Field;

    pub const OPCODE: Field = 0..2;
    pub const CEV_RESERVED: usize = 2;
    pub const CEV: usize = 3;
    pub const TIMES: Field = 4..20;
    pub const PAD: Field = 20..46;
}

/// Length of the PFC payload, pad included (the minimum Ethernet payload).
pub const PAYLOAD_LEN: usize = field::PAD.end;

/// A read/write view of a PFC payload (the bytes after the Ethernet header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without any check; for buffers sized with [`Repr::buffer_len`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds the 46-byte payload (a shorter one is a runt).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the 46 bytes are present; after `Ok` no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len("pfc", self.buffer.as_ref(), PAYLOAD_LEN)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// MAC Control Opcode (0x0101 for PFC).
    pub fn opcode(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::OPCODE];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// The reserved upper byte of the class-enable vector (0 in a valid frame).
    pub fn class_enable_reserved(&self) -> u8 {
        self.buffer.as_ref()[field::CEV_RESERVED]
    }

    /// Class-enable bits: bit i set = the time for priority i is valid.
    pub fn class_enable(&self) -> u8 {
        self.buffer.as_ref()[field::CEV]
    }

    /// The eight pause times, index = priority, in quanta.
    pub fn quanta(&self) -> [u16; 8] {
        let d = &self.buffer.as_ref()[field::TIMES];
        let mut q = [0u16; 8];
        for (i, t) in q.iter_mut().enumerate() {
            *t = u16::from_be_bytes([d[2 * i], d[2 * i + 1]]);
        }
        q
    }

    /// The pad bytes (0 in a valid frame).
    pub fn pad(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the MAC Control Opcode.
    pub fn set_opcode(&mut self, value: u16) {
        self.buffer.as_mut()[field::OPCODE].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the class-enable bits (and clears the reserved upper byte of the vector).
    pub fn set_class_enable(&mut self, value: u8) {
        let buf = self.buffer.as_mut();
        buf[field::CEV_RESERVED] = 0;
        buf[field::CEV] = value;
    }

    /// Sets the eight pause times, index = priority, in quanta.
    pub fn set_quanta(&mut self, value: [u16; 8]) {
        let d = &mut self.buffer.as_mut()[field::TIMES];
        for (i, t) in value.iter().enumerate() {
            d[2 * i..2 * i + 2].copy_from_slice(&t.to_be_bytes());
        }
    }

    /// Zeroes the pad bytes.
    pub fn clear_pad(&mut self) {
        self.buffer.as_mut()[field::PAD].fill(0);
    }
}

/// The fields of a PFC frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Repr {
    /// Bit i set = `quanta[i]` applies to priority i. The vector's reserved upper byte is always 0.
    pub class_enable: u8,
    /// Pause time per priority, in quanta of 512 bit times (0 = resume). Kept even where the enable bit is
    /// clear, so frames round-trip; a receiver ignores those.
    pub quanta: [u16; 8],
}

impl Repr {
    /// True when the frame carries a time for `priority` (0..=7; anything larger is false).
    pub const fn is_enabled(&self, priority: u8) -> bool {
        priority < 8 && self.class_enable & (1 << priority) != 0
    }

    /// Reads a PFC payload. `BadField` for an opcode other than 0x0101 (`opcode`), a nonzero reserved byte of
    /// the class-enable vector (`class_enable_reserved`) or a nonzero pad byte (`pad`, value = that byte).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let bad = |field, value: u32| Error::BadField {
            header: "pfc",
            field,
            value,
        };
        if packet.opcode() != OPCODE_PFC {
            return Err(bad("opcode", u32::from(packet.opcode())));
        }
        if packet.class_enable_reserved() != 0 {
            return Err(bad(
                "class_enable_reserved",
                u32::from(packet.class_enable_reserved()),
            ));
        }
        if let Some(&b) = packet.pad().iter().find(|&&b| b != 0) {
            return Err(bad("pad", u32::from(b)));
        }
        Ok(Repr {
            class_enable: packet.class_enable(),
            quanta: packet.quanta(),
        })
    }

    /// Bytes the payload takes (46, pad included).
    pub const fn buffer_len(&self) -> usize {
        PAYLOAD_LEN
    }

    /// Writes opcode, class-enable vector, times and zero pad.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_opcode(OPCODE_PFC);
        packet.set_class_enable(self.class_enable);
        packet.set_quanta(self.quanta);
        packet.clear_pad();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ethernet::{self, EtherType};
    use proptest::prelude::*;

    // Worked out by hand from the layout (the values mirror secdev/scapy test/contrib/mac_control.uts "class
    // based flow control frame": c0 enabled with time 0x4321, c5 enabled with 0x1234): a whole frame, Ethernet
    // header from 00:01:01:01:01:01 to 01:80:c2:00:00:01, EtherType 0x8808, then the 46-byte payload.
    static FRAME_BYTES: [u8; 60] = [
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x88,
        0x08, // Ethernet
        0x01, 0x01, // opcode
        0x00, 0x21, // class-enable vector: priorities 0 and 5
        0x43, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00,
        0x00, // times
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, // pad (26)
    ];

    fn repr() -> Repr {
        Repr {
            class_enable: 0x21,
            quanta: [0x4321, 0, 0, 0, 0, 0x1234, 0, 0],
        }
    }

    #[test]
    fn deconstruct() {
        let eth = ethernet::Packet::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(eth.dst_addr(), PFC_DST_MAC);
        assert_eq!(eth.ethertype(), EtherType::MacControl);
        let p = Packet::new_checked(eth.payload()).unwrap();
        assert_eq!(p.opcode(), OPCODE_PFC);
        assert_eq!(p.class_enable_reserved(), 0);
        assert_eq!(p.class_enable(), 0x21);
        assert_eq!(p.quanta(), [0x4321, 0, 0, 0, 0, 0x1234, 0, 0]);
        assert_eq!(p.pad(), &[0u8; 26]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 60];
        let mut eth = ethernet::Packet::new_unchecked(&mut buf[..]);
        eth.set_dst_addr(PFC_DST_MAC);
        eth.set_src_addr(MacAddr([0, 1, 1, 1, 1, 1]));
        eth.set_ethertype(EtherType::MacControl);
        let mut p = Packet::new_unchecked(eth.payload_mut());
        p.set_opcode(OPCODE_PFC);
        p.set_class_enable(0x21);
        p.set_quanta([0x4321, 0, 0, 0, 0, 0x1234, 0, 0]);
        p.clear_pad();
        assert_eq!(buf, FRAME_BYTES);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&FRAME_BYTES[14..]).unwrap();
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r, repr());
        assert!(r.is_enabled(0) && r.is_enabled(5));
        assert!(!r.is_enabled(1) && !r.is_enabled(7) && !r.is_enabled(8));
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 60];
        ethernet::Repr {
            dst_addr: PFC_DST_MAC,
            src_addr: MacAddr([0, 1, 1, 1, 1, 1]),
            ethertype: EtherType::MacControl,
        }
        .emit(&mut ethernet::Packet::new_unchecked(&mut buf[..]));
        repr().emit(&mut Packet::new_unchecked(&mut buf[14..]));
        assert_eq!(buf, FRAME_BYTES);
    }

    #[test]
    fn bit_times() {
        assert_eq!(quanta_to_bit_times(0), 0);
        assert_eq!(quanta_to_bit_times(1), 512);
        assert_eq!(quanta_to_bit_times(0xffff), 33_553_920);
    }

    #[test]
    fn errors() {
        let payload = &FRAME_BYTES[14..];
        assert_eq!(
            Packet::new_checked(&payload[..45]),
            Err(Error::Truncated {
                header: "pfc",
                need: 46,
                have: 45
            })
        );
        let mut b = payload.to_vec();
        b[1] = 0x00; // 0x0100
        assert_eq!(
            Repr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::BadField {
                header: "pfc",
                field: "opcode",
                value: 0x0100
            })
        );
        let mut b = payload.to_vec();
        b[2] = 0x01;
        assert!(matches!(
            Repr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::BadField {
                field: "class_enable_reserved",
                value: 1,
                ..
            })
        ));
        let mut b = payload.to_vec();
        b[45] = 0x5a;
        assert!(matches!(
            Repr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::BadField {
                field: "pad",
                value: 0x5a,
                ..
            })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Round trip over every valid payload: random enable bits and times; opcode, reserved byte and pad as a
        /// PFC frame holds them.
        #[test]
        fn emit_parse_round_trip(cev in any::<u8>(), times in proptest::array::uniform16(any::<u8>())) {
            let mut b = [0u8; PAYLOAD_LEN];
            b[0] = 0x01;
            b[1] = 0x01;
            b[3] = cev;
            b[4..20].copy_from_slice(&times);
            let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; PAYLOAD_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, b);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96), valid_start in any::<bool>()) {
            let mut b = b;
            if valid_start && b.len() >= PAYLOAD_LEN {
                b[0] = 0x01;
                b[1] = 0x01;
                b[2] = 0;
                b[20..PAYLOAD_LEN].fill(0);
            }
            match Packet::new_checked(&b[..]) {
                Ok(p) => match Repr::parse(&p) {
                    Ok(r) => {
                        let mut out = [0xa5u8; PAYLOAD_LEN];
                        r.emit(&mut Packet::new_unchecked(&mut out[..]));
                        prop_assert_eq!(&out[..], &b[..PAYLOAD_LEN]);
                    }
                    Err(e) => prop_assert!(matches!(e, Error::BadField { .. }), "{:?}", e),
                },
                Err(e) => prop_assert!(matches!(e, Error::Truncated { .. }) && b.len() < PAYLOAD_LEN, "{:?}", e),
            }
        }
    }
}
