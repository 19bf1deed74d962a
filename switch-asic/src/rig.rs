//! A switch with an HCA port (`hca_model::port::Endpoint`) on every port: the switch's test rig. Shared by
//! the crate's unit tests, its integration tests and its examples (included by path, as the HCA crate is a
//! dev-dependency only).

use hca_model::port::{Endpoint, EndpointOut};
use rtl_model::link::serial::Wire;
use rtl_model::link::{ConfigError, PacketDesc, TxEvent};
use switch_asic::config::mtu_packet_blocks;
use switch_asic::{Switch, SwitchConfig};

/// Copies of one packet that a rig's endpoint sends back to back: each is loaded once the one before has
/// started (as the HCA loads packet by packet), with the next PSN and payload seed.
#[derive(Debug, Clone, Copy)]
struct Stream {
    d: PacketDesc,
    /// Copies still to load; `None`: without end.
    left: Option<u64>,
}

/// A switch with an [`Endpoint`] on every port, joined by wires of one latency.
#[derive(Debug, Clone)]
pub struct Rig {
    /// The switch under test.
    pub sw: Switch,
    /// Endpoint `p` is on switch port `p`.
    pub eps: Vec<Endpoint>,
    to_ep: Vec<Wire<TxEvent>>,
    to_sw: Vec<Wire<EndpointOut>>,
    /// Every packet the switch sent, per port, in order, when recording is on (see [`Rig::record`]).
    pub sent: Vec<Vec<PacketDesc>>,
    record: bool,
    /// Per endpoint: what it sends ([`Rig::set_source`]).
    streams: Vec<Option<Stream>>,
}

impl Rig {
    /// Builds the switch from `cfg` and an endpoint per port with the port's rate, buffers of `ep_buf`
    /// blocks per VL and the port's flow-control interval; links have `latency` cycles.
    pub fn new(cfg: SwitchConfig, ep_buf: u16, latency: u64) -> Result<Self, ConfigError> {
        let mtu_blocks = mtu_packet_blocks(cfg.mtu);
        let eps = cfg
            .ports
            .iter()
            .map(|p| {
                let e = Endpoint::new(p.rate, p.data_vls, ep_buf, p.fc_interval)?;
                match p.pfc {
                    Some(c) => e.with_pfc(c, mtu_blocks),
                    None => Ok(e),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let n = cfg.ports.len();
        Ok(Rig {
            sw: Switch::new(cfg)?,
            eps,
            to_ep: (0..n).map(|_| Wire::new(latency)).collect(),
            to_sw: (0..n).map(|_| Wire::new(latency)).collect(),
            sent: vec![Vec::new(); n],
            record: false,
            streams: vec![None; n],
        })
    }

    /// Endpoint `p` sends copies of `template` back to back as credit allows: `count` of them, or without
    /// end for `None`, replacing what it sent before.
    pub fn set_source(&mut self, p: usize, template: PacketDesc, count: Option<u64>) {
        self.eps[p].stop_source();
        self.streams[p] = Some(Stream {
            d: template,
            left: count,
        });
    }

    /// Endpoint `p` stops sending (a copy already started completes).
    pub fn stop_source(&mut self, p: usize) {
        self.eps[p].stop_source();
        self.streams[p] = None;
    }

    /// Keep every packet the switch sends in [`Rig::sent`] (allocates; off by default).
    pub fn record(&mut self, on: bool) {
        self.record = on;
    }

    /// One cycle of the whole rig.
    pub fn step(&mut self) {
        let now = self.sw.now();
        for p in 0..self.eps.len() {
            while let Some(o) = self.to_sw[p].pop_due(now) {
                if let Some(pkt) = o.pkt {
                    let _ = self.sw.rx_packet(p, pkt);
                }
                if let Some(fc) = o.fc {
                    let _ = self.sw.rx_fc(p, fc);
                }
                if let Some(f) = o.pause {
                    let _ = self.sw.rx_pause(p, f);
                }
            }
            while let Some(e) = self.to_ep[p].pop_due(now) {
                match e {
                    TxEvent::Packet { start, .. } => self.eps[p].rx_packet(start),
                    TxEvent::Fc { fc, .. } => self.eps[p].rx_fc(fc),
                    TxEvent::Pause { frame, .. } => self.eps[p].rx_pause(frame),
                }
            }
        }
        for &e in self.sw.step() {
            let port = match e {
                TxEvent::Packet { port, start } => {
                    if self.record {
                        self.sent[usize::from(port)].push(start.desc);
                    }
                    port
                }
                TxEvent::Fc { port, .. } | TxEvent::Pause { port, .. } => port,
            };
            self.to_ep[usize::from(port)].push(now, e);
        }
        for (p, ep) in self.eps.iter_mut().enumerate() {
            if let Some(st) = self.streams[p].as_mut() {
                if st.left != Some(0) && !ep.loaded(st.d.vl) {
                    ep.load(st.d);
                    st.d.psn = (st.d.psn + 1) & 0xFF_FFFF;
                    st.d.payload_seed = st.d.payload_seed.wrapping_add(1);
                    if let Some(l) = st.left.as_mut() {
                        *l -= 1;
                    }
                }
            }
            let o = ep.step();
            if o.pkt.is_some() || o.fc.is_some() || o.pause.is_some() {
                self.to_sw[p].push(now, o);
            }
        }
    }

    /// `n` cycles.
    pub fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }
}
