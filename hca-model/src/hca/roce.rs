//! The RoCEv2 form of what the HCA sends: data packets as RoCEv2 frames (ECT(0)) and the RoCEv2 CNP for a
//! CE-marked packet.

use rtl_model::link::PacketDesc;
use rtl_model::wire::bth::Opcode;

/// Payload bytes of a RoCEv2 CNP: none (its 16 reserved bytes after the BTH count as the opcode's extension
/// header).
pub const CNP_PAYLOAD: u16 = 0;

/// Bytes on the wire of a RoCEv2 data packet of `payload` bytes (opcode Send Only: no extension header),
/// framing included.
pub fn frame_bytes(payload: u16, frame_overhead: u16) -> u16 {
    PacketDesc::roce_v4(0, 0, 0, Opcode::RcSendOnly, payload).wire_len + frame_overhead
}

/// The RoCEv2 form of a packet the HCA built as IB: same addresses, priority, opcode, payload, PSN, QP and
/// tag; ECT(0); wire length of the Ethernet/IPv4/UDP frame plus `frame_overhead` bytes of framing.
pub fn to_roce(d: PacketDesc, frame_overhead: u16) -> PacketDesc {
    let mut r = PacketDesc::roce_v4(d.dlid, d.slid, d.sl, Opcode::from(d.opcode), d.payload_len);
    r.vl = d.vl;
    r.psn = d.psn;
    r.payload_seed = d.payload_seed;
    r.dest_qp = d.dest_qp;
    r.tag = d.tag;
    r.wire_len = r.wire_len.saturating_add(frame_overhead);
    r
}

/// The RoCEv2 CNP (opcode 0x81, BECN set, not ECN-capable so that no switch marks it) a destination `lid`
/// returns for the CE-marked packet `d`.
pub fn cnp_for(d: &PacketDesc, lid: u16, vls: u8, frame_overhead: u16) -> PacketDesc {
    let mut c = PacketDesc::roce_v4(d.slid, lid, d.sl, Opcode::RoceCnp, CNP_PAYLOAD);
    c.ecn = 0;
    c.becn = true;
    c.vl = d.sl % vls.max(1);
    c.dest_qp = d.dest_qp;
    c.tag = d.tag;
    c.wire_len = c.wire_len.saturating_add(frame_overhead);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_descriptors_keep_the_flow_and_carry_ect() {
        let mut d = PacketDesc::local(9, 3, 0, Opcode::RcSendMiddle, 2048);
        d.psn = 77;
        d.dest_qp = 4;
        d.tag = 2;
        let r = to_roce(d, 24);
        // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 2048 + ICRC 4 = 2106, plus 24 bytes of framing.
        assert_eq!(r.wire_len, 2130);
        assert_eq!((r.ecn, r.psn, r.dest_qp, r.tag, r.dlid), (2, 77, 4, 2, 9));
        assert_eq!(frame_bytes(2048, 24), 2130);
        let c = cnp_for(&r, 9, 1, 24);
        assert_eq!(
            (c.opcode, c.dlid, c.slid, c.ecn, c.becn, c.tag),
            (0x81, 3, 9, 0, true, 2)
        );
        assert_eq!(c.wire_len, 42 + 12 + 16 + 4 + 24);
    }

    #[test]
    fn a_marked_fabric_packet_materialises_as_a_ce_frame() {
        // What a capture needs: the descriptor's ECN reaches the IPv4 header, and the frame is the wire length
        // less the framing bytes.
        let mut d = to_roce(PacketDesc::local(9, 3, 0, Opcode::RcSendOnly, 2048), 24);
        d.ecn = 3;
        let mut f = Vec::new();
        d.materialise_roce_v4(&mut f).unwrap();
        assert_eq!(f.len(), usize::from(d.wire_len) - 24);
        let ip = rtl_model::wire::ipv4::Packet::new_checked(&f[14..]).unwrap();
        assert_eq!(ip.ecn(), rtl_model::wire::ipv4::Ecn::Ce);
        assert!(ip.verify_checksum());
    }
}
