// cong_detect: the congestion state of one (output port, VL) of a switch, per IB CC.
//
// RTL twin of rtl-model/src/blocks/cong_detect.rs (`CongDetect`); every output and next state is bit-for-bit
// the Rust `step`. The fill of the virtual output queues (VoQs) feeding this output port and VL is compared
// against the fill threshold that the 4-bit Threshold of SwitchCongestionSetting selects from a table; a
// congested port-VL is a root (its output has credit) or a victim (it lacks credit); a victim marks only when
// this port's Victim_Mask bit is set.
//
// | port                 | dir | width     | meaning                                                           |
// |----------------------|-----|-----------|-------------------------------------------------------------------|
// | `clk_i`              | in  | 1         | clock                                                             |
// | `rst_ni`             | in  | 1         | synchronous reset, active low                                     |
// | configuration (held constant; the Rust `Config`)                                                          |
// | `threshold_i`        | in  | 4         | SwitchCongestionSetting Threshold (0 = never congested)           |
// | `thr_table_i`        | in  | 16 x 16   | Threshold t -> fill threshold in blocks, entry t at [16t +: 16]   |
// | `compare_i`          | in  | 2         | FillCompare, encoded as below                                     |
// | `root_min_credits_i` | in  | 12        | credit at or above which a congested port-VL is a root            |
// | `victim_mask_i`      | in  | 1         | this port's Victim_Mask bit: victims mark too                     |
// | per-cycle inputs                                                                                          |
// | `voq_fill_i`         | in  | NIn x 16  | fill of input port k's VoQ for this output and VL at [16k +: 16]  |
// | `voq_cnt_i`          | in  | CntW      | lanes valid: the Rust slice length `voq_fill_i.len()`             |
// | `credit_avail_i`     | in  | 12        | credit of this output VL in blocks (`credit_tx` `avail_o`)        |
// | outputs (registered: they reflect the previous cycle's inputs; 0 while `rst_ni` is low)                   |
// | `cong_o`             | out | 1         | over the fill threshold (`cong_q`)                                |
// | `root_o`             | out | 1         | congested and credit available (`root_q`)                         |
// | `victim_o`           | out | 1         | congested without credit (`victim_q`)                             |
// | `mark_state_o`       | out | 1         | `root_q || (victim_q && victim_mask_i)`                           |
// | `cfg_err_o`          | out | 1         | configuration rule broken: bit 0 `compare_i` is 3 (reserved;      |
// |                      |     |           | behaves as PerVoq). Combinational from the held ports, also in    |
// |                      |     |           | reset; asserted 0. The Rust `Config::cfg_err` (always 0: the     |
// |                      |     |           | Rust enum has no reserved value, and the other settings the Rust  |
// |                      |     |           | `Config::validate` checks cannot exceed their port widths)        |
//
// `thr_table_i` is the Threshold mapping, a designer choice made where the table is built (the Rust
// `ThresholdMap`): `BeyondOnePacket`, the default (entry t = P + (buf - P) * (16 - t) / 16, P one MTU
// packet: one packet queued is never congestion), or `LinearSixteenths` (entry t = buf * (16 - t) / 16). The
// RTL compares against whichever table it is given, so both mappings are the same in Rust and RTL.
//
// `compare_i` encoding (the Rust `FillCompare` has no numeric form; this is it):
//   0 PerVoq            congested when any valid lane is above the threshold
//   1 SumVoqs           congested when the sum of the valid lanes is above the threshold
//   2 SumPerContributor congested when the sum is above floor(threshold / n), n = valid lanes with fill > 0
//                       (n = 0: not congested)
//   3 reserved, behaves as PerVoq
//
// The Rust block takes a slice; the RTL takes NIn lanes and the count of valid ones, `voq_cnt_i`. Lanes at or
// above the count are ignored whatever they hold; a count above NIn means NIn, as the Rust block ignores slice
// elements beyond the 64th.
//
// Designer choices (of the Rust block, kept here): congested means strictly above (`fill > thr`); root when
// `credit_avail_i >= root_min_credits_i`; the threshold division of SumPerContributor is an integer division
// rounding down; here it is computed without a divider, as n * sum > thr, which holds exactly when
// sum > floor(thr / n) (IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE compares n * sum >= thr there).
// Sums are SumW bits wide, enough for NIn lanes of 16 bits, so they never wrap (the Rust sum is a u32).
//
// State (reset value 0): `cong_q`, `root_q`, `victim_q`.
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE: congested at `fill >= thr` instead of `fill > thr`, in all three comparisons.
// - IBCYCLE_FAULT_VICTIM_MASK: `mark_state_o` ignores Victim_Mask: every victim marks.
// - IBCYCLE_FAULT_THRESHOLD_INDEX: the table is indexed by the Threshold's low 3 bits (Thresholds 8-15 read entries 0-7).

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module cong_detect #(
  // VoQ lanes compared (input ports of the switch); the Rust block compares at most 64. 1..64.
  parameter int NIn = 64,
  // Width of `voq_cnt_i`: holds NIn; derived, do not override.
  parameter int CntW = $clog2(NIn + 1),
  // Width of the fill sums: NIn lanes of 16 bits; derived, do not override.
  parameter int SumW = 16 + $clog2(NIn + 1)
) (
  input  logic            clk_i,
  input  logic            rst_ni,

  // Configuration (held constant)
  input  logic [3:0]      threshold_i,
  input  logic [16*16-1:0] thr_table_i,
  input  logic [1:0]      compare_i,
  input  logic [11:0]     root_min_credits_i,
  input  logic            victim_mask_i,

  // Fills and credit
  input  logic [NIn*16-1:0] voq_fill_i,
  input  logic [CntW-1:0] voq_cnt_i,
  input  logic [11:0]     credit_avail_i,

  // Congestion state
  output logic            cong_o,
  output logic            root_o,
  output logic            victim_o,
  output logic            mark_state_o,

  // Configuration check
  output logic            cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
  $fatal(1, "IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_VICTIM_MASK
  $fatal(1, "IBCYCLE_FAULT_VICTIM_MASK is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_THRESHOLD_INDEX
  $fatal(1, "IBCYCLE_FAULT_THRESHOLD_INDEX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Bad parameters stop elaboration. Icarus has no elaboration-time system tasks: it checks at time 0.
`ifdef __ICARUS__
  initial if (NIn < 1 || NIn > 64 || CntW != $clog2(NIn + 1) || SumW != 16 + $clog2(NIn + 1)) begin
    $error("cong_detect: NIn (%0d) must be 1..64 and CntW (%0d), SumW (%0d) derived from it (instance %m)",
           NIn, CntW, SumW);
    $finish;
  end
`else
  if (NIn < 1 || NIn > 64 || CntW != $clog2(NIn + 1) || SumW != 16 + $clog2(NIn + 1)) begin : g_bad_param
    $error("cong_detect: NIn (%0d) must be 1..64 and CntW (%0d), SumW (%0d) derived from it", NIn, CntW, SumW);
  end
`endif

  localparam logic [1:0] CmpSumVoqs = 2'd1;
  localparam logic [1:0] CmpSumPerContributor = 2'd2;

  // Registered state and next state
  logic cong_q, cong_d, root_q, root_d, victim_q, victim_d;

  // Fill comparison
  logic [15:0]     thr;
  logic [CntW-1:0] lanes;
  logic [SumW-1:0] sum;
  logic [CntW-1:0] n_contrib;
  logic            any_over;
  localparam int ProdW = SumW + CntW;
  logic [ProdW-1:0] prod;  // n_contrib * sum: the per-contributor compare without a divider
  logic            over;

  always_comb begin
`ifdef IBCYCLE_FAULT_THRESHOLD_INDEX
    thr       = thr_table_i[{1'b0, threshold_i[2:0]}*16 +: 16];
`else
    thr       = thr_table_i[threshold_i*16 +: 16];
`endif
    lanes     = (voq_cnt_i > CntW'(NIn)) ? CntW'(NIn) : voq_cnt_i;
    sum       = '0;
    n_contrib = '0;
    any_over  = 1'b0;
    for (int k = 0; k < NIn; k++) begin
      if (CntW'(k) < lanes) begin
        sum       = sum + SumW'(voq_fill_i[k*16 +: 16]);
        n_contrib = n_contrib + CntW'(voq_fill_i[k*16 +: 16] != 16'd0);
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
        any_over  = any_over | (voq_fill_i[k*16 +: 16] >= thr);
`else
        any_over  = any_over | (voq_fill_i[k*16 +: 16] > thr);
`endif
      end
    end
    prod    = ProdW'(sum) * ProdW'(n_contrib);
    over    = 1'b0;
    if (threshold_i != 4'd0) begin
      case (compare_i)
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
        CmpSumVoqs:           over = sum >= SumW'(thr);
        CmpSumPerContributor: over = (n_contrib != '0) && (prod >= ProdW'(thr));
`else
        CmpSumVoqs:           over = sum > SumW'(thr);
        // sum > floor(thr / n) exactly when n * sum > thr: the Rust block's integer division, without a
        // divider.
        CmpSumPerContributor: over = (n_contrib != '0) && (prod > ProdW'(thr));
`endif
        default:              over = any_over;
      endcase
    end
  end

  always_comb begin
    cong_d   = over;
    root_d   = over && (credit_avail_i >= root_min_credits_i);
    victim_d = over && !root_d;
    // Registered outputs; while reset is low they show the reset values.
    cong_o       = rst_ni && cong_q;
    root_o       = rst_ni && root_q;
    victim_o     = rst_ni && victim_q;
`ifdef IBCYCLE_FAULT_VICTIM_MASK
    mark_state_o = rst_ni && (root_q || victim_q);
`else
    mark_state_o = rst_ni && (root_q || (victim_q && victim_mask_i));
`endif
  end

  assign cfg_err_o = compare_i == 2'd3;

`ifdef IBCYCLE_FAULT_VICTIM_MASK
  logic unused_victim_mask;
  assign unused_victim_mask = victim_mask_i;
`endif

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cong_q   <= 1'b0;
      root_q   <= 1'b0;
      victim_q <= 1'b0;
    end else begin
      cong_q   <= cong_d;
      root_q   <= root_d;
      victim_q <= victim_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // Root and victim split the congested state; only a congested port VL may have its packets marked.
  // Each property is evaluated on this cycle's settled values and registered; the registered bits are
  // asserted, so the check does not depend on how a simulator orders clocked blocks (reported a cycle late).
  logic [3:0] a_ok, a_ok_q;
  always_comb begin
    a_ok[3] = !rst_ni || !cfg_err_o;
    a_ok[0] = !rst_ni || (!(root_o && victim_o));
    a_ok[1] = !rst_ni || (cong_o == (root_o || victim_o));
    a_ok[2] = !rst_ni || (!mark_state_o || cong_o);
  end
  always_ff @(posedge clk_i) a_ok_q <= a_ok;
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);
    assert (a_ok_q[1]);
    assert (a_ok_q[2]);
    assert (a_ok_q[3]);  // configuration within its rules
  end
`endif

endmodule

`default_nettype wire
