//! The clocked-block contract shared by every Rust block and its RTL twin in `hdl/`.
//!
//! - `step(&mut self, &In) -> Out` is exactly one rising clock edge. `Out` is what the RTL's output ports show
//!   *before* the edge (registered outputs come from `_q` state; combinational outputs from `_q` and the inputs
//!   of this cycle), and `step` then latches the next state (`_d`) into `_q`. This is the order a Verilator
//!   driver sees: set inputs with clk = 0, eval, read outputs, raise clk, eval.
//! - Input and output structs are plain data with fields named like the RTL ports (`*_i`, `*_o`); registered
//!   state fields end in `_q`. Reset is an input (`rst_ni`, active low, synchronous): when it is low the outputs
//!   are computed from the reset values and the state returns to them.
//! - Widths are hardware widths: counters wrap at their RTL width, inputs are masked to their port width.
//! - Static configuration (table contents, thresholds) lives in a `Config` struct given at construction; in the
//!   RTL the same values are input ports that are held constant (so the co-simulation can drive them).
//! - Fast-forward is allowed, approximation is not: [`Clocked::next_event`] says how many idle edges (edges
//!   with the block's idle input) can pass with no output change other than counting, and [`Clocked::skip`]
//!   applies `n` such edges at once, leaving exactly the state `n` single steps would leave.

/// A synchronous block: one call to [`Clocked::step`] is one rising clock edge.
pub trait Clocked {
    /// Values on the input ports during the cycle before the edge.
    type In;
    /// Values on the output ports during that cycle.
    type Out;

    /// Computes the outputs for this cycle, then latches the next state.
    fn step(&mut self, inputs: &Self::In) -> Self::Out;

    /// The input the block sees when nothing happens (no valid strobes, reset inactive).
    fn idle_input(&self) -> Self::In;

    /// Number of idle edges after which something observable can change (a timer expires), or `None` when
    /// the block would stay quiet forever under idle input.
    fn next_event(&self) -> Option<u64> {
        None
    }

    /// Applies `n` idle edges at once. The default steps them one by one; blocks with timers override it
    /// with a closed form that must give the identical state (a property test per block checks this).
    fn skip(&mut self, n: u64) {
        let idle = self.idle_input();
        for _ in 0..n {
            self.step(&idle);
        }
    }
}
