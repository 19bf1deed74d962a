//! The messages of one flow at its source HCA: their arrival cycles in order, first those fully sent but not
//! yet matched with their completion, then those still (partly) to send. A saturating flow "receives" a
//! message when it takes the message's first packet, so its latency is the transfer time; a patterned flow
//! gets its arrival cycles from [`Arrivals`] and queues up to a limit of unsent messages (more are refused
//! and counted). The HCA's driver pairs the sent ones with their completions at the destination.

use std::collections::VecDeque;

use super::pattern::{Arrivals, Pattern};
use crate::units::CoreClock;

/// The messages of one flow at its source. See the module documentation.
#[derive(Debug, Clone)]
pub struct MsgSource {
    /// `None`: saturating.
    arrivals: Option<Arrivals>,
    /// The next arrival not yet queued.
    next: Option<u64>,
    /// Arrival cycles: `sent` fully sent and unmatched ones, then the unsent ones.
    queue: VecDeque<u64>,
    sent: usize,
    limit: usize,
    /// Arrivals refused on a full queue.
    pub refused: u64,
}

impl MsgSource {
    /// Messages of `msg_bytes` arriving by `p` from cycle `start` until before `stop`, at most `limit` queued.
    pub fn new(
        p: Pattern,
        clock_mhz: u32,
        msg_bytes: u64,
        start: u64,
        stop: u64,
        seed: u64,
        limit: u32,
    ) -> Result<Self, String> {
        let arrivals = match p {
            Pattern::Saturating => None,
            _ => {
                let clock = CoreClock::from_khz(clock_mhz.saturating_mul(1000))
                    .map_err(|e| e.to_string())?;
                Some(
                    Arrivals::new(p, clock, msg_bytes, start, stop, seed)
                        .map_err(|e| e.to_string())?,
                )
            }
        };
        let mut s = MsgSource {
            arrivals,
            next: None,
            // Room for the queue and the messages in flight, so that the steady state rarely allocates; a
            // saturating flow holds only the messages in flight (a large fabric has many such flows).
            queue: VecDeque::with_capacity(if matches!(p, Pattern::Saturating) {
                16
            } else {
                (limit as usize).min(4096) * 2
            }),
            sent: 0,
            limit: limit as usize,
            refused: 0,
        };
        s.next = s.arrivals.as_mut().and_then(|a| a.next_arrival());
        Ok(s)
    }

    /// Saturating: a message is always there.
    pub fn saturating(&self) -> bool {
        self.arrivals.is_none()
    }

    /// The cycle the next message arrives when none is waiting (or being sent) at `now`; `None` when one is,
    /// or the source is saturating. Arrivals are queued only when [`MsgSource::has_work`] asks, and whether
    /// one is refused depends only on the queue, which changes only when packets are taken: a flow that
    /// sleeps until this cycle queues and refuses exactly what asking every cycle would.
    pub fn idle_until(&self, now: u64) -> Option<u64> {
        if self.arrivals.is_none() || self.queue.len() > self.sent {
            return None;
        }
        match self.next {
            Some(t) if t <= now => None,
            next => Some(next.unwrap_or(u64::MAX)),
        }
    }

    /// Queues the arrivals due by `now`; whether a message is waiting to be sent (or is being sent).
    pub fn has_work(&mut self, now: u64) -> bool {
        if let Some(a) = self.arrivals.as_mut() {
            while let Some(t) = self.next.filter(|&t| t <= now) {
                if self.queue.len() - self.sent < self.limit {
                    self.queue.push_back(t);
                } else {
                    self.refused += 1;
                }
                self.next = a.next_arrival();
            }
            self.queue.len() > self.sent
        } else {
            true
        }
    }

    /// The first packet of a message was taken at `now` (a saturating flow's message arrives then).
    pub fn first_taken(&mut self, now: u64) {
        if self.saturating() {
            self.queue.push_back(now);
        }
    }

    /// The last packet of a message was taken.
    pub fn last_taken(&mut self) {
        self.sent += 1;
    }

    /// The packet taken last is given back: `first`/`last` say what it was.
    pub fn untake(&mut self, first: bool, last: bool) {
        if last {
            self.sent -= 1;
        }
        if first && self.saturating() {
            self.queue.pop_back();
        }
    }

    /// The arrival cycle of the oldest fully sent, unmatched message (removed).
    pub fn pop_sent(&mut self) -> Option<u64> {
        if self.sent == 0 {
            return None;
        }
        self.sent -= 1;
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturating_messages_arrive_when_taken_and_untake_restores() {
        let mut s = MsgSource::new(Pattern::Saturating, 1000, 4096, 0, 100, 1, 4).unwrap();
        assert!(s.has_work(0));
        s.first_taken(5);
        s.untake(true, false);
        assert_eq!(s.pop_sent(), None);
        s.first_taken(7);
        s.last_taken();
        s.first_taken(9);
        assert_eq!(s.pop_sent(), Some(7));
        assert_eq!(s.pop_sent(), None, "the second message is not fully sent");
    }

    /// 1000-byte messages at 8 Gbit/s on 1 GHz: one every 1000 cycles from 0; a queue of 2.
    #[test]
    fn constant_arrivals_queue_up_to_the_limit() {
        let p = Pattern::ConstantRate {
            rate: 8_000_000_000,
        };
        let mut s = MsgSource::new(p, 1000, 1000, 0, u64::MAX, 1, 2).unwrap();
        assert!(s.has_work(0));
        assert!(
            s.has_work(3500),
            "arrivals at 0, 1000 queued; 2000, 3000 refused"
        );
        assert_eq!(s.refused, 2);
        s.last_taken();
        s.last_taken();
        assert!(!s.has_work(3999));
        assert!(s.has_work(4000));
        assert_eq!((s.pop_sent(), s.pop_sent()), (Some(0), Some(1000)));
    }
}
