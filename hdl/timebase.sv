// timebase: the 1.024 us tick shared by the CC timers, derived exactly from the core clock.
//
// RTL twin of rtl-model/src/blocks/timebase.rs (`Timebase`); every output and next state is bit-for-bit the
// Rust `step`. A fractional accumulator adds `inc_i` each cycle; when the sum reaches `modulus_i` a tick is
// emitted and `modulus_i` subtracted, so ticks average exactly 1.024 us with no floating point. `inc_i` and
// `modulus_i` are the reduced ratio the Rust `Config::ratio` computes (`Timebase::inc()`, `Timebase::modulus()`;
// inc < modulus).
//
// | port        | dir | width | meaning                                                                    |
// |-------------|-----|-------|----------------------------------------------------------------------------|
// | `clk_i`     | in  | 1     | clock                                                                      |
// | `rst_ni`    | in  | 1     | synchronous reset, active low                                              |
// | configuration (held constant)                                                                           |
// | `inc_i`     | in  | 32    | accumulator increment per cycle                                            |
// | `modulus_i` | in  | 32    | accumulator value of one tick                                              |
// | outputs (combinational from `_q`; 0 while reset is low)                                                 |
// | `tick_o`    | out | 1     | a 1.024 us tick this cycle: `acc_q + inc >= modulus` (33-bit sum)          |
// | `ts_o`      | out | 32    | ticks since reset, wrapping (`ts_q`)                                       |
// | `cfg_err_o` | out | 2     | configuration rules broken: bit 0 `inc_i` is 0 (no tick ever), bit 1       |
// |             |     |       | `inc_i >= modulus_i` (not a proper fraction: ticks would be lost; this     |
// |             |     |       | covers `modulus_i` 0). Combinational from the held ports, also in reset;   |
// |             |     |       | the Rust `Config::cfg_err`, which `Config::validate` refuses.              |
//
// State (reset 0): `acc_q` (32, below `modulus_i`), `ts_q` (32).
//
// Designer choice (of the Rust block, kept here): reset phase `acc_q = 0`, so the first tick comes
// ceil(modulus / inc) cycles after reset; on a tick the remainder `acc_q + inc - modulus` is kept.
//
// Fault-injection variant (build with -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_TICK_DRIFT;
// defined without the enable it stops elaboration):
// - IBCYCLE_FAULT_TICK_DRIFT: a tick clears the accumulator instead of keeping the remainder, so with a fractional
//   cycles-per-tick ratio every tick comes a little late and the timebase drifts slow.

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module timebase (
  input  logic        clk_i,
  input  logic        rst_ni,

  // Configuration (held constant)
  input  logic [31:0] inc_i,
  input  logic [31:0] modulus_i,

  // Time
  output logic        tick_o,
  output logic [31:0] ts_o,

  // Configuration check
  output logic [1:0]  cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_TICK_DRIFT
  $fatal(1, "IBCYCLE_FAULT_TICK_DRIFT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Registered state and next state
  logic [31:0] acc_q, acc_d, ts_q, ts_d;

  logic [32:0] sum;
  logic [32:0] rem;

  always_comb begin
    cfg_err_o[0] = inc_i == 32'd0;
    cfg_err_o[1] = inc_i >= modulus_i;
  end

  always_comb begin
    acc_d  = acc_q;
    ts_d   = ts_q;
    tick_o = 1'b0;
    ts_o   = 32'd0;
    sum    = {1'b0, acc_q} + {1'b0, inc_i};
    rem    = sum - {1'b0, modulus_i};
    if (rst_ni) begin
      tick_o = sum >= {1'b0, modulus_i};
      ts_o   = ts_q;
      if (tick_o) begin
`ifdef IBCYCLE_FAULT_TICK_DRIFT
        acc_d = 32'd0;
`else
        acc_d = rem[31:0];
`endif
        ts_d  = ts_q + 32'd1;
      end else begin
        acc_d = sum[31:0];
      end
    end
  end

  // The top bit of the remainder is 0 whenever it is used (sum >= modulus and sum < 2^33).
  logic unused_rem;
`ifdef IBCYCLE_FAULT_TICK_DRIFT
  assign unused_rem = ^rem;
`else
  assign unused_rem = rem[32];
`endif

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      acc_q <= '0;
      ts_q  <= '0;
    end else begin
      acc_q <= acc_d;
      ts_q  <= ts_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // Exactness against the ratio itself, not the accumulator: after k cycles out of reset exactly
  // floor(k * inc / modulus) ticks have come (so the timebase never drifts), the timestamp counts them, and the
  // configuration is a proper fraction (0 < inc < modulus).
  logic [63:0] a_sum_q, a_sum, a_ticks_q, a_ticks;
  logic [31:0] a_ts_q;
  logic [2:0]  a_ok, a_ok_q;
  always_comb begin
    a_sum = a_sum_q + 64'(inc_i);
    a_ticks = a_ticks_q + 64'(tick_o);
    a_ok[0] = !rst_ni || (inc_i != 32'd0 && inc_i < modulus_i && cfg_err_o == 2'd0);
    a_ok[1] = !rst_ni || (a_ticks * 64'(modulus_i) <= a_sum && a_sum < (a_ticks + 64'd1) * 64'(modulus_i));
    a_ok[2] = !rst_ni || ts_o == a_ts_q;
  end
  // Registered, then asserted (a cycle late), so the check does not depend on how a simulator orders clocked
  // blocks.
  always_ff @(posedge clk_i) begin
    a_ok_q    <= a_ok;
    a_sum_q   <= rst_ni ? a_sum : 64'd0;
    a_ticks_q <= rst_ni ? a_ticks : 64'd0;
    a_ts_q    <= rst_ni ? ts_o + 32'(tick_o) : 32'd0;
  end
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // 0 < inc < modulus
    assert (a_ok_q[1]);  // exactly floor(k * inc / modulus) ticks after k cycles
    assert (a_ok_q[2]);  // the timestamp counts the ticks
  end
`endif

endmodule

`default_nettype wire
