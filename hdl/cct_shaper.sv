// cct_shaper: the IB CC reaction point core for one CCTI (one SL, or one QP in QP-based mode).
//
// RTL twin of rtl-model/src/blocks/cct_shaper.rs (`CctShaper`); every output and next state is bit-for-bit the
// Rust `step`. A BECN (or CNP) raises the congestion control table index CCTI; a timer counted in 1.024 us
// ticks lowers it again; the CCT entry at CCTI gives the injection rate delay
// `IRD = (t_pkt >> shift) * multiplier`, which the block counts down after each packet (hfi1 behaviour).
//
// | port                  | dir | width         | meaning                                                     |
// |-----------------------|-----|---------------|-------------------------------------------------------------|
// | `clk_i`               | in  | 1             | clock                                                       |
// | `rst_ni`              | in  | 1             | synchronous reset, active low                               |
// | configuration (held constant; the Rust `Config`)                                                         |
// | `cct_i`               | in  | CctEntries x 16 | CCT entry e at [16e +: 16]: [15:14] shift, [13:0] multiplier |
// | `ccti_limit_i`        | in  | 7             | CCTI_Limit                                                  |
// | `ccti_min_i`          | in  | 7             | CCTI_Min (<= CCTI_Limit); also the reset CCTI               |
// | `ccti_increase_i`     | in  | 8             | CCTI_Increase per BECN                                      |
// | `ccti_timer_i`        | in  | 16            | CCTI_Timer in ticks; 0 disables the timer                   |
// | `trigger_threshold_i` | in  | 8             | Trigger_Threshold; 0 disables the trigger                   |
// | `t_pkt_i`             | in  | 16            | wire time of one MTU packet in core cycles                  |
// | per-cycle inputs                                                                                         |
// | `becn_i`              | in  | 1             | a BECN (CNP) for this CCTI arrived                          |
// | `tick_i`              | in  | 1             | one 1.024 us tick from the shared `timebase`                |
// | `sent_i`              | in  | 1             | a packet of this flow was sent: load the injection delay    |
// | outputs (combinational from `_q` and this cycle's inputs)                                                |
// | `ccti_o`              | out | 7             | current CCTI (`ccti_q`; `ccti_min_i` while reset is low)    |
// | `ird_o`               | out | 24            | IRD of cct[ccti_o], saturated at 24 bits                    |
// | `ready_o`             | out | 1             | `ipd_q == 0`: the flow may send (1 while reset is low)      |
// | `trigger_o`           | out | 1             | this cycle's BECN brought CCTI to >= trigger_threshold      |
// | `cfg_err_o`           | out | 2             | configuration rules broken, a bit per rule (below)          |
//
// `cfg_err_o` flags the held values the Rust `Config::validate` refuses (`Config::cfg_err`, the same bits),
// from the configuration ports alone (combinational, also during reset); an assertion fails on any bit:
//   bit 0  ccti_min_i > ccti_limit_i   (CCTI would leave [CCTI_Min, CCTI_Limit])
//   bit 1  ccti_limit_i >= CctEntries  (the table does not cover CCTI_Limit; the Rust table is too short)
//
// The CCT is a flattened vector (Yosys 0.23 rejects packed 2-D ports) read at one index. Entries above
// CCTI_Limit are never read (the Rust block requires at least ccti_limit + 1 entries); an index beyond
// CctEntries would read 0, as the Rust `cct.get()` gives no entry.
//
// State: `ccti_q` (7, reset `ccti_min_i`), `timer_q` (16: ticks to expiry, 0 = not running, reset 0),
// `ipd_q` (24: cycles of injection delay left, reset 0).
//
// Designer choices (of the Rust block, kept here):
// - On a tick with the timer running: at 1 it expires (CCTI - 1 if above CCTI_Min; re-armed to CCTI_Timer while
//   the new CCTI is still above CCTI_Min, else stopped), otherwise it counts down.
// - A BECN and an expiry in the same cycle: the expiry first, then the BECN:
//   `CCTI = min(dec(CCTI) + CCTI_Increase, CCTI_Limit)`; a BECN starts a stopped timer; the trigger sees the
//   final CCTI.
// - `sent_i` loads `ipd_q` with this cycle's `ird_o` (from the CCTI before this cycle's BECN); otherwise
//   `ipd_q` counts down to 0 and stays there.
// - IRD saturates at 2^24 - 1 (hfi1 masks instead).
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_TIMER_LATE: the timer is loaded with CCTI_Timer + 1 (a nonzero CCTI_Timer), so every expiry comes one
//   tick late.
// - IBCYCLE_FAULT_CCTI_LIMIT: a BECN's increase is not clamped at CCTI_Limit (the 7-bit sum wraps).
// - IBCYCLE_FAULT_CCTI_MIN: an expiry lowers CCTI down to 0, not to CCTI_Min (and keeps the timer running above 0).
// - IBCYCLE_FAULT_BECN_FIRST: a BECN in the same cycle as an expiry is applied first, the expiry's decrement after
//   the clamp (`dec(min(CCTI + CCTI_Increase, CCTI_Limit))`).

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module cct_shaper #(
  // CCT entries (opensm: at most 128; a 7-bit CCTI addresses 128). 1..128.
  parameter int CctEntries = 128
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,

  // Configuration (held constant)
  input  logic [CctEntries*16-1:0] cct_i,
  input  logic [6:0]              ccti_limit_i,
  input  logic [6:0]              ccti_min_i,
  input  logic [7:0]              ccti_increase_i,
  input  logic [15:0]             ccti_timer_i,
  input  logic [7:0]              trigger_threshold_i,
  input  logic [15:0]             t_pkt_i,

  // Events
  input  logic                    becn_i,
  input  logic                    tick_i,
  input  logic                    sent_i,

  // Rate
  output logic [6:0]              ccti_o,
  output logic [23:0]             ird_o,
  output logic                    ready_o,
  output logic                    trigger_o,

  // Configuration check
  output logic [1:0]              cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_CCTI_LIMIT
  $fatal(1, "IBCYCLE_FAULT_CCTI_LIMIT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_TIMER_LATE
  $fatal(1, "IBCYCLE_FAULT_TIMER_LATE is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_CCTI_MIN
  $fatal(1, "IBCYCLE_FAULT_CCTI_MIN is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_BECN_FIRST
  $fatal(1, "IBCYCLE_FAULT_BECN_FIRST is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Bad parameters stop elaboration. Icarus has no elaboration-time system tasks: it checks at time 0.
`ifdef __ICARUS__
  initial if (CctEntries < 1 || CctEntries > 128) begin
    $error("cct_shaper: CctEntries (%0d) must be 1..128 (instance %m)", CctEntries);
    $finish;
  end
`else
  if (CctEntries < 1 || CctEntries > 128) begin : g_bad_param
    $error("cct_shaper: CctEntries (%0d) must be 1..128", CctEntries);
  end
`endif

  localparam logic [23:0] IrdMax = 24'hffffff;

  always_comb begin
    cfg_err_o[0] = ccti_min_i > ccti_limit_i;
    cfg_err_o[1] = 32'(ccti_limit_i) >= CctEntries;
  end

  // Registered state and next state
  logic [6:0]  ccti_q, ccti_d;
  logic [15:0] timer_q, timer_d;
  logic [23:0] ipd_q, ipd_d;

  // The timer reload value.
  logic [15:0] timer_load;
`ifdef IBCYCLE_FAULT_TIMER_LATE
  assign timer_load = (ccti_timer_i == 16'd0) ? 16'd0 : ccti_timer_i + 16'd1;
`else
  assign timer_load = ccti_timer_i;
`endif

  // IRD of the CCTI shown this cycle (the reset CCTI while reset is low).
  //
  // The product (t_pkt >> shift) * multiplier is computed in the cycle that reads the table, so it is
  // built for depth: one partial product row per multiplier bit, the 14 rows reduced to two by carry-save
  // adders (pairs of rows combined as 4:2 compressors, three levels) and the two added by a Kogge-Stone
  // adder; the shifts of t_pkt are formed before the table read, which only selects one.

  // Two carry-save pairs {c, s} (value s + c) reduced to one pair: a 4:2 compressor per bit, three gate
  // levels. Of the four rows, the first three's majority goes to the next bit (cout, no dependency on that
  // bit's own carry in), so the sum is (x1 ^ x2) ^ (x3 ^ x4) ^ cin and the carry the majority of
  // x1 ^ x2 ^ x3, x4 and cin.
  function automatic logic [59:0] cs_add30(input logic [59:0] x, input logic [59:0] y);
    logic [29:0] x1, x2, x3, x4, p12, p, cout, cin, cy;
    x1 = x[29:0];
    x2 = x[59:30];
    x3 = y[29:0];
    x4 = y[59:30];
    p12 = x1 ^ x2;
    p   = p12 ^ (x3 ^ x4);
    cout = (p12 & x3) | (~p12 & x1);
    cin = cout << 1;
    cy = (p & cin) | (~p & x4);
    cs_add30 = {cy << 1, p ^ cin};
  endfunction

  // The carries out of each bit of a + b (bit i: out of bits i..0), by a Kogge-Stone tree (Yosys's generic
  // adder is Brent-Kung, twice the levels). Generate and propagate (a ^ b) never both hold, for a bit or a
  // group, so a group's carry is one multiplexer: the lower group's carry where this one propagates, its
  // own generate elsewhere.
  function automatic logic [23:0] ks_carry24(input logic [23:0] a, input logic [23:0] b);
    logic [23:0] g, p, gn;
    g = a & b;
    p = a ^ b;
    for (int s = 1; s < 24; s = 2 * s) begin
      gn = (p & (g << s)) | (~p & g);
      g = gn;
      p = p & (p << s);
    end
    ks_carry24 = g;
  endfunction

  logic [6:0]    ccti_now;
  logic [15:0]   entry;
  logic [15:0]   t_shift;
  logic [14*30-1:0] pp;     // partial product rows
  logic [7*60-1:0]  cs1;    // seven carry-save pairs: the rows in pairs
  logic [4*60-1:0]  cs2;
  logic [2*60-1:0]  cs3;
  logic [59:0]      cs4;
  logic [23:0]      cy;  // carries of the low 24 bits
  logic [23:0]      ird_low;
  logic [5:0]       hi_s, hi_c;
  logic             hi_zero, hi_ones, ird_sat;

  always_comb begin
    ccti_now = rst_ni ? ccti_q : ccti_min_i;
    entry    = (32'(ccti_now) < CctEntries) ? cct_i[ccti_now*16 +: 16] : 16'd0;
    case (entry[15:14])
      2'd0:    t_shift = t_pkt_i;
      2'd1:    t_shift = {1'b0, t_pkt_i[15:1]};
      2'd2:    t_shift = {2'b0, t_pkt_i[15:2]};
      default: t_shift = {3'b0, t_pkt_i[15:3]};
    endcase
    for (int j = 0; j < 14; j++) pp[j*30 +: 30] = entry[j] ? ({14'd0, t_shift} << j) : 30'd0;
    cs1 = pp;
    for (int i = 0; i < 3; i++) cs2[i*60 +: 60] = cs_add30(cs1[2*i*60 +: 60], cs1[(2*i+1)*60 +: 60]);
    cs2[3*60 +: 60] = cs1[6*60 +: 60];
    for (int i = 0; i < 2; i++) cs3[i*60 +: 60] = cs_add30(cs2[2*i*60 +: 60], cs2[(2*i+1)*60 +: 60]);
    cs4      = cs_add30(cs3[0 +: 60], cs3[60 +: 60]);
    cy       = ks_carry24(cs4[23:0], cs4[53:30]);
    ird_low  = cs4[23:0] ^ cs4[53:30] ^ {cy[22:0], 1'b0};
    // Saturation: product bits 29:24 = (hi_s + hi_c + carry into bit 24) mod 64 is non-zero, decided without
    // waiting for those six sum bits: with no carry in, unless hi_s + hi_c = 0 mod 64, which holds exactly
    // when hi_s ^ hi_c equals (hi_s | hi_c) << 1 (every bit's carry out is then a | b); with a carry in,
    // unless hi_s + hi_c = 63, i.e. hi_s ^ hi_c is all ones.
    hi_s     = cs4[29:24];
    hi_c     = cs4[59:54];
    hi_zero  = (hi_s ^ hi_c) == ((hi_s | hi_c) << 1);
    hi_ones  = (hi_s ^ hi_c) == 6'h3f;
    ird_sat  = cy[23] ? !hi_ones : !hi_zero;
    ird_o    = ird_sat ? IrdMax : ird_low;
    ccti_o   = ccti_now;
  end

  logic [8:0] ccti_sum;

  always_comb begin
    ccti_d    = ccti_q;
    timer_d   = timer_q;
    ipd_d     = ipd_q;
    ccti_sum  = '0;
    ready_o   = 1'b1;
    trigger_o = 1'b0;
    if (rst_ni) begin
      // Expiry first ...
      if (tick_i && (timer_q != 16'd0)) begin
        if (timer_q == 16'd1) begin
`ifdef IBCYCLE_FAULT_CCTI_MIN
          if (ccti_q > 7'd0) ccti_d = ccti_q - 7'd1;
          timer_d = (ccti_d > 7'd0) ? timer_load : 16'd0;
`else
          if (ccti_q > ccti_min_i) ccti_d = ccti_q - 7'd1;
          timer_d = (ccti_d > ccti_min_i) ? timer_load : 16'd0;
`endif
        end else begin
          timer_d = timer_q - 16'd1;
        end
      end
      // ... then the BECN.
      if (becn_i) begin
        ccti_sum = {2'b00, ccti_d} + {1'b0, ccti_increase_i};
`ifdef IBCYCLE_FAULT_BECN_FIRST
        ccti_sum = {2'b00, ccti_q} + {1'b0, ccti_increase_i};
`endif
`ifdef IBCYCLE_FAULT_CCTI_LIMIT
        ccti_d   = ccti_sum[6:0];
`else
        ccti_d   = (ccti_sum > {2'b00, ccti_limit_i}) ? ccti_limit_i : ccti_sum[6:0];
`endif
`ifdef IBCYCLE_FAULT_BECN_FIRST
        if (tick_i && (timer_q == 16'd1) && (ccti_d > ccti_min_i)) ccti_d = ccti_d - 7'd1;
`endif
        if (timer_d == 16'd0) timer_d = timer_load;
      end
      ready_o   = ipd_q == 24'd0;
      trigger_o = becn_i && (trigger_threshold_i != 8'd0) && ({1'b0, ccti_d} >= trigger_threshold_i);
      ipd_d     = sent_i ? ird_o : ((ipd_q != 24'd0) ? ipd_q - 24'd1 : 24'd0);
    end
  end

`ifdef IBCYCLE_FAULT_CCTI_LIMIT
  logic unused_ccti_limit;
  assign unused_ccti_limit = ^{ccti_limit_i, ccti_sum[8:7]};
`endif

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ccti_q  <= ccti_min_i;
      timer_q <= '0;
      ipd_q   <= '0;
    end else begin
      ccti_q  <= ccti_d;
      timer_q <= timer_d;
      ipd_q   <= ipd_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // The reaction point's invariants, out of reset: the configuration passes its rules; CCTI stays within
  // [CCTI_Min, CCTI_Limit]; it rises only on a BECN and falls only on a tick, by one; the timer never
  // holds more than CCTI_Timer; the flow is ready exactly when no injection delay is left, and that delay
  // is the IRD loaded by the last packet sent, counting down by one a cycle; a trigger only on a BECN
  // that brought CCTI to Trigger_Threshold (non-zero). Each property is registered and the register
  // asserted (a cycle late), so the check does not depend on how a simulator orders clocked blocks; the
  // transition properties compare against the previous cycle's registered values.
  logic        a_run_q;     // the previous cycle was out of reset
  logic        a_becn_q, a_tick_q, a_sent_q;
  logic [6:0]  a_ccti_q;
  logic [23:0] a_ipd_q, a_ird_q;
  always_ff @(posedge clk_i) begin
    a_run_q  <= rst_ni;
    a_becn_q <= becn_i;
    a_tick_q <= tick_i;
    a_sent_q <= sent_i;
    a_ccti_q <= ccti_q;
    a_ipd_q  <= ipd_q;
    a_ird_q  <= ird_o;
  end
  initial a_run_q = 1'b0;
  logic [6:0] a_ok, a_ok_q;
  always_comb begin
    a_ok[0] = !rst_ni || (cfg_err_o == 2'd0 && ccti_min_i <= ccti_limit_i);
    a_ok[1] = !rst_ni || (ccti_q >= ccti_min_i && ccti_q <= ccti_limit_i);
    a_ok[2] = !rst_ni || !a_run_q || ccti_q <= a_ccti_q || a_becn_q;
    a_ok[3] = !rst_ni || !a_run_q || ccti_q >= a_ccti_q || (a_tick_q && ccti_q == a_ccti_q - 7'd1);
    a_ok[4] = !rst_ni || timer_q <= timer_load;
    a_ok[5] = !rst_ni || (ready_o == (ipd_q == 24'd0)
                          && (!a_run_q || ipd_q == (a_sent_q ? a_ird_q
                                                  : ((a_ipd_q != 24'd0) ? a_ipd_q - 24'd1 : 24'd0))));
    a_ok[6] = !rst_ni || !trigger_o
              || (becn_i && trigger_threshold_i != 8'd0 && {1'b0, ccti_d} >= trigger_threshold_i);
  end
  always_ff @(posedge clk_i) a_ok_q <= a_ok;
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // configuration within its rules
    assert (a_ok_q[1]);  // CCTI within [CCTI_Min, CCTI_Limit]
    assert (a_ok_q[2]);  // CCTI rises only on a BECN
    assert (a_ok_q[3]);  // CCTI falls only on a tick, by one
    assert (a_ok_q[4]);  // the timer holds at most CCTI_Timer
    assert (a_ok_q[5]);  // ready exactly when no delay is left; the delay loads the IRD and counts down
    assert (a_ok_q[6]);  // a trigger only on a BECN reaching Trigger_Threshold
  end
`endif

endmodule

`default_nettype wire
