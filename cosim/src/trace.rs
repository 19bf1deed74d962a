//! Port traces: the inputs of one block, cycle by cycle, as a small text file, so stimulus recorded elsewhere
//! (a fabric run, a failing random run) can be replayed into the co-simulation.
//!
//! Format (version 1), one record per line, fields separated by commas, no spaces:
//!
//! ```text
//! # ibcycle port trace v1            <- lines starting with '#' are comments, blank lines are ignored
//! block,credit_rx                    <- the block (module) name
//! config,buf_blocks_i=300,fc_interval_i=50,fc_on_change_i=0,fccl_cap_i=2048
//! cycle,rst_ni,blk_rx_i,fc_valid_i,fc_fctbs_i,blk_free_i
//! 0,0,0,0,0x0,0
//! 1,1,5,0,0x0,3
//! ```
//!
//! - `config` gives every held (configuration) port of the block, `name=value`; a table port is one value, as
//!   wide as the port (e.g. `cct_i=0x...` with up to 512 hex digits for 2,048 bits).
//! - The column line is `cycle` followed by the block's stimulus input ports in port-table order.
//! - Each data line is the cycle number (0, 1, 2, ... consecutive) and one value per port, decimal or `0x` hex;
//!   a value wider than its port is an error (the RTL would silently drop the bits). Ports of any width up to
//!   2,048 bits are written in hex ([`Wide`]).

use crate::blocks::Block;
use crate::ports::{Ports, Wide};
use crate::table::{module, Dir};
use std::io::Write;

/// A malformed port trace: the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("port trace line {line}: {msg}")]
pub struct TraceError {
    /// 1-based line number (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

fn err(line: usize, msg: impl Into<String>) -> TraceError {
    TraceError {
        line,
        msg: msg.into(),
    }
}

/// A parsed port trace.
#[derive(Debug, Clone)]
pub struct PortTrace<B: Block> {
    /// The configuration of the block.
    pub config: B::Config,
    /// Inputs, one per cycle from cycle 0.
    pub inputs: Vec<B::In>,
}

/// Writes `inputs` of block `B` configured with `cfg` as a port trace.
pub fn write<B: Block>(
    mut w: impl Write,
    cfg: &B::Config,
    inputs: &[B::In],
) -> std::io::Result<()> {
    writeln!(w, "# ibcycle port trace v1")?;
    writeln!(w, "block,{}", B::NAME)?;
    let cfg_fields: Vec<String> = B::config_ports(cfg)
        .iter()
        .map(|(k, v)| format!("{k}=0x{v:x}"))
        .collect();
    writeln!(w, "config,{}", cfg_fields.join(","))?;
    writeln!(w, "cycle,{}", <B::In as Ports>::NAMES.join(","))?;
    let widths = port_widths::<B>();
    let mut line = String::new();
    for (c, i) in inputs.iter().enumerate() {
        use std::fmt::Write as _;
        line.clear();
        let _ = write!(line, "{c}");
        for (k, w) in widths.iter().enumerate() {
            // Values are written at their port width: bits the RTL port cannot carry are not part of the trace.
            let v = i.get(k).masked(*w);
            let _ = if *w > 1 {
                write!(line, ",0x{v:x}")
            } else {
                write!(line, ",{}", v.low_u64())
            };
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// The block name a port trace declares.
pub fn block_name(text: &str) -> Result<String, TraceError> {
    let (n, l) = lines(text)
        .next()
        .ok_or_else(|| err(0, "empty port trace"))?;
    match l.split_once(',') {
        Some(("block", name)) => Ok(name.to_string()),
        _ => Err(err(n, "expected `block,<name>` as the first line")),
    }
}

/// Parses a port trace of block `B`.
pub fn parse<B: Block>(text: &str) -> Result<PortTrace<B>, TraceError> {
    let mut it = lines(text);
    let (n, l) = it.next().ok_or_else(|| err(0, "empty port trace"))?;
    match l.split_once(',') {
        Some(("block", name)) if name == B::NAME => {}
        Some(("block", name)) => {
            return Err(err(
                n,
                format!("trace is for block `{name}`, not `{}`", B::NAME),
            ))
        }
        _ => return Err(err(n, "expected `block,<name>`")),
    }
    let (n, l) = it.next().ok_or_else(|| err(0, "missing `config` line"))?;
    let mut fields = l.split(',');
    if fields.next() != Some("config") {
        return Err(err(n, "expected `config,<port>=<value>,...`"));
    }
    let m = module(B::NAME).ok_or_else(|| err(0, format!("no port table for {}", B::NAME)))?;
    let mut pairs = Vec::new();
    for f in fields.filter(|f| !f.is_empty()) {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| err(n, format!("config field `{f}` is not name=value")))?;
        let port = m
            .ports
            .iter()
            .find(|p| p.name == k && p.dir == Dir::Held)
            .ok_or_else(|| {
                err(
                    n,
                    format!("`{k}` is not a configuration port of {}", B::NAME),
                )
            })?;
        pairs.push((k.to_string(), value(n, k, v, port.width)?));
    }
    let config = B::config_from_ports(&pairs).map_err(|e| err(n, e))?;
    let (n, l) = it.next().ok_or_else(|| err(0, "missing column line"))?;
    let want = format!("cycle,{}", <B::In as Ports>::NAMES.join(","));
    if l != want {
        return Err(err(n, format!("column line must be `{want}`")));
    }
    let widths = port_widths::<B>();
    let mut inputs = Vec::new();
    let mut vals = vec![Wide::ZERO; widths.len()];
    for (n, l) in it {
        let mut f = l.split(',');
        let c = f.next().unwrap_or("");
        if c.parse::<usize>().ok() != Some(inputs.len()) {
            return Err(err(
                n,
                format!("cycle `{c}` where {} was expected", inputs.len()),
            ));
        }
        for (k, w) in widths.iter().enumerate() {
            let name = <B::In as Ports>::NAMES[k];
            let v = f
                .next()
                .ok_or_else(|| err(n, format!("missing value of {name}")))?;
            vals[k] = value(n, name, v, *w)?;
        }
        if f.next().is_some() {
            return Err(err(n, "more values than ports"));
        }
        inputs.push(<B::In as Ports>::from_values(&vals));
    }
    Ok(PortTrace { config, inputs })
}

/// Non-comment, non-blank lines with their 1-based numbers.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn value(line: usize, name: &str, v: &str, width: u32) -> Result<Wide, TraceError> {
    let parsed =
        Wide::parse(v).ok_or_else(|| err(line, format!("{name}: `{v}` is not a number")))?;
    if !parsed.fits(width) {
        return Err(err(
            line,
            format!("{name}: {v} does not fit the port's {width} bits"),
        ));
    }
    Ok(parsed)
}

/// Widths of `B`'s stimulus inputs, from the port table, in `In` field order.
fn port_widths<B: Block>() -> Vec<u32> {
    let m = module(B::NAME);
    <B::In as Ports>::NAMES
        .iter()
        .map(|n| {
            m.and_then(|m| m.ports.iter().find(|p| p.name == *n))
                .map_or(64, |p| p.width)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::credit_rx::CreditRxBlock;
    use crate::blocks::credit_tx::CreditTxBlock;

    #[test]
    fn round_trip_keeps_config_and_inputs_at_port_width() {
        let (cfg, stim) = CreditRxBlock::random(3);
        let inputs: Vec<_> = stim.take(2000).collect();
        let mut buf = Vec::new();
        write::<CreditRxBlock>(&mut buf, &cfg, &inputs).unwrap();
        let t = parse::<CreditRxBlock>(std::str::from_utf8(&buf).unwrap()).unwrap();
        assert_eq!(t.config, cfg);
        assert_eq!(t.inputs.len(), inputs.len());
        // The stimulus puts garbage above the 7-bit ports; the trace keeps only the port's bits.
        for (a, b) in t.inputs.iter().zip(&inputs) {
            assert_eq!(a.blk_rx_i, b.blk_rx_i & 0x7f);
            assert_eq!(a.fc_fctbs_i, b.fc_fctbs_i & 0xfff);
            assert_eq!(a.rst_ni, b.rst_ni);
        }
        assert!(
            inputs.iter().any(|i| i.blk_rx_i > 0x7f),
            "stimulus never exercised the mask"
        );
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let head = "block,credit_tx\nconfig,fccl_reset_i=0\ncycle,rst_ni,fc_valid_i,fc_fccl_i,req_valid_i,req_blocks_i,take_i\n";
        let ok = format!("{head}0,0,0,0,0,0,0\n1,1,1,0xfff,1,66,1\n");
        let t = parse::<CreditTxBlock>(&ok).unwrap();
        assert_eq!(t.inputs[1].fc_fccl_i, 0xfff);
        assert_eq!(t.inputs[1].req_blocks_i, 66);
        let e = parse::<CreditTxBlock>(&format!("{head}0,0,0,0x1000,0,0,0\n")).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(
            e.msg.contains("fc_fccl_i") && e.msg.contains("12 bits"),
            "{e}"
        );
        let e = parse::<CreditTxBlock>(&format!("{head}1,0,0,0,0,0,0\n")).unwrap_err();
        assert!(e.msg.contains("cycle `1` where 0"), "{e}");
        let e = parse::<CreditTxBlock>(&format!("{head}0,0,0,zz,0,0,0\n")).unwrap_err();
        assert!(e.msg.contains("not a number"), "{e}");
        let e = parse::<CreditTxBlock>("block,credit_rx\n").unwrap_err();
        assert!(e.msg.contains("not `credit_tx`"), "{e}");
        let e = parse::<CreditTxBlock>("block,credit_tx\nconfig,\ncycle\n").unwrap_err();
        assert!(e.msg.contains("lacks fccl_reset_i"), "{e}");
        assert_eq!(block_name("# c\n\nblock,credit_rx\n").unwrap(), "credit_rx");
    }
}
