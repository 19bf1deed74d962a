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
// | `root_min_credits_i` | in  | 12        | credit at or above which a congested port-VL is a root (rule 0)   |
// | `root_rule_i`        | in  | 1         | RootRule: 0 Credit (root: `credit_ok_q`), 1 StallWindow (root:    |
// |                      |     |           | `stall_left_q == 0`, no stall in the last `stall_window_i` cycles)|
// | `stall_window_i`     | in  | 16        | cycles a stall keeps the port-VL a victim (rule 1; 0: never)      |
// | `victim_mask_i`      | in  | 1         | this port's Victim_Mask bit: victims mark too                     |
// | per-cycle inputs                                                                                          |
// | `voq_fill_i`         | in  | NIn x 16  | fill of input port k's VoQ for this output and VL at [16k +: 16]  |
// | `voq_cnt_i`          | in  | CntW      | lanes valid: the Rust slice length `voq_fill_i.len()`             |
// | `credit_avail_i`     | in  | 12        | credit of this output VL in blocks (`credit_tx` `avail_o`)        |
// | `stall_i`            | in  | 1         | this cycle the output VL has a packet ready and cannot send it    |
// |                      |     |           | for lack of credit (the switch's PortXmitWait condition)          |
// | outputs (decided from the registers: they reflect the previous cycle's inputs; 0 while `rst_ni` is low)  |
// | `cong_o`             | out | 1         | over the fill threshold (`over`, from `lane_over_q`, `sum_q`,     |
// |                      |     |           | `n_q` and the held configuration)                                 |
// | `root_o`             | out | 1         | `over && root_ok`: congested and able to send (`root_ok`:         |
// |                      |     |           | `credit_ok_q` under rule 0, `stall_left_q == 0` under rule 1)     |
// | `victim_o`           | out | 1         | `over && !root_ok`: congested and held up downstream              |
// | `mark_state_o`       | out | 1         | `root_o || (victim_o && victim_mask_i)`                           |
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
// Designer choices (of the Rust block, kept here): congested means strictly above (`fill > thr`); the root
// rule (the Rust `RootRule`, which gives the evidence for each): root when `credit_avail_i >=
// root_min_credits_i` (Credit), or when the output did not stall for credit in the last `stall_window_i`
// cycles (StallWindow: `stall_left_q` is loaded with the window on a cycle with `stall_i`, counts down
// otherwise, and the port-VL is a victim while it is nonzero); the threshold division of SumPerContributor is an integer division
// rounding down; here it is computed without a divider, as n * sum > thr, which holds exactly when
// sum > floor(thr / n) (IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE compares n * sum >= thr there).
// Sums are SumW bits wide, enough for NIn lanes of 16 bits, so they never wrap (the Rust sum is a u32).
//
// Two stages, split at the register (each within the 40-level depth budget). The input cycle reduces the
// lanes to the state below; the next cycle decides from that state and the held configuration alone:
// PerVoq reads `lane_over_q`, SumVoqs compares `sum_q` with the threshold, SumPerContributor compares
// `n_q * sum_q` with it (not congested when `n_q` is 0), and root or victim follows `credit_ok_q` or
// `stall_left_q` as `root_rule_i` says. With the
// configuration held, every output is the decision on the previous cycle's inputs, as when the whole
// decision was registered. A configuration port changed while running is seen by the stage that reads it:
// `thr_table_i`/`threshold_i` by the lane compare in the input cycle and by the sum and product compares in
// the next, `root_min_credits_i` and `stall_window_i` in the input cycle, `compare_i`, `root_rule_i` and
// `victim_mask_i` in the next.
//
// State (reset value 0 for each: the state of empty queues, which the decision reads as not congested under
// any configuration, so the outputs are 0 from the first cycle after reset on; asserted):
//   `lane_over_q`  1     some valid lane was above the threshold (PerVoq's decision, whole)
//   `sum_q`        SumW  the sum of the valid lanes, binary
//   `n_q`          CntW  the count of valid lanes with a non-zero fill, binary
//   `credit_ok_q`  1     `credit_avail_i >= root_min_credits_i`
//   `stall_left_q` 16    edges left in the stall window: `stall_window_i` after an edge with `stall_i`, else
//                        one less down to 0 (kept under either rule)
// The Rust `CongDetect` registers the same, under the same names.
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE: congested at `fill >= thr` instead of `fill > thr`, in all three comparisons.
// - IBCYCLE_FAULT_VICTIM_MASK: `mark_state_o` ignores Victim_Mask: every victim marks.
// - IBCYCLE_FAULT_THRESHOLD_INDEX: the table is indexed by the Threshold's low 3 bits (Thresholds 8-15 read entries 0-7).
// - IBCYCLE_FAULT_STALL_WINDOW: a stall loads `stall_window_i - 1`: the window ends one cycle short.

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
  input  logic            root_rule_i,
  input  logic [15:0]     stall_window_i,
  input  logic            victim_mask_i,

  // Fills and credit
  input  logic [NIn*16-1:0] voq_fill_i,
  input  logic [CntW-1:0] voq_cnt_i,
  input  logic [11:0]     credit_avail_i,
  input  logic            stall_i,

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
`ifdef IBCYCLE_FAULT_STALL_WINDOW
  $fatal(1, "IBCYCLE_FAULT_STALL_WINDOW is defined without IBCYCLE_FAULTS_ENABLE");
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

  // Two stages split at the register. The input cycle reduces the 64 lanes to what the decision needs
  // (`*_d`, registered as `*_q`); the next cycle decides from those registers alone: the outputs are
  // combinational from `*_q` and the held configuration, so they reflect the previous cycle's inputs.
  // No step is a chain over the lanes: the lane sum and the count of contributing lanes are
  // carry-save trees (lanes in fours, by 4:2 compressors, log2 levels), added by Kogge-Stone trees before
  // the register. After the register each comparison adds the threshold's complement as one more row and
  // looks only at the carry out of the top, computed by a Kogge-Stone tree; the per-contributor product
  // n * sum is CntW shifted rows of the sum, gated by the count's bits, and the threshold row, reduced by
  // a Wallace tree of full adders.
  //
  // The stages are separate processes and share no function: under Icarus 11, two always_comb processes
  // calling the same automatic function (add42) did not get through ten cycles in a minute, and one
  // process holding both stages makes Verilator see a combinational path from the lanes to the outputs
  // (UNOPTFLAT in ib_switch). So stage 1 adds with add42 and carries, stage 2 with csa and carries_q.
  //
  // Widths: every row is PW bits, enough for n * sum plus the threshold row without wrapping (NIn <= 64:
  // n * sum < 2^28); a tree's rows are cut to the width of its total at the end (sums of non-negative rows
  // never carry past the total's width), and the bits above are logic no output reads.
  localparam int PW = SumW + CntW + 1;

  // The adders below are written word-wide (a bitwise select, not a loop over bits) and kept as calls in
  // the Verilated model (`no_inline_task`): Verilator unrolls a bit loop and inlines every call into every
  // instance, which made a switch with a cong_detect per output VL tens of megabytes of C++. The netlist is
  // the same.

  // {carry, sum} rows of a full adder per bit; the carry row shifted to its weight. The carry in its
  // multiplexer form (a ^ b ? c : a): two gate levels, as the sum.
  function automatic logic [2*PW-1:0] csa(input logic [PW-1:0] a, input logic [PW-1:0] b,
                                          input logic [PW-1:0] c);
    /* verilator no_inline_task */
    logic [PW-1:0] p, cy;
    p = a ^ b;
    cy = (p & c) | (~p & a);
    csa = {cy << 1, p ^ c};
  endfunction

  // Two carry-save pairs {c, s} reduced to one: a 4:2 compressor per bit, three gate levels. Of the four
  // rows, the first three's majority goes to the next bit (cout, no dependency on that bit's own carry in),
  // so the sum is (x1 ^ x2) ^ (x3 ^ x4) ^ cin and the carry the majority of x1 ^ x2 ^ x3, x4 and cin.
  function automatic logic [2*PW-1:0] add42(input logic [2*PW-1:0] x, input logic [2*PW-1:0] y);
    /* verilator no_inline_task */
    logic [PW-1:0] x1, x2, x3, x4, p12, p, cout, cin, cy;
    x1 = x[PW-1:0];
    x2 = x[2*PW-1:PW];
    x3 = y[PW-1:0];
    x4 = y[2*PW-1:PW];
    p12 = x1 ^ x2;
    p   = p12 ^ (x3 ^ x4);
    cout = (p12 & x3) | (~p12 & x1);
    cin = cout << 1;
    cy = (p & cin) | (~p & x4);
    add42 = {cy << 1, p ^ cin};
  endfunction

  // The carry out of each bit of a + b (bit i: out of bits i..0) by a Kogge-Stone tree. Generate and
  // propagate (a ^ b) never both hold, for a bit or a group, so a group's carry is one multiplexer.
  function automatic logic [PW-1:0] carries(input logic [PW-1:0] a, input logic [PW-1:0] b);
    /* verilator no_inline_task */
    logic [PW-1:0] g, p, gn;
    g = a & b;
    p = a ^ b;
    for (int s = 1; s < PW; s = 2 * s) begin
      gn = (p & (g << s)) | (~p & g);
      g = gn;
      p = p & (p << s);
    end
    carries = g;
  endfunction

  // `carries` for stage 2's process (see above why not shared).
  function automatic logic [PW-1:0] carries_q(input logic [PW-1:0] a, input logic [PW-1:0] b);
    /* verilator no_inline_task */
    logic [PW-1:0] g, p, gn;
    g = a & b;
    p = a ^ b;
    for (int s = 1; s < PW; s = 2 * s) begin
      gn = (p & (g << s)) | (~p & g);
      g = gn;
      p = p & (p << s);
    end
    carries_q = g;
  endfunction

  // The fill threshold the Threshold selects (read in both stages: the held configuration).
  logic [15:0]       thr;
  `IBCYCLE_COMB begin
`ifdef IBCYCLE_FAULT_THRESHOLD_INDEX
    thr = thr_table_i[{1'b0, threshold_i[2:0]}*16 +: 16];
`else
    thr = thr_table_i[threshold_i*16 +: 16];
`endif
  end

  // ---------------------------------------------------------------- stage 1: the input cycle
  // The registered state (the list in the header) and its next values.
  logic              lane_over_q, lane_over_d, credit_ok_q, credit_ok_d;
  logic [SumW-1:0]   sum_q, sum_d;
  logic [CntW-1:0]   n_q, n_d;
  logic [15:0]       stall_left_q, stall_left_d;

  logic [64*16-1:0]  fill;      // the lanes, padded with zeros to 64
  logic [63:0]       valid;     // lane k is below the count
  logic [63:0]       lane_over; // a valid lane above the threshold
  // The trees work on arrays of rows, not on wide vectors: Verilator turns every part-select of a wide
  // vector into multi-word code, per instance and per unrolled step (the netlist is the same).
  logic [15:0]       lane [64];      // lane k's fill, zero above NIn
  logic [PW-1:0]     sum_row [64];   // valid lanes' fills
  logic [PW-1:0]     cnt_row [64];   // 1 for a valid lane with a non-zero fill
  // 64 rows to one carry-save pair: node i < 16 is rows 4i..4i+3 by a 4:2 compressor, node 16 + i is nodes
  // 2i and 2i + 1, so node 30 is the root, five levels of 4:2 in all.
  logic [2*PW-1:0]   sum_node [31];
  logic [2*PW-1:0]   cnt_node [31];
  // A tree's rows above its total's width, and the carries above the total's, are never read.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [2*PW-1:0]   sum_cs, cnt_cs;
  logic [PW-1:0]     sum_cy, cnt_cy;
  /* verilator lint_on UNUSEDSIGNAL */

  `IBCYCLE_COMB begin
    fill = '0;
    fill[NIn*16-1:0] = voq_fill_i;
    // A count above NIn means NIn: lane k < NIn is valid when k < the count, whatever the count.
    for (int k = 0; k < 64; k++) begin
      lane[k]      = fill[k*16 +: 16];
      valid[k]     = (k < NIn) && (32'(voq_cnt_i) > k);
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
      lane_over[k] = valid[k] && (lane[k] >= thr);
`else
      lane_over[k] = valid[k] && (lane[k] > thr);
`endif
    end
    lane_over_d = |lane_over;

    // The sum of the valid lanes and the count of those with a non-zero fill, each as two rows S + C,
    // then added.
    for (int k = 0; k < 64; k++) begin
      sum_row[k] = valid[k] ? PW'(lane[k]) : '0;
      cnt_row[k] = PW'(valid[k] && (lane[k] != 16'd0));
    end
    for (int i = 0; i < 16; i++) begin
      sum_node[i] = add42({sum_row[4*i+1], sum_row[4*i]}, {sum_row[4*i+3], sum_row[4*i+2]});
      cnt_node[i] = add42({cnt_row[4*i+1], cnt_row[4*i]}, {cnt_row[4*i+3], cnt_row[4*i+2]});
    end
    for (int i = 0; i < 15; i++) begin
      sum_node[16+i] = add42(sum_node[2*i], sum_node[2*i+1]);
      cnt_node[16+i] = add42(cnt_node[2*i], cnt_node[2*i+1]);
    end
    sum_cs = sum_node[30];
    sum_cy = carries(PW'(sum_cs[SumW-1:0]), PW'(sum_cs[PW +: SumW]));
    sum_d  = sum_cs[SumW-1:0] ^ sum_cs[PW +: SumW] ^ SumW'(sum_cy << 1);
    cnt_cs = cnt_node[30];
    cnt_cy = carries(PW'(cnt_cs[CntW-1:0]), PW'(cnt_cs[PW +: CntW]));
    n_d    = cnt_cs[CntW-1:0] ^ cnt_cs[PW +: CntW] ^ CntW'(cnt_cy << 1);

    credit_ok_d = credit_avail_i >= root_min_credits_i;
    // The stall window: reloaded on a stall, else counted down to 0.
`ifdef IBCYCLE_FAULT_STALL_WINDOW
    if (stall_i) stall_left_d = (stall_window_i != 16'd0) ? stall_window_i - 16'd1 : 16'd0;
`else
    if (stall_i) stall_left_d = stall_window_i;
`endif
    else stall_left_d = (stall_left_q != 16'd0) ? stall_left_q - 16'd1 : 16'd0;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lane_over_q <= 1'b0;
      sum_q       <= '0;
      n_q         <= '0;
      credit_ok_q <= 1'b0;
      stall_left_q <= '0;
    end else begin
      lane_over_q <= lane_over_d;
      sum_q       <= sum_d;
      n_q         <= n_d;
      credit_ok_q <= credit_ok_d;
      stall_left_q <= stall_left_d;
    end
  end

  // ---------------------------------------------------------------- stage 2: the decision, from the registers
  logic [2*PW-1:0]   cmp_cs, prod_cs;
  // The product's 8 rows to one carry-save pair: a Wallace tree, 8 -> 6 -> 4 -> 3 -> 2.
  logic [PW-1:0]     w1 [6];
  logic [PW-1:0]     w2 [4];
  logic [PW-1:0]     w3 [3];
  logic [PW-1:0]     cmp_cy, prod_cy, thr_row, ones;
  logic [PW-1:0]     prod_row [8];
  logic              sum_over, prod_over, over;
  logic              root_ok, root, victim;

  `IBCYCLE_COMB begin
    // SumVoqs: sum > thr exactly when sum + (2^SumW - 1 - thr) carries into bit SumW (>=: one more).
    thr_row = '0;
    thr_row[SumW-1:0] = ~{{(SumW - 16){1'b0}}, thr};
    cmp_cs  = csa(PW'(sum_q), '0, thr_row);
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
    cmp_cs[PW] = 1'b1;  // the carry row's bit 0 is free: the + 1 of sum - thr >= 0
`endif
    cmp_cy   = carries_q(cmp_cs[PW-1:0], cmp_cs[2*PW-1:PW]);
    sum_over = cmp_cs[SumW] ^ cmp_cs[PW + SumW] ^ cmp_cy[SumW-1];

    // SumPerContributor: n * sum > thr exactly when n * sum + (2^(PW-1) - 1 - thr) carries into bit
    // PW - 1; the same as sum > floor(thr / n) for the Rust block's integer division, without a divider.
    // Rows: the sum shifted by i where bit i of n is set (CntW <= 7 of them), the threshold's row, zeros.
    ones = '1;
    for (int i = 0; i < 7; i++) prod_row[i] = '0;
    for (int i = 0; i < CntW; i++) prod_row[i] = n_q[i] ? PW'(sum_q) << i : '0;
    prod_row[7] = (ones >> 1) & ~(PW'(thr));
    {w1[1], w1[0]} = csa(prod_row[0], prod_row[1], prod_row[2]);
    {w1[3], w1[2]} = csa(prod_row[3], prod_row[4], prod_row[5]);
    w1[4] = prod_row[6];
    w1[5] = prod_row[7];
    {w2[1], w2[0]} = csa(w1[0], w1[1], w1[2]);
    {w2[3], w2[2]} = csa(w1[3], w1[4], w1[5]);
    {w3[1], w3[0]} = csa(w2[0], w2[1], w2[2]);
    w3[2] = w2[3];
    prod_cs = csa(w3[0], w3[1], w3[2]);
`ifdef IBCYCLE_FAULT_THRESHOLD_OFF_BY_ONE
    prod_cs[PW] = 1'b1;
`endif
    prod_cy   = carries_q(prod_cs[PW-1:0], prod_cs[2*PW-1:PW]);
    prod_over = prod_cs[PW-1] ^ prod_cs[2*PW-1] ^ prod_cy[PW-2];

    over = 1'b0;
    if (threshold_i != 4'd0) begin
      case (compare_i)
        CmpSumVoqs:           over = sum_over;
        CmpSumPerContributor: over = (n_q != '0) && prod_over;
        default:              over = lane_over_q;
      endcase
    end
    root_ok = root_rule_i ? stall_left_q == 16'd0 : credit_ok_q;
    root   = over && root_ok;
    victim = over && !root_ok;
    // While reset is low the outputs show 0, as every module's do (the registers' reset values give 0
    // from the first cycle after reset on; asserted below).
    cong_o       = rst_ni && over;
    root_o       = rst_ni && root;
    victim_o     = rst_ni && victim;
`ifdef IBCYCLE_FAULT_VICTIM_MASK
    mark_state_o = rst_ni && (root || victim);
`else
    mark_state_o = rst_ni && (root || (victim && victim_mask_i));
`endif
  end

  assign cfg_err_o = compare_i == 2'd3;

`ifdef IBCYCLE_FAULT_VICTIM_MASK
  logic unused_victim_mask;
  assign unused_victim_mask = victim_mask_i;
`endif

`ifdef IBCYCLE_ASSERTIONS
  // Root and victim split the congested state; only a congested port VL may have its packets marked; in the
  // first cycle after reset the decision is 0 before any gating by `rst_ni` (the registers' reset values are
  // the state of empty queues, not congested).
  // Each property is evaluated on this cycle's settled values and registered; the registered bits are
  // asserted, so the check does not depend on how a simulator orders clocked blocks (reported a cycle late).
  logic [4:0] a_ok, a_ok_q;
  logic       a_reset_q;  // the last edge was a reset edge
  `IBCYCLE_COMB begin
    a_ok[3] = !rst_ni || !cfg_err_o;
    a_ok[0] = !rst_ni || (!(root_o && victim_o));
    a_ok[1] = !rst_ni || (cong_o == (root_o || victim_o));
    a_ok[2] = !rst_ni || (!mark_state_o || cong_o);
    a_ok[4] = !rst_ni || !a_reset_q || !(over || root || victim);
  end
  always_ff @(posedge clk_i) begin
    a_ok_q    <= a_ok;
    a_reset_q <= !rst_ni;
  end
  initial a_ok_q = '1;
  initial a_reset_q = 1'b0;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);
    assert (a_ok_q[1]);
    assert (a_ok_q[2]);
    assert (a_ok_q[3]);  // configuration within its rules
    assert (a_ok_q[4]);  // not congested right after reset, ungated
  end
`endif

endmodule

`default_nettype wire
