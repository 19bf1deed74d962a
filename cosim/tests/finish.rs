//! `$finish`, `$stop` and `$fatal` in the RTL can never make a run (or the test process) pass.
//!
//! Verilator's default handlers end the process: a second `$finish` calls `std::exit(0)` from inside `eval`,
//! which would end a test binary mid-run with status 0. The shim replaces them; these tests drive the test-only
//! module `hdl/test_finish.sv`. The process-level proof runs a child test in a separate process and checks it
//! got past two `$finish` calls and reported each one.
#![cfg(feature = "verilator")]

use cosim::check::{lockstep, CosimError};
use cosim::dut::{Dut, Halt};
use cosim::ffi::{Rtl, TestFinishIo, TEST_FINISH_VARIANTS};
use cosim::impl_ports;

/// Output of `test_finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Out {
    count_o: u8,
}
impl_ports!(Out { count_o });

/// Input of `test_finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct In {
    rst_ni: bool,
    finish_i: bool,
    stop_i: bool,
    fatal_i: bool,
}

struct Model(u8);
impl Dut for Model {
    type In = In;
    type Out = Out;
    fn step(&mut self, i: &In) -> Result<Out, Halt> {
        let o = Out { count_o: self.0 };
        self.0 = if i.rst_ni { self.0.wrapping_add(1) } else { 0 };
        Ok(o)
    }
}

struct TestFinish(Rtl<TestFinishIo>, TestFinishIo);
impl Dut for TestFinish {
    type In = In;
    type Out = Out;
    fn step(&mut self, i: &In) -> Result<Out, Halt> {
        let io = &mut self.1;
        io.rst_ni = i.rst_ni.into();
        io.finish_i = i.finish_i.into();
        io.stop_i = i.stop_i.into();
        io.fatal_i = i.fatal_i.into();
        self.0.step(io)?;
        Ok(Out {
            count_o: io.count_o as u8,
        })
    }
}

fn rtl() -> TestFinish {
    let mut t = TestFinish(
        Rtl::new("test_finish", TEST_FINISH_VARIANTS, None).unwrap(),
        TestFinishIo::default(),
    );
    t.step(&In::default()).unwrap();
    t
}

/// 100 quiet cycles, then one cycle raising the given call, then quiet again.
fn stim(at: usize, f: fn(&mut In)) -> impl Iterator<Item = In> {
    (0..10_000).map(move |c| {
        let mut i = In {
            rst_ni: true,
            ..In::default()
        };
        if c == at {
            f(&mut i);
        }
        i
    })
}

fn halts_at(f: fn(&mut In), kind: Halt) {
    let e = lockstep(&mut rtl(), &mut Model(0), &mut stim(100, f), 10_000).unwrap_err();
    assert!(e.is_failure());
    match e {
        CosimError::Halted { cycle, kind: k } => assert_eq!((cycle, k), (100, kind)),
        other => panic!("expected a halt, got {other}"),
    }
}

/// Ports of 33-64 bits travel as `u64`, wider ones as little-endian `u32` words; the top word of a 100-bit
/// port carries 4 bits.
#[test]
fn wide_ports_cross_the_shim_word_by_word() {
    let mut r = Rtl::new("test_finish", TEST_FINISH_VARIANTS, None).unwrap();
    let mut io = TestFinishIo::default();
    r.step(&mut io).unwrap();
    assert_eq!(
        io.wide_o,
        [u32::MAX, u32::MAX, u32::MAX, 0xf],
        "reset value ~0"
    );
    assert_eq!(io.mid_o, 0);
    io.rst_ni = 1;
    io.mid_i = 0xab_cdef_0123;
    io.wide_i = [0x0123_4567, 0x89ab_cdef, 0xfedc_ba98, 0x5];
    r.step(&mut io).unwrap();
    io.mid_i = 0;
    io.wide_i = [0; 4];
    r.step(&mut io).unwrap();
    assert_eq!(io.mid_o, 0xab_cdef_0123);
    assert_eq!(io.wide_o, [!0x0123_4567, !0x89ab_cdef, !0xfedc_ba98, 0xa]);
}

#[test]
fn quiet_module_matches_its_model() {
    let n = lockstep(
        &mut rtl(),
        &mut Model(0),
        &mut stim(usize::MAX, |_| {}),
        10_000,
    )
    .unwrap();
    assert_eq!(n, 10_000);
}

#[test]
fn finish_stop_and_fatal_each_fail_the_run() {
    halts_at(|i| i.finish_i = true, Halt::Finish);
    halts_at(|i| i.stop_i = true, Halt::Error);
    halts_at(|i| i.fatal_i = true, Halt::Error);
}

/// Run only as a child of [`second_finish_does_not_end_the_process`].
#[test]
#[ignore = "child process of second_finish_does_not_end_the_process"]
fn child_two_finishes() {
    let mut t = rtl();
    let fin = In {
        rst_ni: true,
        finish_i: true,
        ..In::default()
    };
    let first = t.step(&fin);
    // Verilator's own handler would exit(0) here, inside eval.
    let second = t.step(&fin);
    println!("CHILD-SURVIVED first={first:?} second={second:?}");
    assert_eq!(first.unwrap_err(), Halt::Finish);
    assert_eq!(second.unwrap_err(), Halt::Finish);
}

#[test]
fn second_finish_does_not_end_the_process() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "child_two_finishes",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("CHILD-SURVIVED first=Err(Finish) second=Err(Finish)"),
        "the child did not get past two $finish calls:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert_eq!(stderr.matches("$finish in").count(), 2, "{stderr}");
}
