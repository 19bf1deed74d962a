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

/// Calls one method on whichever controller `$s` holds: a `match` with a direct call per arm, so each
/// controller's method can be inlined into the HCA's step (a `dyn` call cannot).
macro_rules! each {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            FlowCc::Cct($c) => $e,
            FlowCc::Rcm($c) => $e,
            FlowCc::Dcqcn($c) => $e,
            FlowCc::Rrcc($c) => $e,
        }
    };
}

impl From<CctController> for FlowCc {
    #[inline]
    fn from(c: CctController) -> Self {
        FlowCc::Cct(c)
    }
}

impl From<RrccSender> for FlowCc {
    #[inline]
    fn from(c: RrccSender) -> Self {
        FlowCc::Rrcc(c)
    }
}

impl RateController for FlowCc {
    #[inline]
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        each!(self, c => c.on_feedback(now, fb))
    }

    #[inline]
    fn on_sent(&mut self, sent: Sent) {
        each!(self, c => c.on_sent(sent))
    }

    #[inline]
    fn advance(&mut self, now: Cycle) {
        each!(self, c => c.advance(now))
    }

    #[inline]
    fn next_send(&mut self) -> Cycle {
        each!(self, c => c.next_send())
    }

    #[inline]
    fn next_timer(&self) -> Option<Cycle> {
        each!(self, c => c.next_timer())
    }

    #[inline]
    fn rate_bps(&self) -> Bps {
        each!(self, c => c.rate_bps())
    }

    #[inline]
    fn wake_for_send(&self, next_send: Cycle) -> Cycle {
        each!(self, c => c.wake_for_send(next_send))
    }

    #[inline]
    fn send_after(&self, sent: &Sent) -> Option<Cycle> {
        each!(self, c => c.send_after(sent))
    }
}
