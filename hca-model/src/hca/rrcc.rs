//! The receiver side of receiver-driven CC at the destination HCA: an [`RrccReceiver`] per flow, whose
//! periods become CNPs with and without BECN (the receive rate in a 4-byte payload, in Mbit/s; in the
//! descriptor it is the payload seed, as the wire builder materialises payload bytes from it), queued with
//! the HCA's other CNPs ahead of data. A period is closed at the first cycle at or after its end (polled by
//! the HCA), so a flow that stops sending still gets the verdict on its last period.

use rtl_model::link::PacketDesc;
use rtl_model::wire::bth::Opcode;

use super::Hca;
use crate::np::rrcc::{Notice, RrccReceiver};
use crate::rate::CnpInfo;

/// What a received CNP tells its flow's sender: BECN as carried, and the receive rate of an RR-CC CNP.
pub fn cnp_info(d: &PacketDesc) -> CnpInfo {
    CnpInfo {
        becn: d.becn,
        receive_rate: (d.payload_len >= 4).then(|| u64::from(d.payload_seed) * 1_000_000),
    }
}

/// An RR-CC receiver and where its CNPs go.
#[derive(Debug, Clone)]
pub struct RrccRx {
    rx: RrccReceiver,
    /// The source's LID, SL and QP (from the flow's packets).
    to: Option<(u16, u8, u32)>,
}

impl Hca {
    /// Makes this HCA the RR-CC notification point of scenario flow `flow`.
    pub fn set_rrcc_receiver(&mut self, flow: usize, rx: RrccReceiver) {
        if self.rrcc.len() < self.per_flow.limit() {
            self.rrcc.resize(self.per_flow.limit(), None);
        }
        if let Some(r) = self.rrcc.get_mut(flow) {
            *r = Some(RrccRx { rx, to: None });
        }
    }

    /// A data packet of flow `d.tag` is in at `now`.
    pub(crate) fn rrcc_packet(&mut self, now: u64, d: &PacketDesc) {
        let flow = d.tag as usize;
        let Some(Some(r)) = self.rrcc.get_mut(flow) else {
            return;
        };
        r.to = Some((d.slid, d.sl, d.dest_qp));
        let n = r.rx.on_packet(now, d.fecn);
        let end = r.rx.period_end().unwrap_or(u64::MAX);
        self.rrcc_due = self.rrcc_due.min(end);
        if let Some(n) = n {
            self.rrcc_cnp(flow, n);
        }
    }

    /// Closes every period that ended by `now`.
    pub(crate) fn rrcc_poll(&mut self, now: u64) {
        let mut due = u64::MAX;
        for flow in 0..self.rrcc.len() {
            let Some(r) = self.rrcc[flow].as_mut() else {
                continue;
            };
            let n = r.rx.poll(now);
            due = due.min(r.rx.period_end().unwrap_or(u64::MAX));
            if let Some(n) = n {
                self.rrcc_cnp(flow, n);
            }
        }
        self.rrcc_due = due;
    }

    fn rrcc_cnp(&mut self, flow: usize, n: Notice) {
        let Some(Some(RrccRx {
            to: Some((slid, sl, qp)),
            ..
        })) = self.rrcc.get(flow)
        else {
            return;
        };
        let (slid, sl, qp) = (*slid, *sl, *qp);
        let payload = if n.cnp.becn { 4 } else { 0 };
        let mut c = PacketDesc::local(slid, self.lid, sl, Opcode::IbCnp, payload);
        c.becn = n.cnp.becn;
        c.payload_seed = n
            .cnp
            .receive_rate
            .map_or(0, |r| u32::try_from(r / 1_000_000).unwrap_or(u32::MAX));
        c.vl = self.vl_of(sl);
        c.dest_qp = qp;
        c.tag = flow as u32;
        self.push_cnp(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::np::rrcc::RrccReceiverConfig;
    use crate::units::{CoreClock, Mtu};
    use rtl_model::link::{FcPacket, LinkRate};

    /// The receiver of a 256-byte-MTU flow on a 32 Gbit/s line at 1 GHz, closing 1 us periods at 95% marked.
    fn receiver() -> RrccReceiver {
        let clock = CoreClock::from_khz(1_000_000).unwrap();
        RrccReceiver::new(RrccReceiverConfig {
            clock,
            period: 1000,
            mtu: Mtu::new(256).unwrap(),
            line_rate: 32_000_000_000,
            fecn_num: 95,
            fecn_den: 100,
        })
        .unwrap()
    }

    /// 20 of 20 packets marked in a 1 us period (1000 cycles at 1 GHz) of 256-byte MTU: a CNP with BECN and
    /// 20 * 256 * 8 bits / 1 us = 40 960 Mbit/s; then 1 of 2 marked: below 95%, and 4 096 Mbit/s is below the
    /// 32 000 Mbit/s line: a CNP without BECN.
    #[test]
    fn periods_become_cnps_with_and_without_becn() {
        let r = LinkRate::new(4, 1).unwrap();
        let mut h = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        h.set_rrcc_receiver(0, receiver());
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 100,
        });
        let mut d = PacketDesc::local(2, 7, 0, Opcode::RcSendMiddle, 256);
        d.dest_qp = 1;
        for i in 0..20u64 {
            d.fecn = true;
            h.rrcc_packet(10 + i * 40, &d);
        }
        d.fecn = false;
        h.rrcc_packet(1500, &d);
        d.fecn = true;
        h.rrcc_packet(1600, &d);
        let mut cnps = Vec::new();
        for t in 1000..3000 {
            if let Some(p) = h.step(t).pkt {
                cnps.push(p.desc);
            }
        }
        assert_eq!(cnps.len(), 2, "{cnps:?}");
        let (a, b) = (cnps[0], cnps[1]);
        assert_eq!((a.dlid, a.becn, a.payload_len), (7, true, 4));
        assert_eq!(cnp_info(&a).receive_rate, Some(40_960_000_000));
        assert_eq!((b.becn, cnp_info(&b).receive_rate), (false, None));
    }
}
