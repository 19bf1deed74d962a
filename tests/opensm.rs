//! Congestion-control settings from opensm's configuration: `[cc] opensm_conf = "FILE"`, the inline
//! `[cc.opensm]` keys, and `sweep --set` by opensm's key names.

use std::path::{Path, PathBuf};
use std::process::Command;

use ibcycle::run::{run, write_outputs};
use ibcycle::scenario::{load, parse, Scenario};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/opensm")
        .join(name)
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibcycle-opensm-{}-{tag}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn summary(sc: &Scenario, tag: &str) -> Vec<u8> {
    let r = run(sc, false).expect("fabric builds");
    let d = tmp(tag);
    write_outputs(&r, sc, &d.join("o")).unwrap();
    let s = std::fs::read(d.join("o/summary.json")).unwrap();
    std::fs::remove_dir_all(&d).ok();
    s
}

/// An opensm.conf with the hardware's CC settings (and keys that are not congestion control's) configures
/// Gran's scenario 1 exactly as the shipped TOML does: the same summary.json, byte for byte, marks
/// included.
#[test]
fn an_opensm_conf_configures_a_run_exactly_as_the_equivalent_toml() {
    let mut from_conf = load(&fixture("gran-s1-opensm.toml")).expect("loads");
    let mut from_toml =
        load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on.toml")).unwrap();
    // F1 alone, then with F2 from 20 ms and F3 from 40 ms (CC acts), 45 ms: the files' own phases are 100 ms.
    for sc in [&mut from_conf, &mut from_toml] {
        sc.duration_us = 45_000;
        sc.flows[1].start_us = 20_000;
        sc.flows[2].start_us = 40_000;
    }
    assert_eq!(from_conf.switch_cc, from_toml.switch_cc);
    let (h1, h2) = (from_conf.hca_cc.unwrap(), from_toml.hca_cc.unwrap());
    assert_eq!(
        (h1.ccti_increase, h1.ccti_limit, h1.ccti_min, h1.ccti_timer),
        (h2.ccti_increase, h2.ccti_limit, h2.ccti_min, h2.ccti_timer)
    );
    assert_eq!(h1.cct.unwrap().entries().len(), 128);
    // A key opensm has that the model does not apply is reported when it would act (Trigger_Threshold 2);
    // the file's inert ones (Control_Map 0x1f, no credit starvation) are not.
    assert!(
        from_conf
            .warnings
            .iter()
            .any(|w| w.contains("cc_ca_cong_setting_trigger_threshold 0 2")),
        "{:?}",
        from_conf.warnings
    );
    assert_eq!(from_conf.warnings.len(), 1, "{:?}", from_conf.warnings);
    let (a, b) = (summary(&from_conf, "conf"), summary(&from_toml, "toml"));
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert!(
        v["flows"][1]["cnp_sent"].as_u64().unwrap() > 0,
        "CC acted: {v}"
    );
    // The warnings differ (the TOML run has none); the rest must not.
    let strip = |s: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(s).unwrap();
        v.as_object_mut().unwrap().remove("warnings");
        v
    };
    assert_eq!(strip(&a), strip(&b));
}

fn with_cc(cc: &str) -> Result<Scenario, String> {
    let text = format!(
        "name = \"hot\"\nduration_us = 300\n[settings]\nswitch_vl_buf_blocks = 512\n{cc}\n[chain]\nswitches = 2\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H3\"\n[[flow]]\nid = \"B\"\nsrc = \"H1\"\ndst = \"H3\"\n"
    );
    parse(&fixture("inline.toml"), &text).map_err(|e| e.to_string())
}

#[test]
fn inline_keys_congestion_control_off_and_errors() {
    // Inline keys after the file: the threshold replaced, the rest from the file.
    let sc = with_cc("[cc]\nopensm_conf = \"gran-hw.conf\"\n[cc.opensm]\ncc_sw_cong_setting_threshold = \"0x9\"\ncc_sw_cong_setting_victim_mask = \"0xc\"\n").unwrap();
    assert_eq!((sc.switch_cc.threshold, sc.switch_cc.marking_rate), (9, 1));
    let s = sc.switch_settings(0);
    assert!(!s.port_cc(1).victim_mask && s.port_cc(2).victim_mask && s.port_cc(3).victim_mask);
    // congestion_control FALSE: CC off whatever the TOML says.
    let off =
        with_cc("[switch_cc]\nthreshold = 15\n[hca_cc]\n[cc.opensm]\ncongestion_control = false\n")
            .unwrap();
    assert_eq!(off.switch_cc.threshold, 0);
    assert!(off.hca_cc.is_none());
    let r = run(&off, false).unwrap();
    assert!(r.summary.flows.iter().all(|f| f.fecn_marked_rx == 0));
    for (cc, want) in [
        ("[cc]\nopensm_conf = \"missing.conf\"\n", "missing.conf"),
        ("[cc.opensm]\ncc_sw_cong_setting_thresold = 3\n", "cc.opensm.cc_sw_cong_setting_thresold: not a congestion-control key opensm knows"),
        ("[cc.opensm]\nsm_priority = 3\n", "cc.opensm.sm_priority: not one of opensm's congestion-control keys"),
        ("[cc.opensm]\ncongestion_control = true\ncc_sw_cong_setting_threshold = 15\n", "cc_ca_cong_setting_ccti_timer of SL 0: not given"),
        ("[cc.opensm]\ncongestion_control = true\ncc_ca_cong_setting_ccti_timer = \"0 146\"\n", "cc_cct: not given"),
        ("[cc.opensm]\ncongestion_control = true\ncc_ca_cong_setting_ccti_timer = \"0 146\"\ncc_cct = \"0:0,1:1\"\ncc_ca_cong_setting_ccti_min = \"0 5\"\n", "ccti_min: 5 is above ccti_limit"),
        ("[cc.opensm]\ncc_sw_cong_setting_threshold = 16\n", "cc.opensm.cc_sw_cong_setting_threshold: 16 is not in 0..=15"),
    ] {
        let e = with_cc(cc).unwrap_err();
        assert!(e.contains(want), "{cc}: {e}");
    }
    // The table as a TOML key too, CCTI_Limit indexing into it.
    let t = with_cc("[hca_cc]\ncct = [[0, 0], [3, 8]]\nccti_limit = 1\n").unwrap();
    assert_eq!(t.hca_cc.unwrap().cct.unwrap().entries(), &[(0, 0), (3, 8)]);
    for (cc, want) in [
        (
            "[hca_cc]\ncct = [[0, 0], [3, 8]]\nccti_limit = 2\n",
            "ccti_limit: 2 is not an index of the cct table",
        ),
        (
            "[hca_cc]\ncct = [[4, 0]]\nccti_limit = 0\n",
            "CCT_Shift 4 is not in 0..=3",
        ),
        (
            "[hca_cc]\ncct = []\nccti_limit = 0\n",
            "0 entries; a CongestionControlTable has 1 to 128",
        ),
    ] {
        let e = with_cc(cc).unwrap_err();
        assert!(e.contains(want), "{cc}: {e}");
    }
    // An error inside the file names the file and its line.
    let d = tmp("bad");
    std::fs::write(
        d.join("bad.conf"),
        "congestion_control TRUE\n\ncc_cct 0:0,9:1\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(fixture("gran-s1-opensm.toml"))
        .unwrap()
        .replace("gran-hw.conf", "bad.conf");
    std::fs::write(d.join("s.toml"), text).unwrap();
    let e = load(&d.join("s.toml")).unwrap_err().to_string();
    assert!(
        e.contains("bad.conf:3:") && e.contains("cc_cct entry 1 shift: 9 is not in 0..=3"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// A sweep over `cc_sw_cong_setting_threshold` by opensm's own name: threshold 0 marks nothing, 15 marks.
#[test]
fn a_sweep_by_opensm_key_names() {
    let d = tmp("sweep");
    std::fs::copy(fixture("gran-hw.conf"), d.join("gran-hw.conf")).unwrap();
    let text = "name = \"hot\"\nduration_us = 300\n[settings]\nswitch_vl_buf_blocks = 512\n[cc]\nopensm_conf = \"gran-hw.conf\"\n[chain]\nswitches = 2\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H3\"\n[[flow]]\nid = \"B\"\nsrc = \"H1\"\ndst = \"H3\"\n";
    std::fs::write(d.join("s.toml"), text).unwrap();
    let out = d.join("o");
    let o = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(["sweep", d.join("s.toml").to_str().unwrap()])
        .args(["--set", "cc_sw_cong_setting_threshold=0,15"])
        .args(["--out", out.to_str().unwrap(), "--jobs", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("cc_sw_cong_setting_threshold,"),
        "{csv}"
    );
    let col = lines[0]
        .split(',')
        .position(|c| c == "fecn_marked")
        .unwrap();
    let marked: Vec<u64> = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    assert_eq!(marked.len(), 2, "{csv}");
    assert!(marked[0] == 0 && marked[1] > 0, "{csv}");
    std::fs::remove_dir_all(&d).ok();
}
