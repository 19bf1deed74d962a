//! Switch port traces: what a fabric hands one `switch_asic::Switch` each cycle, with the switch's own
//! configuration, so `ibcycle cosim ib_switch --replay FILE` can drive the switch RTL (`hdl/ib_switch.sv`)
//! and the Rust `Switch` with exactly the traffic of a real scenario ([`crate::switch`]).
//!
//! Format (version 2), one record per line, fields separated by single spaces:
//!
//! ```text
//! ibcycle switch trace v2          <- first line, exactly (v1 is read too: see below)
//! # switch S1 of gran-s1-cc-on     <- lines starting with '#' are comments, blank lines are ignored
//! config {"ports":[...],...}       <- the SwitchConfig as JSON (serde), on one line
//! cycles 40000                     <- cycles the trace covers (0 .. cycles-1); before any event line
//! 120 p 3 5 1 2 0 0 0 0 0 100 1 7 2048 2106 7 42 3735928559   <- a packet head (Switch::rx_packet)
//! 131 f 3 0 17 530                 <- a flow-control packet handed in (Switch::rx_fc)
//! ```
//!
//! - A packet line: `cycle p port offset dlid slid sl vl fecn becn ecn opcode dest_qp psn payload_len
//!   wire_len payload_seed tag icrc` (the `PacketStart`: its sub-cycle tick offset, then the descriptor's
//!   fields in declaration order; booleans as 0/1). Version 1 had no `icrc` (read as 0): the ICRC its source
//!   sealed the packet with, which a switch carries untouched.
//! - A flow-control line: `cycle f port vl fctbs fccl`.
//! - Event lines are in cycle order (equal cycles in any order); every cycle is below `cycles`. Values are
//!   decimal. Every hand-in the fabric made is there, in the order it made them (a refused one too: the
//!   replay refuses it the same way).

use std::io::Write;

use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart};
use switch_asic::SwitchConfig;

/// The first line of a trace as written (version 2).
pub const HEADER: &str = "ibcycle switch trace v2";

/// The first line of a version-1 trace (packet lines without the ICRC), still read.
pub const HEADER_V1: &str = "ibcycle switch trace v1";

/// A malformed switch trace: the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("switch trace line {line}: {msg}")]
pub struct SwitchTraceError {
    /// 1-based line number (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

fn err(line: usize, msg: impl Into<String>) -> SwitchTraceError {
    SwitchTraceError {
        line,
        msg: msg.into(),
    }
}

/// One hand-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandIn {
    /// A packet head (`Switch::rx_packet`).
    Packet(PacketStart),
    /// A flow-control packet (`Switch::rx_fc`).
    Fc(FcPacket),
}

/// One hand-in with its cycle and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Cycle (of the switch, from 0).
    pub cycle: u64,
    /// Port (0-based).
    pub port: usize,
    /// What.
    pub what: HandIn,
}

/// A parsed switch trace.
#[derive(Debug, Clone)]
pub struct SwitchTrace {
    /// The switch's configuration.
    pub config: SwitchConfig,
    /// Cycles covered.
    pub cycles: u64,
    /// Hand-ins, in cycle order.
    pub events: Vec<Event>,
}

impl SwitchTrace {
    /// Writes the trace (`comment` lines first, each prefixed with `# `).
    pub fn write(&self, mut w: impl Write, comment: &[String]) -> std::io::Result<()> {
        writeln!(w, "{HEADER}")?;
        for c in comment {
            writeln!(w, "# {c}")?;
        }
        let cfg = serde_json::to_string(&self.config).map_err(std::io::Error::other)?;
        writeln!(w, "config {cfg}")?;
        writeln!(w, "cycles {}", self.cycles)?;
        for e in &self.events {
            match e.what {
                HandIn::Packet(ps) => {
                    let d = ps.desc;
                    writeln!(
                        w,
                        "{} p {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
                        e.cycle,
                        e.port,
                        ps.offset,
                        d.dlid,
                        d.slid,
                        d.sl,
                        d.vl,
                        u8::from(d.fecn),
                        u8::from(d.becn),
                        d.ecn,
                        d.opcode,
                        d.dest_qp,
                        d.psn,
                        d.payload_len,
                        d.wire_len,
                        d.payload_seed,
                        d.tag,
                        d.icrc
                    )?;
                }
                HandIn::Fc(f) => {
                    writeln!(
                        w,
                        "{} f {} {} {} {}",
                        e.cycle, e.port, f.vl, f.fctbs, f.fccl
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Parses a trace.
    pub fn parse(text: &str) -> Result<Self, SwitchTraceError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let v1 = match lines.next() {
            Some((_, l)) if l.trim_end() == HEADER => false,
            Some((_, l)) if l.trim_end() == HEADER_V1 => true,
            Some((n, l)) => {
                return Err(err(
                    n,
                    format!("expected `{HEADER}`, found `{}`", l.trim_end()),
                ))
            }
            None => return Err(err(0, "empty file")),
        };
        let mut config = None;
        let mut cycles = None;
        let mut events = Vec::new();
        let mut last = 0u64;
        for (n, raw) in lines {
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if let Some(j) = l.strip_prefix("config ") {
                if config.is_some() {
                    return Err(err(n, "a second config line"));
                }
                let c: SwitchConfig =
                    serde_json::from_str(j).map_err(|e| err(n, format!("config: {e}")))?;
                config = Some(c);
                continue;
            }
            if let Some(c) = l.strip_prefix("cycles ") {
                if cycles.is_some() {
                    return Err(err(n, "a second cycles line"));
                }
                cycles = Some(
                    c.trim()
                        .parse::<u64>()
                        .map_err(|e| err(n, format!("cycles: {e}")))?,
                );
                continue;
            }
            let Some(total) = cycles else {
                return Err(err(n, "an event before the cycles line"));
            };
            let f: Vec<&str> = l.split(' ').collect();
            let num = |i: usize, what: &str| -> Result<u64, SwitchTraceError> {
                f.get(i)
                    .ok_or_else(|| err(n, format!("missing {what}")))?
                    .parse::<u64>()
                    .map_err(|e| err(n, format!("{what}: {e}")))
            };
            let fit = |v: u64, max: u64, what: &str| -> Result<u64, SwitchTraceError> {
                if v > max {
                    Err(err(n, format!("{what} {v} is above {max}")))
                } else {
                    Ok(v)
                }
            };
            let cycle = num(0, "cycle")?;
            if cycle >= total {
                return Err(err(n, format!("cycle {cycle} is not below cycles {total}")));
            }
            if cycle < last {
                return Err(err(n, format!("cycle {cycle} after cycle {last}")));
            }
            last = cycle;
            let port = fit(num(2, "port")?, 63, "port")? as usize;
            let (what, want) = match f.get(1).copied() {
                Some("p") => {
                    let b = |i, what| -> Result<bool, SwitchTraceError> {
                        Ok(fit(num(i, what)?, 1, what)? != 0)
                    };
                    let desc = PacketDesc {
                        dlid: fit(num(4, "dlid")?, 0xFFFF, "dlid")? as u16,
                        slid: fit(num(5, "slid")?, 0xFFFF, "slid")? as u16,
                        sl: fit(num(6, "sl")?, 15, "sl")? as u8,
                        vl: fit(num(7, "vl")?, 15, "vl")? as u8,
                        fecn: b(8, "fecn")?,
                        becn: b(9, "becn")?,
                        ecn: fit(num(10, "ecn")?, 3, "ecn")? as u8,
                        opcode: fit(num(11, "opcode")?, 0xFF, "opcode")? as u8,
                        dest_qp: fit(num(12, "dest_qp")?, 0xFF_FFFF, "dest_qp")? as u32,
                        psn: fit(num(13, "psn")?, 0xFF_FFFF, "psn")? as u32,
                        payload_len: fit(num(14, "payload_len")?, 0xFFFF, "payload_len")? as u16,
                        wire_len: fit(num(15, "wire_len")?, 0x1FFF, "wire_len")? as u16,
                        payload_seed: fit(num(16, "payload_seed")?, 0xFFFF_FFFF, "payload_seed")?
                            as u32,
                        tag: fit(num(17, "tag")?, 0xFFFF_FFFF, "tag")? as u32,
                        icrc: if v1 {
                            0
                        } else {
                            fit(num(18, "icrc")?, 0xFFFF_FFFF, "icrc")? as u32
                        },
                    };
                    let offset = fit(num(3, "offset")?, 0xFFFF_FFFF, "offset")? as u32;
                    (
                        HandIn::Packet(PacketStart { desc, offset }),
                        if v1 { 18 } else { 19 },
                    )
                }
                Some("f") => (
                    HandIn::Fc(FcPacket {
                        vl: fit(num(3, "vl")?, 15, "vl")? as u8,
                        fctbs: fit(num(4, "fctbs")?, 0xFFF, "fctbs")? as u16,
                        fccl: fit(num(5, "fccl")?, 0xFFF, "fccl")? as u16,
                    }),
                    6,
                ),
                Some(k) => return Err(err(n, format!("unknown record `{k}` (p or f)"))),
                None => return Err(err(n, "missing record kind")),
            };
            if f.len() != want {
                return Err(err(n, format!("{} fields, expected {want}", f.len())));
            }
            events.push(Event { cycle, port, what });
        }
        let config = config.ok_or_else(|| err(0, "no config line"))?;
        let cycles = cycles.ok_or_else(|| err(0, "no cycles line"))?;
        if let Some(e) = events.iter().find(|e| e.port >= config.ports.len()) {
            return Err(err(
                0,
                format!(
                    "an event on port {} of a {}-port switch (cycle {})",
                    e.port,
                    config.ports.len(),
                    e.cycle
                ),
            ));
        }
        Ok(SwitchTrace {
            config,
            cycles,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switch_asic::{LinkRate, PortConfig};

    fn small() -> SwitchTrace {
        let mut cfg = SwitchConfig::uniform(2, PortConfig::new(LinkRate::new(2, 1).unwrap(), 64));
        cfg.route(1, 1);
        let desc = PacketDesc {
            dlid: 1,
            wire_len: 100,
            tag: 9,
            icrc: 0xdead_beef,
            ..PacketDesc::default()
        };
        SwitchTrace {
            config: cfg,
            cycles: 10,
            events: vec![
                Event {
                    cycle: 2,
                    port: 0,
                    what: HandIn::Packet(PacketStart { desc, offset: 1 }),
                },
                Event {
                    cycle: 5,
                    port: 1,
                    what: HandIn::Fc(FcPacket {
                        vl: 0,
                        fctbs: 3,
                        fccl: 70,
                    }),
                },
            ],
        }
    }

    #[test]
    fn round_trips() {
        let t = small();
        let mut b = Vec::new();
        t.write(&mut b, &["a comment".into()]).unwrap();
        let back = SwitchTrace::parse(std::str::from_utf8(&b).unwrap()).unwrap();
        assert_eq!(back.config, t.config);
        assert_eq!(back.cycles, 10);
        assert_eq!(back.events, t.events);
    }

    #[test]
    fn errors_name_the_line() {
        let t = small();
        let mut b = Vec::new();
        t.write(&mut b, &[]).unwrap();
        let s = String::from_utf8(b).unwrap();
        let e = SwitchTrace::parse(&s.replace("5 f 1 0 3 70", "5 f 1 0 3")).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        let e = SwitchTrace::parse(&s.replace("5 f 1 0 3 70", "11 f 1 0 3 70")).unwrap_err();
        assert!(e.to_string().contains("not below cycles"), "{e}");
        let e = SwitchTrace::parse(&s.replace("5 f 1 0 3 70", "5 f 1 0 4096 70")).unwrap_err();
        assert!(e.msg.contains("fctbs 4096"), "{e}");
        let e = SwitchTrace::parse(&s.replace("v2", "v3")).unwrap_err();
        assert_eq!(e.line, 1);
        // A v2 packet line needs the ICRC.
        let e = SwitchTrace::parse(&s.replace(" 3735928559", "")).unwrap_err();
        assert!(e.msg.contains("icrc"), "{e}");
    }

    #[test]
    fn version_1_reads_without_the_icrc() {
        let t = small();
        let mut b = Vec::new();
        t.write(&mut b, &[]).unwrap();
        let v1 = String::from_utf8(b)
            .unwrap()
            .replace(HEADER, HEADER_V1)
            .replace(" 3735928559", "");
        let back = SwitchTrace::parse(&v1).unwrap();
        let want: Vec<Event> = t
            .events
            .iter()
            .map(|e| match e.what {
                HandIn::Packet(mut ps) => {
                    ps.desc.icrc = 0;
                    Event {
                        what: HandIn::Packet(ps),
                        ..*e
                    }
                }
                HandIn::Fc(_) => *e,
            })
            .collect();
        assert_eq!(back.events, want);
        // A v1 packet line with an ICRC has a field too many.
        let with = String::from_utf8({
            let mut b = Vec::new();
            t.write(&mut b, &[]).unwrap();
            b
        })
        .unwrap()
        .replace(HEADER, HEADER_V1);
        assert!(SwitchTrace::parse(&with).is_err());
    }
}
