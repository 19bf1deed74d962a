//! A cluster as its tools print it, used in place: `[topology] ibnetdiscover = "FILE"` with flows by node
//! description or GUID, the same run as the imported-then-saved scenario; opensm's forwarding-table dump as
//! the routes (`[topology] lfts`); up/down routing where minimum-hop loops (a ring, a mesh); `[[traffic]]`
//! patterns (shift, permutation, bisection) from the scenario and from `import`.

mod common;

use std::path::{Path, PathBuf};

use ibcycle::import::ibnetdiscover::{import_text_with, Flows, Options, Routing};
use ibcycle::run::Summary;
use ibcycle::scenario::{self, Scenario};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ibnetdiscover")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// A scenario file in `tests/ibnetdiscover/` (so that its relative paths name the data there), parsed.
fn parse_here(text: &str) -> Result<Scenario, scenario::ScenarioError> {
    scenario::parse(&data("in-place.toml"), text)
}

const SETTINGS: &str = "\n[settings]\nsample_interval_us = 5\nswitch_vl_buf_blocks = 512\n";

/// Runs `sc`, checks it lossless and drained, and returns its summary.
fn run(sc: &Scenario) -> Summary {
    common::run_lossless(sc)
}

fn json(s: &Summary) -> String {
    serde_json::to_string_pretty(s).unwrap()
}

#[test]
fn in_place_and_imported_give_the_same_summary() {
    // Flows by description (h1), by node GUID (h2) and by port GUID without 0x (h3), to h4 by description.
    let in_place = format!(
        "name = \"fat-tree\"\nduration_us = 60\n[topology]\nibnetdiscover = \"fat-tree.txt\"\n{SETTINGS}\
         [[flow]]\nid = \"F1\"\nsrc = \"h1 mlx4_0\"\ndst = \"h4 mlx4_0\"\n\
         [[flow]]\nid = \"F2\"\nsrc = \"0x0008f10400000200\"\ndst = \"h4 mlx4_0\"\n\
         [[flow]]\nid = \"F3\"\nsrc = \"0008f10400000301\"\ndst = \"0x8f10400000401\"\n"
    );
    let a = parse_here(&in_place).unwrap();
    assert_eq!(a.topology.hcas.len(), 4);
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("port 2 of CA 0008f10400000400")),
        "the import's notes come along: {:?}",
        a.notes
    );
    let imported = import_text_with(
        &data("fat-tree.txt"),
        &read("fat-tree.txt"),
        &Options {
            flows: Flows::Incast,
            routing: Routing::MinHop,
            iblinkinfo: None,
        },
    )
    .unwrap();
    let saved = imported
        .toml
        .replace("duration_us = 1000", "duration_us = 60")
        + SETTINGS;
    let b = scenario::parse(Path::new("fat-tree.toml"), &saved).unwrap();
    assert_eq!(a.topology, b.topology);
    assert_eq!(a.flows, b.flows);
    let (sa, sb) = (run(&a), run(&b));
    assert_eq!(json(&sa), json(&sb));
    assert!(sa.flows.iter().all(|f| f.delivered_bytes > 0));

    // A [[traffic]] pattern in both forms: the import writes the table, the in-place scenario has it too.
    for flows in [Flows::Shift(1), Flows::Permutation(7), Flows::Bisection] {
        let imported = import_text_with(
            &data("fat-tree.txt"),
            &read("fat-tree.txt"),
            &Options {
                flows,
                routing: Routing::MinHop,
                iblinkinfo: None,
            },
        )
        .unwrap();
        let table = &imported.toml[imported.toml.find("[[traffic]]").unwrap()..];
        let saved = imported
            .toml
            .replace("duration_us = 1000", "duration_us = 40")
            + SETTINGS;
        let in_place = format!(
            "name = \"fat-tree\"\nduration_us = 40\nseed = 1\n[topology]\nibnetdiscover = \"fat-tree.txt\"\n{SETTINGS}{table}"
        );
        let (a, b) = (
            parse_here(&in_place).unwrap(),
            scenario::parse(Path::new("fat-tree.toml"), &saved).unwrap(),
        );
        assert_eq!(a.flows, b.flows, "{flows:?}");
        assert_eq!(json(&run(&a)), json(&run(&b)), "{flows:?}");
    }
}

#[test]
fn names_that_match_nothing_or_several_say_so() {
    let with = |src: &str| {
        parse_here(&format!(
            "duration_us = 10\n[topology]\nibnetdiscover = \"fat-tree.txt\"\n[[flow]]\nid = \"F\"\nsrc = \"{src}\"\ndst = \"h4 mlx4_0\"\n"
        ))
    };
    let e = with("h1 mlx4_1").unwrap_err().to_string();
    assert!(
        e.contains(
            "in-place.toml:6: flow[0].src: no HCA named \"h1 mlx4_1\"; closest: \"h1 mlx4_0\""
        ),
        "{e}"
    );
    let e = with("spine1").unwrap_err().to_string();
    assert!(e.contains("\"spine1\" is a switch, not an HCA"), "{e}");
    let e = with("0x0008f10500200001").unwrap_err().to_string();
    assert!(e.contains("is a switch, not an HCA"), "{e}");
    let e = with("0x1234").unwrap_err().to_string();
    assert!(e.contains("no HCA has GUID 0x0000000000001234"), "{e}");
    // The ports report makes h4's two ports two HCAs that share a description: ambiguous.
    let e = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"fat-tree-ports.txt\"\n[[flow]]\nid = \"F\"\nsrc = \"h1 mlx4_0\"\ndst = \"h4 mlx4_0\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "flow[0].dst: \"h4 mlx4_0\" is the description of 2 HCAs: \"H-0008f10400000401\""
        ) && e.contains("name one by its name or GUID"),
        "{e}"
    );
    // Errors in the file name the file and its line.
    let dir = std::env::temp_dir().join(format!("ibcycle-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data("unknown-speed.txt"), dir.join("fabric.txt")).unwrap();
    let e = scenario::parse(
        &dir.join("s.toml"),
        "duration_us = 10\n[topology]\nibnetdiscover = \"fabric.txt\"\n",
    )
    .unwrap_err();
    assert_eq!(
        (e.file.clone(), e.line),
        (dir.join("fabric.txt"), 13),
        "{e}"
    );
    let e = scenario::parse(
        &dir.join("s.toml"),
        "duration_us = 10\n[topology]\nibnetdiscover = \"missing.txt\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing.txt:0: cannot read"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
    // Only one source of topology.
    let e = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"fat-tree.txt\"\n[chain]\nswitches = 1\nhosts_per_switch = 2\nhost_rate = \"4xQDR\"\ntrunk_rate = \"4xQDR\"\n",
    )
    .unwrap_err();
    assert!(e.message.contains("exactly one of"), "{e}");
}

#[test]
fn the_subnet_managers_tables_route_the_run() {
    let text = |extra: &str| {
        format!(
            "duration_us = 40\n[topology]\nibnetdiscover = \"fat-tree.txt\"\nlfts = \"fat-tree-lfts.dump\"\n{extra}{SETTINGS}\
             [[traffic]]\nkind = \"all_to_all\"\n"
        )
    };
    let sc = parse_here(&text("")).unwrap();
    let min_hop = sc.topology.min_hop_routes().unwrap();
    let given = sc.topology.routes().unwrap();
    assert_ne!(given, min_hop, "the dump sends everything over spine1");
    let s = run(&sc);
    let sent = |sw: &str| {
        s.ports
            .iter()
            .filter(|p| p.switch == sw)
            .map(|p| p.xmit_packets)
            .sum::<u64>()
    };
    assert!(sent("spine1") > 0);
    assert_eq!(sent("spine2"), 0, "no route uses spine2");
    assert_eq!(s.flows.len(), 12);

    // Bad dumps name their line.
    let dir = std::env::temp_dir().join(format!("ibcycle-lfts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data("fat-tree.txt"), dir.join("fat-tree.txt")).unwrap();
    let dump = read("fat-tree-lfts.dump");
    let with_dump = |d: &str| {
        std::fs::write(dir.join("lfts.dump"), d).unwrap();
        scenario::parse(
            &dir.join("s.toml"),
            "duration_us = 10\n[topology]\nibnetdiscover = \"fat-tree.txt\"\nlfts = \"lfts.dump\"\n",
        )
        .unwrap_err()
    };
    // leaf1 sends h3 (LID 0x16) to port 3, which has nothing on it.
    let bad = dump.replacen("0x0016 005", "0x0016 003", 1);
    let e = with_dump(&bad);
    let line = bad
        .lines()
        .position(|l| l.starts_with("0x0016 003"))
        .unwrap()
        + 1;
    assert_eq!(
        (e.file.clone(), e.line),
        (dir.join("lfts.dump"), line),
        "{e}"
    );
    assert!(e.message.contains("leads nowhere: no imported link"), "{e}");
    // h4's second port (LID 0x18) is not imported: its entries are not needed, and a route to h4 over it is
    // refused.
    let bad = dump.replacen(
        "0x0017 002 # Channel Adapter portguid 0x0008f10400000401: 'h4 mlx4_0'\n0x0018 003",
        "0x0017 003 # x\n0x0018 003",
        1,
    );
    assert!(with_dump(&bad).message.contains("LID 0x0017"));
    // A missing entry: the switch's header line.
    let bad = dump.replacen(
        "0x0014 001 # Channel Adapter portguid 0x0008f10400000101: 'h1 mlx4_0'\n",
        "",
        1,
    );
    let e = with_dump(&bad);
    assert_eq!(e.line, 1, "{e}");
    assert!(
        e.message
            .contains("no entry for LID 0x0014 (\"h1 mlx4_0\")"),
        "{e}"
    );
    // A forwarding loop: spine1 sends h1 back to leaf2, which sends it to spine1.
    let bad = dump.replacen("0x0014 001 # Channel", "0x0014 002 # Channel", 1);
    let e = with_dump(&bad);
    assert!(e.message.contains("forwarding loop"), "{e}");
    assert!(e.line > 0, "{e}");
    // A switch without a table, and a table of a switch not in the fabric.
    let spine2 = dump.find("Unicast lids [0-24] of switch Lid 11").unwrap();
    let leaf1 = dump.find("Unicast lids [0-24] of switch Lid 12").unwrap();
    let e = with_dump(&format!("{}{}", &dump[..spine2], &dump[leaf1..]));
    assert!(e.message.contains("no table for switch \"spine2\""), "{e}");
    let e = with_dump(&dump.replace("0x0008f10500200002 ('spine2')", "0x0008f105002000ff ('x')"));
    assert!(
        e.message
            .contains("is not a switch of the ibnetdiscover file"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
    // The dump needs the ibnetdiscover file, and excludes routing.
    let e = parse_here("duration_us = 10\n[topology]\nlfts = \"fat-tree-lfts.dump\"\n[chain]\nswitches = 1\nhosts_per_switch = 2\nhost_rate = \"4xQDR\"\ntrunk_rate = \"4xQDR\"\n").unwrap_err();
    assert!(e.message.contains("needs topology.ibnetdiscover"), "{e}");
    let e = parse_here(&text("routing = \"updown\"\n")).unwrap_err();
    assert!(e.message.contains("give one of the two"), "{e}");
}

#[test]
fn a_dump_with_a_credit_loop_is_refused() {
    // The ring's tables, each switch sending everything not its own clockwise: the dependencies close the
    // ring, and the check names the routes as the subnet manager's.
    let mut dump = String::new();
    for s in 0..4u64 {
        dump += &format!(
            "Unicast lids [0-8] of switch Lid {} guid 0x{:016x} ('ring{s}'):\n",
            100 + s,
            0x0002c90200500001 + s
        );
        for lid in 1..=8u64 {
            let home = (lid - 1) / 2;
            let port = if home == s { 3 + (lid - 1) % 2 } else { 1 };
            dump += &format!("0x{lid:04x} {port:03} # Channel Adapter\n");
        }
        dump += "8 lids dumped\n";
    }
    let dir = std::env::temp_dir().join(format!("ibcycle-ringdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data("ring.txt"), dir.join("ring.txt")).unwrap();
    std::fs::write(dir.join("ring.dump"), dump).unwrap();
    let e = scenario::parse(
        &dir.join("s.toml"),
        "duration_us = 10\n[topology]\nibnetdiscover = \"ring.txt\"\nlfts = \"ring.dump\"\n",
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("credit loop under the subnet manager's (topology.lfts) routes"),
        "{e}"
    );
    assert!(e.message.contains("of the ibnetdiscover file"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn up_down_routes_a_ring_and_a_mesh_that_min_hop_cannot() {
    for file in ["ring.txt", "mesh.txt"] {
        let base = format!("duration_us = 40\n[topology]\nibnetdiscover = \"{file}\"\n{SETTINGS}");
        let e = parse_here(&base).unwrap_err();
        assert!(
            e.message
                .contains("credit loop under the minimum-hop routes"),
            "{file}: {e}"
        );
        let text = base.replace("[topology]\n", "[topology]\nrouting = \"updown\"\n")
            + "[[traffic]]\nkind = \"all_to_all\"\n";
        let sc = parse_here(&text).unwrap();
        assert!(sc.topology.fixed_routes.is_some());
        let s = run(&sc);
        assert!(s.flows.iter().all(|f| f.delivered_bytes > 0), "{file}");
        // The import writes the same routing, with its roots, and the two runs agree.
        let imported = import_text_with(
            &data(file),
            &read(file),
            &Options {
                flows: Flows::None,
                routing: Routing::UpDown(Vec::new()),
                iblinkinfo: None,
            },
        )
        .unwrap();
        assert!(
            imported.toml.contains("routing = \"updown\"\nroots = ["),
            "{}",
            imported.toml
        );
        let saved = imported
            .toml
            .replace("duration_us = 1000", "duration_us = 40")
            + SETTINGS
            + "[[traffic]]\nkind = \"all_to_all\"\n";
        let b = scenario::parse(Path::new("x.toml"), &saved).unwrap();
        assert_eq!(sc.topology.routes(), b.topology.routes(), "{file}");
    }
    // The default root of the ring is its lowest GUID (ring0); another may be named by description or GUID.
    let sc = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"ring.txt\"\nrouting = \"updown\"\nroots = [\"0x0002c90200500003\"]\n",
    )
    .unwrap();
    let other = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"ring.txt\"\nrouting = \"updown\"\nroots = [\"ring2\"]\n",
    )
    .unwrap();
    assert_eq!(sc.topology.routes(), other.topology.routes());
    let e = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"ring.txt\"\nrouting = \"updown\"\nroots = [\"ring9\"]\n",
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("topology.roots: no switch named \"ring9\"; closest: \"ring0\""),
        "{e}"
    );
    let e = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"ring.txt\"\nrouting = \"shortest\"\n",
    )
    .unwrap_err();
    assert!(e.message.contains("\"shortest\" is not a routing"), "{e}");
    assert_eq!(e.line, 4, "{e}");
}

#[test]
fn an_explicit_ring_routes_up_down() {
    let t = common::ring_scenario(30);
    assert!(scenario::parse(Path::new("ring.toml"), &t)
        .unwrap_err()
        .message
        .contains("credit loop"));
    let t = t + "[topology]\nrouting = \"updown\"\nroots = [\"R2\"]\n[[traffic]]\nkind = \"shift\"\nk = 2\n";
    let sc = scenario::parse(Path::new("ring.toml"), &t).unwrap();
    assert_eq!(
        sc.flows.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>(),
        vec![(0, 2), (1, 3), (2, 4), (3, 0), (4, 1)]
    );
    run(&sc);
}

#[test]
fn traffic_patterns() {
    let base = "duration_us = 10\nseed = 3\n[fat_tree]\nleaves = 4\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"4xQDR\"\nfabric_rate = \"4xQDR\"\n";
    let flows = |t: &str| -> Vec<(usize, usize)> {
        scenario::parse(Path::new("t.toml"), &format!("{base}{t}"))
            .unwrap()
            .flows
            .iter()
            .map(|f| (f.src, f.dst))
            .collect()
    };
    let err = |t: &str| {
        scenario::parse(Path::new("t.toml"), &format!("{base}{t}"))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        flows("[[traffic]]\nkind = \"shift\"\nk = 3\n"),
        (0..8).map(|i| (i, (i + 3) % 8)).collect::<Vec<_>>()
    );
    let p = flows("[[traffic]]\nkind = \"permutation\"\n");
    assert_eq!(p.len(), 8);
    assert!(p.iter().all(|(s, d)| s != d));
    let mut dsts: Vec<usize> = p.iter().map(|f| f.1).collect();
    dsts.sort_unstable();
    assert_eq!(dsts, (0..8).collect::<Vec<_>>(), "a permutation");
    assert_eq!(
        p,
        flows("[[traffic]]\nkind = \"permutation\"\nseed = 3\n"),
        "the scenario's seed"
    );
    assert_ne!(p, flows("[[traffic]]\nkind = \"permutation\"\nseed = 4\n"));
    assert_eq!(
        flows("[[traffic]]\nkind = \"bisection\"\n"),
        vec![
            (0, 4),
            (4, 0),
            (1, 5),
            (5, 1),
            (2, 6),
            (6, 2),
            (3, 7),
            (7, 3)
        ]
    );
    let b = flows("[[traffic]]\nkind = \"bisection\"\nseed = 9\n");
    assert_eq!(b.len(), 8);
    assert!(b.chunks(2).all(|c| c[0] == (c[1].1, c[1].0)));
    assert_eq!(
        flows("[[traffic]]\nkind = \"incast\"\nhosts = [\"H1\", \"H2\", \"H6\"]\ndst = \"H2\"\n"),
        vec![(1, 2), (6, 2)]
    );
    assert_eq!(flows("[[traffic]]\nkind = \"all_to_all\"\n").len(), 56);
    // Many flows load in time linear in their number (names and ids are looked up, not searched).
    let t = std::time::Instant::now();
    let big = scenario::parse(
        Path::new("big.toml"),
        "duration_us = 10\n[fat_tree]\nleaves = 16\nspines = 8\nhosts_per_leaf = 16\nhost_rate = \"4xQDR\"\nfabric_rate = \"4xQDR\"\n[[traffic]]\nkind = \"all_to_all\"\nmessage_bytes = 4096\n",
    )
    .unwrap();
    assert_eq!(big.flows.len(), 256 * 255);
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
    // Flow keys carry over, ids are numbered, and written flows come first.
    let sc = scenario::parse(
        Path::new("t.toml"),
        &format!("{base}[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\n[[traffic]]\nkind = \"shift\"\nk = 1\nid = \"s\"\nsl = 2\npattern = \"poisson\"\nrate = \"1Gbps\"\nstart_us = 5\n"),
    )
    .unwrap();
    assert_eq!(sc.flows[0].id, "A");
    assert_eq!(sc.flows[1].id, "s1");
    assert_eq!(sc.flows[8].id, "s8");
    assert_eq!((sc.flows[3].sl, sc.flows[3].start_us), (2, 5));
    assert_eq!(
        sc.flows[3].pattern,
        ibcycle::scenario::FlowPattern::Poisson { rate_mbps: 1000 }
    );
    // Errors name the line and key.
    let e = err("[[traffic]]\nkind = \"shift\"\nk = 8\n");
    assert!(
        e.contains("t.toml:11: traffic[0].k: 8") && e.contains("(8 hosts)"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"shift\"\n");
    assert!(
        e.contains("t.toml:10: traffic[0]: kind \"shift\" needs k"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"tornado\"\n");
    assert!(
        e.contains("t.toml:10: traffic[0].kind: \"tornado\" is not"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"all_to_all\"\nk = 1\n");
    assert!(
        e.contains("t.toml:11: traffic[0].k: kind \"all_to_all\" takes no k"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"incast\"\nhosts = [\"H1\", \"H99\"]\n");
    assert!(
        e.contains("traffic[0].hosts: no HCA named \"H99\"; closest:"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"incast\"\nhosts = [\"H1\"]\n");
    assert!(
        e.contains("1 hosts; a traffic pattern needs at least 2"),
        "{e}"
    );
    let e = err("[[traffic]]\nkind = \"shift\"\nk = 1\n[[traffic]]\nkind = \"shift\"\nk = 1\nid = \"shift0-\"\n");
    assert!(e.contains("is used twice"), "{e}");
    // Two entries of one kind get distinct default ids.
    assert_eq!(
        flows("[[traffic]]\nkind = \"shift\"\nk = 1\n[[traffic]]\nkind = \"shift\"\nk = 2\n").len(),
        16
    );
    // An odd count leaves one host out, with a warning.
    let sc = scenario::parse(
        Path::new("t.toml"),
        &format!("{base}[[traffic]]\nkind = \"bisection\"\nhosts = [\"H0\", \"H1\", \"H2\"]\n"),
    )
    .unwrap();
    assert_eq!(sc.flows.len(), 2);
    assert!(
        sc.warnings[0].contains("\"H2\" is left out"),
        "{:?}",
        sc.warnings
    );
}

#[test]
fn the_cli_imports_a_ring_up_down_with_a_shift_and_runs_it() {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!("ibcycle-cluster-cli-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("ring.toml");
    let import = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ibcycle"))
            .args(["import", "ibnetdiscover"])
            .arg(data("ring.txt"))
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let r = import(&["--shift", "2"]);
    assert!(!r.status.success(), "min-hop on a ring is refused");
    assert!(String::from_utf8_lossy(&r.stderr).contains("credit loop"));
    let r = import(&["--shift", "2", "--updown", "--root", "ring1"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("active width and speed only"),
        "said once: {stderr}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("roots = [\"ring1\"]"), "{text}");
    assert!(
        text.contains("[[traffic]]\nkind = \"shift\"\nk = 2\n"),
        "{text}"
    );
    std::fs::write(&out, text.replace("duration_us = 1000", "duration_us = 20")).unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_ibcycle"))
        .arg("run")
        .arg(&out)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).unwrap();
    assert!(summary.contains("\"shift-8\""), "{summary}");
    // Two flow options conflict; --root needs --updown.
    assert!(!import(&["--shift", "1", "--bisection"]).status.success());
    assert!(!import(&["--root", "ring1"]).status.success());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn links_slower_than_their_ports_are_reported_from_iblinkinfo() {
    // iblinkinfo marks node1's link (from both ends: one warning) and node4's.
    let imp = import_text_with(
        &data("two-switch.txt"),
        &read("two-switch.txt"),
        &Options {
            flows: Flows::Incast,
            routing: Routing::MinHop,
            iblinkinfo: Some(data("two-switch-iblinkinfo.txt")),
        },
    )
    .unwrap();
    let warnings: Vec<&String> = imp
        .notes
        .iter()
        .filter(|n| n.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{:?}", imp.notes);
    assert!(
        warnings[0].contains("line 11: the link S-0002c90200400001:1 - node1 HCA-1 runs at 4xDDR")
            && warnings[0].contains("two-switch-iblinkinfo.txt:2) says \"Could be 10.0 Gbps\""),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("node4 HCA-1") && warnings[1].contains("Could be 4X"),
        "{}",
        warnings[1]
    );
    // The scenario records them, and no longer says the input lacks capabilities.
    assert_eq!(
        imp.toml.matches("# Note: warning: line ").count(),
        2,
        "{}",
        imp.toml
    );
    assert!(!imp.toml.contains("active width and speed only"));
    // Without iblinkinfo: said once, nothing per link.
    let plain =
        ibcycle::import::ibnetdiscover::import_file(&data("two-switch.txt"), Flows::None).unwrap();
    assert_eq!(plain.toml.matches("active width and speed only").count(), 1);
    // In place: the same warnings as notes.
    let sc = parse_here(
        "duration_us = 10\n[topology]\nibnetdiscover = \"two-switch.txt\"\niblinkinfo = \"two-switch-iblinkinfo.txt\"\n",
    )
    .unwrap();
    assert_eq!(
        sc.notes
            .iter()
            .filter(|n| n.contains("warning: line "))
            .count(),
        2,
        "{:?}",
        sc.notes
    );
    // A switch iblinkinfo has but the fabric lacks is an error naming iblinkinfo's line.
    let bad = read("two-switch-iblinkinfo.txt")
        .replace("Switch: 0x0002c90200400002", "Switch: 0x0002c902004000ff");
    let dir = std::env::temp_dir().join(format!("ibcycle-iblinkinfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data("two-switch.txt"), dir.join("f.txt")).unwrap();
    std::fs::write(dir.join("i.txt"), bad).unwrap();
    let e = scenario::parse(
        &dir.join("s.toml"),
        "duration_us = 10\n[topology]\nibnetdiscover = \"f.txt\"\niblinkinfo = \"i.txt\"\n",
    )
    .unwrap_err();
    assert_eq!((e.file.clone(), e.line), (dir.join("i.txt"), 6), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
