//! The reaction point a flow's source consults: one of the controllers behind one type, so that an
//! HCA holds its flows' controllers inline (no allocation, `Clone`) whichever mode the scenario runs.

use super::cct::CctController;
use super::dcqcn::DcqcnController;
use super::rcm::RcmController;
use super::rrcc::RrccSender;
use super::{Feedback, RateController, Sent};
use crate::units::{Bps, Cycle};

/// A flow's reaction point.
#[derive(Debug, Clone)]
pub enum FlowCc {
    /// IB CC: the CCT reaction point (`[hca_cc]`).
    Cct(CctController),
    /// RoCEv2 RCM reaction of Liu et al. (`[roce] reaction = "rcm"`).
    Rcm(RcmController),
    /// DCQCN (`[roce] reaction = "dcqcn"`).
    Dcqcn(DcqcnController),
    /// Receiver-driven CC's sender (`[hca_cc] algorithm = "rrcc"`).
    Rrcc(RrccSender),
}

impl FlowCc {
    fn inner(&mut self) -> &mut dyn RateController {
        match self {
            FlowCc::Cct(c) => c,
            FlowCc::Rcm(c) => c,
            FlowCc::Dcqcn(c) => c,
            FlowCc::Rrcc(c) => c,
        }
    }

    fn inner_ref(&self) -> &dyn RateController {
        match self {
            FlowCc::Cct(c) => c,
            FlowCc::Rcm(c) => c,
            FlowCc::Dcqcn(c) => c,
            FlowCc::Rrcc(c) => c,
        }
    }
}

impl From<CctController> for FlowCc {
    fn from(c: CctController) -> Self {
        FlowCc::Cct(c)
    }
}

impl From<RrccSender> for FlowCc {
    fn from(c: RrccSender) -> Self {
        FlowCc::Rrcc(c)
    }
}

impl RateController for FlowCc {
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        self.inner().on_feedback(now, fb);
    }

    fn on_sent(&mut self, sent: Sent) {
        self.inner().on_sent(sent);
    }

    fn advance(&mut self, now: Cycle) {
        self.inner().advance(now);
    }

    fn next_send(&mut self) -> Cycle {
        self.inner().next_send()
    }

    fn next_timer(&self) -> Option<Cycle> {
        self.inner_ref().next_timer()
    }

    fn rate_bps(&self) -> Bps {
        self.inner_ref().rate_bps()
    }

    fn wake_for_send(&self, next_send: Cycle) -> Cycle {
        self.inner_ref().wake_for_send(next_send)
    }

    fn send_after(&self, sent: &Sent) -> Option<Cycle> {
        self.inner_ref().send_after(sent)
    }
}
