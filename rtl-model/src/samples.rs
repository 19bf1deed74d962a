//! Sample captures with at least one packet of every kind the model emits, each paired with the field
//! values it was built from, so an independent decoder (tshark) can be checked against them.
//!
//! `ib.pcap` (ERF): RC and UD data with and without FECN/BECN, an RC ACK with BECN, an IB CNP, a global (GRH)
//! packet, several VL/SL values, flow-control packets. `roce.pcap` (Ethernet): RoCEv2 over IPv4 with ECN 00,
//! 10 and 11, over IPv6, a RoCEv2 CNP, and a PFC frame.

use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv6Addr;
use std::path::Path;

use crate::capture::{CaptureError, CaptureWriter, LinkKind};
use crate::crc::icrc::{icrc, IcrcKind};
use crate::crc::vcrc::{lpcrc, vcrc, LPCRC_BYTE_ORDER, VCRC_BYTE_ORDER};
use crate::wire::aeth::{self, Syndrome};
use crate::wire::bth::{self, Opcode};
use crate::wire::builder::{self, ExtHeader, IbPacket, IpHeader, Payload, RocePacket, Transport};
use crate::wire::ethernet::{self, MacAddr};
use crate::wire::grh::{self, Gid};
use crate::wire::ipv4::{self, Ecn, IpProtocol};
use crate::wire::{deth, flow_ctl, ib_cnp, ipv6, lrh, pfc, roce_cnp};

/// A field value tshark must show for a sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// An integer or boolean field (tshark's `-T fields` name) and its value.
    Num(&'static str, u64),
    /// Byte `index` of a bytes field (for bits tshark shows only as part of a reserved byte: FECN/BECN).
    ByteAt(&'static str, usize, u8),
    /// A field shown as text (addresses).
    Text(&'static str, String),
}

impl Expect {
    /// The tshark field name.
    pub fn field(&self) -> &'static str {
        match self {
            Expect::Num(f, _) | Expect::ByteAt(f, _, _) | Expect::Text(f, _) => f,
        }
    }
}

/// One packet of a sample capture.
#[derive(Debug, Clone)]
pub struct Sample {
    /// What the packet is.
    pub name: &'static str,
    /// The packet's bytes (IB: LRH through VCRC, or the 6-byte link packet; Ethernet: frame without FCS).
    pub bytes: Vec<u8>,
    /// True for an IB link (flow-control) packet.
    pub link_packet: bool,
    /// The fields a decoder must show, with the values the packet was built from.
    pub expect: Vec<Expect>,
}

/// The two sample captures' packets.
#[derive(Debug, Clone)]
pub struct SampleSet {
    /// Packets of `ib.pcap`.
    pub ib: Vec<Sample>,
    /// Packets of `roce.pcap`.
    pub roce: Vec<Sample>,
}

/// Writes `dir/ib.pcap` and `dir/roce.pcap` and returns their packets with the expected field values.
pub fn write_samples(dir: &Path) -> Result<SampleSet, CaptureError> {
    std::fs::create_dir_all(dir).map_err(|source| io_error(dir, source))?;
    let set = SampleSet {
        ib: ib_samples(),
        roce: roce_samples(),
    };
    write_capture(&dir.join("ib.pcap"), LinkKind::Infiniband, &set.ib)?;
    write_capture(&dir.join("roce.pcap"), LinkKind::Ethernet, &set.roce)?;
    Ok(set)
}

fn write_capture(path: &Path, kind: LinkKind, samples: &[Sample]) -> Result<(), CaptureError> {
    let file = File::create(path).map_err(|source| io_error(path, source))?;
    let mut w = CaptureWriter::new(BufWriter::new(file), kind)?;
    for (i, s) in samples.iter().enumerate() {
        // One packet per simulated microsecond.
        let t = (i as u64 + 1) * 1_000_000;
        if s.link_packet {
            w.write_link_packet(t, &s.bytes)?;
        } else {
            w.write(t, &s.bytes)?;
        }
    }
    let mut inner = w.into_inner();
    std::io::Write::flush(&mut inner).map_err(|source| io_error(path, source))?;
    Ok(())
}

fn io_error(path: &Path, source: std::io::Error) -> CaptureError {
    CaptureError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn lrh(vl: u8, sl: u8, dlid: u16, slid: u16) -> lrh::Repr {
    lrh::Repr {
        vl,
        lver: 0,
        sl,
        resv2: 0,
        lnh: lrh::Lnh::IbaLocal,
        dlid,
        resv5: 0,
        pkt_len: 0,
        slid,
    }
}

fn bth(opcode: Opcode, dest_qp: u32, psn: u32, fecn: bool, becn: bool) -> bth::Repr {
    bth::Repr {
        opcode,
        se: false,
        migreq: false,
        pad_cnt: 0,
        tver: 0,
        pkey: 0xFFFF,
        fecn,
        becn,
        resv6: 0,
        dest_qp,
        ack_req: opcode == Opcode::RcSendOnly,
        resv7: 0,
        psn,
    }
}

/// Expected tshark fields of an IB packet built from `p`, whose bytes are `bytes`.
fn ib_expect(p: &IbPacket, bytes: &[u8]) -> Vec<Expect> {
    let t = &p.transport;
    let icrc_end = bytes.len() - 2;
    let global = p.grh.is_some();
    let mut e = vec![
        Expect::Num("infiniband.lrh.vl", p.lrh.vl.into()),
        Expect::Num("infiniband.lrh.sl", p.lrh.sl.into()),
        Expect::Num("infiniband.lrh.lnh", if global { 3 } else { 2 }),
        Expect::Num("infiniband.lrh.dlid", p.lrh.dlid.into()),
        Expect::Num("infiniband.lrh.slid", p.lrh.slid.into()),
        Expect::Num("infiniband.lrh.pktlen", (icrc_end / 4) as u64),
        Expect::Num("infiniband.bth.opcode", u8::from(t.bth.opcode).into()),
        Expect::Num(
            "infiniband.bth.padcnt",
            ((4 - t.payload.len() % 4) % 4) as u64,
        ),
        Expect::Num("infiniband.bth.p_key", t.bth.pkey.into()),
        Expect::Num("infiniband.bth.destqp", t.bth.dest_qp.into()),
        Expect::Num("infiniband.bth.a", t.bth.ack_req.into()),
        Expect::Num("infiniband.bth.psn", t.bth.psn.into()),
        Expect::ByteAt(
            "infiniband.bth",
            4,
            (u8::from(t.bth.fecn) << 7) | (u8::from(t.bth.becn) << 6),
        ),
    ];
    let kind = if global {
        IcrcKind::IbGlobal
    } else {
        IcrcKind::IbLocal
    };
    // tshark shows CRCs as big-endian integers of their wire bytes; the ICRC goes least significant byte
    // first (Linux rxe), the VCRC and LPCRC in the order `crc::vcrc` names.
    let icrc = icrc(kind, &bytes[..icrc_end]).expect("sample ICRC");
    let vcrc = VCRC_BYTE_ORDER.to_bytes(vcrc(&bytes[..icrc_end]));
    if t.bth.opcode == Opcode::IbCnp {
        // Wireshark 4.0 knows no header sequence for opcode 0x80 and shows what follows the BTH (ICRC, VCRC)
        // as vendor data.
        e.push(Expect::Text(
            "infiniband.vendor",
            hex(icrc.to_le_bytes().iter().chain(&vcrc)),
        ));
    } else {
        e.push(Expect::Num(
            "infiniband.invariant.crc",
            icrc.swap_bytes().into(),
        ));
        e.push(Expect::Num("infiniband.variant.crc", shown(vcrc).into()));
    }
    if let Some(g) = p.grh {
        e.extend([
            Expect::Num("infiniband.grh.ipver", 6),
            Expect::Num("infiniband.grh.tclass", g.tclass.into()),
            Expect::Num("infiniband.grh.flowlabel", g.flow_label.into()),
            Expect::Num("infiniband.grh.paylen", t.len() as u64),
            Expect::Num("infiniband.grh.nxthdr", 0x1B),
            Expect::Num("infiniband.grh.hoplmt", g.hop_lmt.into()),
            Expect::Text(
                "infiniband.grh.sgid",
                Ipv6Addr::from(*g.sgid.as_bytes()).to_string(),
            ),
            Expect::Text(
                "infiniband.grh.dgid",
                Ipv6Addr::from(*g.dgid.as_bytes()).to_string(),
            ),
        ]);
    }
    match t.ext {
        ExtHeader::Deth(d) => e.extend([
            Expect::Num("infiniband.deth.q_key", d.qkey.into()),
            Expect::Num("infiniband.deth.srcqp", d.src_qp.into()),
        ]),
        ExtHeader::Aeth(a) => e.extend([
            Expect::Num("infiniband.aeth.syndrome", a.syndrome.raw().into()),
            Expect::Num("infiniband.aeth.msn", a.msn.into()),
        ]),
        ExtHeader::None | ExtHeader::Raw(_) => {}
    }
    e
}

fn ib_sample(name: &'static str, p: IbPacket) -> Sample {
    let bytes = p.to_vec().expect("sample packet builds");
    let expect = ib_expect(&p, &bytes);
    Sample {
        name,
        bytes,
        link_packet: false,
        expect,
    }
}

/// The packets of `ib.pcap`.
pub fn ib_samples() -> Vec<Sample> {
    let deth = |src_qp| {
        ExtHeader::Deth(deth::Repr {
            qkey: 0x8001_0000,
            resv8: 0,
            src_qp,
        })
    };
    let data = |vl, sl, op, ext, len, fecn, becn| IbPacket {
        lrh: lrh(vl, sl, 0x0004, 0x0001),
        grh: None,
        transport: Transport {
            bth: bth(op, 0x00_0123, 0x00_1000 + u32::from(len as u8), fecn, becn),
            ext,
            payload: Payload::Pattern { len, seed: 7 },
        },
    };
    let mut v = vec![
        ib_sample(
            "RC send, VL0 SL0",
            data(0, 0, Opcode::RcSendOnly, ExtHeader::None, 256, false, false),
        ),
        ib_sample(
            "RC send with FECN, VL1 SL1",
            data(1, 1, Opcode::RcSendOnly, ExtHeader::None, 2048, true, false),
        ),
        ib_sample(
            "UD send with FECN, pad 3, VL2 SL5",
            data(2, 5, Opcode::UdSendOnly, deth(0x42), 101, true, false),
        ),
        ib_sample(
            "UD send with BECN, VL3 SL9",
            data(3, 9, Opcode::UdSendOnly, deth(0x43), 512, false, true),
        ),
        ib_sample(
            "RC send with FECN and BECN, VL7 SL14",
            data(7, 14, Opcode::RcSendOnly, ExtHeader::None, 64, true, true),
        ),
        ib_sample(
            "RC ACK with BECN",
            IbPacket {
                lrh: lrh(1, 1, 0x0001, 0x0004),
                grh: None,
                transport: Transport {
                    bth: bth(Opcode::RcAcknowledge, 0x00_0456, 0x00_1010, false, true),
                    ext: ExtHeader::Aeth(aeth::Repr {
                        syndrome: Syndrome::ACK_UNLIMITED,
                        msn: 0x00_0020,
                    }),
                    payload: Payload::Bytes(&[]),
                },
            },
        ),
    ];
    let cnp = ib_cnp::Repr {
        vl: 0,
        sl: 5,
        dlid: 0x0001,
        slid: 0x0004,
        pkey: 0xFFFF,
        dest_qp: 0x42,
        fecn: false,
    };
    let p = IbPacket {
        lrh: cnp.lrh_repr(),
        grh: None,
        transport: Transport {
            bth: cnp.bth_repr(),
            ext: ExtHeader::None,
            payload: Payload::Bytes(&[]),
        },
    };
    let mut s = ib_sample("IB CNP (0x80)", p);
    s.bytes.clear();
    builder::ib_cnp(&cnp, &mut s.bytes).expect("CNP builds");
    s.expect.push(Expect::Num("infiniband.lrh.pktlen", 6));
    v.push(s);
    v.push(ib_sample(
        "UD send with GRH, VL4 SL7",
        IbPacket {
            lrh: lrh(4, 7, 0x0010, 0x0011),
            grh: Some(grh::Repr {
                tclass: 0x2C,
                flow_label: 0xABCDE,
                pay_len: 0,
                nxt_hdr: 0,
                hop_lmt: 64,
                sgid: Gid::new(0xFE80_0000_0000_0000, 0x0002_C903_0000_0001),
                dgid: Gid::new(0xFE80_0000_0000_0000, 0x0002_C903_0000_0002),
            }),
            transport: Transport {
                bth: bth(Opcode::UdSendOnly, 0x00_0077, 5, false, false),
                ext: deth(0x44),
                payload: Payload::Pattern { len: 30, seed: 9 },
            },
        },
    ));
    for (name, op, fctbs, vl, fccl) in [
        ("flow control, VL0", flow_ctl::Op::Normal, 0x123, 0, 0x456),
        (
            "flow control init, VL3",
            flow_ctl::Op::Init,
            0xFFF,
            3,
            0x800,
        ),
    ] {
        let r = flow_ctl::Repr {
            op,
            fctbs,
            vl,
            fccl,
            lpcrc: 0,
        };
        let mut bytes = Vec::new();
        builder::flow_control(&r, &mut bytes);
        let lpcrc = shown(LPCRC_BYTE_ORDER.to_bytes(lpcrc(&bytes[..4])));
        v.push(Sample {
            name,
            bytes,
            link_packet: true,
            expect: vec![
                Expect::Num("infiniband_link.op", u8::from(op).into()),
                Expect::Num("infiniband_link.fctbs", fctbs.into()),
                Expect::Num("infiniband_link.vl", vl.into()),
                Expect::Num("infiniband_link.fccl", fccl.into()),
                Expect::Num("infiniband_link.lpcrc", lpcrc.into()),
            ],
        });
    }
    v
}

/// Bytes as tshark prints a bytes field: lowercase hex, no separators.
fn hex<'a>(bytes: impl Iterator<Item = &'a u8>) -> String {
    bytes.map(|b| format!("{b:02x}")).collect()
}

/// The value tshark shows for a 16-bit CRC with these wire bytes.
fn shown(wire: [u8; 2]) -> u16 {
    u16::from_be_bytes(wire)
}

const HOST_A: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x00, 0x0a]);
const HOST_B: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x00, 0x0b]);

fn eth() -> ethernet::Repr {
    ethernet::Repr {
        src_addr: HOST_A,
        dst_addr: HOST_B,
        ethertype: ethernet::EtherType::Ipv4,
    }
}

fn ipv4(ecn: Ecn) -> ipv4::Repr {
    ipv4::Repr {
        src_addr: [10, 0, 0, 1],
        dst_addr: [10, 0, 0, 2],
        protocol: IpProtocol::Udp,
        payload_len: 0,
        ttl: 64,
        dscp: 26,
        ecn,
        ident: 0x1234,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
    }
}

/// Expected tshark fields of a RoCEv2 frame built from `p`, whose bytes are `bytes`.
fn roce_expect(p: &RocePacket, bytes: &[u8]) -> Vec<Expect> {
    let t = &p.transport;
    let udp_len = 8 + t.len() as u64;
    let mut e = vec![
        Expect::Num("udp.dstport", 4791),
        Expect::Num("udp.srcport", p.udp_src_port.into()),
        Expect::Num("udp.length", udp_len),
        Expect::Num("infiniband.bth.opcode", u8::from(t.bth.opcode).into()),
        Expect::Num("infiniband.bth.p_key", t.bth.pkey.into()),
        Expect::Num("infiniband.bth.destqp", t.bth.dest_qp.into()),
        Expect::Num("infiniband.bth.psn", t.bth.psn.into()),
        Expect::ByteAt(
            "infiniband.bth",
            4,
            (u8::from(t.bth.fecn) << 7) | (u8::from(t.bth.becn) << 6),
        ),
    ];
    let (kind, ip_at) = match p.ip {
        IpHeader::V4(ip) => {
            e.extend([
                Expect::Num("eth.type", 0x0800),
                Expect::Num("ip.dsfield.ecn", ip.ecn.bits().into()),
                Expect::Num("ip.dsfield.dscp", ip.dscp.into()),
                Expect::Num("ip.len", 20 + udp_len),
                Expect::Num("ip.proto", 17),
                Expect::Num("ip.ttl", ip.ttl.into()),
                // tshark recomputes the header checksum (ip.check_checksum on): 0 bad, 1 good, 2 unverified.
                Expect::Num("ip.checksum.status", 1),
            ]);
            (IcrcKind::RoceV4, 14)
        }
        IpHeader::V6(ip) => {
            e.extend([
                Expect::Num("eth.type", 0x86DD),
                Expect::Num("ipv6.tclass.ecn", ip.ecn.bits().into()),
                Expect::Num("ipv6.tclass.dscp", ip.dscp.into()),
                Expect::Num("ipv6.plen", udp_len),
                Expect::Num("ipv6.nxt", 17),
                Expect::Num("ipv6.hlim", ip.hop_limit.into()),
                Expect::Num("ipv6.flow", ip.flow_label.into()),
            ]);
            (IcrcKind::RoceV6, 14)
        }
    };
    let icrc = icrc(kind, &bytes[ip_at..]).expect("sample ICRC");
    if t.bth.opcode == Opcode::RoceCnp {
        // As for the IB CNP: Wireshark 4.0 shows what follows the BTH (16 reserved bytes, ICRC) as vendor data.
        e.push(Expect::Text(
            "infiniband.vendor",
            hex([0u8; 16].iter().chain(&icrc.to_le_bytes())),
        ));
    } else {
        e.push(Expect::Num(
            "infiniband.invariant.crc",
            icrc.swap_bytes().into(),
        ));
    }
    if let ExtHeader::Deth(d) = t.ext {
        e.push(Expect::Num("infiniband.deth.srcqp", d.src_qp.into()));
    }
    e
}

fn roce_sample(name: &'static str, p: RocePacket) -> Sample {
    let bytes = p.to_vec().expect("sample frame builds");
    let expect = roce_expect(&p, &bytes);
    Sample {
        name,
        bytes,
        link_packet: false,
        expect,
    }
}

/// The packets of `roce.pcap`.
pub fn roce_samples() -> Vec<Sample> {
    let data = |ip, fecn| RocePacket {
        eth: eth(),
        ip,
        udp_src_port: 0xC001,
        transport: Transport {
            bth: bth(Opcode::RcSendOnly, 0x00_0011, 0x00_0100, fecn, false),
            ext: ExtHeader::None,
            payload: Payload::Pattern { len: 1024, seed: 3 },
        },
    };
    let mut v = vec![
        roce_sample(
            "RoCEv2 IPv4, ECN 00 (not ECT)",
            data(IpHeader::V4(ipv4(Ecn::NotEct)), false),
        ),
        roce_sample(
            "RoCEv2 IPv4, ECN 10 (ECT(0))",
            data(IpHeader::V4(ipv4(Ecn::Ect0)), false),
        ),
        roce_sample(
            "RoCEv2 IPv4, ECN 11 (CE)",
            data(IpHeader::V4(ipv4(Ecn::Ce)), false),
        ),
        roce_sample(
            "RoCEv2 IPv6 UD, ECN 10, 13-byte payload",
            RocePacket {
                eth: eth(),
                ip: IpHeader::V6(ipv6::Repr {
                    src_addr: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                    dst_addr: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                    next_header: IpProtocol::Udp,
                    payload_len: 0,
                    hop_limit: 63,
                    dscp: 26,
                    ecn: Ecn::Ect0,
                    flow_label: 0x5_4321,
                }),
                udp_src_port: 0xC002,
                transport: Transport {
                    bth: bth(Opcode::UdSendOnly, 0x00_0022, 7, false, false),
                    ext: ExtHeader::Deth(deth::Repr {
                        qkey: 0x1111_2222,
                        resv8: 0,
                        src_qp: 0x33,
                    }),
                    payload: Payload::Pattern { len: 13, seed: 4 },
                },
            },
        ),
    ];
    let cnp = roce_cnp::Repr {
        pkey: 0xFFFF,
        dest_qp: 0x00_0011,
        fecn: false,
        becn: true,
    };
    let reserved = [0u8; 16];
    let p = RocePacket {
        eth: ethernet::Repr {
            src_addr: HOST_B,
            dst_addr: HOST_A,
            ethertype: ethernet::EtherType::Ipv4,
        },
        ip: IpHeader::V4(ipv4::Repr {
            src_addr: [10, 0, 0, 2],
            dst_addr: [10, 0, 0, 1],
            ..ipv4(Ecn::NotEct)
        }),
        udp_src_port: 0xC003,
        transport: Transport {
            bth: cnp.bth_repr(),
            ext: ExtHeader::Raw(&reserved),
            payload: Payload::Bytes(&[]),
        },
    };
    let mut s = roce_sample("RoCEv2 CNP (0x81)", p);
    s.bytes.clear();
    builder::roce_cnp(p.eth, p.ip, p.udp_src_port, &cnp, &mut s.bytes).expect("CNP builds");
    v.push(s);
    let quanta = [0, 0xFFFF, 0, 0x1234, 0, 0, 0, 7];
    let mut bytes = Vec::new();
    builder::pfc_frame(
        HOST_A,
        &pfc::Repr {
            class_enable: 0x8A,
            quanta,
        },
        &mut bytes,
    );
    let mut expect = vec![
        Expect::Num("eth.type", 0x8808),
        Expect::Text("eth.dst", "01:80:c2:00:00:01".into()),
        Expect::Num("macc.opcode", 0x0101),
        Expect::Num("macc.cbfc.enbv", 0x8A),
    ];
    const PAUSE_FIELDS: [&str; 8] = [
        "macc.cbfc.pause_time.c0",
        "macc.cbfc.pause_time.c1",
        "macc.cbfc.pause_time.c2",
        "macc.cbfc.pause_time.c3",
        "macc.cbfc.pause_time.c4",
        "macc.cbfc.pause_time.c5",
        "macc.cbfc.pause_time.c6",
        "macc.cbfc.pause_time.c7",
    ];
    for (f, q) in PAUSE_FIELDS.iter().zip(quanta) {
        expect.push(Expect::Num(f, q.into()));
    }
    v.push(Sample {
        name: "PFC pause (priorities 1, 3, 7)",
        bytes,
        link_packet: false,
        expect,
    });
    v
}
