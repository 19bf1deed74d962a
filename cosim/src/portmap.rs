//! The port map of `ibcycle rtl-check`: how a user's switch RTL's top-level ports carry the golden model's
//! interface (docs/rtl-check.md has the format and a full example). A TOML file:
//!
//! - the RTL: `top`, `sources` (relative to the map's directory), `include_dirs`, `defines`, `parameters`;
//! - `clock`, `reset` (`name`, `active_low`, `cycles`), `ports` (switch ports), `beat_bytes` (8 to 64),
//!   `byte_order` (`lsb_first`: byte 0 of a beat in bits 7:0; or `msb_first`);
//! - per switch port the streams `[rx]` (into the switch) and `[tx]` (out of it): `data`, `valid`, `sop`,
//!   `eop` and either `bytes` (valid bytes of the last beat, 0 meaning a whole beat, or a count up to
//!   `beat_bytes`) or `keep` (a byte enable per byte), optional `ready` (`[rx]`: the RTL's back-pressure;
//!   `[tx]`: driven 1);
//! - `link`: what every port carries, `"ib"` (default: IB packets LRH through VCRC, credit flow control)
//!   or `"roce_v2"` (Ethernet frames as the golden model frames them, PFC);
//! - IB: flow-control packets `[fc_rx]` / `[fc_tx]`: `valid` and a 32-bit `data` (bytes 0 to 3 of the IBA
//!   flow-control packet, byte 0 in bits 31:24: Op, FCTBS, VL, FCCL; the LPCRC is the link layer's);
//! - RoCEv2: PFC pause frames `[pause_rx]` / `[pause_tx]` as a side port, as a MAC hands them to a switch
//!   core: `valid` (a frame this cycle), `enable` (its 8-bit class-enable vector, priority i in bit i) and
//!   `quanta` (128 bits, priority i's pause time in bits 16i+15:16i; 0 resumes);
//! - `config`: `"ib_switch"` (held configuration ports and table write port named as `hdl/ib_switch.sv`'s,
//!   loaded from the golden configuration; with `config_prefix` before each name) or `"none"`;
//! - `ties`: other inputs held at a constant;
//! - optional `[taps]`: `mark_state` (a bit per (port, VL), for reports); `fill` (a port-VL's queue fill,
//!   read every cycle and reported beside the golden model's VoQ fill: a template in `{p}` and `{v}` for
//!   VLs 0 to `vls - 1`, in the `fill_unit` the map states, `"blocks"` of 64 bytes or `"bytes"`);
//! - optional `[bounds]` and `[bench]`: the scoreboard's tolerances and the link partners' settings.
//!
//! A signal is a port name, optionally with a bit (`name[3]`) or a slice (`name[31:0]`); in the per-port
//! tables the text `{p}`, `{p*K}`, `{p+C}` or `{p*K+C}` is replaced by the switch port's number (so
//! `"rx_data[{p*256+255}:{p*256}]"` names lane p of a packed vector; `taps.fill` may add `v` or `v*K` for the
//! VL: `{p*32+v*16+15}`). Errors name the file, line and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::scoreboard::bench::BenchConfig;
use crate::scoreboard::{Bounds, LinkKind};

/// A port map that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {key}: {msg}")]
pub struct PortMapError {
    /// The map file.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// The key concerned (dotted path).
    pub key: String,
    /// What is wrong.
    pub msg: String,
}

/// Byte order of a beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByteOrder {
    /// Byte 0 of the beat in bits 7:0.
    #[default]
    LsbFirst,
    /// Byte 0 of the beat in the top bits.
    MsbFirst,
}

/// How the RTL is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigStyle {
    /// Only `parameters` and `ties`.
    #[default]
    None,
    /// `hdl/ib_switch.sv`'s held configuration ports and table write port, from the golden configuration.
    IbSwitch,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReset {
    name: Spanned<String>,
    #[serde(default = "yes")]
    active_low: bool,
    #[serde(default = "reset_cycles")]
    cycles: u64,
}

fn yes() -> bool {
    true
}
fn reset_cycles() -> u64 {
    16
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStream {
    data: Spanned<String>,
    valid: Spanned<String>,
    sop: Spanned<String>,
    eop: Spanned<String>,
    bytes: Option<Spanned<String>>,
    keep: Option<Spanned<String>>,
    ready: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFc {
    valid: Spanned<String>,
    data: Spanned<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPause {
    valid: Spanned<String>,
    enable: Spanned<String>,
    quanta: Spanned<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTaps {
    mark_state: Option<Spanned<String>>,
    fill: Option<Spanned<String>>,
    fill_unit: Option<Spanned<String>>,
    vls: Option<Spanned<usize>>,
}

/// The unit of the `fill` tap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FillUnit {
    /// 64-byte blocks (the golden model's unit and the credit unit).
    #[default]
    Blocks,
    /// Bytes (reported also as 64-byte blocks, rounded up, beside the golden model's fill).
    Bytes,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMap {
    top: Spanned<String>,
    sources: Spanned<Vec<String>>,
    #[serde(default)]
    include_dirs: Vec<String>,
    #[serde(default)]
    defines: BTreeMap<String, String>,
    #[serde(default)]
    parameters: BTreeMap<String, toml::Value>,
    clock: Spanned<String>,
    reset: RawReset,
    ports: Spanned<usize>,
    beat_bytes: Spanned<u32>,
    #[serde(default)]
    byte_order: ByteOrder,
    link: Option<Spanned<String>>,
    rx: RawStream,
    tx: RawStream,
    fc_rx: Option<RawFc>,
    fc_tx: Option<RawFc>,
    pause_rx: Option<RawPause>,
    pause_tx: Option<RawPause>,
    #[serde(default)]
    config: ConfigStyle,
    #[serde(default)]
    config_prefix: String,
    #[serde(default)]
    ties: BTreeMap<String, Spanned<u64>>,
    #[serde(default)]
    taps: RawTaps,
    #[serde(default)]
    bounds: Bounds,
    #[serde(default)]
    bench: BenchConfig,
}

/// A signal: bits `lo ..= hi` of top-level port `port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sig {
    /// Top-level port name.
    pub port: String,
    /// Lowest bit.
    pub lo: u32,
    /// Highest bit; `None`: the whole port.
    pub hi: Option<u32>,
    /// Line in the map (for errors found later, against the RTL's port list).
    pub line: usize,
    /// Key in the map.
    pub key: String,
}

impl Sig {
    /// Width in bits, given the port's width.
    pub fn width(&self, port_width: u32) -> u32 {
        match self.hi {
            Some(h) => h - self.lo + 1,
            None => port_width,
        }
    }
}

/// A byte stream of one switch port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// Beat data.
    pub data: Sig,
    /// Beat valid.
    pub valid: Sig,
    /// First beat of a packet.
    pub sop: Sig,
    /// Last beat of a packet.
    pub eop: Sig,
    /// Valid bytes of the last beat (0: all).
    pub bytes: Option<Sig>,
    /// Byte enables.
    pub keep: Option<Sig>,
    /// Back-pressure (rx: from the RTL; tx: driven 1).
    pub ready: Option<Sig>,
}

/// Flow-control packets of one switch port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FcPort {
    /// A flow-control packet this cycle.
    pub valid: Sig,
    /// Its bytes 0 to 3 (byte 0 in bits 31:24).
    pub data: Sig,
}

/// PFC pause frames of one switch port (a RoCEv2 port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PausePort {
    /// A pause frame this cycle.
    pub valid: Sig,
    /// Its class-enable vector (priority i in bit i), 8 bits.
    pub enable: Sig,
    /// Its pause times, priority i in bits 16i+15:16i, 128 bits.
    pub quanta: Sig,
}

/// One switch port's signals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSignals {
    /// Into the switch.
    pub rx: Stream,
    /// Out of the switch.
    pub tx: Stream,
    /// IB: flow-control packets into the switch.
    pub fc_rx: Option<FcPort>,
    /// IB: flow-control packets out of it.
    pub fc_tx: Option<FcPort>,
    /// RoCEv2: pause frames into the switch.
    pub pause_rx: Option<PausePort>,
    /// RoCEv2: pause frames out of it.
    pub pause_tx: Option<PausePort>,
    /// Marking state tap, a bit per VL (lowest VL in the lowest bit).
    pub mark_state: Option<Sig>,
    /// Fill tap per VL (VL 0 first), in [`PortMap::fill_unit`]; empty when not mapped.
    pub fill: Vec<Sig>,
}

/// A port map, read and expanded per switch port.
#[derive(Debug, Clone)]
pub struct PortMap {
    /// The map file.
    pub file: PathBuf,
    /// Top module.
    pub top: String,
    /// Source files (resolved against the map's directory).
    pub sources: Vec<PathBuf>,
    /// Include directories (resolved).
    pub include_dirs: Vec<PathBuf>,
    /// `-D` defines.
    pub defines: BTreeMap<String, String>,
    /// `-G` parameters (their text).
    pub parameters: BTreeMap<String, String>,
    /// Clock input.
    pub clock: Sig,
    /// Reset input.
    pub reset: Sig,
    /// Reset asserted low.
    pub reset_active_low: bool,
    /// Cycles of reset at the start.
    pub reset_cycles: u64,
    /// Bytes per beat.
    pub beat_bytes: u32,
    /// Byte order of a beat.
    pub byte_order: ByteOrder,
    /// What every port carries.
    pub link: LinkKind,
    /// Per switch port.
    pub ports: Vec<PortSignals>,
    /// Configuration style.
    pub config: ConfigStyle,
    /// Prefix of the configuration ports' names.
    pub config_prefix: String,
    /// Inputs tied to constants.
    pub ties: Vec<(Sig, u64)>,
    /// Scoreboard tolerances.
    pub bounds: Bounds,
    /// Link partner settings.
    pub bench: BenchConfig,
    /// Unit of the `fill` taps.
    pub fill_unit: FillUnit,
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Replaces `{p}`, `{p*K}`, `{p+C}`, `{p*K+C}` by their value for port `p`; with `v` (the `fill` tap's VL),
/// the sum may also hold a term `v` or `v*K` (`{p*32+v*16+15}`).
fn expand(s: &str, p: usize, v: Option<usize>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let j = rest[i..]
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in {s:?}"))?
            + i;
        let e: String = rest[i + 1..j]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let bad = || {
            if v.is_some() {
                format!("{{{e}}} in {s:?}: expected a sum of p or p*K, v or v*K, and a constant C")
            } else {
                format!("{{{e}}} in {s:?}: expected {{p}}, {{p*K}}, {{p+C}} or {{p*K+C}}")
            }
        };
        // Terms: the port (first, and only there), the VL (taps.fill only), a constant (last).
        let terms: Vec<&str> = e.split('+').collect();
        let mut val = 0usize;
        let (mut seen_p, mut seen_v, mut seen_c) = (false, false, false);
        for (n, t) in terms.iter().enumerate() {
            let (var, k) = match t.split_once('*') {
                Some((a, k)) => (a, Some(k.parse::<usize>().map_err(|_| bad())?)),
                None => (*t, None),
            };
            let x = match var {
                "p" if n == 0 => {
                    seen_p = true;
                    p
                }
                "v" if v.is_some() && !seen_v && !seen_c => {
                    seen_v = true;
                    v.unwrap_or(0)
                }
                c if k.is_none() && n > 0 && !seen_c => {
                    seen_c = true;
                    c.parse::<usize>().map_err(|_| bad())?
                }
                _ => return Err(bad()),
            };
            let term = x.checked_mul(k.unwrap_or(1)).ok_or_else(bad)?;
            val = val.checked_add(term).ok_or_else(bad)?;
        }
        if !seen_p {
            return Err(bad());
        }
        out.push_str(&val.to_string());
        rest = &rest[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Parses `name`, `name[b]` or `name[hi:lo]`.
fn parse_sig(s: &str, line: usize, key: &str) -> Result<Sig, String> {
    let s = s.trim();
    let (name, range) = match s.find('[') {
        Some(i) => {
            let r = s[i + 1..]
                .strip_suffix(']')
                .ok_or_else(|| format!("{s:?}: a range ends with ']'"))?;
            (&s[..i], Some(r))
        }
        None => (s, None),
    };
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!("{s:?} is not a port name (letters, digits, '_')"));
    }
    let num = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("{s:?}: {t:?} is not a bit number"))
    };
    let (lo, hi) = match range {
        None => (0, None),
        Some(r) => match r.split_once(':') {
            Some((h, l)) => {
                let (h, l) = (num(h)?, num(l)?);
                if h < l {
                    return Err(format!("{s:?}: write slices high bit first ([hi:lo])"));
                }
                (l, Some(h))
            }
            None => {
                let b = num(r)?;
                (b, Some(b))
            }
        },
    };
    Ok(Sig {
        port: name.to_string(),
        lo,
        hi,
        line,
        key: key.to_string(),
    })
}

impl PortMap {
    /// Reads and expands the map at `path`.
    pub fn load(path: &Path) -> Result<Self, PortMapError> {
        let text = std::fs::read_to_string(path).map_err(|e| PortMapError {
            file: path.display().to_string(),
            line: 0,
            key: "(file)".into(),
            msg: e.to_string(),
        })?;
        Self::parse(path, &text)
    }

    /// Parses `text`, the contents of the map at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, PortMapError> {
        let file = path.display().to_string();
        let err = |line: usize, key: &str, msg: String| PortMapError {
            file: file.clone(),
            line,
            key: key.to_string(),
            msg,
        };
        let raw: RawMap = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of(text, s.start));
            // The message's first line is toml's own position header; the key is in the text.
            let msg = e.message().to_string();
            let key = msg
                .split('`')
                .nth(1)
                .map_or_else(|| "(syntax)".to_string(), |k| k.to_string());
            err(line, &key, msg)
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let at = |s: &std::ops::Range<usize>| line_of(text, s.start);
        let sig =
            |sp: &Spanned<String>, key: &str, p: Option<usize>| -> Result<Sig, PortMapError> {
                let line = at(&sp.span());
                let s = match p {
                    Some(p) => expand(sp.get_ref(), p, None).map_err(|m| err(line, key, m))?,
                    None => sp.get_ref().clone(),
                };
                parse_sig(&s, line, key).map_err(|m| err(line, key, m))
            };
        let bb = *raw.beat_bytes.get_ref();
        if !(8..=64).contains(&bb) {
            return Err(err(
                at(&raw.beat_bytes.span()),
                "beat_bytes",
                format!("{bb}: a beat is 8 to 64 bytes"),
            ));
        }
        let n = *raw.ports.get_ref();
        if !(2..=64).contains(&n) {
            return Err(err(
                at(&raw.ports.span()),
                "ports",
                format!("{n}: a switch has 2 to 64 ports"),
            ));
        }
        if raw.sources.get_ref().is_empty() {
            return Err(err(
                at(&raw.sources.span()),
                "sources",
                "no source file".into(),
            ));
        }
        let stream = |s: &RawStream, name: &str, p: usize| -> Result<Stream, PortMapError> {
            let k = |f: &str| format!("{name}.{f}");
            if s.bytes.is_some() == s.keep.is_some() {
                return Err(err(
                    at(&s.data.span()),
                    name,
                    "give exactly one of `bytes` (a count) and `keep` (byte enables)".into(),
                ));
            }
            Ok(Stream {
                data: sig(&s.data, &k("data"), Some(p))?,
                valid: sig(&s.valid, &k("valid"), Some(p))?,
                sop: sig(&s.sop, &k("sop"), Some(p))?,
                eop: sig(&s.eop, &k("eop"), Some(p))?,
                bytes: s
                    .bytes
                    .as_ref()
                    .map(|x| sig(x, &k("bytes"), Some(p)))
                    .transpose()?,
                keep: s
                    .keep
                    .as_ref()
                    .map(|x| sig(x, &k("keep"), Some(p)))
                    .transpose()?,
                ready: s
                    .ready
                    .as_ref()
                    .map(|x| sig(x, &k("ready"), Some(p)))
                    .transpose()?,
            })
        };
        let fc = |f: &RawFc, name: &str, p: usize| -> Result<FcPort, PortMapError> {
            Ok(FcPort {
                valid: sig(&f.valid, &format!("{name}.valid"), Some(p))?,
                data: sig(&f.data, &format!("{name}.data"), Some(p))?,
            })
        };
        let pause = |f: &RawPause, name: &str, p: usize| -> Result<PausePort, PortMapError> {
            Ok(PausePort {
                valid: sig(&f.valid, &format!("{name}.valid"), Some(p))?,
                enable: sig(&f.enable, &format!("{name}.enable"), Some(p))?,
                quanta: sig(&f.quanta, &format!("{name}.quanta"), Some(p))?,
            })
        };
        // The link kind decides the flow-control side ports: IB's flow-control packets, or PFC pause frames.
        let link = match &raw.link {
            None => LinkKind::Ib,
            Some(l) => match l.get_ref().as_str() {
                "ib" => LinkKind::Ib,
                "roce_v2" => LinkKind::RoceV2,
                x => {
                    return Err(err(
                        at(&l.span()),
                        "link",
                        format!("{x:?}: a port carries \"ib\" (InfiniBand) or \"roce_v2\" (Ethernet frames with PFC)"),
                    ))
                }
            },
        };
        let link_line = raw.link.as_ref().map_or(0, |l| at(&l.span()));
        let (need, extra) = match link {
            LinkKind::Ib => (
                [
                    ("fc_rx", raw.fc_rx.is_some()),
                    ("fc_tx", raw.fc_tx.is_some()),
                ],
                [
                    ("pause_rx", raw.pause_rx.is_some()),
                    ("pause_tx", raw.pause_tx.is_some()),
                ],
            ),
            LinkKind::RoceV2 => (
                [
                    ("pause_rx", raw.pause_rx.is_some()),
                    ("pause_tx", raw.pause_tx.is_some()),
                ],
                [
                    ("fc_rx", raw.fc_rx.is_some()),
                    ("fc_tx", raw.fc_tx.is_some()),
                ],
            ),
        };
        let kind_name = match link {
            LinkKind::Ib => "\"ib\"",
            LinkKind::RoceV2 => "\"roce_v2\"",
        };
        if let Some((k, _)) = need.iter().find(|(_, given)| !given) {
            return Err(err(
                link_line,
                k,
                format!("missing: a map with link = {kind_name} maps [{k}]"),
            ));
        }
        if let Some((k, _)) = extra.iter().find(|(_, given)| *given) {
            return Err(err(
                link_line,
                k,
                format!("a map with link = {kind_name} has no [{k}] (the other link kind's flow control)"),
            ));
        }
        // The fill tap: a template per (port, VL) over `vls` VLs, in the unit the map states.
        let fill_unit = match &raw.taps.fill_unit {
            None => FillUnit::Blocks,
            Some(u) => match u.get_ref().as_str() {
                "blocks" => FillUnit::Blocks,
                "bytes" => FillUnit::Bytes,
                x => {
                    return Err(err(
                        at(&u.span()),
                        "taps.fill_unit",
                        format!("{x:?}: the unit is \"blocks\" (64 bytes) or \"bytes\""),
                    ))
                }
            },
        };
        let fill_vls = match (&raw.taps.fill, &raw.taps.vls) {
            (None, None) => 0,
            (Some(f), None) => {
                return Err(err(
                    at(&f.span()),
                    "taps.fill",
                    "give `vls`, the VLs the fill tap has per port".into(),
                ))
            }
            (None, Some(v)) => {
                return Err(err(
                    at(&v.span()),
                    "taps.vls",
                    "`vls` counts the VLs of the `fill` tap, which is not given".into(),
                ))
            }
            (Some(_), Some(v)) => {
                let x = *v.get_ref();
                if !(1..=15).contains(&x) {
                    return Err(err(
                        at(&v.span()),
                        "taps.vls",
                        format!("{x}: a port has 1 to 15 data VLs"),
                    ));
                }
                x
            }
        };
        let fill_sig = |p: usize, vl: usize| -> Result<Sig, PortMapError> {
            let f = raw.taps.fill.as_ref().expect("fill_vls > 0");
            let line = at(&f.span());
            let s = expand(f.get_ref(), p, Some(vl)).map_err(|m| err(line, "taps.fill", m))?;
            parse_sig(&s, line, "taps.fill").map_err(|m| err(line, "taps.fill", m))
        };
        let mut ports = Vec::with_capacity(n);
        for p in 0..n {
            ports.push(PortSignals {
                rx: stream(&raw.rx, "rx", p)?,
                tx: stream(&raw.tx, "tx", p)?,
                fc_rx: raw.fc_rx.as_ref().map(|f| fc(f, "fc_rx", p)).transpose()?,
                fc_tx: raw.fc_tx.as_ref().map(|f| fc(f, "fc_tx", p)).transpose()?,
                pause_rx: raw
                    .pause_rx
                    .as_ref()
                    .map(|f| pause(f, "pause_rx", p))
                    .transpose()?,
                pause_tx: raw
                    .pause_tx
                    .as_ref()
                    .map(|f| pause(f, "pause_tx", p))
                    .transpose()?,
                mark_state: raw
                    .taps
                    .mark_state
                    .as_ref()
                    .map(|x| sig(x, "taps.mark_state", Some(p)))
                    .transpose()?,
                fill: (0..fill_vls)
                    .map(|v| fill_sig(p, v))
                    .collect::<Result<_, _>>()?,
            });
        }
        let mut ties = Vec::new();
        for (k, v) in &raw.ties {
            let line = at(&v.span());
            let s = parse_sig(k, line, &format!("ties.{k}")).map_err(|m| err(line, k, m))?;
            ties.push((s, *v.get_ref()));
        }
        let parameters = raw
            .parameters
            .iter()
            .map(|(k, v)| {
                let t = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Boolean(b) => u8::from(*b).to_string(),
                    other => {
                        return Err(err(
                            0,
                            &format!("parameters.{k}"),
                            format!("{other}: a parameter is an integer, boolean or string"),
                        ))
                    }
                };
                Ok((k.clone(), t))
            })
            .collect::<Result<_, _>>()?;
        Ok(PortMap {
            file: path.to_path_buf(),
            top: raw.top.get_ref().clone(),
            sources: raw.sources.get_ref().iter().map(|s| dir.join(s)).collect(),
            include_dirs: raw.include_dirs.iter().map(|s| dir.join(s)).collect(),
            defines: raw.defines,
            parameters,
            clock: sig(&raw.clock, "clock", None)?,
            reset: sig(&raw.reset.name, "reset.name", None)?,
            reset_active_low: raw.reset.active_low,
            reset_cycles: raw.reset.cycles,
            beat_bytes: bb,
            byte_order: raw.byte_order,
            link,
            ports,
            config: raw.config,
            config_prefix: raw.config_prefix,
            ties,
            bounds: raw.bounds,
            bench: raw.bench,
            fill_unit,
        })
    }

    /// Checks every signal against the RTL's top-level ports (`(name, width, is_input)`): the port exists,
    /// has the direction the map needs, the slice fits, and the widths are the interface's.
    pub fn check_ports(&self, rtl: &[(String, u32, bool)]) -> Result<(), PortMapError> {
        let file = self.file.display().to_string();
        let find = |s: &Sig, input: bool, want: Option<u32>| -> Result<(), PortMapError> {
            let e = |msg: String| PortMapError {
                file: file.clone(),
                line: s.line,
                key: s.key.clone(),
                msg,
            };
            let Some((_, w, is_in)) = rtl.iter().find(|(n, ..)| *n == s.port) else {
                let known: Vec<&str> = rtl.iter().map(|(n, ..)| n.as_str()).collect();
                return Err(e(format!(
                    "no port {:?} on the top module (ports: {})",
                    s.port,
                    known.join(", ")
                )));
            };
            if *is_in != input {
                return Err(e(format!(
                    "port {:?} is an {}, the map needs an {}",
                    s.port,
                    if *is_in { "input" } else { "output" },
                    if input { "input" } else { "output" }
                )));
            }
            if s.hi.is_some_and(|h| h >= *w) {
                return Err(e(format!(
                    "bits {}:{} of {:?}, which has {w}",
                    s.hi.unwrap(),
                    s.lo,
                    s.port
                )));
            }
            let got = s.width(*w);
            if let Some(want) = want {
                if got != want {
                    return Err(e(format!(
                        "{:?} gives {got} bits, the map needs {want}",
                        s.port
                    )));
                }
            }
            Ok(())
        };
        let bb = self.beat_bytes;
        find(&self.clock, true, Some(1))?;
        find(&self.reset, true, Some(1))?;
        for ps in &self.ports {
            for (st, input) in [(&ps.rx, true), (&ps.tx, false)] {
                find(&st.data, input, Some(bb * 8))?;
                find(&st.valid, input, Some(1))?;
                find(&st.sop, input, Some(1))?;
                find(&st.eop, input, Some(1))?;
                if let Some(k) = &st.keep {
                    find(k, input, Some(bb))?;
                }
                if let Some(b) = &st.bytes {
                    let w = b.width(rtl.iter().find(|(n, ..)| *n == b.port).map_or(0, |x| x.1));
                    find(b, input, None)?;
                    if (1u64 << w.min(63)) < u64::from(bb) {
                        return Err(PortMapError {
                            file: file.clone(),
                            line: b.line,
                            key: b.key.clone(),
                            msg: format!("{w} bits cannot count {bb} bytes"),
                        });
                    }
                }
                if let Some(r) = &st.ready {
                    find(r, !input, Some(1))?;
                }
            }
            for (f, input) in [(&ps.fc_rx, true), (&ps.fc_tx, false)] {
                if let Some(f) = f {
                    find(&f.valid, input, Some(1))?;
                    find(&f.data, input, Some(32))?;
                }
            }
            for (f, input) in [(&ps.pause_rx, true), (&ps.pause_tx, false)] {
                if let Some(f) = f {
                    find(&f.valid, input, Some(1))?;
                    find(&f.enable, input, Some(8))?;
                    find(&f.quanta, input, Some(128))?;
                }
            }
            // A tap's width: a marking state is a bit per VL (at most 15), a fill at most 32 bits.
            let tap = |t: &Sig, what: &str, max: u32| {
                find(t, false, None)?;
                let w = t.width(rtl.iter().find(|(n, ..)| *n == t.port).map_or(0, |x| x.1));
                if (1..=max).contains(&w) {
                    Ok(())
                } else {
                    Err(PortMapError {
                        file: file.clone(),
                        line: t.line,
                        key: t.key.clone(),
                        msg: format!("{what} of {w} bits: the tap is 1 to {max} bits wide"),
                    })
                }
            };
            if let Some(m) = &ps.mark_state {
                tap(m, "a marking state (a bit per VL)", 15)?;
            }
            for f in &ps.fill {
                tap(f, "a fill", 32)?;
            }
        }
        for (t, _) in &self.ties {
            find(t, true, None)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = r#"
top = "alt_switch"
sources = ["alt_switch.sv"]
clock = "clk"
reset = { name = "rst_n" }
ports = 4
beat_bytes = 16

[rx]
data = "in_data[{p*128+127}:{p*128}]"
valid = "in_valid[{p}]"
sop = "in_sop[{p}]"
eop = "in_eop[{p}]"
bytes = "in_nbytes[{p*5+4}:{p*5}]"

[tx]
data = "out_data[{p*128+127}:{p*128}]"
valid = "out_valid[{p}]"
sop = "out_sop[{p}]"
eop = "out_eop[{p}]"
bytes = "out_nbytes[{p*5+4}:{p*5}]"

[fc_rx]
valid = "lfc_in_valid[{p}]"
data = "lfc_in[{p*32+31}:{p*32}]"

[fc_tx]
valid = "lfc_out_valid[{p}]"
data = "lfc_out[{p*32+31}:{p*32}]"
"#;

    fn rtl() -> Vec<(String, u32, bool)> {
        let mut v = vec![("clk".to_string(), 1, true), ("rst_n".into(), 1, true)];
        for (n, w, i) in [
            ("in_data", 512, true),
            ("in_valid", 4, true),
            ("in_sop", 4, true),
            ("in_eop", 4, true),
            ("in_nbytes", 20, true),
            ("out_data", 512, false),
            ("out_valid", 4, false),
            ("out_sop", 4, false),
            ("out_eop", 4, false),
            ("out_nbytes", 20, false),
            ("lfc_in_valid", 4, true),
            ("lfc_in", 128, true),
            ("lfc_out_valid", 4, false),
            ("lfc_out", 128, false),
        ] {
            v.push((n.to_string(), w, i));
        }
        v
    }

    #[test]
    fn reads_and_expands() {
        let m = PortMap::parse(Path::new("dir/map.toml"), MAP).unwrap();
        assert_eq!(m.ports.len(), 4);
        assert_eq!(m.ports[2].rx.data.lo, 256);
        assert_eq!(m.ports[2].rx.data.hi, Some(383));
        assert_eq!(m.ports[3].fc_tx.as_ref().unwrap().valid.lo, 3);
        assert_eq!(m.link, LinkKind::Ib);
        assert_eq!(m.sources[0], Path::new("dir/alt_switch.sv"));
        assert!(m.reset_active_low);
        m.check_ports(&rtl()).unwrap();
    }

    #[test]
    fn errors_name_file_line_and_key() {
        // Unknown key.
        let t = MAP.replace("beat_bytes = 16", "beat_bytes = 16\nbeat_width = 3");
        let e = PortMap::parse(Path::new("m.toml"), &t).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (8, "beat_width"), "{e}");
        assert!(e.to_string().starts_with("m.toml:8: beat_width:"), "{e}");
        // Out of range.
        let t = MAP.replace("beat_bytes = 16", "beat_bytes = 4");
        let e = PortMap::parse(Path::new("m.toml"), &t).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (7, "beat_bytes"), "{e}");
        // A bad template.
        let t = MAP.replace("in_valid[{p}]", "in_valid[{q}]");
        let e = PortMap::parse(Path::new("m.toml"), &t).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (11, "rx.valid"), "{e}");
        // Both or neither of bytes and keep.
        let t = MAP.replace("bytes = \"in_nbytes[{p*5+4}:{p*5}]\"", "");
        let e = PortMap::parse(Path::new("m.toml"), &t).unwrap_err();
        assert_eq!(e.key, "rx", "{e}");
        // Against the RTL: a missing port, a wrong width, a wrong direction.
        let m = PortMap::parse(Path::new("m.toml"), MAP).unwrap();
        let mut r = rtl();
        r.retain(|x| x.0 != "lfc_out");
        let e = m.check_ports(&r).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (29, "fc_tx.data"), "{e}");
        let mut r = rtl();
        r[2].1 = 256;
        let e = m.check_ports(&r).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (10, "rx.data"), "{e}");
        assert!(e.msg.contains("256"), "{e}");
        let m2 = PortMap::parse(
            Path::new("m.toml"),
            &MAP.replace("in_data[{p*128+127}:{p*128}]", "in_data[{p*64+63}:{p*64}]"),
        )
        .unwrap();
        let e = m2.check_ports(&rtl()).unwrap_err();
        assert!(e.msg.contains("needs 128"), "{e}");
        let mut r = rtl();
        r[3].2 = false;
        let e = m.check_ports(&r).unwrap_err();
        assert!(e.msg.contains("is an output"), "{e}");
    }

    /// A RoCEv2 map: `link = "roce_v2"` with pause side ports instead of flow-control packets; a bad link
    /// value, a missing pause port and the other kind's port are errors naming the file, line and key.
    #[test]
    fn roce_link_and_pause_ports() {
        let fc_at = MAP.find("[fc_rx]").unwrap();
        let pause = "[pause_rx]\nvalid = \"pfc_in_valid[{p}]\"\nenable = \"pfc_in_en[{p*8+7}:{p*8}]\"\nquanta = \"pfc_in_q[{p*128+127}:{p*128}]\"\n\n[pause_tx]\nvalid = \"pfc_out_valid[{p}]\"\nenable = \"pfc_out_en[{p*8+7}:{p*8}]\"\nquanta = \"pfc_out_q[{p*128+127}:{p*128}]\"\n";
        let roce = format!(
            "{}{pause}",
            MAP[..fc_at].replace("beat_bytes = 16", "beat_bytes = 16\nlink = \"roce_v2\"")
        );
        let m = PortMap::parse(Path::new("m.toml"), &roce).unwrap();
        assert_eq!(m.link, LinkKind::RoceV2);
        assert!(m.ports[1].fc_rx.is_none());
        assert_eq!(m.ports[1].pause_tx.as_ref().unwrap().quanta.lo, 128);
        let mut r: Vec<_> = rtl()
            .into_iter()
            .filter(|x| !x.0.starts_with("lfc"))
            .collect();
        for (n, w, i) in [
            ("pfc_in_valid", 4, true),
            ("pfc_in_en", 32, true),
            ("pfc_in_q", 512, true),
            ("pfc_out_valid", 4, false),
            ("pfc_out_en", 32, false),
            ("pfc_out_q", 512, false),
        ] {
            r.push((n.to_string(), w, i));
        }
        m.check_ports(&r).unwrap();
        // A quanta slice of the wrong width.
        let m2 = PortMap::parse(
            Path::new("m.toml"),
            &roce.replace(
                "pfc_out_q[{p*128+127}:{p*128}]",
                "pfc_out_q[{p*128+63}:{p*128}]",
            ),
        )
        .unwrap();
        let e = m2.check_ports(&r).unwrap_err();
        assert_eq!(e.key, "pause_tx.quanta", "{e}");
        assert!(e.msg.contains("needs 128"), "{e}");
        // A bad link value.
        let e = PortMap::parse(
            Path::new("m.toml"),
            &roce.replace("\"roce_v2\"", "\"rocev2\""),
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (8, "link"), "{e}");
        assert!(
            e.to_string().starts_with("m.toml:8: link: \"rocev2\""),
            "{e}"
        );
        // RoCEv2 without its pause ports; IB flow control in a RoCEv2 map; pause ports in an IB map.
        let e = PortMap::parse(
            Path::new("m.toml"),
            &roce[..roce.find("[pause_rx]").unwrap()],
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (8, "pause_rx"), "{e}");
        let e =
            PortMap::parse(Path::new("m.toml"), &format!("{roce}\n{}", &MAP[fc_at..])).unwrap_err();
        assert_eq!(e.key, "fc_rx", "{e}");
        let e = PortMap::parse(Path::new("m.toml"), &format!("{MAP}\n{pause}")).unwrap_err();
        assert_eq!(e.key, "pause_rx", "{e}");
    }

    /// The fill tap: a template in p and v, per VL, in the unit the map states; its mistakes name the file,
    /// line and key.
    #[test]
    fn fill_tap() {
        let taps = "\n[taps]\nfill = \"out_fill[{p*32+v*16+15}:{p*32+v*16}]\"\nfill_unit = \"bytes\"\nvls = 2\n";
        let mut r = rtl();
        r.push(("out_fill".into(), 128, false));
        let m = PortMap::parse(Path::new("m.toml"), &format!("{MAP}{taps}")).unwrap();
        assert_eq!(m.fill_unit, FillUnit::Bytes);
        assert_eq!(m.ports[3].fill.len(), 2);
        assert_eq!(
            (m.ports[3].fill[1].hi, m.ports[3].fill[1].lo),
            (Some(127), 112)
        );
        assert_eq!(m.ports[0].fill[0].key, "taps.fill");
        m.check_ports(&r).unwrap();
        // Lines of the [taps] table: fill 32, fill_unit 33, vls 34.
        let bad = |from: &str, to: &str| {
            PortMap::parse(
                Path::new("m.toml"),
                &format!("{MAP}{}", taps.replace(from, to)),
            )
        };
        // A bad template: an unknown variable, v before p, a product of two variables.
        for t in ["{p*32+w*16}", "{v*16+p*32}", "{p*v}"] {
            let e = bad("{p*32+v*16}", t).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (32, "taps.fill"), "{t}: {e}");
            assert!(e.to_string().starts_with("m.toml:32: taps.fill:"), "{e}");
        }
        // `{v}` is the fill tap's alone.
        let e = PortMap::parse(
            Path::new("m.toml"),
            &MAP.replace("in_valid[{p}]", "in_valid[{p+v}]"),
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (11, "rx.valid"), "{e}");
        // A unit other than blocks or bytes; no VL count; a VL count out of range.
        let e = bad("\"bytes\"", "\"words\"").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (33, "taps.fill_unit"), "{e}");
        let e = bad("vls = 2\n", "").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (32, "taps.fill"), "{e}");
        let e = bad("vls = 2", "vls = 16").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (34, "taps.vls"), "{e}");
        // Against the RTL: wider than 32 bits, an input, a slice beyond the port.
        let m = bad("{p*32+v*16+15}", "{p*32+v*16+47}").unwrap();
        let mut r2 = rtl();
        r2.push(("out_fill".into(), 256, false));
        let e = m.check_ports(&r2).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (32, "taps.fill"), "{e}");
        assert!(e.msg.contains("48 bits"), "{e}");
        let mut r3 = rtl();
        r3.push(("out_fill".into(), 128, true));
        let e = PortMap::parse(Path::new("m.toml"), &format!("{MAP}{taps}"))
            .unwrap()
            .check_ports(&r3)
            .unwrap_err();
        assert!(e.msg.contains("is an input"), "{e}");
        let mut r4 = rtl();
        r4.push(("out_fill".into(), 64, false));
        let e = PortMap::parse(Path::new("m.toml"), &format!("{MAP}{taps}"))
            .unwrap()
            .check_ports(&r4)
            .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (32, "taps.fill"), "{e}");
    }
}
