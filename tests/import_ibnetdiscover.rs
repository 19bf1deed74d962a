//! `ibcycle import ibnetdiscover`: hand-written topology files in ibnetdiscover's format (tests/ibnetdiscover/)
//! import, load and run an incast with CC off and on, losslessly and deterministically; malformed files fail
//! naming their line; a ring's minimum-hop routes are refused as a credit loop.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use ibcycle::import::ibnetdiscover::{import_file, Flows, ImportError};
use ibcycle::run::Summary;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ibnetdiscover")
        .join(name)
}

/// IB CC at the settings `tests/determinism.rs` uses for a hot spot, so marking and CNPs happen in a
/// short run.
const CC_ON: &str = r#"
[settings]
sample_interval_us = 5
switch_vl_buf_blocks = 512
[switch_cc]
threshold = 8
marking_rate = 2
[hca_cc]
ccti_increase = 2
ccti_timer = 5
"#;

const CC_OFF: &str = r#"
[settings]
sample_interval_us = 5
switch_vl_buf_blocks = 512
[switch_cc]
threshold = 0
"#;

fn run(toml: &str, cc: &str) -> Summary {
    let mut text = toml.replace("duration_us = 1000", "duration_us = 60");
    // The settings join the file's own [settings] table where it has one (an imported clock).
    let (settings, rest) = cc
        .strip_prefix("\n[settings]\n")
        .and_then(|c| c.split_once("\n["))
        .expect("CC text starts with its settings");
    if text.contains("\n[settings]\n") {
        text = text.replacen("\n[settings]\n", &format!("\n[settings]\n{settings}\n"), 1);
    } else {
        text += &format!("\n[settings]\n{settings}\n");
    }
    text += &format!("[{rest}");
    let sc = ibcycle::scenario::parse(Path::new("imported.toml"), &text).unwrap();
    common::run_lossless(&sc)
}

/// Runs the incast with CC off and on, twice each, and checks both are deterministic and CC marks only
/// when on.
fn incast_off_and_on(toml: &str) {
    let off = run(toml, CC_OFF);
    assert_eq!(off, run(toml, CC_OFF), "CC off is deterministic");
    let on = run(toml, CC_ON);
    assert_eq!(on, run(toml, CC_ON), "CC on is deterministic");
    let marked = |s: &Summary| s.flows.iter().map(|f| f.fecn_marked_rx).sum::<u64>();
    let becn = |s: &Summary| s.flows.iter().map(|f| f.becn_rx).sum::<u64>();
    assert_eq!((marked(&off), becn(&off)), (0, 0));
    assert!(marked(&on) > 0 && becn(&on) > 0, "{on:?}");
    for f in off.flows.iter().chain(&on.flows) {
        assert!(f.delivered_bytes > 0, "{f:?}");
    }
}

#[test]
fn two_switches_four_hcas() {
    let imp = import_file(&data("two-switch.txt"), Flows::Incast).unwrap();
    assert_eq!((imp.switches, imp.hcas, imp.links), (2, 4, 5));
    assert!(imp.notes.is_empty(), "{:?}", imp.notes);
    let t = &imp.toml;
    // Switch descriptions hold ':' (not usable as a switch name): named by GUID; CAs by description.
    assert!(
        t.contains("name = \"S-0002c90200400001\"\nports = 8"),
        "{t}"
    );
    assert!(t.contains("name = \"node1 HCA-1\""), "{t}");
    // Every link once, with its rate.
    assert_eq!(t.matches("[[link]]").count(), 5);
    assert!(
        t.contains("ends = [\"S-0002c90200400001:8\", \"S-0002c90200400002:8\"]\nrate = \"4xQDR\""),
        "{t}"
    );
    assert!(
        t.contains("ends = [\"S-0002c90200400001:1\", \"node1 HCA-1\"]\nrate = \"4xDDR\""),
        "{t}"
    );
    // The incast: every other HCA to the last.
    assert_eq!(t.matches("[[flow]]").count(), 3);
    assert!(t.contains("dst = \"node4 HCA-1\""));
    incast_off_and_on(t);
}

#[test]
fn fat_tree_with_a_two_port_ca() {
    let imp = import_file(&data("fat-tree.txt"), Flows::Incast).unwrap();
    // 2 spines and 2 leaves, 4 HCAs; 4 leaf-spine links and 4 host links (h4's second port left out).
    assert_eq!((imp.switches, imp.hcas, imp.links), (4, 4, 8));
    assert_eq!(imp.notes.len(), 1, "{:?}", imp.notes);
    assert!(
        imp.notes[0].contains("port 2 of CA 0008f10400000400"),
        "{:?}",
        imp.notes
    );
    assert!(
        imp.toml.contains("# Note: line "),
        "the note is in the file too"
    );
    assert!(imp.toml.contains("ends = [\"leaf2:2\", \"h4 mlx4_0\"]"));
    assert!(!imp.toml.contains("leaf2:3\""));
    incast_off_and_on(&imp.toml);
    // All-to-all loads as well.
    let a2a = import_file(&data("fat-tree.txt"), Flows::AllToAll).unwrap();
    assert_eq!(a2a.toml.matches("[[flow]]").count(), 12);
    run(&a2a.toml, CC_OFF);
}

#[test]
fn the_ports_report_form() {
    let imp = import_file(&data("fat-tree-ports.txt"), Flows::Incast).unwrap();
    // Every CA port is an HCA: h4's two ports are two HCAs, named by port GUID as they share a description.
    assert_eq!((imp.switches, imp.hcas, imp.links), (4, 5, 9));
    assert_eq!(imp.notes.len(), 1, "{:?}", imp.notes);
    assert!(
        imp.notes[0].contains("every CA port is an HCA"),
        "{:?}",
        imp.notes
    );
    let t = &imp.toml;
    // Port counts from the highest port listed, unconnected ones included.
    assert!(t.contains("name = \"spine1\"\nports = 4"), "{t}");
    assert!(t.contains("name = \"leaf2\"\nports = 6"), "{t}");
    assert!(
        t.contains("ends = [\"leaf2:3\", \"H-0008f10400000402\"]\nrate = \"4xQDR\""),
        "{t}"
    );
    assert!(t.contains("ends = [\"spine1:1\", \"leaf1:5\"]"), "{t}");
    incast_off_and_on(t);
    // A line whose ends disagree with the peer's line is refused, naming both.
    let text = std::fs::read_to_string(data("fat-tree-ports.txt")).unwrap();
    let bad = text.replacen(
        "4x QDR - SW    11  1 0x0008f10500200002 ( 'leaf1'",
        "4x DDR - SW    11  1 0x0008f10500200002 ( 'leaf1'",
        1,
    );
    let e = ibcycle::import::ibnetdiscover::import_text(Path::new("p.txt"), &bad, Flows::None)
        .unwrap_err();
    assert_eq!(e.line, 8, "{e}");
    assert!(e.message.contains("4xQDR here, 4xDDR at line 9"), "{e}");
    let bad = text.replacen(
        "0x0008f10500100001 ( 'spine1' - 'leaf1' )",
        "0x0008f10500100001 ( 'spine1' - 'leaf1'",
        1,
    );
    let e = ibcycle::import::ibnetdiscover::import_text(Path::new("p.txt"), &bad, Flows::None)
        .unwrap_err();
    assert_eq!(e.line, 4, "{e}");
}

#[test]
fn a_trunk_of_two_links() {
    // A second S1-S2 link on ports 7, printed by both switches: two parallel links, routes spread over them.
    let text = std::fs::read_to_string(data("two-switch.txt")).unwrap();
    let text = text
        .replace(
            "[8]\t\"S-0002c90200400002\"[8]",
            "[7]\t\"S-0002c90200400002\"[7]\t\t# \"MF0;leaf2:IS5030/U1\" lid 2 4xQDR\n[8]\t\"S-0002c90200400002\"[8]",
        )
        .replace(
            "[8]\t\"S-0002c90200400001\"[8]",
            "[7]\t\"S-0002c90200400001\"[7]\t\t# \"MF0;leaf1:IS5030/U1\" lid 1 4xQDR\n[8]\t\"S-0002c90200400001\"[8]",
        );
    let imp =
        ibcycle::import::ibnetdiscover::import_text(Path::new("trunk.txt"), &text, Flows::AllToAll)
            .unwrap();
    assert_eq!((imp.switches, imp.hcas, imp.links), (2, 4, 6));
    assert!(imp
        .toml
        .contains("ends = [\"S-0002c90200400001:7\", \"S-0002c90200400002:7\"]"));
    let s = run(&imp.toml, CC_OFF);
    assert_eq!(s.flows.len(), 12);
    // Both trunk links carry packets from S1 to S2.
    let sent = |port: u8| {
        s.ports
            .iter()
            .filter(|p| p.switch == "S-0002c90200400001" && p.port == port)
            .map(|p| p.xmit_packets)
            .sum::<u64>()
    };
    assert!(sent(7) > 0 && sent(8) > 0, "{:?}", s.ports);
}

#[test]
fn rates_set_the_clock_or_are_refused() {
    let text = std::fs::read_to_string(data("two-switch.txt")).unwrap();
    // 4x EDR (100 Gbit/s of data) and 4x HDR (200) are 12.5 and 25 bytes a cycle at 1000 MHz: no clock change.
    for (speed, mbps) in [("4xEDR", 100_000), ("4xHDR", 200_000)] {
        let t = text.replace("4xQDR", speed);
        let imp =
            ibcycle::import::ibnetdiscover::import_text(Path::new("x.txt"), &t, Flows::Incast)
                .unwrap();
        assert!(!imp.toml.contains("clock_mhz"), "{}", imp.toml);
        assert!(imp.toml.contains(&format!("rate = \"{speed}\"")));
        let sc = ibcycle::scenario::parse(Path::new("x.toml"), &imp.toml).unwrap();
        assert_eq!(sc.settings.clock_mhz, 1000);
        assert!(sc.topology.links.iter().any(|l| l.rate_mbps == mbps));
        run(&imp.toml, CC_OFF);
    }
    // Widths without a scenario name become their data rate.
    let x12 = text.replace("4xQDR", "12xQDR");
    let imp = ibcycle::import::ibnetdiscover::import_text(Path::new("x12.txt"), &x12, Flows::None)
        .unwrap();
    assert!(imp.toml.contains("rate = \"96000Mbps\""), "{}", imp.toml);
}

#[test]
fn a_file_with_only_ca_sections() {
    // One switch known only from its CAs' lines: its port count is its highest port seen.
    let text = std::fs::read_to_string(data("two-switch.txt")).unwrap();
    let cas: String = text
        .split("\n\n")
        .filter(|block| block.contains("caguid=") && block.contains("IS5030/U1\" lid 1 "))
        .collect::<Vec<_>>()
        .join("\n\n");
    let imp =
        ibcycle::import::ibnetdiscover::import_text(Path::new("cas.txt"), &cas, Flows::Incast)
            .unwrap();
    assert_eq!((imp.switches, imp.hcas, imp.links), (1, 2, 2));
    assert!(
        imp.toml
            .contains("name = \"S-0002c90200400001\"\nports = 2"),
        "{}",
        imp.toml
    );
    assert!(
        imp.notes
            .iter()
            .any(|n| n.contains("no section of its own")),
        "{:?}",
        imp.notes
    );
    run(&imp.toml, CC_OFF);
}

#[test]
fn without_flows_the_scenario_loads_and_runs() {
    let imp = import_file(&data("two-switch.txt"), Flows::None).unwrap();
    assert!(!imp.toml.contains("\n[[flow]]"));
    assert!(imp.toml.contains("# [[flow]]"));
    let sc = ibcycle::scenario::parse(Path::new("x.toml"), &imp.toml).unwrap();
    assert!(sc.flows.is_empty());
    // The commented example, uncommented, is a working flow.
    let with_flow = imp
        .toml
        .replace("# [[flow]]", "[[flow]]")
        .replace("\n# id", "\nid")
        .replace("\n# src", "\nsrc");
    let with_flow = with_flow
        .replace("\n# dst", "\ndst")
        .replace("\n# start_us", "\nstart_us");
    let s = run(&with_flow, CC_OFF);
    assert_eq!(s.flows.len(), 1);
}

fn err(name: &str) -> ImportError {
    import_file(&data(name), Flows::None).expect_err(name)
}

#[test]
fn malformed_files_name_their_line() {
    let e = err("truncated-node.txt");
    assert_eq!(e.line, 10, "{e}");
    assert!(
        e.to_string()
            .contains("truncated-node.txt:10: a node line cut short"),
        "{e}"
    );

    let e = err("port-before-node.txt");
    assert_eq!(e.line, 6, "{e}");
    assert!(e.message.contains("outside a node's section"), "{e}");

    // S1 says port 8 reaches S2 port 8; S2 (line 22) says its port 8 reaches S1 port 7.
    let e = err("peer-disagreement.txt");
    assert_eq!(e.line, 13, "{e}");
    assert!(
        e.message.contains("disagree") && e.message.contains("line 22"),
        "{e}"
    );

    let e = err("unknown-speed.txt");
    assert_eq!(e.line, 13, "{e}");
    assert!(e.message.contains("\"4xNDR\""), "{e}");
}

#[test]
fn a_ring_is_refused_as_a_credit_loop() {
    let e = err("ring.txt");
    assert!(e.message.contains("credit loop"), "{e}");
    // The cycle is named by its channels, switch port to switch port.
    assert!(
        e.message.contains("ring0:1->ring1:2") || e.message.contains("ring1:2->ring0:1"),
        "{e}"
    );
}

#[test]
fn explicit_scenarios_with_a_credit_loop_are_refused_at_load() {
    // A ring of five, written out by hand (every two-hop route goes one way round, so the dependencies
    // close the ring): the scenario loader refuses it too, at a link's line.
    let t = common::ring_scenario(10);
    let e = ibcycle::scenario::parse(Path::new("ring.toml"), &t).unwrap_err();
    assert!(e.message.contains("credit loop"), "{e}");
    assert!(e.line > 0, "{e}");
    assert!(
        t.lines()
            .nth(e.line - 1)
            .unwrap()
            .starts_with("ends = [\"R"),
        "{e}"
    );
}

#[test]
fn the_cli_writes_a_scenario_that_runs() {
    let dir = std::env::temp_dir().join(format!("ibcycle-import-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("fat.toml");
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(["import", "ibnetdiscover"])
        .arg(data("fat-tree.txt"))
        .arg("--out")
        .arg(&out)
        .arg("--incast")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("not imported"),
        "the 2-port CA is reported: {stderr}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::write(&out, text.replace("duration_us = 1000", "duration_us = 20")).unwrap();
    let sc = ibcycle::scenario::load(&out).unwrap();
    assert_eq!(sc.flows.len(), 3);
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .arg("run")
        .arg(&out)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // A malformed file: exit status 1 and the line on stderr.
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .args(["import", "ibnetdiscover"])
        .arg(data("unknown-speed.txt"))
        .arg("--out")
        .arg(dir.join("bad.toml"))
        .output()
        .unwrap();
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown-speed.txt:13:"));
    assert!(!dir.join("bad.toml").exists());
    std::fs::remove_dir_all(&dir).ok();
}
