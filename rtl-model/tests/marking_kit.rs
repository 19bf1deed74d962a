//! The switch's egress rewrite against the property-test kit: every packet the kit draws, forwarded onto
//! any output VL with or without FECN, differs from what came in only where a switch may change it
//! (`rtl_model::testkit::oracle::switched`). Needs the `proptest` feature (the kit).
#![cfg(feature = "proptest")]

use proptest::prelude::*;
use rtl_model::link::packet::egress_rewrite;
use rtl_model::testkit::{oracle, packets};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn egress_rewrite_changes_only_vl_fecn_and_vcrc(
        pkt in packets::ib_packet(),
        out_vl in 0u8..15,
        fecn in any::<bool>(),
    ) {
        let mut out = pkt.clone();
        egress_rewrite(&mut out, out_vl, fecn).unwrap();
        let verdict = oracle::switched(&pkt, &out, out_vl, fecn);
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }
}
