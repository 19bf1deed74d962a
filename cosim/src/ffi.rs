//! The safe wrapper over the C ABI shim that `build.rs` generates for every Verilated model (the only
//! `unsafe` code of the workspace's co-simulation).
//!
//! Each variant of each module is its own Verilated model (distinct `--prefix`) with its own
//! `VerilatedContext` per instance, so an [`Rtl`] may move to another thread (`Send`) but is never shared
//! (`!Sync`: the raw handle is not `Sync` and no `Sync` impl is given). The shim makes the instance's context
//! current before every `eval` and checks `gotFinish` after each one; `$finish`, `$stop` and `$fatal` never end
//! the process (csrc/runtime.cpp replaces Verilator's handlers), they come back here as a [`Halt`].
#![allow(non_snake_case, missing_debug_implementations)]

use crate::check::CosimError;
use crate::dut::{Dut, Halt};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::ptr::NonNull;

include!(concat!(env!("OUT_DIR"), "/cosim_gen.rs"));

/// The shim entry points of one Verilated variant of a module whose port struct is `Io`.
pub struct Variant<Io: 'static> {
    /// Module name.
    pub module: &'static str,
    /// Bug variant name, `None` for the clean RTL.
    pub bug: Option<&'static str>,
    /// The clean RTL built at the module's `bug_params`: the control a bug variant's mismatch is set against
    /// (for a module whose faults are selected at run time, its model with every fault in and none on).
    pub control: bool,
    /// The parameters the model was built at (`table::Module::params`, or `bug_params` for a bug variant and
    /// the control).
    pub params: &'static [(&'static str, u32)],
    new: unsafe extern "C" fn() -> *mut c_void,
    delete: unsafe extern "C" fn(*mut c_void),
    step: unsafe extern "C" fn(*mut c_void, *mut Io) -> c_int,
    time_zero: unsafe extern "C" fn(*mut c_void, u64),
    trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    trace_close: unsafe extern "C" fn(*mut c_void),
    bench: unsafe extern "C" fn(*mut c_void, *mut Io, u64, u64) -> u64,
    replay: unsafe extern "C" fn(*mut c_void, *mut Io, *const Io, u64, u64) -> u64,
}

/// One instance of a Verilated model, owning its `VerilatedContext`.
pub struct Rtl<Io: 'static> {
    h: NonNull<c_void>,
    v: &'static Variant<Io>,
}

impl<Io> std::fmt::Debug for Rtl<Io> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rtl")
            .field("module", &self.v.module)
            .field("bug", &self.v.bug)
            .finish()
    }
}

// SAFETY: the instance owns its model and its own VerilatedContext, and the shim makes that context current on
// the calling thread before every eval, so using it from another thread (never two at once: no Sync) is sound.
unsafe impl<Io> Send for Rtl<Io> {}

impl<Io> Rtl<Io> {
    /// A new instance of `module`'s clean RTL (`bug` = `None`) or of the bug variant `bug`.
    pub fn new(
        module: &'static str,
        variants: &'static [Variant<Io>],
        bug: Option<&str>,
    ) -> Result<Self, CosimError> {
        Self::pick(module, variants, bug, false)
    }

    /// A new instance of `module`'s control: the clean RTL at the parameters its bug variants are built at
    /// (`table::Module::bug_params`), to show that a bug variant's mismatch on a trace is the bug's and not
    /// the smaller build's. The clean RTL itself when the bug variants are built at the clean parameters.
    pub fn control(
        module: &'static str,
        variants: &'static [Variant<Io>],
    ) -> Result<Self, CosimError> {
        let control = variants.iter().any(|v| v.control);
        Self::pick(module, variants, None, control)
    }

    fn pick(
        module: &'static str,
        variants: &'static [Variant<Io>],
        bug: Option<&str>,
        control: bool,
    ) -> Result<Self, CosimError> {
        let v = variants
            .iter()
            .find(|v| v.bug == bug && v.control == control)
            .ok_or_else(|| CosimError::UnknownBug {
                block: module,
                bug: bug.unwrap_or("").to_string(),
                known: variants
                    .iter()
                    .filter_map(|v| v.bug)
                    .collect::<Vec<_>>()
                    .join(" "),
            })?;
        // SAFETY: `new` has no preconditions; it returns a heap handle or aborts on allocation failure.
        let h = unsafe { (v.new)() };
        let h = NonNull::new(h).expect("the shim never returns a null handle");
        Ok(Rtl { h, v })
    }

    /// Which variant this is.
    pub fn variant(&self) -> &'static Variant<Io> {
        self.v
    }

    /// One clock edge: drives the inputs in `io` with the clock low, evaluates, stores the outputs into `io`,
    /// raises the clock and evaluates again. A `$finish`/`$stop`/`$fatal` during either eval is returned.
    #[inline]
    pub fn step(&mut self, io: &mut Io) -> Result<(), Halt> {
        // SAFETY: `h` is a live handle of this variant (freed only in Drop) and `io` points to the port struct
        // the variant was generated for (same #[repr(C)] layout as the C struct).
        match unsafe { (self.v.step)(self.h.as_ptr(), io) } {
            0 => Ok(()),
            1 => Err(Halt::Finish),
            _ => Err(Halt::Error),
        }
    }

    /// Makes the next step cycle 0 of the VCD time axis (adapters call it after their power-on reset, so VCD
    /// time stamps are run cycles times 10).
    pub fn time_zero(&mut self) {
        self.time_at(0);
    }

    /// Makes the next step cycle `cycle` of the VCD time axis (a configuration that starts `cycle` cycles into
    /// a run gets a fresh model whose VCD time stamps go on from there).
    pub fn time_at(&mut self, cycle: u64) {
        // SAFETY: live handle.
        unsafe { (self.v.time_zero)(self.h.as_ptr(), cycle) }
    }

    /// Starts writing a VCD of every signal to `path` (one cycle = 10 time units: clock low at 10c, high at
    /// 10c + 5).
    pub fn trace_open(&mut self, path: &Path) -> Result<(), CosimError> {
        let io_err = |err| CosimError::Io {
            path: path.to_path_buf(),
            err,
        };
        let s = path
            .to_str()
            .ok_or_else(|| io_err(std::io::Error::other("path is not UTF-8")))?;
        let c = CString::new(s).map_err(|e| io_err(std::io::Error::other(e)))?;
        // SAFETY: live handle; `c` is a NUL-terminated string that outlives the call.
        let rc = unsafe { (self.v.trace_open)(self.h.as_ptr(), c.as_ptr()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io_err(std::io::Error::other("cannot open the VCD file")))
        }
    }

    /// Flushes and closes the VCD, if one is open.
    pub fn trace_close(&mut self) {
        // SAFETY: live handle.
        unsafe { (self.v.trace_close)(self.h.as_ptr()) }
    }

    /// Steps the model `n` cycles from the shim's C++-only loop (random stimulus from `seed` on the non-held
    /// inputs; held inputs as in `io`): the benchmark's baseline. `None` if the model halted.
    pub fn bench(&mut self, io: &mut Io, n: u64, seed: u64) -> Option<u64> {
        // SAFETY: as in `step`.
        let r = unsafe { (self.v.bench)(self.h.as_ptr(), io, n, seed) };
        (r != u64::MAX).then_some(r)
    }

    /// Steps the model `n` cycles from the shim's C++-only loop over the recorded port structs `ins` (each
    /// copied into `io` in turn, from the first again after the last): a baseline on exactly the inputs the
    /// Rust side drives, without the cost of generating them. `None` if the model halted or `ins` is empty.
    pub fn replay(&mut self, io: &mut Io, ins: &[Io], n: u64) -> Option<u64> {
        if ins.is_empty() {
            return None;
        }
        // SAFETY: as in `step`; `ins` is a live slice of `ins.len()` port structs of this variant's layout,
        // only read.
        let r = unsafe { (self.v.replay)(self.h.as_ptr(), io, ins.as_ptr(), ins.len() as u64, n) };
        (r != u64::MAX).then_some(r)
    }
}

impl<Io> Drop for Rtl<Io> {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once; `delete` runs `final()`, then frees model and context.
        unsafe { (self.v.delete)(self.h.as_ptr()) }
    }
}

/// A block's Verilated model as a [`Dut`], with the tracing and benchmark entry points.
pub trait RtlDut: Dut + Send {
    /// The generated port struct.
    type Io: Copy + 'static;
    /// The model and its port struct (with the held configuration).
    fn parts(&mut self) -> (&mut Rtl<Self::Io>, &mut Self::Io);

    /// See [`Rtl::trace_open`].
    fn trace_open(&mut self, path: &Path) -> Result<(), CosimError> {
        self.parts().0.trace_open(path)
    }

    /// See [`Rtl::trace_close`].
    fn trace_close(&mut self) {
        self.parts().0.trace_close()
    }

    /// Writes one cycle's inputs into the port struct as `step` would, without stepping the model.
    fn load(&mut self, i: &Self::In);

    /// The port structs `step` would hand the model for the inputs `ins` (held configuration included), for
    /// [`RtlDut::bench_replay`]. The model is not stepped; the port struct is left holding the last input.
    fn record(&mut self, ins: &[Self::In]) -> Vec<Self::Io> {
        ins.iter()
            .map(|i| {
                self.load(i);
                *self.parts().1
            })
            .collect()
    }

    /// See [`Rtl::bench`].
    fn bench_cpp(&mut self, n: u64, seed: u64) -> Option<u64> {
        let (m, io) = self.parts();
        m.bench(io, n, seed)
    }

    /// See [`Rtl::replay`].
    fn bench_replay(&mut self, ins: &[Self::Io], n: u64) -> Option<u64> {
        let (m, io) = self.parts();
        m.replay(io, ins, n)
    }
}
