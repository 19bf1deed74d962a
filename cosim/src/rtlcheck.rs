//! `ibcycle rtl-check`: a user's switch RTL, Verilated from its port map ([`crate::portmap`]), driven at
//! packet level by the scoreboard's bench ([`crate::scoreboard::bench`]) beside the golden model.
//!
//! The build: Verilator is run once to elaborate the user's files and read the top module's ports (from the
//! generated `Vrtl.h`); the map is checked against them; a C++ harness is generated that drives every input
//! and reads every output of the top module each cycle over a pipe (a process of its own, so the user's model
//! needs no Rust and no linking); Verilator then builds it (`--exe --build`). Builds are cached by a hash of
//! the map, the sources, the defines and the harness generator, under the build root.
//!
//! Per cycle the Rust side sends the input ports' values and reads the outputs' (sampled after the inputs
//! are applied with the clock low, then the clock rises: the convention of the lockstep co-simulation). On
//! top of that, [`RtlDut`] turns packets into beats (paced at the port's link rate: a beat goes when its
//! last byte has arrived), flow-control packets into the map's 32-bit words, and beats out back into
//! packets. With `config = "ib_switch"` the held configuration ports are loaded from the golden
//! configuration (`crate::switch::rtl_config`) and the LFT and SL2VL tables written during reset.

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rtl_model::link::packet::FcPacket;
use switch_asic::SwitchConfig;

use crate::portmap::{ByteOrder, ConfigStyle, FillUnit, PortMap, Sig};
use crate::scoreboard::bench::{DutOut, PacketDut};

/// Why rtl-check could not build or run the RTL.
#[derive(Debug, thiserror::Error)]
pub enum RtlCheckError {
    /// Verilator is missing or too old.
    #[error("Verilator not found or older than 5 ({0}): rtl-check needs it (`apt-get install verilator`)")]
    NoVerilator(String),
    /// The map does not fit the RTL.
    #[error(transparent)]
    Map(#[from] crate::portmap::PortMapError),
    /// Verilator or the C++ build failed.
    #[error("building the RTL failed: {0}")]
    Build(String),
    /// The configuration cannot be put on the RTL.
    #[error("configuring the RTL: {0}")]
    Config(String),
    /// The simulation process failed.
    #[error("the simulation stopped at cycle {cycle}: {msg}")]
    Sim {
        /// Cycle (counted from the first reset cycle).
        cycle: u64,
        /// What happened (the simulator's messages).
        msg: String,
    },
    /// I/O.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A top-level port of the RTL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtlPort {
    /// Name.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// Input (else output).
    pub input: bool,
}

impl RtlPort {
    fn words(&self) -> usize {
        self.width.div_ceil(32) as usize
    }
}

/// The top module's ports from the Verilated header (`VL_IN8(&clk,0,0);`, `VL_INW(&d,511,0,16);`, ...).
pub fn ports_of_header(h: &str) -> Vec<RtlPort> {
    let mut out = Vec::new();
    for line in h.lines() {
        let t = line.trim();
        let (input, rest) = if let Some(r) = t.strip_prefix("VL_IN") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("VL_OUT") {
            (false, r)
        } else {
            continue;
        };
        let Some(open) = rest.find("(&") else {
            continue;
        };
        let args: Vec<&str> = rest[open + 2..]
            .trim_end_matches(';')
            .trim_end_matches(')')
            .split(',')
            .map(str::trim)
            .collect();
        if args.len() < 3 {
            continue;
        }
        let (Ok(msb), Ok(lsb)) = (args[1].parse::<u32>(), args[2].parse::<u32>()) else {
            continue;
        };
        out.push(RtlPort {
            name: args[0].to_string(),
            width: msb - lsb + 1,
            input,
        });
    }
    out
}

fn verilator_version() -> Result<String, RtlCheckError> {
    let o = Command::new("verilator")
        .arg("--version")
        .output()
        .map_err(|e| RtlCheckError::NoVerilator(e.to_string()))?;
    let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let major: u32 = v
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.split('.').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    if !o.status.success() || major < 5 {
        return Err(RtlCheckError::NoVerilator(v));
    }
    Ok(v)
}

/// A built simulation: its executable and the top module's ports.
#[derive(Debug, Clone)]
pub struct Built {
    /// The harness executable.
    pub exe: PathBuf,
    /// The top module's ports, in the header's order.
    pub ports: Vec<RtlPort>,
    /// The clock port's name (driven by the harness).
    pub clock: String,
    /// Whether this build came from the cache.
    pub cached: bool,
}

fn fnv(h: &mut u64, b: &[u8]) {
    for &x in b {
        *h ^= u64::from(x);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Bumped when the harness generator changes, so cached builds are not reused.
const HARNESS_VERSION: &str = "rtl-check harness 4";

/// Verilates and builds `map`'s RTL with the extra `defines` (for fault variants; their model is built
/// without `--assert`, as the co-simulation builds its variants), under `root`; with `trace`, able to write
/// a VCD (a larger build: a run builds it only to show a violation); with `quick`, its C++ compiled at
/// `-Og` instead of Verilator's default `-Os` (GCC in about half the time, a somewhat slower
/// model; for a model that runs briefly, as a fault variant until its first violation).
pub fn build(
    map: &PortMap,
    defines: &[String],
    root: &Path,
    trace: bool,
    quick: bool,
) -> Result<Built, RtlCheckError> {
    let version = verilator_version()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    fnv(&mut h, HARNESS_VERSION.as_bytes());
    fnv(&mut h, if trace { b"trace" } else { b"notrace" });
    fnv(&mut h, if quick { b"-Og" } else { b"-Os" });
    fnv(&mut h, version.as_bytes());
    fnv(&mut h, map.top.as_bytes());
    // Paths as canonical (a map read through a symbolic link builds the same model).
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for s in &map.sources {
        fnv(&mut h, canon(s).display().to_string().as_bytes());
        fnv(
            &mut h,
            &std::fs::read(s).map_err(|e| RtlCheckError::Build(format!("{}: {e}", s.display())))?,
        );
    }
    // Files the sources include or find by module name: every .sv/.v/.svh beside them and in the include
    // directories.
    let mut dirs: Vec<PathBuf> = map.include_dirs.iter().map(|d| canon(d)).collect();
    for s in &map.sources {
        if let Some(d) = canon(s).parent() {
            dirs.push(d.to_path_buf());
        }
    }
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        let mut fs: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        fs.sort();
        for f in fs {
            if f.extension()
                .is_some_and(|x| x == "sv" || x == "v" || x == "svh")
            {
                fnv(&mut h, canon(&f).display().to_string().as_bytes());
                fnv(&mut h, &std::fs::read(&f).unwrap_or_default());
            }
        }
    }
    for (k, v) in &map.defines {
        fnv(&mut h, format!("-D{k}={v}").as_bytes());
    }
    for (k, v) in &map.parameters {
        fnv(&mut h, format!("-G{k}={v}").as_bytes());
    }
    for d in defines {
        fnv(&mut h, d.as_bytes());
    }
    let dir = root.join(format!("{}-{h:016x}", map.top));
    std::fs::create_dir_all(root)?;
    // One build of a model at a time (tests in parallel processes may ask for the same one).
    let _lock = BuildLock::take(&root.join(format!("{}-{h:016x}.lock", map.top)))?;
    let exe = dir.join("obj").join("rtlcheck_sim");
    let ports_file = dir.join("ports.txt");
    let clock = map.clock.port.clone();
    if exe.exists() && ports_file.exists() {
        let ports = read_ports(&std::fs::read_to_string(&ports_file)?);
        map.check_ports(&triples(&ports))?;
        return Ok(Built {
            exe,
            ports,
            clock,
            cached: true,
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let base = |extra: &[&str]| {
        let mut c = Command::new("verilator");
        c.args([
            "--cc",
            "--prefix",
            "Vrtl",
            "--top-module",
            &map.top,
            "-Mdir",
        ])
        .arg(dir.join("obj"))
        .args([
            "-O3",
            "--x-assign",
            "fast",
            "--x-initial",
            "fast",
            "-Wno-fatal",
        ])
        .args(extra);
        // Tracing code is a fifth of the model's compile time: only a build that writes a VCD has it.
        if trace {
            c.arg("--trace");
        }
        c.arg(if defines.is_empty() {
            "--assert"
        } else {
            "--noassert"
        });
        for (k, v) in &map.parameters {
            c.arg(format!("-G{k}={v}"));
        }
        for (k, v) in &map.defines {
            c.arg(format!("-D{k}={v}"));
        }
        for d in defines {
            c.arg(format!("-D{d}"));
        }
        for d in &dirs {
            c.arg(format!("-I{}", d.display())).arg("-y").arg(d);
        }
        c.args(&map.sources);
        c
    };
    // One Verilator run writes the model and its makefile; the harness it names is written after, from the
    // ports the model's header declares.
    let cpp = dir.join("harness.cpp");
    std::fs::write(&cpp, "")?;
    let cpp_s = cpp.display().to_string();
    run_tool(
        base(&["--exe", &cpp_s, "-o", "rtlcheck_sim"]),
        "verilator",
        RtlCheckError::NoVerilator,
    )?;
    let header = std::fs::read_to_string(dir.join("obj").join("Vrtl.h"))?;
    let ports = ports_of_header(&header);
    map.check_ports(&triples(&ports))?;
    std::fs::write(&cpp, harness_cpp(&ports, &clock, trace))?;
    let opt = if quick { "-Og" } else { "-Os" };
    let runtime = runtime_objects(root, &version, opt, trace)?;
    // The Verilator runtime's objects, compiled once per cache (they depend only on the Verilator version,
    // the optimisation and tracing), copied in after the makefile (newer than it, so make keeps them).
    for o in &runtime {
        let name = o.file_name().expect("a runtime object's file name");
        std::fs::copy(o, dir.join("obj").join(name))?;
    }
    make_model(&dir.join("obj"), opt)?;
    std::fs::write(&ports_file, write_ports(&ports))?;
    Ok(Built {
        exe,
        ports,
        clock,
        cached: false,
    })
}

/// Builds the harness executable in a Verilated model's directory with Verilator's own makefile, the model
/// compiled as two translation units: the code that runs every cycle at `opt`, and the code Verilator marks
/// as run once or rarely (its `__Slow` files: construction, initial blocks, the settle pass, a third of the
/// C++) at `-O0`. Two units, not Verilator's file per unit (each file would parse Verilator's headers again,
/// a third of the compile time alone) nor its one unit at `opt` (at `-Os` the run-once code took 30 of an
/// 8-port switch's 102 CPU-seconds of GCC 12, at `-O0` 9).
fn make_model(obj: &Path, opt: &str) -> Result<(), RtlCheckError> {
    let classes = std::fs::read_to_string(obj.join("Vrtl_classes.mk"))?;
    // A Verilator whose class lists read otherwise would leave the units empty and fail at the link.
    if mk_list(&classes, "VM_CLASSES_FAST").is_empty() {
        return Err(RtlCheckError::Build(format!(
            "no model classes (VM_CLASSES_FAST) in {}",
            obj.join("Vrtl_classes.mk").display()
        )));
    }
    for (unit, lists) in [
        ("Vrtl__fast", ["VM_CLASSES_FAST", "VM_SUPPORT_FAST"]),
        ("Vrtl__slow", ["VM_CLASSES_SLOW", "VM_SUPPORT_SLOW"]),
    ] {
        let mut text = String::from("// Generated by ibcycle rtl-check: one translation unit.\n");
        for f in lists.iter().flat_map(|l| mk_list(&classes, l)) {
            text.push_str(&format!("#include \"{f}.cpp\"\n"));
        }
        std::fs::write(obj.join(format!("{unit}.cpp")), text)?;
    }
    let jobs = std::thread::available_parallelism()
        .map_or(1, |n| n.get().min(4))
        .to_string();
    let mut c = Command::new("make");
    // The makefile's lists replaced by the two units (a variable on make's command line overrides the
    // makefile's own assignments); its parallel scheme compiles each listed unit on its own, the fast ones
    // at OPT_FAST and the slow ones at OPT_SLOW.
    c.arg("-C")
        .arg(obj)
        .args(["-f", "Vrtl.mk", "-j", &jobs, "VM_PARALLEL_BUILDS=1"])
        .args([
            "VM_CLASSES_FAST=Vrtl__fast",
            "VM_CLASSES_SLOW=Vrtl__slow",
            "VM_SUPPORT_FAST=",
            "VM_SUPPORT_SLOW=",
            "OPT_SLOW=-O0",
        ])
        .arg(format!("OPT_FAST={opt}"))
        .arg(format!("OPT_GLOBAL={opt}"))
        .arg("rtlcheck_sim");
    run_tool(c, "make (the Verilated model)", RtlCheckError::Build)
}

/// The names a Verilator class-list makefile assigns to `var` (`VAR += \` then a name per line).
fn mk_list<'a>(mk: &'a str, var: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut on = false;
    for line in mk.lines() {
        let t = line.trim();
        if on {
            let name = t.trim_end_matches('\\').trim();
            if name.is_empty() {
                on = false;
            } else {
                out.push(name);
            }
        } else if t
            .strip_prefix(var)
            .is_some_and(|r| r.trim_start().starts_with("+="))
        {
            on = true;
        }
    }
    out
}

/// A plusarg is `+NAME` or `+NAME=VALUE` with a non-empty name of printable characters (no spaces): anything
/// else would reach the simulation as something it does not read as a plusarg, silently.
fn check_plusargs(plusargs: &[String]) -> Result<(), RtlCheckError> {
    for a in plusargs {
        let name = a
            .strip_prefix('+')
            .map(|r| r.split('=').next().unwrap_or(""));
        let ok = name.is_some_and(|n| !n.is_empty()) && a.chars().all(|c| c.is_ascii_graphic());
        if !ok {
            return Err(RtlCheckError::Config(format!(
                "plusarg {a:?}: expected +NAME or +NAME=VALUE (printable, no spaces)"
            )));
        }
    }
    Ok(())
}

/// Runs a build tool, `what` naming it in the error: `missing` when it cannot be started, its output when
/// it fails.
fn run_tool(
    mut c: Command,
    what: &str,
    missing: fn(String) -> RtlCheckError,
) -> Result<(), RtlCheckError> {
    let o = c.output().map_err(|e| missing(format!("{what}: {e}")))?;
    if !o.status.success() {
        return Err(RtlCheckError::Build(format!(
            "{what}:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )));
    }
    Ok(())
}

/// The Verilator runtime's objects for builds at `opt` with or without tracing, compiled once under `root`
/// (by Verilator's own makefile, for a one-line model) and shared by every build there.
fn runtime_objects(
    root: &Path,
    version: &str,
    opt: &str,
    trace: bool,
) -> Result<Vec<PathBuf>, RtlCheckError> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    fnv(&mut h, HARNESS_VERSION.as_bytes());
    fnv(&mut h, version.as_bytes());
    fnv(&mut h, opt.as_bytes());
    fnv(&mut h, if trace { b"trace" } else { b"notrace" });
    let dir = root.join(format!("verilated-runtime-{h:016x}"));
    let _lock = BuildLock::take(&root.join(format!("verilated-runtime-{h:016x}.lock")))?;
    let mut names = vec!["verilated.o", "verilated_threads.o"];
    if trace {
        names.push("verilated_vcd_c.o");
    }
    let objs: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    if objs.iter().all(|o| o.exists()) {
        return Ok(objs);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let work = dir.join("work");
    std::fs::create_dir_all(&work)?;
    let sv = work.join("rt.sv");
    std::fs::write(
        &sv,
        "module rt(input logic clk, output logic q);\n  always_ff @(posedge clk) q <= ~q;\nendmodule\n",
    )?;
    let mut c = Command::new("verilator");
    c.args(["--cc", "--prefix", "Vrtl", "-Mdir"]).arg(&work);
    if trace {
        c.arg("--trace");
    }
    c.arg(&sv);
    run_tool(c, "verilator (the runtime)", RtlCheckError::NoVerilator)?;
    let mut c = Command::new("make");
    c.arg("-C")
        .arg(&work)
        .args(["-f", "Vrtl.mk"])
        .arg(format!("OPT_GLOBAL={opt}"))
        .args(&names);
    run_tool(c, "make (the Verilator runtime)", RtlCheckError::Build)?;
    for (n, o) in names.iter().zip(&objs) {
        std::fs::rename(work.join(n), o)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(objs)
}

/// An exclusive advisory lock (`flock`) on a lock file, held while a model is built or read from the cache.
/// The kernel releases it when the holder's file is closed, however its process ends (a panic, a kill), so
/// no lock is ever left stale; the file itself stays (removing it would let a second process lock a new
/// file while a third still holds the old one).
struct BuildLock {
    _file: std::fs::File,
}

impl BuildLock {
    fn take(path: &Path) -> Result<Self, RtlCheckError> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        file.lock()?;
        Ok(BuildLock { _file: file })
    }
}

fn triples(ports: &[RtlPort]) -> Vec<(String, u32, bool)> {
    ports
        .iter()
        .map(|p| (p.name.clone(), p.width, p.input))
        .collect()
}

fn write_ports(ports: &[RtlPort]) -> String {
    ports
        .iter()
        .map(|p| {
            format!(
                "{} {} {}\n",
                p.name,
                p.width,
                if p.input { "in" } else { "out" }
            )
        })
        .collect()
}

fn read_ports(t: &str) -> Vec<RtlPort> {
    t.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some(RtlPort {
                name: it.next()?.to_string(),
                width: it.next()?.parse().ok()?,
                input: it.next()? == "in",
            })
        })
        .collect()
}

/// The C++ harness: per step command, the inputs (every input port but the clock, 32-bit words, lowest
/// first) are applied with the clock low, the model evaluated, a status byte and the outputs written back,
/// then the clock rises. A `T` command opens a VCD dumped for a window of cycles.
fn harness_cpp(ports: &[RtlPort], clock: &str, trace: bool) -> String {
    let mut set_in = String::new();
    let mut get_out = String::new();
    let mut nin = 0usize;
    let mut nout = 0usize;
    for p in ports {
        let w = p.words();
        if p.input && p.name == clock {
            continue;
        }
        if p.input {
            let line = match p.width {
                0..=32 => format!("    t->{} = w[{nin}];\n", p.name),
                33..=64 => format!(
                    "    t->{} = (uint64_t)w[{nin}] | ((uint64_t)w[{}] << 32);\n",
                    p.name,
                    nin + 1
                ),
                _ => format!(
                    "    for (int i = 0; i < {w}; ++i) t->{}[i] = w[{nin} + i];\n",
                    p.name
                ),
            };
            set_in.push_str(&line);
            nin += w;
        } else {
            let line = match p.width {
                0..=32 => format!("    o[{nout}] = t->{};\n", p.name),
                33..=64 => format!(
                    "    o[{nout}] = (uint32_t)t->{name}; o[{n1}] = (uint32_t)(t->{name} >> 32);\n",
                    n1 = nout + 1,
                    name = p.name
                ),
                _ => format!(
                    "    for (int i = 0; i < {w}; ++i) o[{nout} + i] = t->{}[i];\n",
                    p.name
                ),
            };
            get_out.push_str(&line);
            nout += w;
        }
    }
    format!(
        r#"// Generated by ibcycle rtl-check: drives the Verilated top module over stdin/stdout.
#include "Vrtl.h"
#include "verilated.h"
{vcd_inc}#include <cstdint>
#include <cstdio>
#include <string>

static bool rd(void* p, size_t n) {{ return std::fread(p, 1, n, stdin) == n; }}

int main(int argc, char** argv) {{
    VerilatedContext* ctx = new VerilatedContext;
    ctx->threads(1);
    ctx->fatalOnError(false);
    ctx->traceEverOn(true);
    ctx->commandArgs(argc, argv);
    Vrtl* t = new Vrtl{{ctx, "TOP"}};
{vcd_decl}    uint64_t from = 0, to = 0, cyc = 0;
    static uint32_t w[{nin} + 1];
    static uint32_t o[{nout} + 1];
    static char obuf[1 << 16];
    std::setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    for (;;) {{
        int cmd = std::getc(stdin);
        if (cmd == EOF || cmd == 'Q') break;
        if (cmd == 'T') {{
            uint32_t len = 0;
            if (!rd(&from, 8) || !rd(&to, 8) || !rd(&len, 4)) break;
            std::string path(len, '\0');
            if (len && !rd(&path[0], len)) break;
{vcd_open}            continue;
        }}
        if (cmd != 'S') break;
        if ({nin} && !rd(w, 4 * {nin})) break;
        t->{clock} = 0;
{set_in}        t->eval();
        bool dump = cyc >= from && cyc < to;
{dump0}
        unsigned char st = ctx->gotFinish() ? (ctx->gotError() ? 2 : 1) : 0;
{get_out}        t->{clock} = 1;
        t->eval();
{dump5}
        if (!st && ctx->gotFinish()) st = ctx->gotError() ? 2 : 1;
        std::fputc(st, stdout);
        if ({nout}) std::fwrite(o, 4, {nout}, stdout);
        std::fflush(stdout);
        ++cyc;
        if (st) break;
    }}
{vcd_close}    t->final();
    delete t;
    delete ctx;
    return 0;
}}
"#,
        vcd_inc = if trace {
            "#include \"verilated_vcd_c.h\"\n"
        } else {
            ""
        },
        vcd_decl = if trace {
            "    VerilatedVcdC* vcd = nullptr;\n"
        } else {
            ""
        },
        vcd_open = if trace {
            "            vcd = new VerilatedVcdC;\n            t->trace(vcd, 99);\n            vcd->open(path.c_str());\n"
        } else {
            ""
        },
        dump0 = if trace {
            "        if (dump && vcd) vcd->dump(10 * cyc);\n"
        } else {
            "        (void)dump;\n"
        },
        dump5 = if trace {
            "        if (dump && vcd) vcd->dump(10 * cyc + 5);\n"
        } else {
            ""
        },
        vcd_close = if trace {
            "    if (vcd) { vcd->close(); delete vcd; }\n"
        } else {
            ""
        },
    )
}

/// A running simulation process.
#[derive(Debug)]
pub struct Sim {
    child: Child,
    tx: BufWriter<ChildStdin>,
    rx: BufReader<ChildStdout>,
    /// Input ports (clock excluded) and their word offsets.
    ins: Vec<(RtlPort, usize)>,
    outs: Vec<(RtlPort, usize)>,
    /// Input words.
    pub inw: Vec<u32>,
    /// Output words after the last step.
    pub outw: Vec<u32>,
    cycle: u64,
    stderr_path: PathBuf,
}

impl Sim {
    /// Starts `built`'s executable with the run-time `plusargs` (each `+NAME` or `+NAME=VALUE`, read by the
    /// RTL's `$test$plusargs`/`$value$plusargs`); with `vcd`, dumps cycles `[from, to)` to that file.
    pub fn start(
        built: &Built,
        plusargs: &[String],
        vcd: Option<(&Path, u64, u64)>,
    ) -> Result<Self, RtlCheckError> {
        check_plusargs(plusargs)?;
        let stderr_path = built
            .exe
            .with_file_name(format!("stderr-{}.txt", std::process::id()));
        let errf = std::fs::File::create(&stderr_path)?;
        let mut child = Command::new(&built.exe)
            .args(plusargs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(errf)
            .spawn()?;
        let tx = BufWriter::new(child.stdin.take().expect("piped"));
        let rx = BufReader::new(child.stdout.take().expect("piped"));
        let mut ins = Vec::new();
        let mut outs = Vec::new();
        let (mut ni, mut no) = (0, 0);
        for p in &built.ports {
            if p.input && p.name == built.clock {
                continue;
            }
            if p.input {
                ins.push((p.clone(), ni));
                ni += p.words();
            } else {
                outs.push((p.clone(), no));
                no += p.words();
            }
        }
        let mut s = Sim {
            child,
            tx,
            rx,
            ins,
            outs,
            inw: vec![0; ni],
            outw: vec![0; no],
            cycle: 0,
            stderr_path,
        };
        if let Some((path, from, to)) = vcd {
            let p = path.display().to_string();
            s.tx.write_all(b"T")?;
            s.tx.write_all(&from.to_le_bytes())?;
            s.tx.write_all(&to.to_le_bytes())?;
            s.tx.write_all(&(p.len() as u32).to_le_bytes())?;
            s.tx.write_all(p.as_bytes())?;
        }
        Ok(s)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Where input `sig` lives: (word offset of its port, bit offset, width).
    pub fn in_slot(&self, sig: &Sig) -> Option<(usize, u32, u32)> {
        let (p, at) = self.ins.iter().find(|(p, _)| p.name == sig.port)?;
        Some((*at, sig.lo, sig.width(p.width)))
    }

    /// Where output `sig` lives.
    pub fn out_slot(&self, sig: &Sig) -> Option<(usize, u32, u32)> {
        let (p, at) = self.outs.iter().find(|(p, _)| p.name == sig.port)?;
        Some((*at, sig.lo, sig.width(p.width)))
    }

    /// One clock cycle with the current inputs; the outputs are in `outw` after it.
    pub fn step(&mut self) -> Result<(), RtlCheckError> {
        let mut buf = Vec::with_capacity(1 + 4 * self.inw.len());
        buf.push(b'S');
        for w in &self.inw {
            buf.extend_from_slice(&w.to_le_bytes());
        }
        let fail = |s: &Self, e: String| RtlCheckError::Sim {
            cycle: s.cycle,
            msg: format!("{e}\n{}", s.stderr()),
        };
        if let Err(e) = self.tx.write_all(&buf).and_then(|_| self.tx.flush()) {
            return Err(fail(self, e.to_string()));
        }
        let mut st = [0u8; 1];
        if let Err(e) = self.rx.read_exact(&mut st) {
            return Err(fail(self, format!("the simulation process ended ({e})")));
        }
        let mut ob = vec![0u8; 4 * self.outw.len()];
        if let Err(e) = self.rx.read_exact(&mut ob) {
            return Err(fail(self, e.to_string()));
        }
        for (i, c) in ob.chunks_exact(4).enumerate() {
            self.outw[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        self.cycle += 1;
        if st[0] != 0 {
            return Err(fail(
                self,
                if st[0] == 1 {
                    "$finish".into()
                } else {
                    "$fatal, $stop or an assertion".into()
                },
            ));
        }
        Ok(())
    }

    /// Ends the process (its VCD is closed).
    pub fn quit(mut self) {
        let _ = self.tx.write_all(b"Q");
        let _ = self.tx.flush();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}

/// Writes `width` bits of `v` at bit `at` of the words starting at word `base`.
fn put_bits(words: &mut [u32], base: usize, at: u32, width: u32, v: u64) {
    for i in 0..width {
        let b = at + i;
        let w = base + (b / 32) as usize;
        let bit = 1u32 << (b % 32);
        let on = i < 64 && (v >> i) & 1 == 1;
        if let Some(x) = words.get_mut(w) {
            if on {
                *x |= bit;
            } else {
                *x &= !bit;
            }
        }
    }
}

fn get_bits(words: &[u32], base: usize, at: u32, width: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..width.min(64) {
        let b = at + i;
        let w = base + (b / 32) as usize;
        if words.get(w).is_some_and(|x| (x >> (b % 32)) & 1 == 1) {
            v |= 1 << i;
        }
    }
    v
}

/// A slot of a signal, resolved once.
#[derive(Debug, Clone, Copy)]
struct Slot {
    base: usize,
    at: u32,
    width: u32,
}

impl Slot {
    fn set(&self, w: &mut [u32], v: u64) {
        put_bits(w, self.base, self.at, self.width, v);
    }
    fn get(&self, w: &[u32]) -> u64 {
        get_bits(w, self.base, self.at, self.width)
    }
    fn set_bytes(&self, w: &mut [u32], bytes: &[u8], order: ByteOrder) {
        let n = (self.width / 8) as usize;
        for k in 0..n {
            let x = bytes.get(k).copied().unwrap_or(0);
            let pos = match order {
                ByteOrder::LsbFirst => k,
                ByteOrder::MsbFirst => n - 1 - k,
            };
            put_bits(w, self.base, self.at + 8 * pos as u32, 8, u64::from(x));
        }
    }
    fn get_bytes(&self, w: &[u32], order: ByteOrder, out: &mut Vec<u8>, count: usize) {
        let n = (self.width / 8) as usize;
        for k in 0..count.min(n) {
            let pos = match order {
                ByteOrder::LsbFirst => k,
                ByteOrder::MsbFirst => n - 1 - k,
            };
            out.push(get_bits(w, self.base, self.at + 8 * pos as u32, 8) as u8);
        }
    }
}

#[derive(Debug, Clone)]
struct StreamSlots {
    data: Slot,
    valid: Slot,
    sop: Slot,
    eop: Slot,
    bytes: Option<Slot>,
    keep: Option<Slot>,
    ready: Option<Slot>,
}

#[derive(Debug, Clone)]
struct PortSlots {
    rx: StreamSlots,
    tx: StreamSlots,
    /// IB: flow-control packets in and out (valid, data).
    fc_rx: Option<(Slot, Slot)>,
    fc_tx: Option<(Slot, Slot)>,
    /// RoCEv2: pause frames in and out (valid, enable, quanta).
    pause_rx: Option<(Slot, Slot, Slot)>,
    pause_tx: Option<(Slot, Slot, Slot)>,
    /// The fill tap per VL, when mapped.
    fill: Vec<Slot>,
    /// The marking-state tap (a bit per VL), when mapped.
    mark_state: Option<Slot>,
}

#[derive(Debug, Clone, Default)]
struct RxState {
    /// Packets waiting, with the cycle they were handed in.
    queue: VecDeque<(u64, Vec<u8>)>,
    /// Beats of the head packet sent.
    beat: usize,
    fcs: VecDeque<FcPacket>,
    pauses: VecDeque<rtl_model::wire::pfc::Repr>,
}

#[derive(Debug, Clone, Default)]
struct TxState {
    bytes: Vec<u8>,
    start: u64,
    open: bool,
}

/// The user's RTL behind its port map, as the bench's switch under test.
#[derive(Debug)]
pub struct RtlDut {
    sim: Sim,
    map: PortMap,
    slots: Vec<PortSlots>,
    rates: Vec<rtl_model::link::rate::LinkRate>,
    rx: Vec<RxState>,
    tx: Vec<TxState>,
    /// Cycles since the end of reset.
    now: u64,
    /// Cycles of reset (and table loading) before cycle 0.
    pub reset_cycles: u64,
    /// The fill taps read after the last step, per port and VL, in 64-byte blocks (a tap in bytes rounded
    /// up).
    fills: Vec<Vec<u32>>,
    /// The marking-state taps read after the last step, per port (a bit per VL; 0 when not mapped).
    marks: Vec<u16>,
}

impl RtlDut {
    /// Starts the simulation of `built` for the switch `cfg` (ports' rates and, with `config =
    /// "ib_switch"`, the configuration loaded through the ports), holds reset while configuring, and
    /// releases it. `plusargs` go to the simulation's command line (see [`Sim::start`]). With `vcd`, the
    /// window `[from, to)` (in cycles after reset) is dumped there.
    pub fn new(
        built: &Built,
        map: &PortMap,
        cfg: &SwitchConfig,
        plusargs: &[String],
        vcd: Option<(&Path, u64, u64)>,
    ) -> Result<Self, RtlCheckError> {
        // A switch of fewer ports than the RTL leaves the RTL's last ports idle (with `config =
        // "ib_switch"` they get a valid idle configuration).
        if cfg.ports.len() > map.ports.len() {
            return Err(RtlCheckError::Config(format!(
                "the switch has {} ports, the map {}",
                cfg.ports.len(),
                map.ports.len()
            )));
        }
        // The map's link kind is the configuration's on every port it drives.
        for p in 0..cfg.ports.len() {
            let k = crate::scoreboard::LinkKind::of(cfg, p);
            if k != map.link {
                return Err(RtlCheckError::Config(format!(
                    "port {p} of the switch configuration is {k:?} (a RoCEv2 port is one with PFC), the map's link {:?}",
                    map.link
                )));
            }
        }
        // Reset and configuration cycles come first; the window is shifted by them.
        let (held, tables) = configuration(map, cfg)?;
        let pre = map.reset_cycles.max(tables.len() as u64 + 2);
        let sim = Sim::start(built, plusargs, vcd.map(|(p, a, b)| (p, a + pre, b + pre)))?;
        let res = |s: &Sig| {
            sim.in_slot(s)
                .or_else(|| sim.out_slot(s))
                .map(|(base, at, width)| Slot { base, at, width })
                .ok_or_else(|| RtlCheckError::Config(format!("no port {}", s.port)))
        };
        let stream = |s: &crate::portmap::Stream| -> Result<StreamSlots, RtlCheckError> {
            Ok(StreamSlots {
                data: res(&s.data)?,
                valid: res(&s.valid)?,
                sop: res(&s.sop)?,
                eop: res(&s.eop)?,
                bytes: s.bytes.as_ref().map(res).transpose()?,
                keep: s.keep.as_ref().map(res).transpose()?,
                ready: s.ready.as_ref().map(res).transpose()?,
            })
        };
        let fc = |f: &Option<crate::portmap::FcPort>| {
            f.as_ref()
                .map(|f| Ok::<_, RtlCheckError>((res(&f.valid)?, res(&f.data)?)))
                .transpose()
        };
        let pause = |f: &Option<crate::portmap::PausePort>| {
            f.as_ref()
                .map(|f| Ok::<_, RtlCheckError>((res(&f.valid)?, res(&f.enable)?, res(&f.quanta)?)))
                .transpose()
        };
        let mut slots = Vec::new();
        for ps in &map.ports {
            slots.push(PortSlots {
                rx: stream(&ps.rx)?,
                tx: stream(&ps.tx)?,
                fc_rx: fc(&ps.fc_rx)?,
                fc_tx: fc(&ps.fc_tx)?,
                pause_rx: pause(&ps.pause_rx)?,
                pause_tx: pause(&ps.pause_tx)?,
                fill: ps.fill.iter().map(res).collect::<Result<_, _>>()?,
                mark_state: ps.mark_state.as_ref().map(res).transpose()?,
            });
        }
        let rst = res(&map.reset)?;
        let ties: Vec<(Slot, u64)> = map
            .ties
            .iter()
            .map(|(s, v)| Ok((res(s)?, *v)))
            .collect::<Result<_, RtlCheckError>>()?;
        let tbl = |n: &str| Sig {
            port: format!("{}{n}", map.config_prefix),
            lo: 0,
            hi: None,
            line: 0,
            key: String::new(),
        };
        let tbl_slots = if tables.is_empty() {
            None
        } else {
            Some((
                res(&tbl("tbl_we_i"))?,
                res(&tbl("tbl_sel_i"))?,
                res(&tbl("tbl_addr_i"))?,
                res(&tbl("tbl_data_i"))?,
            ))
        };
        let mut held_slots = Vec::new();
        for (name, width, lanes) in &held {
            let Some((base, _, pw)) = sim.in_slot(&Sig {
                port: name.clone(),
                lo: 0,
                hi: None,
                line: 0,
                key: String::new(),
            }) else {
                return Err(RtlCheckError::Config(format!(
                    "config = \"ib_switch\": the RTL has no input {name}"
                )));
            };
            held_slots.push((base, pw, *width, lanes.clone()));
        }
        let mut d = RtlDut {
            sim,
            map: map.clone(),
            slots,
            rates: cfg.ports.iter().map(|p| p.rate).collect(),
            rx: vec![RxState::default(); map.ports.len()],
            tx: vec![TxState::default(); map.ports.len()],
            now: 0,
            reset_cycles: pre,
            fills: map.ports.iter().map(|p| vec![0; p.fill.len()]).collect(),
            marks: vec![0; map.ports.len()],
        };
        for (sl, v) in &ties {
            sl.set(&mut d.sim.inw, *v);
        }
        for (base, pw, width, lanes) in &held_slots {
            for (l, &x) in lanes.iter().enumerate() {
                let at = l as u32 * width;
                if at + width <= *pw {
                    put_bits(&mut d.sim.inw, *base, at, *width, x);
                }
            }
        }
        // tx ready, when mapped, is always on.
        for p in 0..d.slots.len() {
            if let Some(r) = d.slots[p].tx.ready {
                r.set(&mut d.sim.inw, 1);
            }
        }
        let assert_rst = u64::from(!map.reset_active_low);
        rst.set(&mut d.sim.inw, assert_rst);
        let (we, sel, addr, data) = match tbl_slots {
            Some((a, b, c, e)) => (Some(a), Some(b), Some(c), Some(e)),
            None => (None, None, None, None),
        };
        for c in 0..pre {
            if let (Some(we), Some(sel), Some(addr), Some(data)) = (we, sel, addr, data) {
                match tables.get(c as usize) {
                    Some(&(s, a, x)) => {
                        we.set(&mut d.sim.inw, 1);
                        sel.set(&mut d.sim.inw, s);
                        addr.set(&mut d.sim.inw, a);
                        data.set(&mut d.sim.inw, x);
                    }
                    None => we.set(&mut d.sim.inw, 0),
                }
            }
            d.sim.step()?;
        }
        rst.set(&mut d.sim.inw, 1 - assert_rst);
        Ok(d)
    }

    /// Ends the simulation.
    pub fn quit(self) {
        self.sim.quit();
    }
}

/// Held configuration ports (name, lane width, lanes) and table writes (sel, addr, data) of `cfg` for
/// `map`'s RTL.
#[allow(clippy::type_complexity)]
fn configuration(
    map: &PortMap,
    cfg: &SwitchConfig,
) -> Result<(Vec<(String, u32, Vec<u64>)>, Vec<(u64, u64, u64)>), RtlCheckError> {
    if map.config != ConfigStyle::IbSwitch {
        return Ok((Vec::new(), Vec::new()));
    }
    // A RoCEv2 map's RTL takes the PFC settings too (`crate::switch::rtl_config_pfc`: its ports all run
    // PFC; the link check in `RtlDut::new` has refused a configuration of the other kind).
    let rc = match map.link {
        crate::scoreboard::LinkKind::Ib => crate::switch::rtl_config(cfg),
        crate::scoreboard::LinkKind::RoceV2 => crate::switch::rtl_config_pfc(cfg),
    }
    .map_err(|e| RtlCheckError::Config(e.0))?;
    let held = rc
        .ports
        .iter()
        .map(|(n, w, l)| (format!("{}{n}", map.config_prefix), *w, l.clone()))
        .collect();
    let n = cfg.ports.len();
    // The SL2VL pair address is in * NPorts + out for the RTL's own port count (the map's), which may exceed
    // the configuration's.
    let np = map.ports.len();
    let mut tables = Vec::new();
    for (dlid, e) in rc.lft.iter().enumerate().take(cfg.lft.len()) {
        tables.push((0, dlid as u64, u64::from(*e)));
    }
    for i in 0..n {
        for o in 0..n {
            tables.push((
                1,
                (i * np + o) as u64,
                rc.sl2vl[i * crate::switch::N_PORTS + o],
            ));
        }
    }
    Ok((held, tables))
}

impl PacketDut for RtlDut {
    fn rx_packet(&mut self, port: usize, bytes: &[u8]) {
        self.rx[port].queue.push_back((self.now, bytes.to_vec()));
    }

    fn rx_fc(&mut self, port: usize, fc: FcPacket) {
        self.rx[port].fcs.push_back(fc);
    }

    fn rx_pause(&mut self, port: usize, frame: rtl_model::wire::pfc::Repr) -> Result<(), String> {
        if self.slots.get(port).is_none_or(|s| s.pause_rx.is_none()) {
            return Err(format!(
                "a pause frame for port {port}, which the map gives no [pause_rx]"
            ));
        }
        self.rx[port].pauses.push_back(frame);
        Ok(())
    }

    fn fill_tap(&self, port: usize, vl: usize) -> Option<u32> {
        self.fills.get(port)?.get(vl).copied()
    }

    fn mark_state_tap(&self, port: usize, vl: usize) -> Option<bool> {
        let s = self.slots.get(port)?.mark_state.as_ref()?;
        // The map's check keeps the tap within 15 bits, a bit per VL.
        (vl < s.width as usize).then(|| self.marks[port] >> vl & 1 == 1)
    }

    fn step(&mut self, out: &mut Vec<DutOut>) -> Result<(), String> {
        let bb = self.map.beat_bytes as usize;
        let order = self.map.byte_order;
        for p in 0..self.slots.len() {
            let s = self.slots[p].clone();
            let w = &mut self.sim.inw;
            // Flow-control packet word: Op 0, FCTBS, VL, FCCL.
            if let Some((valid, data)) = s.fc_rx {
                match self.rx[p].fcs.pop_front() {
                    Some(fc) => {
                        valid.set(w, 1);
                        let word = (u64::from(fc.fctbs & 0xfff) << 16)
                            | (u64::from(fc.vl & 0xf) << 12)
                            | u64::from(fc.fccl & 0xfff);
                        data.set(w, word);
                    }
                    None => valid.set(w, 0),
                }
            }
            // Pause frame: class-enable vector and a 16-bit time per priority.
            if let Some((valid, enable, quanta)) = s.pause_rx {
                match self.rx[p].pauses.pop_front() {
                    Some(f) => {
                        valid.set(w, 1);
                        enable.set(w, u64::from(f.class_enable));
                        for (i, q) in f.quanta.iter().enumerate() {
                            put_bits(w, quanta.base, quanta.at + 16 * i as u32, 16, u64::from(*q));
                        }
                    }
                    None => valid.set(w, 0),
                }
            }
            // A beat in the cycle its first byte arrives at the port's link rate (so the RTL sees a packet's
            // start in the cycle the golden model does; its beats follow at the link's pace).
            let Some(&rate) = self.rates.get(p) else {
                s.rx.valid.set(w, 0);
                continue;
            };
            let rx = &mut self.rx[p];
            let mut sent = false;
            if let Some((start, pkt)) = rx.queue.front() {
                let k = rx.beat;
                let end = ((k + 1) * bb).min(pkt.len());
                let due = rate.cycle_of_byte_end(rate.tick_of(*start), (k * bb + 1) as u64);
                if due <= self.now {
                    let beat = &pkt[k * bb..end];
                    s.rx.valid.set(w, 1);
                    s.rx.sop.set(w, u64::from(k == 0));
                    let last = end == pkt.len();
                    s.rx.eop.set(w, u64::from(last));
                    s.rx.data.set_bytes(w, beat, order);
                    if let Some(b) = s.rx.bytes {
                        b.set(
                            w,
                            if last {
                                beat.len() as u64 % (bb as u64 + 1)
                            } else {
                                0
                            },
                        );
                        if last && beat.len() == bb {
                            b.set(w, 0);
                        }
                    }
                    if let Some(kp) = s.rx.keep {
                        kp.set(w, (1u64 << beat.len()) - 1);
                    }
                    sent = true;
                }
            }
            if !sent {
                s.rx.valid.set(w, 0);
                s.rx.sop.set(w, 0);
                s.rx.eop.set(w, 0);
            }
        }
        self.sim.step().map_err(|e| e.to_string())?;
        for p in 0..self.slots.len() {
            let s = self.slots[p].clone();
            let w = &self.sim.outw;
            if let Some(m) = &s.mark_state {
                self.marks[p] = m.get(w) as u16;
            }
            for (vl, f) in s.fill.iter().enumerate() {
                // A tap is at most 32 bits wide (the map's check).
                let x = f.get(w) as u32;
                self.fills[p][vl] = match self.map.fill_unit {
                    FillUnit::Blocks => x,
                    FillUnit::Bytes => x.div_ceil(64),
                };
            }
            // A beat offered on rx was taken unless the RTL held `ready` low.
            let taken = s.rx.ready.is_none_or(|r| r.get(w) == 1);
            let rx = &mut self.rx[p];
            if taken {
                if let Some((_, pkt)) = rx.queue.front() {
                    let wi = &self.sim.inw;
                    if s.rx.valid.get(wi) == 1 {
                        rx.beat += 1;
                        if rx.beat * bb >= pkt.len() {
                            rx.queue.pop_front();
                            rx.beat = 0;
                            // The next packet's bytes start arriving after this one's.
                            if let Some(next) = rx.queue.front_mut() {
                                next.0 = next.0.max(self.now + 1);
                            }
                        }
                    }
                }
            }
            if let Some((valid, data)) = s.fc_tx {
                if valid.get(w) == 1 {
                    let x = data.get(w);
                    out.push(DutOut::Fc {
                        port: p,
                        fc: FcPacket {
                            vl: ((x >> 12) & 0xf) as u8,
                            fctbs: ((x >> 16) & 0xfff) as u16,
                            fccl: (x & 0xfff) as u16,
                        },
                    });
                }
            }
            if let Some((valid, enable, quanta)) = s.pause_tx {
                if valid.get(w) == 1 {
                    let mut q = [0u16; 8];
                    for (i, x) in q.iter_mut().enumerate() {
                        *x = get_bits(w, quanta.base, quanta.at + 16 * i as u32, 16) as u16;
                    }
                    out.push(DutOut::Pause {
                        port: p,
                        frame: rtl_model::wire::pfc::Repr {
                            class_enable: enable.get(w) as u8,
                            quanta: q,
                        },
                    });
                }
            }
            if s.tx.valid.get(w) == 1 {
                let t = &mut self.tx[p];
                if s.tx.sop.get(w) == 1 {
                    if t.open && !t.bytes.is_empty() {
                        return Err(format!(
                            "port {p}: a packet started at cycle {} before the one at cycle {} ended",
                            self.now, t.start
                        ));
                    }
                    t.bytes.clear();
                    t.start = self.now;
                    t.open = true;
                }
                if !t.open {
                    return Err(format!(
                        "port {p}: a beat out at cycle {} outside a packet",
                        self.now
                    ));
                }
                let eop = s.tx.eop.get(w) == 1;
                let mut n = bb;
                if eop {
                    if let Some(b) = s.tx.bytes {
                        let v = b.get(w) as usize;
                        if v != 0 && v <= bb {
                            n = v;
                        }
                    }
                    if let Some(k) = s.tx.keep {
                        n = k.get(w).count_ones() as usize;
                    }
                }
                s.tx.data.get_bytes(w, order, &mut t.bytes, n);
                if eop {
                    t.open = false;
                    out.push(DutOut::Packet {
                        port: p,
                        cycle: t.start,
                        bytes: std::mem::take(&mut t.bytes),
                    });
                }
            }
        }
        self.now += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_lists_of_the_makefile() {
        let mk = "VM_CLASSES_FAST += \\\n\tVrtl \\\n\tVrtl__A__0 \\\n\nVM_CLASSES_SLOW += \\\n\tVrtl__A__0__Slow \\\n\n\
                  VM_SUPPORT_FAST += \\\n\nVM_SUPPORT_SLOW += \\\n\tVrtl__Syms \\\n\n";
        assert_eq!(mk_list(mk, "VM_CLASSES_FAST"), ["Vrtl", "Vrtl__A__0"]);
        assert_eq!(mk_list(mk, "VM_CLASSES_SLOW"), ["Vrtl__A__0__Slow"]);
        assert!(mk_list(mk, "VM_SUPPORT_FAST").is_empty());
        assert_eq!(mk_list(mk, "VM_SUPPORT_SLOW"), ["Vrtl__Syms"]);
    }

    #[test]
    fn plusargs_are_checked() {
        assert!(check_plusargs(&["+A".into(), "+B_1=2".into()]).is_ok());
        for bad in ["A", "+", "+=1", "+A B", ""] {
            assert!(check_plusargs(&[bad.to_string()]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn header_ports() {
        let h = "    VL_IN8(&clk,0,0);\n    VL_OUT8(&v,3,0);\n    VL_OUT16(&q,12,0);\n    VL_INW(&d,511,0,16);\n    VL_IN64(&e,39,0);\n";
        let p = ports_of_header(h);
        assert_eq!(p.len(), 5);
        assert_eq!(
            p[3],
            RtlPort {
                name: "d".into(),
                width: 512,
                input: true
            }
        );
        assert_eq!(
            p[1],
            RtlPort {
                name: "v".into(),
                width: 4,
                input: false
            }
        );
    }

    #[test]
    fn build_lock_waits_for_its_holder_and_is_never_stale() {
        let dir = std::env::temp_dir().join(format!("ibcycle-lock-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.lock");
        // A lock file left on disk by a holder that is gone does not block.
        std::fs::write(&path, b"").unwrap();
        let held = BuildLock::take(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = path.clone();
        let waiter = std::thread::spawn(move || {
            let _l = BuildLock::take(&p2).unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err());
        drop(held);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        // A holder that panics releases it as it unwinds.
        let p3 = path.clone();
        assert!(std::thread::spawn(move || {
            let _l = BuildLock::take(&p3).unwrap();
            panic!("the holder fails");
        })
        .join()
        .is_err());
        drop(BuildLock::take(&path).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A RoCEv2 configuration loads through `rtl_config_pfc` (the golden model's watermarks on the PFC
    /// ports) and is refused by the IB-only `rtl_config`; an IB port is refused by `rtl_config_pfc`.
    #[test]
    fn pfc_configuration() {
        use crate::scoreboard::LinkKind;
        let cfg = default_random_config_for(4, LinkKind::RoceV2);
        let e = crate::switch::rtl_config(&cfg).unwrap_err();
        assert!(e.0.contains("port 0 is a RoCEv2/PFC port"), "{e}");
        let rc = crate::switch::rtl_config_pfc(&cfg).unwrap();
        let lane = |n: &str, l: usize| rc.ports.iter().find(|p| p.0 == n).map(|p| p.2[l]).unwrap();
        let pc = &cfg.ports[1];
        let wm = pc
            .pfc
            .unwrap()
            .watermarks(
                pc.vl_buf_blocks[1],
                pc.rate,
                switch_asic::config::mtu_packet_blocks(cfg.mtu),
                "p",
            )
            .unwrap();
        let l = crate::switch::N_VL + 1;
        assert_eq!(lane("pfc_xoff_i", l), u64::from(wm.xoff));
        assert_eq!(lane("pfc_xon_i", l), u64::from(wm.xon));
        assert_eq!(lane("pfc_quanta_i", 1), 0xFFFF);
        assert_eq!(
            lane("pfc_half_i", 1),
            rtl_model::link::pfc::pause_cycles(pc.rate, 0xFFFF) / 2
        );
        let e = crate::switch::rtl_config_pfc(&default_random_config(4)).unwrap_err();
        assert!(e.0.contains("port 0 has no PFC"), "{e}");
    }

    #[test]
    fn bits() {
        let mut w = vec![0u32; 4];
        put_bits(&mut w, 1, 30, 8, 0xA5);
        assert_eq!(get_bits(&w, 1, 30, 8), 0xA5);
        assert_eq!(w[0], 0);
        let s = Slot {
            base: 0,
            at: 8,
            width: 32,
        };
        s.set_bytes(&mut w, &[1, 2, 3], ByteOrder::LsbFirst);
        let mut out = Vec::new();
        s.get_bytes(&w, ByteOrder::LsbFirst, &mut out, 3);
        assert_eq!(out, [1, 2, 3]);
        s.set_bytes(&mut w, &[1, 2, 3, 4], ByteOrder::MsbFirst);
        assert_eq!(get_bits(&w, 0, 8, 8), 4);
    }
}

/// How [`check`] builds and reports.
#[derive(Debug, Clone)]
pub struct CheckOpts {
    /// Extra `-D` defines (a fault variant: `IBCYCLE_FAULTS_ENABLE`, `IBCYCLE_FAULT_<NAME>`).
    pub defines: Vec<String>,
    /// Run-time plusargs of the simulation (`+NAME` or `+NAME=VALUE`): a fault turned on in a build that
    /// has every fault in and selects them at run time (`IBCYCLE_FAULTS_SELECT` in hdl/alt), say. They
    /// change no build: one model serves runs with different plusargs.
    pub plusargs: Vec<String>,
    /// Where builds are cached.
    pub build_root: PathBuf,
    /// On a violation, the VCD written around it (a second, deterministic run).
    pub vcd: Option<PathBuf>,
    /// Cycles of the VCD window before the violation's cycle.
    pub vcd_before: u64,
    /// The model's C++ compiled at `-Og` (see [`build`]): quicker to build, slower to run.
    pub quick: bool,
}

impl Default for CheckOpts {
    fn default() -> Self {
        CheckOpts {
            defines: Vec::new(),
            plusargs: Vec::new(),
            build_root: std::env::temp_dir().join("ibcycle-rtl-check"),
            vcd: None,
            vcd_before: 500,
            quick: false,
        }
    }
}

/// What [`check`] found.
#[derive(Debug)]
pub enum CheckOutcome {
    /// Every packet checked, no violation.
    Passed(crate::scoreboard::bench::Outcome),
    /// The first violation, and the VCD around it when asked for.
    Violation {
        /// The violation.
        v: crate::scoreboard::Violation,
        /// The waveform file, cycles after reset `[from, to)`.
        vcd: Option<(PathBuf, u64, u64)>,
    },
}

/// Builds `map`'s RTL and runs `traffic` through it and the golden model of `cfg` under the scoreboard.
pub fn check(
    map: &PortMap,
    cfg: &SwitchConfig,
    traffic: Vec<crate::scoreboard::bench::TrafficPacket>,
    opts: &CheckOpts,
) -> Result<CheckOutcome, RtlCheckError> {
    use crate::scoreboard::bench::{run, RunError};
    // Before the build, which can take minutes.
    check_plusargs(&opts.plusargs)?;
    let built = build(map, &opts.defines, &opts.build_root, false, opts.quick)?;
    let mut dut = RtlDut::new(&built, map, cfg, &opts.plusargs, None)?;
    let r = run(&mut dut, cfg, traffic.clone(), map.bench, map.bounds);
    dut.quit();
    match r {
        Ok(o) => Ok(CheckOutcome::Passed(o)),
        Err(RunError::Violation(v)) => {
            let mut vcd = None;
            if let Some(path) = &opts.vcd {
                let built = build(map, &opts.defines, &opts.build_root, true, opts.quick)?;
                let from = v.cycle.saturating_sub(opts.vcd_before);
                let to = u64::MAX / 4;
                let mut dut =
                    RtlDut::new(&built, map, cfg, &opts.plusargs, Some((path, from, to)))?;
                let last = run(&mut dut, cfg, traffic, map.bench, map.bounds);
                let end = match &last {
                    Err(RunError::Violation(v2)) => v2.cycle.max(v.cycle) + 1,
                    _ => v.cycle + 1,
                };
                dut.quit();
                vcd = Some((path.clone(), from, end));
            }
            Ok(CheckOutcome::Violation { v, vcd })
        }
        Err(RunError::Dut(msg)) => Err(RtlCheckError::Sim { cycle: 0, msg }),
        Err(RunError::Setup(msg)) => Err(RtlCheckError::Config(msg)),
    }
}

/// The packets of a switch port trace as the bench's traffic: each packet head's descriptor made into bytes
/// (LRH through VCRC, ICRC and VCRC filled; on a RoCEv2 port the golden model's Ethernet frame,
/// `PacketDesc::materialise_roce_v4`), ready from its cycle in the trace, at its port. The trace's
/// flow-control packets and pause frames are not used: the bench's link partners make their own against
/// the RTL's.
pub fn traffic_of_trace(
    t: &crate::switch_trace::SwitchTrace,
) -> Vec<crate::scoreboard::bench::TrafficPacket> {
    use crate::switch_trace::HandIn;
    let mut out = Vec::new();
    for e in &t.events {
        if let HandIn::Packet(ps) = e.what {
            let mut bytes = Vec::new();
            let made = match crate::scoreboard::LinkKind::of(&t.config, e.port) {
                crate::scoreboard::LinkKind::Ib => ps.desc.materialise(&mut bytes),
                crate::scoreboard::LinkKind::RoceV2 => ps.desc.materialise_roce_v4(&mut bytes),
            };
            if made.is_ok() {
                out.push(crate::scoreboard::bench::TrafficPacket {
                    cycle: e.cycle,
                    port: e.port,
                    bytes,
                });
            }
        }
    }
    out
}

/// The switch `--random` runs against when no configuration is given: `ports` ports of 4 bytes per cycle
/// with 2 data VLs of 128 blocks, MTU 2048, DLIDs 1 to 4 x ports routed round the ports, SL s on VL
/// (s / 2) mod 2 (so some packets change VL), VL arbitration with both VLs in the low table (weights 4 and 4),
/// congestion marking at threshold 10 for any size with Marking_Rate 1 (so random traffic marks).
pub fn default_random_config(ports: usize) -> SwitchConfig {
    use rtl_model::mad::vlarb::{VlArbEntry, VlArbTable};
    use switch_asic::{LinkRate, PortConfig};
    let mut p = PortConfig::new(LinkRate::new(4, 1).expect("4/1"), 128).with_vls(2, 128);
    p.vlarb = VlArbTable {
        high: Vec::new(),
        low: vec![
            VlArbEntry { vl: 0, weight: 4 },
            VlArbEntry { vl: 1, weight: 4 },
        ],
        high_limit: 0,
    };
    p.cc.threshold = 10;
    p.cc.packet_size = 0;
    p.cc.marking_rate = 1;
    let mut c = SwitchConfig::uniform(ports, p);
    c.mtu = 2048;
    for (sl, v) in c.sl2vl[0].vl.iter_mut().enumerate() {
        *v = ((sl / 2) % 2) as u8;
    }
    for d in 1..=(4 * ports) as u16 {
        c.route(d, ((d - 1) as usize % ports) as u8);
    }
    c
}

/// [`default_random_config`] for a map of link kind `link`: with `RoceV2`, every port runs PFC (the default
/// settings: headroom for a 20-cycle link, XON at half XOFF) and SL s goes to priority s mod 2 (a RoCEv2
/// frame's priority is its SL, so a frame keeps its priority through the switch).
pub fn default_random_config_for(ports: usize, link: crate::scoreboard::LinkKind) -> SwitchConfig {
    let mut c = default_random_config(ports);
    if link == crate::scoreboard::LinkKind::RoceV2 {
        for p in &mut c.ports {
            p.pfc = Some(rtl_model::link::pfc::PfcConfig::default());
        }
        for (sl, v) in c.sl2vl[0].vl.iter_mut().enumerate() {
            *v = (sl % 2) as u8;
        }
    }
    c
}
