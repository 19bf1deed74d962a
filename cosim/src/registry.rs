//! Blocks by name, for the `ibcycle cosim` command: the list with bug variants, and runs by name.

use crate::table::{Module, MODULES};

/// The blocks with an RTL twin, in table order.
pub fn blocks() -> impl Iterator<Item = &'static Module> {
    MODULES.iter().filter(|m| m.twin)
}

/// One line per block: its name, then its bug variants, separated by spaces (the `--list` output). The
/// switch (`ib_switch`, co-simulated from port traces, not a block with random stimulus) comes last.
pub fn list_lines() -> Vec<String> {
    blocks()
        .chain(MODULES.iter().filter(|m| m.name == "ib_switch"))
        .map(|m| {
            std::iter::once(m.name)
                .chain(m.bugs.iter().copied())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Calls `$f::<Block>()` for the block named `$name`, or returns `UnknownBlock`.
#[cfg(feature = "verilator")]
macro_rules! with_block {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name {
            "credit_tx" => $f::<crate::blocks::credit_tx::CreditTxBlock>($($arg),*),
            "credit_rx" => $f::<crate::blocks::credit_rx::CreditRxBlock>($($arg),*),
            "timebase" => $f::<crate::blocks::timebase::TimebaseBlock>($($arg),*),
            "fecn_marker" => $f::<crate::blocks::fecn_marker::FecnMarkerBlock>($($arg),*),
            "vl_arb" => $f::<crate::blocks::vl_arb::VlArbBlock>($($arg),*),
            "cong_detect" => $f::<crate::blocks::cong_detect::CongDetectBlock>($($arg),*),
            "cct_shaper" => $f::<crate::blocks::cct_shaper::CctShaperBlock>($($arg),*),
            "fecn_rewrite_b8" => $f::<crate::blocks::fecn_rewrite::FecnRewriteB8Block>($($arg),*),
            "fecn_rewrite_b32" => $f::<crate::blocks::fecn_rewrite::FecnRewriteB32Block>($($arg),*),
            other => Err(crate::check::CosimError::UnknownBlock {
                name: other.to_string(),
                known: blocks().map(|m| m.name).collect::<Vec<_>>().join(", "),
            }),
        }
    };
}

/// Co-simulates block `name` on the configurations of its seeded schedule ([`crate::blocks::segment`]).
#[cfg(feature = "verilator")]
pub fn run_random(
    name: &str,
    seed: u64,
    opts: &crate::blocks::RunOpts,
) -> Result<crate::check::Matched, crate::check::CosimError> {
    run_covered(name, seed, opts).and_then(|(r, _)| r)
}

/// The result of a run and the coverage it reached; the outer error when the run could not start (no such
/// block).
#[cfg(feature = "verilator")]
pub type Covered = Result<
    (
        Result<crate::check::Matched, crate::check::CosimError>,
        crate::cover::Coverage,
    ),
    crate::check::CosimError,
>;

/// [`run_random`] with the coverage the run reached.
#[cfg(feature = "verilator")]
pub fn run_covered(name: &str, seed: u64, opts: &crate::blocks::RunOpts) -> Covered {
    fn go<B: crate::blocks::Block>(seed: u64, opts: &crate::blocks::RunOpts) -> Covered {
        Ok(crate::blocks::run_schedule::<B>(seed, opts))
    }
    with_block!(name, go(seed, opts))
}

/// Co-simulates the block a port-trace file names, on the inputs it records.
#[cfg(feature = "verilator")]
pub fn run_trace_file(
    path: &std::path::Path,
    opts: &crate::blocks::RunOpts,
) -> Result<crate::check::Matched, crate::check::CosimError> {
    run_trace_file_covered(path, opts).and_then(|(r, _)| r)
}

/// [`run_trace_file`] with the coverage the trace reached (one configuration: the trace's).
#[cfg(feature = "verilator")]
pub fn run_trace_file_covered(path: &std::path::Path, opts: &crate::blocks::RunOpts) -> Covered {
    let text = std::fs::read_to_string(path).map_err(|err| crate::check::CosimError::Io {
        path: path.to_path_buf(),
        err,
    })?;
    let name = crate::trace::block_name(&text)?;
    fn go<B: crate::blocks::Block>(text: &str, opts: &crate::blocks::RunOpts) -> Covered {
        let t = crate::trace::parse::<B>(text)?;
        Ok(crate::blocks::run_covered::<B, _>(
            &t.config,
            t.inputs.iter().copied(),
            opts,
        ))
    }
    with_block!(name.as_str(), go(&text, opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_has_a_line_per_twin_with_its_bugs() {
        let lines = list_lines();
        assert!(lines.contains(&"credit_tx BUG_CREDIT_WRAP BUG_FC_ORDER".to_string()));
        assert!(lines.iter().any(|l| l.starts_with("credit_rx ")));
        assert!(!lines.iter().any(|l| l.starts_with("test_finish")));
        assert!(lines.contains(
            &"cong_detect BUG_THRESHOLD_OFF_BY_ONE BUG_VICTIM_MASK BUG_THRESHOLD_INDEX BUG_STALL_WINDOW".to_string()
        ));
        assert!(lines.contains(
            &"cct_shaper BUG_TIMER_LATE BUG_CCTI_LIMIT BUG_CCTI_MIN BUG_BECN_FIRST".to_string()
        ));
        assert!(lines.contains(&"fecn_rewrite_b8 BUG_VCRC_BYTE_ORDER BUG_FECN_BIT".to_string()));
        assert!(lines
            .last()
            .is_some_and(|l| l.starts_with("ib_switch BUG_")));
    }
}
