//! Base Transport Header (BTH), 12 bytes after the LRH (local) or GRH (global), or after UDP in RoCEv2.
//!
//! ```text
//! byte 0    OpCode     ([7:5] transport, [4:0] operation)
//! byte 1    [7] SE   [6] M (MigReq)   [5:4] PadCnt   [3:0] TVer
//! byte 2-3  P_Key
//! byte 4    [7] FECN   [6] BECN   [5:0] resv6      (the ICRC's "Resv8a": masked, switches may set FECN)
//! byte 5-7  DestQP
//! byte 8    [7] AckReq   [6:0] resv7
//! byte 9-11 PSN
//! ```
//!
//! [`Repr`] keeps every bit (TVer, resv6 and resv7 included) and the opcode keeps unknown values, so parse
//! never fails on a whole header and `emit(parse(b)) == b` for every 12-byte `b`.
//!
//! Opcodes are those of Linux `include/rdma/ib_pack.h` (RC, UC, RD, UD), plus the IB CNP 0x80 (hfi1) and the
//! RoCEv2 CNP 0x81. Which extension headers follow each opcode comes from the header-order tables of
//! Wireshark's `packet-infiniband.c` and, for FLUSH and ATOMIC WRITE, from Linux rxe's `rxe_opcode.c`.

use super::{check_len, Field, Result};

const HEADER: &str = "BTH";

/// Length of the BTH in bytes.
pub const HEADER_LEN: usize = 12;

mod field {
    use super::Field;
    pub const OPCODE: usize = 0;
    /// SE `[7]`, M `[6]`, PadCnt `[5:4]`, TVer `[3:0]`.
    pub const FLAGS: usize = 1;
    pub const PKEY: Field = 2..4;
    /// FECN `[7]`, BECN `[6]`, resv6 `[5:0]`.
    pub const ECN: usize = 4;
    pub const DESTQP: Field = 5..8;
    /// AckReq `[7]`, resv7 `[6:0]`.
    pub const ACKREQ: usize = 8;
    pub const PSN: Field = 9..12;
}

/// The transport service, from OpCode bits `[7:5]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// 0x00: reliable connection.
    Rc,
    /// 0x20: unreliable connection.
    Uc,
    /// 0x40: reliable datagram.
    Rd,
    /// 0x60: unreliable datagram.
    Ud,
    /// 0x80: congestion notification (IB CNP 0x80, RoCEv2 CNP 0x81).
    Cnp,
    /// 0xA0 and 0xC0: reserved.
    Reserved,
    /// 0xE0: manufacturer specific.
    Vendor,
}

impl Transport {
    /// The transport of an opcode byte.
    pub const fn of(opcode: u8) -> Transport {
        match opcode >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            7 => Transport::Vendor,
            _ => Transport::Reserved,
        }
    }
}

/// Extension headers between the BTH and the payload, in wire order RDETH, DETH, FETH, RETH, AtomicETH,
/// AETH, AtomicAckETH, ImmDt, IETH (the RoCEv2 CNP's reserved block takes their place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtHeaders {
    /// Reliable Datagram ETH, 4 bytes (RD only).
    pub rdeth: bool,
    /// Datagram ETH, 8 bytes (UD; RD requests).
    pub deth: bool,
    /// Flush ETH, 4 bytes (FLUSH).
    pub feth: bool,
    /// RDMA ETH, 16 bytes.
    pub reth: bool,
    /// Atomic ETH, 28 bytes.
    pub atomic_eth: bool,
    /// ACK ETH, 4 bytes.
    pub aeth: bool,
    /// Atomic ACK ETH, 8 bytes.
    pub atomic_ack_eth: bool,
    /// Immediate data, 4 bytes.
    pub immdt: bool,
    /// Invalidate ETH, 4 bytes.
    pub ieth: bool,
    /// The 16 reserved bytes of a RoCEv2 CNP.
    pub cnp_reserved: bool,
}

impl ExtHeaders {
    /// Total length in bytes.
    pub const fn len(&self) -> usize {
        let sizes = [
            (self.rdeth, 4),
            (self.deth, 8),
            (self.feth, 4),
            (self.reth, 16),
            (self.atomic_eth, 28),
            (self.aeth, 4),
            (self.atomic_ack_eth, 8),
            (self.immdt, 4),
            (self.ieth, 4),
            (self.cnp_reserved, 16),
        ];
        let mut total = 0;
        let mut i = 0;
        while i < sizes.len() {
            if sizes[i].0 {
                total += sizes[i].1;
            }
            i += 1;
        }
        total
    }

    /// Whether no extension header follows.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

macro_rules! opcodes {
    ($( $(#[$doc:meta])* $name:ident = $value:literal, )+) => {
        /// A BTH opcode. Named variants are the opcodes with a known meaning; every other byte is kept in
        /// `Unknown`, so `u8::from(Opcode::from(b)) == b` for every `b`. `Unknown` should not be built with a
        /// value that has a name (it would emit fine but compare unequal to the parsed value).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Opcode {
            $( $(#[$doc])* $name, )+
            /// Any opcode without a name here (reserved, vendor, or defined elsewhere).
            Unknown(u8),
        }

        impl From<u8> for Opcode {
            fn from(value: u8) -> Opcode {
                match value {
                    $( $value => Opcode::$name, )+
                    other => Opcode::Unknown(other),
                }
            }
        }

        impl From<Opcode> for u8 {
            fn from(opcode: Opcode) -> u8 {
                match opcode {
                    $( Opcode::$name => $value, )+
                    Opcode::Unknown(other) => other,
                }
            }
        }
    };
}

opcodes! {
    /// RC SEND First.
    RcSendFirst = 0x00,
    /// RC SEND Middle.
    RcSendMiddle = 0x01,
    /// RC SEND Last.
    RcSendLast = 0x02,
    /// RC SEND Last with Immediate.
    RcSendLastWithImmediate = 0x03,
    /// RC SEND Only.
    RcSendOnly = 0x04,
    /// RC SEND Only with Immediate.
    RcSendOnlyWithImmediate = 0x05,
    /// RC RDMA WRITE First.
    RcRdmaWriteFirst = 0x06,
    /// RC RDMA WRITE Middle.
    RcRdmaWriteMiddle = 0x07,
    /// RC RDMA WRITE Last.
    RcRdmaWriteLast = 0x08,
    /// RC RDMA WRITE Last with Immediate.
    RcRdmaWriteLastWithImmediate = 0x09,
    /// RC RDMA WRITE Only.
    RcRdmaWriteOnly = 0x0a,
    /// RC RDMA WRITE Only with Immediate.
    RcRdmaWriteOnlyWithImmediate = 0x0b,
    /// RC RDMA READ Request.
    RcRdmaReadRequest = 0x0c,
    /// RC RDMA READ Response First.
    RcRdmaReadResponseFirst = 0x0d,
    /// RC RDMA READ Response Middle.
    RcRdmaReadResponseMiddle = 0x0e,
    /// RC RDMA READ Response Last.
    RcRdmaReadResponseLast = 0x0f,
    /// RC RDMA READ Response Only.
    RcRdmaReadResponseOnly = 0x10,
    /// RC Acknowledge.
    RcAcknowledge = 0x11,
    /// RC ATOMIC Acknowledge.
    RcAtomicAcknowledge = 0x12,
    /// RC CmpSwap.
    RcCompareSwap = 0x13,
    /// RC FetchAdd.
    RcFetchAdd = 0x14,
    /// RC SEND Last with Invalidate.
    RcSendLastWithInvalidate = 0x16,
    /// RC SEND Only with Invalidate.
    RcSendOnlyWithInvalidate = 0x17,
    /// RC FLUSH (IBA 1.5; FETH + RETH as in Linux rxe).
    RcFlush = 0x1c,
    /// RC ATOMIC WRITE (IBA 1.5; RETH, 8-byte payload, as in Linux rxe).
    RcAtomicWrite = 0x1d,
    /// UC SEND First.
    UcSendFirst = 0x20,
    /// UC SEND Middle.
    UcSendMiddle = 0x21,
    /// UC SEND Last.
    UcSendLast = 0x22,
    /// UC SEND Last with Immediate.
    UcSendLastWithImmediate = 0x23,
    /// UC SEND Only.
    UcSendOnly = 0x24,
    /// UC SEND Only with Immediate.
    UcSendOnlyWithImmediate = 0x25,
    /// UC RDMA WRITE First.
    UcRdmaWriteFirst = 0x26,
    /// UC RDMA WRITE Middle.
    UcRdmaWriteMiddle = 0x27,
    /// UC RDMA WRITE Last.
    UcRdmaWriteLast = 0x28,
    /// UC RDMA WRITE Last with Immediate.
    UcRdmaWriteLastWithImmediate = 0x29,
    /// UC RDMA WRITE Only.
    UcRdmaWriteOnly = 0x2a,
    /// UC RDMA WRITE Only with Immediate.
    UcRdmaWriteOnlyWithImmediate = 0x2b,
    /// RD SEND First.
    RdSendFirst = 0x40,
    /// RD SEND Middle.
    RdSendMiddle = 0x41,
    /// RD SEND Last.
    RdSendLast = 0x42,
    /// RD SEND Last with Immediate.
    RdSendLastWithImmediate = 0x43,
    /// RD SEND Only.
    RdSendOnly = 0x44,
    /// RD SEND Only with Immediate.
    RdSendOnlyWithImmediate = 0x45,
    /// RD RDMA WRITE First.
    RdRdmaWriteFirst = 0x46,
    /// RD RDMA WRITE Middle.
    RdRdmaWriteMiddle = 0x47,
    /// RD RDMA WRITE Last.
    RdRdmaWriteLast = 0x48,
    /// RD RDMA WRITE Last with Immediate.
    RdRdmaWriteLastWithImmediate = 0x49,
    /// RD RDMA WRITE Only.
    RdRdmaWriteOnly = 0x4a,
    /// RD RDMA WRITE Only with Immediate.
    RdRdmaWriteOnlyWithImmediate = 0x4b,
    /// RD RDMA READ Request.
    RdRdmaReadRequest = 0x4c,
    /// RD RDMA READ Response First.
    RdRdmaReadResponseFirst = 0x4d,
    /// RD RDMA READ Response Middle.
    RdRdmaReadResponseMiddle = 0x4e,
    /// RD RDMA READ Response Last.
    RdRdmaReadResponseLast = 0x4f,
    /// RD RDMA READ Response Only.
    RdRdmaReadResponseOnly = 0x50,
    /// RD Acknowledge.
    RdAcknowledge = 0x51,
    /// RD ATOMIC Acknowledge.
    RdAtomicAcknowledge = 0x52,
    /// RD CmpSwap.
    RdCompareSwap = 0x53,
    /// RD FetchAdd.
    RdFetchAdd = 0x54,
    /// RD RESYNC.
    RdResync = 0x55,
    /// UD SEND Only.
    UdSendOnly = 0x64,
    /// UD SEND Only with Immediate.
    UdSendOnlyWithImmediate = 0x65,
    /// IB congestion notification packet (Linux `IB_OPCODE_CNP`, sent by hfi1's `return_cnp`).
    IbCnp = 0x80,
    /// RoCEv2 congestion notification packet.
    RoceCnp = 0x81,
}

impl Opcode {
    /// The opcode byte.
    pub fn value(self) -> u8 {
        u8::from(self)
    }

    /// Transport service from bits `[7:5]` (defined for unknown opcodes too).
    pub fn transport(self) -> Transport {
        Transport::of(self.value())
    }

    /// The extension headers this opcode carries, or `None` for an unknown opcode.
    pub fn ext_headers(self) -> Option<ExtHeaders> {
        if let Opcode::Unknown(_) = self {
            return None;
        }
        let op = self.value() & 0x1f;
        let mut h = ExtHeaders::default();
        match self.transport() {
            Transport::Rc | Transport::Uc => operation_headers(op, &mut h),
            Transport::Rd => {
                operation_headers(op, &mut h);
                h.rdeth = true;
                // Requests carry a DETH; responses and acknowledgements (0x0d..=0x12) do not.
                h.deth = !(0x0d..=0x12).contains(&op);
            }
            Transport::Ud => {
                operation_headers(op, &mut h);
                h.deth = true;
            }
            Transport::Cnp => h.cnp_reserved = self == Opcode::RoceCnp,
            Transport::Reserved | Transport::Vendor => return None,
        }
        Some(h)
    }

    /// Bytes of extension headers between the BTH and the payload (RETH 16, DETH 8, AETH 4, ImmDt 4,
    /// AtomicETH 28, AtomicAckETH 8, IETH 4, RDETH 4, FETH 4; the RoCEv2 CNP's 16 reserved bytes), or `None`
    /// for an unknown opcode.
    pub fn ext_header_len(self) -> Option<usize> {
        self.ext_headers().map(|h| h.len())
    }

    /// Carries a DETH: every UD opcode and the RD requests.
    pub fn has_deth(self) -> bool {
        self.ext_headers().is_some_and(|h| h.deth)
    }

    /// Carries an AETH: acknowledge, atomic acknowledge, RDMA READ response first/last/only (RC and RD).
    pub fn has_aeth(self) -> bool {
        self.ext_headers().is_some_and(|h| h.aeth)
    }

    /// Carries a RETH: RDMA WRITE first/only, READ request, FLUSH, ATOMIC WRITE.
    pub fn has_reth(self) -> bool {
        self.ext_headers().is_some_and(|h| h.reth)
    }

    /// Carries immediate data.
    pub fn has_immediate(self) -> bool {
        self.ext_headers().is_some_and(|h| h.immdt)
    }

    /// The ACKNOWLEDGE opcode (RC or RD): the packets on which hfi1 ignores FECN. Atomic acknowledge and read
    /// responses also carry an AETH but are not plain ACKs.
    pub fn is_ack(self) -> bool {
        matches!(self, Opcode::RcAcknowledge | Opcode::RdAcknowledge)
    }

    /// A congestion notification packet: IB CNP 0x80 or RoCEv2 CNP 0x81.
    pub fn is_cnp(self) -> bool {
        matches!(self, Opcode::IbCnp | Opcode::RoceCnp)
    }
}

/// Extension headers set by the operation bits `[4:0]`, common to RC, UC, RD and UD.
fn operation_headers(op: u8, h: &mut ExtHeaders) {
    match op {
        0x03 | 0x05 | 0x09 => h.immdt = true,
        0x06 | 0x0a | 0x0c | 0x1d => h.reth = true,
        0x0b => {
            h.reth = true;
            h.immdt = true;
        }
        0x0d | 0x0f | 0x10 | 0x11 => h.aeth = true,
        0x12 => {
            h.aeth = true;
            h.atomic_ack_eth = true;
        }
        0x13 | 0x14 => h.atomic_eth = true,
        0x16 | 0x17 => h.ieth = true,
        0x1c => {
            h.feth = true;
            h.reth = true;
        }
        _ => {}
    }
}

/// PadCnt for a payload of `payload_len` bytes: the pad that brings it to a multiple of 4.
pub const fn pad_cnt_for(payload_len: usize) -> u8 {
    ((4 - payload_len % 4) % 4) as u8
}

/// A view of a BTH at the start of a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter than [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds a whole BTH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 12 BTH bytes; after `Ok`, no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len(HEADER, self.buffer.as_ref(), HEADER_LEN)
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::OPCODE])
    }

    /// Solicited event.
    pub fn se(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x80 != 0
    }

    /// Migration request (M).
    pub fn migreq(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x40 != 0
    }

    /// Pad count (2 bits).
    pub fn pad_cnt(&self) -> u8 {
        (self.buffer.as_ref()[field::FLAGS] >> 4) & 0x03
    }

    /// Transport header version (4 bits).
    pub fn tver(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS] & 0x0F
    }

    /// Partition key.
    pub fn pkey(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::PKEY];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Forward explicit congestion notification.
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[field::ECN] & 0x80 != 0
    }

    /// Backward explicit congestion notification.
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[field::ECN] & 0x40 != 0
    }

    /// Reserved `B4[5:0]` (6 bits).
    pub fn resv6(&self) -> u8 {
        self.buffer.as_ref()[field::ECN] & 0x3F
    }

    /// Destination QP (24 bits).
    pub fn dest_qp(&self) -> u32 {
        be24(&self.buffer.as_ref()[field::DESTQP])
    }

    /// Acknowledge request.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::ACKREQ] & 0x80 != 0
    }

    /// Reserved `B8[6:0]` (7 bits).
    pub fn resv7(&self) -> u8 {
        self.buffer.as_ref()[field::ACKREQ] & 0x7F
    }

    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be24(&self.buffer.as_ref()[field::PSN])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_bits(&mut self, index: usize, mask: u8, value: u8) {
        let b = &mut self.buffer.as_mut()[index];
        *b = (*b & !mask) | (value & mask);
    }

    fn set_flag(&mut self, index: usize, mask: u8, on: bool) {
        self.set_bits(index, mask, if on { mask } else { 0 });
    }

    /// Sets the opcode.
    pub fn set_opcode(&mut self, value: Opcode) {
        self.buffer.as_mut()[field::OPCODE] = u8::from(value);
    }

    /// Sets SE, touching only that bit.
    pub fn set_se(&mut self, value: bool) {
        self.set_flag(field::FLAGS, 0x80, value);
    }

    /// Sets M, touching only that bit.
    pub fn set_migreq(&mut self, value: bool) {
        self.set_flag(field::FLAGS, 0x40, value);
    }

    /// Sets PadCnt (low 2 bits of `value`).
    pub fn set_pad_cnt(&mut self, value: u8) {
        self.set_bits(field::FLAGS, 0x30, value << 4);
    }

    /// Sets TVer (low 4 bits of `value`).
    pub fn set_tver(&mut self, value: u8) {
        self.set_bits(field::FLAGS, 0x0F, value);
    }

    /// Sets the partition key.
    pub fn set_pkey(&mut self, value: u16) {
        self.buffer.as_mut()[field::PKEY].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets FECN, touching only that bit (what a marking switch does).
    pub fn set_fecn(&mut self, value: bool) {
        self.set_flag(field::ECN, 0x80, value);
    }

    /// Sets BECN, touching only that bit.
    pub fn set_becn(&mut self, value: bool) {
        self.set_flag(field::ECN, 0x40, value);
    }

    /// Sets the reserved bits `B4[5:0]` (low 6 bits of `value`).
    pub fn set_resv6(&mut self, value: u8) {
        self.set_bits(field::ECN, 0x3F, value);
    }

    /// Sets DestQP (low 24 bits of `value`).
    pub fn set_dest_qp(&mut self, value: u32) {
        self.buffer.as_mut()[field::DESTQP].copy_from_slice(&value.to_be_bytes()[1..]);
    }

    /// Sets AckReq, touching only that bit.
    pub fn set_ack_req(&mut self, value: bool) {
        self.set_flag(field::ACKREQ, 0x80, value);
    }

    /// Sets the reserved bits `B8[6:0]` (low 7 bits of `value`).
    pub fn set_resv7(&mut self, value: u8) {
        self.set_bits(field::ACKREQ, 0x7F, value);
    }

    /// Sets the PSN (low 24 bits of `value`).
    pub fn set_psn(&mut self, value: u32) {
        self.buffer.as_mut()[field::PSN].copy_from_slice(&value.to_be_bytes()[1..]);
    }
}

/// The fields of a BTH, every bit included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub se: bool,
    /// Migration request (M).
    pub migreq: bool,
    /// Pad count (2 bits); see [`pad_cnt_for`].
    pub pad_cnt: u8,
    /// Transport header version (4 bits; 0).
    pub tver: u8,
    /// Partition key (default 0xFFFF).
    pub pkey: u16,
    /// Forward ECN.
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// Reserved `B4[5:0]` (6 bits); 0 when sent.
    pub resv6: u8,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Reserved `B8[6:0]` (7 bits); 0 when sent.
    pub resv7: u8,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl Repr {
    /// The BTH of a congestion notification packet (IB 0x80 or RoCEv2 0x81): everything but P_Key, FECN,
    /// BECN and DestQP zero, as Linux hfi1 and RoCEv2 NICs send it.
    pub const fn cnp(opcode: Opcode, pkey: u16, dest_qp: u32, fecn: bool, becn: bool) -> Repr {
        Repr {
            opcode,
            se: false,
            migreq: false,
            pad_cnt: 0,
            tver: 0,
            pkey,
            fecn,
            becn,
            resv6: 0,
            dest_qp,
            ack_req: false,
            resv7: 0,
            psn: 0,
        }
    }

    /// Reads a BTH. Only a short buffer fails: unknown opcodes, any TVer and reserved bits are kept.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            opcode: packet.opcode(),
            se: packet.se(),
            migreq: packet.migreq(),
            pad_cnt: packet.pad_cnt(),
            tver: packet.tver(),
            pkey: packet.pkey(),
            fecn: packet.fecn(),
            becn: packet.becn(),
            resv6: packet.resv6(),
            dest_qp: packet.dest_qp(),
            ack_req: packet.ack_req(),
            resv7: packet.resv7(),
            psn: packet.psn(),
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
        packet.set_opcode(self.opcode);
        packet.set_se(self.se);
        packet.set_migreq(self.migreq);
        packet.set_pad_cnt(self.pad_cnt);
        packet.set_tver(self.tver);
        packet.set_pkey(self.pkey);
        packet.set_fecn(self.fecn);
        packet.set_becn(self.becn);
        packet.set_resv6(self.resv6);
        packet.set_dest_qp(self.dest_qp);
        packet.set_ack_req(self.ack_req);
        packet.set_resv7(self.resv7);
        packet.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;
    use proptest::prelude::*;

    /// UD SEND Only, SE, PadCnt 2, TVer 0, P_Key 0xFFFF, FECN, DestQP 0x123456, AckReq, PSN 0xABCDEF.
    static PACKET_BYTES: [u8; 12] = [
        0x64, 0xa0, 0xff, 0xff, 0x80, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
    ];

    fn packet_repr() -> Repr {
        Repr {
            opcode: Opcode::UdSendOnly,
            se: true,
            migreq: false,
            pad_cnt: 2,
            tver: 0,
            pkey: 0xffff,
            fecn: true,
            becn: false,
            resv6: 0,
            dest_qp: 0x12_3456,
            ack_req: true,
            resv7: 0,
            psn: 0xab_cdef,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), Opcode::UdSendOnly);
        assert!(p.se());
        assert!(!p.migreq());
        assert_eq!(p.pad_cnt(), 2);
        assert_eq!(p.tver(), 0);
        assert_eq!(p.pkey(), 0xffff);
        assert!(p.fecn());
        assert!(!p.becn());
        assert_eq!(p.resv6(), 0);
        assert_eq!(p.dest_qp(), 0x12_3456);
        assert!(p.ack_req());
        assert_eq!(p.resv7(), 0);
        assert_eq!(p.psn(), 0xab_cdef);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 12];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_opcode(Opcode::UdSendOnly);
        p.set_se(true);
        p.set_migreq(false);
        p.set_pad_cnt(2);
        p.set_tver(0);
        p.set_pkey(0xffff);
        p.set_fecn(true);
        p.set_becn(false);
        p.set_resv6(0);
        p.set_dest_qp(0x12_3456);
        p.set_ack_req(true);
        p.set_resv7(0);
        p.set_psn(0xab_cdef);
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
        let mut buf = [0xa5u8; 12];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
        assert_eq!(repr.buffer_len(), 12);
    }

    #[test]
    fn wide_values_are_cut() {
        let mut repr = packet_repr();
        repr.dest_qp = 0xff12_3456;
        repr.psn = 0x01ab_cdef;
        repr.pad_cnt = 0x06;
        let mut buf = [0xa5u8; 12];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..11]),
            Err(Error::Truncated {
                header: "BTH",
                need: 12,
                have: 11
            })
        );
    }

    #[test]
    fn opcode_table() {
        // Values from Linux include/rdma/ib_pack.h.
        assert_eq!(u8::from(Opcode::RcSendFirst), 0x00);
        assert_eq!(u8::from(Opcode::RcAcknowledge), 0x11);
        assert_eq!(u8::from(Opcode::RcAtomicAcknowledge), 0x12);
        assert_eq!(u8::from(Opcode::RcCompareSwap), 0x13);
        assert_eq!(u8::from(Opcode::RcFetchAdd), 0x14);
        assert_eq!(u8::from(Opcode::RcSendLastWithInvalidate), 0x16);
        assert_eq!(u8::from(Opcode::RcSendOnlyWithInvalidate), 0x17);
        assert_eq!(u8::from(Opcode::UcRdmaWriteOnlyWithImmediate), 0x2b);
        assert_eq!(u8::from(Opcode::RdResync), 0x55);
        assert_eq!(u8::from(Opcode::UdSendOnly), 0x64);
        assert_eq!(u8::from(Opcode::UdSendOnlyWithImmediate), 0x65);
        assert_eq!(u8::from(Opcode::IbCnp), 0x80);
        assert_eq!(u8::from(Opcode::RoceCnp), 0x81);
        // 0x15 is reserved for RC, UC has no read/atomic, UD only SEND Only (with immediate).
        assert_eq!(Opcode::from(0x15), Opcode::Unknown(0x15));
        assert_eq!(Opcode::from(0x2c), Opcode::Unknown(0x2c));
        assert_eq!(Opcode::from(0x60), Opcode::Unknown(0x60));
        assert_eq!(Opcode::from(0x82), Opcode::Unknown(0x82));
        assert_eq!(Opcode::from(0xe0), Opcode::Unknown(0xe0));
    }

    #[test]
    fn transports() {
        assert_eq!(Opcode::RcSendOnly.transport(), Transport::Rc);
        assert_eq!(Opcode::UcSendOnly.transport(), Transport::Uc);
        assert_eq!(Opcode::RdSendOnly.transport(), Transport::Rd);
        assert_eq!(Opcode::UdSendOnly.transport(), Transport::Ud);
        assert_eq!(Opcode::IbCnp.transport(), Transport::Cnp);
        assert_eq!(Opcode::RoceCnp.transport(), Transport::Cnp);
        assert_eq!(Opcode::Unknown(0xa3).transport(), Transport::Reserved);
        assert_eq!(Opcode::Unknown(0xc0).transport(), Transport::Reserved);
        assert_eq!(Opcode::Unknown(0xf1).transport(), Transport::Vendor);
    }

    #[test]
    fn extension_header_lengths() {
        // Expected lengths from the IBA header-order table as Wireshark lists it (RETH 16, DETH 8, AETH 4,
        // ImmDt 4, AtomicETH 28, AtomicAckETH 8, IETH 4, RDETH 4) and Linux rxe for FLUSH/ATOMIC WRITE.
        let cases: &[(u8, usize)] = &[
            (0x00, 0),  // RC SEND First
            (0x03, 4),  // RC SEND Last Imm: ImmDt
            (0x06, 16), // RC RDMA WRITE First: RETH
            (0x0b, 20), // RC RDMA WRITE Only Imm: RETH + ImmDt
            (0x0c, 16), // RC READ Request: RETH
            (0x0d, 4),  // RC READ Response First: AETH
            (0x0e, 0),  // RC READ Response Middle
            (0x11, 4),  // RC ACK: AETH
            (0x12, 12), // RC ATOMIC ACK: AETH + AtomicAckETH
            (0x13, 28), // RC CmpSwap: AtomicETH
            (0x16, 4),  // RC SEND Last Inv: IETH
            (0x1c, 20), // RC FLUSH: FETH + RETH
            (0x1d, 16), // RC ATOMIC WRITE: RETH
            (0x26, 16), // UC RDMA WRITE First: RETH
            (0x29, 4),  // UC RDMA WRITE Last Imm: ImmDt
            (0x40, 12), // RD SEND First: RDETH + DETH
            (0x45, 16), // RD SEND Only Imm: RDETH + DETH + ImmDt
            (0x4a, 28), // RD RDMA WRITE Only: RDETH + DETH + RETH
            (0x4b, 32), // RD RDMA WRITE Only Imm: RDETH + DETH + RETH + ImmDt
            (0x4c, 28), // RD READ Request: RDETH + DETH + RETH
            (0x4d, 8),  // RD READ Response First: RDETH + AETH
            (0x4e, 4),  // RD READ Response Middle: RDETH
            (0x51, 8),  // RD ACK: RDETH + AETH
            (0x52, 16), // RD ATOMIC ACK: RDETH + AETH + AtomicAckETH
            (0x53, 40), // RD CmpSwap: RDETH + DETH + AtomicETH
            (0x55, 12), // RD RESYNC: RDETH + DETH
            (0x64, 8),  // UD SEND Only: DETH
            (0x65, 12), // UD SEND Only Imm: DETH + ImmDt
            (0x80, 0),  // IB CNP
            (0x81, 16), // RoCEv2 CNP reserved block
        ];
        for &(code, len) in cases {
            assert_eq!(
                Opcode::from(code).ext_header_len(),
                Some(len),
                "opcode {code:#04x}"
            );
        }
        assert_eq!(Opcode::from(0x15).ext_header_len(), None);
        assert_eq!(Opcode::from(0xe5).ext_header_len(), None);
    }

    #[test]
    fn predicates() {
        assert!(Opcode::UdSendOnly.has_deth());
        assert!(Opcode::RdSendMiddle.has_deth());
        assert!(!Opcode::RdAcknowledge.has_deth());
        assert!(!Opcode::RcSendOnly.has_deth());

        for op in [0x0d, 0x0f, 0x10, 0x11, 0x12, 0x4d, 0x4f, 0x50, 0x51, 0x52] {
            assert!(Opcode::from(op).has_aeth(), "{op:#x}");
        }
        assert!(!Opcode::RcRdmaReadResponseMiddle.has_aeth());

        assert!(Opcode::RcAcknowledge.is_ack());
        assert!(Opcode::RdAcknowledge.is_ack());
        assert!(!Opcode::RcAtomicAcknowledge.is_ack());
        assert!(!Opcode::RcRdmaReadResponseOnly.is_ack());

        assert!(Opcode::IbCnp.is_cnp());
        assert!(Opcode::RoceCnp.is_cnp());
        assert!(!Opcode::Unknown(0x82).is_cnp());

        for op in [
            0x03, 0x05, 0x09, 0x0b, 0x23, 0x25, 0x29, 0x2b, 0x43, 0x45, 0x49, 0x4b, 0x65,
        ] {
            assert!(Opcode::from(op).has_immediate(), "{op:#x}");
        }
        assert!(!Opcode::UdSendOnly.has_immediate());

        for op in [
            0x06, 0x0a, 0x0b, 0x0c, 0x1c, 0x1d, 0x26, 0x2a, 0x2b, 0x46, 0x4a, 0x4b, 0x4c,
        ] {
            assert!(Opcode::from(op).has_reth(), "{op:#x}");
        }
        assert!(!Opcode::RcRdmaWriteMiddle.has_reth());
    }

    #[test]
    fn pad_counts() {
        assert_eq!(pad_cnt_for(0), 0);
        assert_eq!(pad_cnt_for(1), 3);
        assert_eq!(pad_cnt_for(2), 2);
        assert_eq!(pad_cnt_for(3), 1);
        assert_eq!(pad_cnt_for(4096), 0);
    }

    fn bit_distance(a: &[u8], b: &[u8]) -> u32 {
        a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn emit_parse_round_trip(bytes in any::<[u8; 12]>()) {
            let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; 12];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, bytes);
        }

        #[test]
        fn opcode_byte_round_trip(b in any::<u8>()) {
            prop_assert_eq!(u8::from(Opcode::from(b)), b);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p)) {
                Ok(_) => prop_assert!(bytes.len() >= HEADER_LEN),
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Truncated { header: "BTH", need: HEADER_LEN, have: bytes.len() }
                ),
            }
        }

        #[test]
        fn set_fecn_touches_one_bit(bytes in any::<[u8; 12]>()) {
            let mut out = bytes;
            Packet::new_unchecked(&mut out[..]).set_fecn(true);
            let expected = u32::from(bytes[4] & 0x80 == 0);
            prop_assert_eq!(bit_distance(&bytes, &out), expected);
            prop_assert!(Packet::new_unchecked(&out[..]).fecn());
            prop_assert_eq!(out[4] | 0x80, bytes[4] | 0x80);
        }

        #[test]
        fn set_becn_touches_one_bit(bytes in any::<[u8; 12]>()) {
            let mut out = bytes;
            Packet::new_unchecked(&mut out[..]).set_becn(true);
            let expected = u32::from(bytes[4] & 0x40 == 0);
            prop_assert_eq!(bit_distance(&bytes, &out), expected);
            prop_assert!(Packet::new_unchecked(&out[..]).becn());
            prop_assert_eq!(out[4] | 0x40, bytes[4] | 0x40);
        }
    }
}
