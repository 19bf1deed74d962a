//! The narrow interface the lockstep checker drives: one clock edge per call, on either side.

use rtl_model::clocked::Clocked;

/// How a Verilated model stopped by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// `$finish`.
    Finish,
    /// `$stop`, `$fatal` or a Verilator runtime error.
    Error,
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Halt::Finish => "$finish",
            Halt::Error => "$stop/$fatal",
        })
    }
}

/// A device under test: the RTL (through its Verilated model) or the Rust block (through [`Golden`]).
pub trait Dut {
    /// Input ports of one cycle.
    type In;
    /// Output ports of one cycle.
    type Out;
    /// Drives `i` for one cycle and returns the outputs seen before the rising edge, then clocks the edge.
    /// An RTL model that ran `$finish`/`$stop`/`$fatal` returns the [`Halt`] instead: a run never passes
    /// through one.
    fn step(&mut self, i: &Self::In) -> Result<Self::Out, Halt>;

    /// [`Dut::step`] compared against `expected` (the other side's outputs of the same cycle): `Ok(None)`
    /// when every port matches, `Ok(Some(out))` with this side's outputs when one differs. The lockstep
    /// checker's per-cycle path: an adapter compares its port words in place and builds an `Out` only for
    /// the report of a mismatch (returning every cycle's `Out` through a `Result` stored it byte by byte and
    /// reloaded it as words: a store-forwarding stall on every cycle of a small block's loop).
    #[inline]
    fn step_check(&mut self, i: &Self::In, expected: &Self::Out) -> Result<Option<Self::Out>, Halt>
    where
        Self::Out: PartialEq,
    {
        let o = self.step(i)?;
        Ok((o != *expected).then_some(o))
    }
}

/// A Rust block as a [`Dut`]: the golden model side of the lockstep.
#[derive(Debug, Clone)]
pub struct Golden<B>(pub B);

impl<B: Clocked> Dut for Golden<B> {
    type In = B::In;
    type Out = B::Out;

    #[inline]
    fn step(&mut self, i: &B::In) -> Result<B::Out, Halt> {
        Ok(self.0.step(i))
    }
}
