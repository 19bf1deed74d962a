// vl_arb: InfiniBand VL arbitration for one output port: which VL starts the next packet.
//
// RTL twin of rtl-model/src/blocks/vl_arb.rs (`VlArb`); every output and every next state is bit-for-bit the
// Rust `step`. Two weighted round-robin tables (high and low priority, up to TableMax entries of (VL, weight),
// weight in 64-byte blocks, 0 = skip, as in VLArbitrationTable) and the VLHighLimit (units of 4 KB = 64 blocks;
// 255 = unbounded; 0 = one high packet before a waiting low packet may go).
//
// | port              | dir | width         | meaning                                                        |
// |-------------------|-----|---------------|----------------------------------------------------------------|
// | `clk_i`           | in  | 1             | clock                                                          |
// | `rst_ni`          | in  | 1             | synchronous reset, active low                                  |
// | configuration (held constant; the Rust `Config`)                                                         |
// | `hi_vl_i`         | in  | TableMax x 4  | high table entry e's VL at [4e +: 4] (0..14)                   |
// | `hi_weight_i`     | in  | TableMax x 8  | high table entry e's weight at [8e +: 8], in blocks            |
// | `hi_n_i`          | in  | IdxW + 1      | entries in the high table (`high.len()`, 0..TableMax)          |
// | `lo_vl_i`         | in  | TableMax x 4  | low table VLs, as `hi_vl_i`                                    |
// | `lo_weight_i`     | in  | TableMax x 8  | low table weights, as `hi_weight_i`                            |
// | `lo_n_i`          | in  | IdxW + 1      | entries in the low table (`low.len()`)                         |
// | `vl_high_limit_i` | in  | 8             | VLHighLimit, 4 KB units; 255 unbounded                         |
// | per-cycle inputs                                                                                         |
// | `ready_i`         | in  | 1             | the output is idle: a packet may start this cycle              |
// | `req_i`           | in  | 16            | bit v: VL v has a head packet                                  |
// | `len_i`           | in  | 16 x 7        | VL v's head packet length in 64-byte blocks at [7v +: 7]       |
// | `credit_ok_i`     | in  | 16            | bit v: VL v has credit for its head packet (bit 15 ignored)    |
// | `hold_i`          | in  | 1             | grant as usual but keep the state (a proposal: ib_switch's     |
// |                   |     |               | look-ahead commits it later with the same inputs, and gets it)  |
// | outputs (combinational from `_q` and this cycle's inputs, as the Rust `step` returns them)               |
// | `gnt_valid_o`     | out | 1             | a packet starts this cycle                                     |
// | `gnt_vl_o`        | out | 4             | its VL (0 when no grant)                                       |
// | `gnt_high_o`      | out | 1             | it was granted from the high table (0 for VL15)                |
// | `cfg_err_o`       | out | 4             | configuration rules broken, a bit per rule (below)             |
//
// `cfg_err_o` flags the held values the Rust `Config::validate` refuses (`Config::cfg_err`, the same bits),
// from the configuration ports alone (combinational, also during reset); an assertion fails on any bit:
//   bit 0  hi_n_i > TableMax             (then the table is TableMax long)
//   bit 1  lo_n_i > TableMax             (likewise)
//   bit 2  a high entry in use has VL 15 (VL15 is management traffic, never in a table; the entry is used
//                                         as given, and VL15's requests are served before any table)
//   bit 3  a low entry in use has VL 15  (likewise)
//
// Tables are flattened vectors rather than packed 2-D arrays because Yosys 0.23 rejects packed 2-D ports.
// A table entry at index >= its count is never a candidate, so the unused tail of a table may hold anything.
//
// State (reset value 0): `hi_idx_q`, `lo_idx_q` (IdxW bits: current entry), `hi_used_q`, `lo_used_q` (9 bits:
// blocks granted in the current visit), `hi_cnt_q` (16 bits, saturating: high blocks granted while a low
// packet was eligible since the last low grant).
//
// Rules, in priority order, evaluated only when `ready_i` (designer choices of the Rust block, kept here):
// 1. VL15 (management) goes first and needs no credit; it touches no table state.
// 2. An entry is a candidate if its weight is nonzero and its VL requests with credit. The current entry
//    (index min(idx, n - 1)) keeps the grant while `used < weight` (not `<=`); otherwise the first candidate
//    after it, wrapping, the current entry last, starts a fresh visit with `used = 0` (overdraft not carried).
//    Hardware: a candidate mask, doubled and rotated right by cur + 1, then a lowest-bit priority encoder.
//    Entries at index >= n are masked out, so wrapping at TableMax finds the same entry as wrapping at n.
// 3. High table first, unless the high limit is reached and a low candidate exists: then low. The limit is
//    reached when `vl_high_limit != 255 && hi_cnt_q != 0 && hi_cnt_q >= 64 * vl_high_limit`.
// 4. `hi_cnt_q` counts (saturating) the granted high packet's blocks only when a low candidate existed at the
//    grant; a low grant clears it; otherwise it holds. Work conserving: limit reached but no low candidate
//    means high is still granted.
// `used` registers wrap at 9 bits (weight <= 255 plus one packet <= 127 always fits).
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_WEIGHT_UNIT: the visit budget is compared in 256-byte units (`used < 4 * weight`), the table weight
//   misread as 4-block units; an entry keeps the grant up to four times too long.
// - IBCYCLE_FAULT_VL15_PRIORITY: VL15 is served only when no table entry is a candidate, instead of first.
// - IBCYCLE_FAULT_HIGH_LIMIT: the limit counts as reached before any high packet went, so VL_High_Limit 0 lets
//   no high packet through while a low one is eligible.

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module vl_arb #(
  // Entries per arbitration table (VLArbHighCap / VLArbLowCap bound; the Rust block allows 64). 1..64.
  parameter int TableMax = 64,
  // Width of an entry index; derived, do not override.
  parameter int IdxW = (TableMax > 1) ? $clog2(TableMax) : 1
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,

  // Configuration (held constant)
  input  logic [TableMax*4-1:0] hi_vl_i,
  input  logic [TableMax*8-1:0] hi_weight_i,
  input  logic [IdxW:0]         hi_n_i,
  input  logic [TableMax*4-1:0] lo_vl_i,
  input  logic [TableMax*8-1:0] lo_weight_i,
  input  logic [IdxW:0]         lo_n_i,
  input  logic [7:0]            vl_high_limit_i,

  // Head packets of the VLs
  input  logic                  ready_i,
  input  logic [15:0]           req_i,
  input  logic [16*7-1:0]       len_i,
  input  logic [15:0]           credit_ok_i,
  input  logic                  hold_i,

  // Grant. A parent that feeds the grant back into credit_ok_i through a block evaluating both in one always
  // (switch_core: grant -> credit_tx take_i, credit_tx send_ok_o -> credit_ok_i) forms a loop only at block
  // granularity; the waiver keeps that parent lint clean.
  /* verilator lint_off UNOPTFLAT */
  output logic                  gnt_valid_o,
  output logic [3:0]            gnt_vl_o,
  /* verilator lint_on UNOPTFLAT */
  output logic                  gnt_high_o,

  // Configuration check
  output logic [3:0]            cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_VL15_PRIORITY
  $fatal(1, "IBCYCLE_FAULT_VL15_PRIORITY is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_WEIGHT_UNIT
  $fatal(1, "IBCYCLE_FAULT_WEIGHT_UNIT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_HIGH_LIMIT
  $fatal(1, "IBCYCLE_FAULT_HIGH_LIMIT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Bad parameters stop elaboration. Icarus has no elaboration-time system tasks: it checks at time 0.
`ifdef __ICARUS__
  initial if (TableMax < 1 || TableMax > 64 || IdxW != ((TableMax > 1) ? $clog2(TableMax) : 1)) begin
    $error("vl_arb: TableMax (%0d) must be 1..64 and IdxW (%0d) derived from it (instance %m)", TableMax, IdxW);
    $finish;
  end
`else
  if (TableMax < 1 || TableMax > 64 || IdxW != ((TableMax > 1) ? $clog2(TableMax) : 1)) begin : g_bad_param
    $error("vl_arb: TableMax (%0d) must be 1..64 and IdxW (%0d) derived from it", TableMax, IdxW);
  end
`endif

  localparam logic [7:0] HighLimitUnbounded = 8'd255;

  // Configuration rules (see the header); the per-entry flags are OR-reduced as a tree.
  logic [TableMax-1:0] hi_vl15, lo_vl15;
  `IBCYCLE_COMB begin
    for (int e = 0; e < TableMax; e++) begin
      hi_vl15[e] = 32'(hi_n_i) > e && hi_vl_i[4*e +: 4] == 4'd15;
      lo_vl15[e] = 32'(lo_n_i) > e && lo_vl_i[4*e +: 4] == 4'd15;
    end
    cfg_err_o[0] = 32'(hi_n_i) > TableMax;
    cfg_err_o[1] = 32'(lo_n_i) > TableMax;
    cfg_err_o[2] = |hi_vl15;
    cfg_err_o[3] = |lo_vl15;
  end

  // Registered state and next state
  logic [IdxW-1:0] hi_idx_q, hi_idx_d, lo_idx_q, lo_idx_d;
  logic [8:0]      hi_used_q, hi_used_d, lo_used_q, lo_used_d;
  logic [15:0]     hi_cnt_q, hi_cnt_d;

  // Candidate VLs: requesting with credit; VL15 never comes from a table.
  logic [15:0] cand;
  assign cand = req_i & credit_ok_i & 16'h7fff;


  // Each table's pick (the Rust `pick`): whether an entry gets the next grant, whether it is the current
  // entry keeping its visit (else a fresh visit starts), its index and its VL. t = 0 the high table, 1 the
  // low one, at [t*W +: W].
  //
  // A tree, not a search: the candidate mask, the current entry as a one-hot vector and a thermometer mask
  // of the entries after it come straight from the index register and the table length; the first
  // candidate after the current entry is the lowest set bit of (candidates & after), found with the
  // prefix OR above, and when there is none the lowest candidate of the whole table, so the current entry
  // comes last (the rotated order of the Rust block). The chosen entry's index and VL are OR reductions of
  // the one-hot vector. Entries at index >= n are never candidates.
  logic [1:0]        t_found;
  logic [2*IdxW-1:0] t_pick;
  logic [2*4-1:0]    t_vl;
  logic [2*9-1:0]    t_used;  // the visit's blocks after a grant from the table: used + len, or len (fresh)

  for (genvar t = 0; t < 2; t++) begin : g_table
    logic [TableMax*4-1:0] vl;
    logic [TableMax*8-1:0] weight;
    logic [IdxW:0]         n;
    logic [IdxW-1:0]       idx;
    logic [8:0]            used;
    if (t == 0) begin : g_high
      assign vl     = hi_vl_i;
      assign weight = hi_weight_i;
      assign n      = hi_n_i;
      assign idx    = hi_idx_q;
      assign used   = hi_used_q;
    end else begin : g_low
      assign vl     = lo_vl_i;
      assign weight = lo_weight_i;
      assign n      = lo_n_i;
      assign idx    = lo_idx_q;
      assign used   = lo_used_q;
    end

    logic [TableMax-1:0] cm, cur_oh, after, nxt_oh, bit_of, below_after, below_cm;
    logic                idx_in, keep, any_after;
    logic [IdxW-1:0]     cur, nxt;
    logic [9:0]          budget;
    logic [3:0]          vl_cur, vl_nxt;

    `IBCYCLE_COMB begin
      // The current entry is idx, clamped to the table (n - 1 when the table is empty is never used).
      idx_in = 32'(idx) < 32'(n);
      cur    = idx_in ? idx : IdxW'(n - 1'b1);
      for (int e = 0; e < TableMax; e++) begin
        cm[e]     = (e < 32'(n)) && (weight[e*8 +: 8] != 8'd0) && cand[vl[e*4 +: 4]];
        cur_oh[e] = idx_in ? (32'(idx) == e) : (32'(n) == e + 1);
        // Entries after the current one (none when idx is clamped: cur is then the last entry).
        after[e]  = cm[e] && idx_in && (32'(idx) < e);
      end
`ifdef IBCYCLE_FAULT_WEIGHT_UNIT
      budget    = {weight[cur*8 +: 8], 2'b00};
`else
      budget    = {2'b00, weight[cur*8 +: 8]};
`endif
      keep      = |(cm & cur_oh) && ({1'b0, used} < budget);
      any_after = |after;
      // Bit e of below_*: some bit of the mask below e. A Kogge-Stone prefix OR, log2(TableMax) levels of
      // OR gates, so finding the first candidate is no chain over the table. Written out here rather than
      // as a function the two tables' processes share (Icarus 11 re-runs processes that call one function
      // on each other's calls).
      below_after = after << 1;
      below_cm    = cm << 1;
      for (int s = 0; s < IdxW; s++) begin
        below_after = below_after | (below_after << (1 << s));
        below_cm    = below_cm | (below_cm << (1 << s));
      end
      nxt_oh    = any_after ? (after & ~below_after) : (cm & ~below_cm);
      for (int b = 0; b < IdxW; b++) begin
        for (int e = 0; e < TableMax; e++) bit_of[e] = ((e >> b) & 1) != 0;
        nxt[b] = |(nxt_oh & bit_of);
      end
      vl_cur = vl[cur*4 +: 4];
      for (int b = 0; b < 4; b++) begin
        for (int e = 0; e < TableMax; e++) bit_of[e] = vl[e*4 + b];
        vl_nxt[b] = |(nxt_oh & bit_of);
      end
    end

    assign t_found[t]               = |cm;
    assign t_pick[t*IdxW +: IdxW]   = keep ? cur : nxt;
    assign t_vl[t*4 +: 4]           = keep ? vl_cur : vl_nxt;
    // The two cases apart, so the adder works on the current entry's length, known early.
    assign t_used[t*9 +: 9]         = keep ? used + {2'b00, len_i[vl_cur*7 +: 7]}
                                           : {2'b00, len_i[vl_nxt*7 +: 7]};
  end

  logic            hi_found, lo_found;
  logic [IdxW-1:0] hi_pick, lo_pick;
  assign hi_found = t_found[0];
  assign lo_found = t_found[1];
  assign hi_pick  = t_pick[0 +: IdxW];
  assign lo_pick  = t_pick[IdxW +: IdxW];

  logic        limit_reached;
  logic [3:0]  hi_gvl, lo_gvl;
  logic [16*16-1:0] cnt_plus;  // hi_cnt_q + VL v's head length, saturated, at [16v +: 16]

  logic        vl15_first;

  // The count after a high grant, for every VL it may go to: the sums start with the cycle, not after the
  // pick, which only selects one.
  for (genvar v = 0; v < 16; v++) begin : g_cnt_plus
    logic [16:0] sum;
    assign sum                  = {1'b0, hi_cnt_q} + {10'b0, len_i[v*7 +: 7]};
    assign cnt_plus[v*16 +: 16] = sum[16] ? 16'hffff : sum[15:0];
  end

  `IBCYCLE_COMB begin
`ifdef IBCYCLE_FAULT_HIGH_LIMIT
    limit_reached = (vl_high_limit_i != HighLimitUnbounded)
                    && (hi_cnt_q >= {2'b00, vl_high_limit_i, 6'b000000});
`else
    limit_reached = (vl_high_limit_i != HighLimitUnbounded) && (hi_cnt_q != 16'd0)
                    && (hi_cnt_q >= {2'b00, vl_high_limit_i, 6'b000000});
`endif
    hi_gvl     = t_vl[0 +: 4];
    lo_gvl     = t_vl[4 +: 4];
`ifdef IBCYCLE_FAULT_VL15_PRIORITY
    vl15_first = req_i[15] && !hi_found && !lo_found;
`else
    vl15_first = req_i[15];
`endif
  end

  `IBCYCLE_COMB begin
    hi_idx_d    = hi_idx_q;
    lo_idx_d    = lo_idx_q;
    hi_used_d   = hi_used_q;
    lo_used_d   = lo_used_q;
    hi_cnt_d    = hi_cnt_q;
    gnt_valid_o = 1'b0;
    gnt_vl_o    = 4'd0;
    gnt_high_o  = 1'b0;
    if (rst_ni && ready_i) begin
      if (vl15_first) begin
        gnt_valid_o = 1'b1;
        gnt_vl_o    = 4'd15;
      end else if (hi_found && (!lo_found || !limit_reached)) begin
        gnt_valid_o = 1'b1;
        gnt_vl_o    = hi_gvl;
        gnt_high_o  = 1'b1;
        hi_idx_d    = hi_pick;
        hi_used_d   = t_used[0 +: 9];
        if (lo_found) hi_cnt_d = cnt_plus[hi_gvl*16 +: 16];
      end else if (lo_found) begin
        gnt_valid_o = 1'b1;
        gnt_vl_o    = lo_gvl;
        lo_idx_d    = lo_pick;
        lo_used_d   = t_used[9 +: 9];
        hi_cnt_d    = 16'd0;
      end
`ifdef IBCYCLE_FAULT_VL15_PRIORITY
      else if (req_i[15]) begin
        gnt_valid_o = 1'b1;
        gnt_vl_o    = 4'd15;
      end
`endif
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      hi_idx_q  <= '0;
      lo_idx_q  <= '0;
      hi_used_q <= '0;
      lo_used_q <= '0;
      hi_cnt_q  <= '0;
    end else if (!hold_i) begin
      hi_idx_q  <= hi_idx_d;
      lo_idx_q  <= lo_idx_d;
      hi_used_q <= hi_used_d;
      lo_used_q <= lo_used_d;
      hi_cnt_q  <= hi_cnt_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // A grant only to a ready output, for a VL that requests and has the credit for its head packet.
  // Each property is evaluated on this cycle's settled values and registered; the registered bits are
  // asserted, so the check does not depend on how a simulator orders clocked blocks (reported a cycle late).
  logic [2:0] a_ok, a_ok_q;
  `IBCYCLE_COMB begin
    a_ok[2] = !rst_ni || cfg_err_o == 4'd0;
    // VL15 (subnet management) is not flow-controlled: it needs no credit.
    a_ok[0] = !rst_ni || !gnt_valid_o
              || (ready_i && req_i[gnt_vl_o] && (gnt_vl_o == 4'd15 || credit_ok_i[gnt_vl_o]));
    a_ok[1] = !rst_ni || (gnt_valid_o || !gnt_high_o);
  end
  always_ff @(posedge clk_i) a_ok_q <= a_ok;
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // a grant only to a ready output, a requesting VL, with credit
    assert (a_ok_q[1]);  // no high-table flag without a grant
    assert (a_ok_q[2]);  // configuration within its rules
  end
`endif

endmodule

`default_nettype wire
