//! The property-test kit (`rtl_model::testkit`) pointed at a marking block, as a user would point it at
//! theirs: packets the kit draws stream through `fecn_rewrite` beat by beat, marked or not, with gaps, and
//! what leaves is judged by the kit's oracles from the bytes alone (FECN set and nothing else changed, the
//! VCRC regenerated, the ICRC untouched; a packet with a bad VCRC ended bad, never made good), not by
//! comparison with the Rust twin. The Rust block runs always; the Verilated RTL at 8- and 32-byte beats
//! with the `verilator` feature (on in the README's test command).

use cosim::Dut;
use proptest::prelude::*;
use rtl_model::blocks::fecn_rewrite::{Config, FecnRewrite, In, Out, BEAT_MAX};
use rtl_model::testkit::packets::Malformation;
use rtl_model::testkit::{oracle, packets};

/// Streams `pkt` through `dut` (`beat` bytes a cycle, `mark` with the first beat, an idle cycle after each
/// beat where `gaps` has a set bit) and returns the bytes that left and whether the packet ended bad.
fn stream<D: Dut<In = In, Out = Out>>(
    dut: &mut D,
    beat: usize,
    pkt: &[u8],
    mark: bool,
    gaps: u64,
) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(pkt.len());
    let mut ebp = false;
    let mut take = |o: &Out, out: &mut Vec<u8>| {
        if o.valid_o {
            let n = if o.eop_o && o.bytes_o != 0 && usize::from(o.bytes_o) <= beat {
                usize::from(o.bytes_o)
            } else {
                beat
            };
            out.extend_from_slice(&o.data_o[..n]);
            ebp |= o.eop_o && o.ebp_o;
        }
    };
    let chunks: Vec<&[u8]> = pkt.chunks(beat).collect();
    for (k, c) in chunks.iter().enumerate() {
        let mut data_i = [0u8; BEAT_MAX];
        data_i[..c.len()].copy_from_slice(c);
        let last = k + 1 == chunks.len();
        let i = In {
            rst_ni: true,
            valid_i: true,
            sop_i: k == 0,
            eop_i: last,
            bytes_i: if last { c.len() as u8 } else { 0 },
            data_i,
            mark_i: mark && k == 0,
        };
        take(&dut.step(&i).expect("the RTL runs"), &mut out);
        if gaps >> (k % 64) & 1 == 1 {
            let idle = In {
                rst_ni: true,
                ..In::default()
            };
            take(&dut.step(&idle).expect("the RTL runs"), &mut out);
        }
    }
    // The outputs are registered: the last beat leaves one cycle later.
    let idle = In {
        rst_ni: true,
        ..In::default()
    };
    take(&dut.step(&idle).expect("the RTL runs"), &mut out);
    (out, ebp)
}

/// What the oracles say of one packet through `dut`.
fn judge<D: Dut<In = In, Out = Out>>(
    dut: &mut D,
    beat: usize,
    pkt: &[u8],
    mark: bool,
    gaps: u64,
) -> Result<(), String> {
    let (out, ebp) = stream(dut, beat, pkt, mark, gaps);
    if ebp {
        return Err("a good packet ended bad".into());
    }
    let v = if mark {
        oracle::fecn_marked(pkt, &out)
    } else {
        oracle::passed_unchanged(pkt, &out)
    };
    v.map_err(|e| e.to_string())
}

/// What the oracles say of a packet that came with a bad VCRC.
fn judge_bad<D: Dut<In = In, Out = Out>>(
    dut: &mut D,
    beat: usize,
    pkt: &[u8],
    mark: bool,
) -> Result<(), String> {
    let (out, ebp) = stream(dut, beat, pkt, mark, 0);
    if !ebp {
        return Err("a packet with a bad VCRC did not end bad".into());
    }
    oracle::ended_bad(pkt, &out).map_err(|e| e.to_string())
}

fn golden(beat: usize) -> cosim::Golden<FecnRewrite> {
    cosim::Golden(
        FecnRewrite::new(Config {
            beat_bytes: beat as u8,
        })
        .unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_rust_block_marks_as_the_spec_says(
        pkt in packets::ib_packet_up_to(1024),
        mark in any::<bool>(),
        gaps in any::<u64>(),
        wide in any::<bool>(),
    ) {
        let beat = if wide { 32 } else { 8 };
        let r = judge(&mut golden(beat), beat, &pkt, mark, gaps);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn the_rust_block_never_launders((pkt, m) in packets::malformed_ib_packet(), mark in any::<bool>()) {
        if let Malformation::BadVcrc { .. } = m {
            let r = judge_bad(&mut golden(8), 8, &pkt, mark);
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }
}

#[cfg(feature = "verilator")]
mod rtl {
    use super::*;
    use cosim::blocks::fecn_rewrite::{FecnRewriteB32Block, FecnRewriteB8Block};
    use cosim::blocks::Block;
    use proptest::strategy::ValueTree;

    fn cfg(beat: usize) -> Config {
        Config {
            beat_bytes: beat as u8,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Each case gets a fresh Verilated model (a packet's result cannot depend on an earlier one's).
        #[test]
        fn the_rtl_marks_as_the_spec_says(
            pkt in packets::ib_packet_up_to(1024),
            mark in any::<bool>(),
            gaps in any::<u64>(),
        ) {
            let r8 = judge(&mut FecnRewriteB8Block::rtl(&cfg(8), None).unwrap(), 8, &pkt, mark, gaps);
            prop_assert!(r8.is_ok(), "8-byte beats: {}", r8.unwrap_err());
            let r32 = judge(&mut FecnRewriteB32Block::rtl(&cfg(32), None).unwrap(), 32, &pkt, mark, gaps);
            prop_assert!(r32.is_ok(), "32-byte beats: {}", r32.unwrap_err());
        }

        #[test]
        fn the_rtl_never_launders((pkt, m) in packets::malformed_ib_packet(), mark in any::<bool>()) {
            if let Malformation::BadVcrc { .. } = m {
                let r = judge_bad(&mut FecnRewriteB8Block::rtl(&cfg(8), None).unwrap(), 8, &pkt, mark);
                prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            }
        }
    }

    /// The kit catches what the project's bug variants of the block get wrong, with no twin to compare to.
    #[test]
    fn the_kit_catches_the_bug_variants() {
        use cosim::table::MODULES;
        let variants = MODULES
            .iter()
            .find(|m| m.name == "fecn_rewrite_b8")
            .map(|m| m.bugs)
            .expect("fecn_rewrite is in the module table");
        assert!(
            !variants.is_empty(),
            "fecn_rewrite has bug variants to catch"
        );
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for &bug in variants {
            let mut caught = false;
            for _ in 0..300 {
                let pkt = packets::ib_packet_up_to(1024)
                    .new_tree(&mut runner)
                    .unwrap()
                    .current();
                let mark = !pkt.len().is_multiple_of(3);
                let mut dut = FecnRewriteB8Block::rtl(&cfg(8), Some(bug)).unwrap();
                if judge(&mut dut, 8, &pkt, mark, 0).is_err() {
                    caught = true;
                    break;
                }
                let mut bad = pkt.clone();
                let n = bad.len();
                bad[n - 1] ^= 1;
                let mut dut = FecnRewriteB8Block::rtl(&cfg(8), Some(bug)).unwrap();
                if judge_bad(&mut dut, 8, &bad, mark).is_err() {
                    caught = true;
                    break;
                }
            }
            assert!(
                caught,
                "{bug}: not caught by the kit's oracles in 300 packets"
            );
        }
    }
}
