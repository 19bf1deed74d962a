// mark_enq: one cycle's FECN decisions at enqueue at one output VL of ib_switch, as a parallel prefix.
//
// Several packets may join the VoQs of one output VL in one cycle (ib_switch: per input a store-and-forward
// tail, event 2p, then a head, event 2p + 1, taken in that order). Each decision is fecn_marker's step
// (`ib_switch`'s `mk_step`) on the marking state as advanced by every earlier event of the cycle at this
// output VL. Taken as a chain that is NEv steps in series; here every event's decision and the state after
// the cycle come from one prefix count and a set of candidates computed beside it, with the same result
// (asserted against the chain every cycle).
//
// | port             | dir | width     | meaning                                                            |
// |------------------|-----|-----------|--------------------------------------------------------------------|
// | clk_i, rst_ni    | in  | 1         | clock and synchronous reset, active low: the assertions' only      |
// | configuration of the output port (fecn_marker's, held while out of reset)                                |
// | marking_rate_i   | in  | 16        | Marking_Rate                                                       |
// | mode_i           | in  | 1         | 0 counter, 1 LFSR                                                  |
// | lfsr_thresh_i    | in  | 17        | the LFSR's mark threshold (`FecnMarker::lfsr_thresh()`)            |
// | per cycle                                                                                                |
// | s_i              | in  | 16        | the output VL's marking state at the cycle's start (counter/LFSR)  |
// | mstate_i         | in  | 1         | the output VL is in the marking state (cong_detect)                |
// | ev_i             | in  | NEv       | event n enqueues a packet at this output VL, marked at enqueue     |
// | size_ok_i        | in  | NEv       | event n's packet is at least Packet_Size: bytes >= 64 x Packet_Size |
// | mark_o           | out | NEv       | event n's packet gets FECN (only where ev_i[n])                    |
// | s_o              | out | 16        | the marking state after the cycle's events                         |
//
// Parameters: NEv (events per cycle, 2 * ib_switch's NPorts), SelfCheck (1: the assertion below checks every
// output against the chain of steps; ib_switch sets 0 and checks all its output VLs' chains at once, which
// keeps its Verilated model small: one unrolled chain per instance was 2 MB of C++ each), CW (derived: holds
// NEv; do not override).
//
// How (fecn_marker's step advances the state only for an eligible packet, `mstate && bytes >= 64 *
// Packet_Size`, and decides from the state before it):
// - The size compare is the caller's (`size_ok_i`), registered with the events: it needs only the packet's
//   length and its output's Packet_Size, so `ib_switch` decides it beside the enqueue, and the prefix count
//   below starts from registers (at 72 events the compare in front of it was 7 of 47 levels).
// - `adv[n]`: event n is eligible. `cnt[n]`, the number of eligible events before n, is a Sklansky prefix
//   sum (log2(NEv) levels of adders of at most CW bits); `cnt[NEv]` is the cycle's total.
// - Candidates for every count j = 0..NEv: the state after j steps, `cand[j]`, and whether a decision taken
//   from it marks, `mkc[j]`. Event n's mark is `adv[n] && mkc[cnt[n]]`; the state after the cycle is
//   `cand[cnt[NEv]]` (a multiplexer tree by the count's bits).
// - LFSR: a step leaps the 16-bit Galois LFSR (taps 0xB400) by 16 shifts, a linear map M over GF(2), so
//   `cand[j] = M^j s`, each bit an XOR tree over s with the constant matrix M^j, computed at elaboration
//   (as fecn_rewrite's CRC matrices are); a mark is `cand[j] < lfsr_thresh`.
// - Counter: with R = Marking_Rate and P = R + 1, a step is `s >= R ? 0 : s + 1` and a mark is `s == 0`.
//   From s <= R (every reachable state: the state resets to 0 and every step keeps it at most R while the
//   configuration is held; ib_switch asserts it) j steps give (s + j) mod P = s + (j mod P), less P when that
//   reaches P. j mod P needs no divider: j <= NEv, so it is j when P > j, else one of the constants j mod c
//   (c = 1..j) chosen by P == c (an AND-OR). Writing g = P - s, the sum wraps when j mod P >= g, to
//   (j mod P) - g, and marks when it is 0: s = 0 and j mod P = 0, or j mod P = g. From s > R (not
//   reachable; kept exact all the same) the first step gives 0 and j steps give (j - 1) mod P.
// Every accumulation is a reduction operator or an explicit tree (Yosys's generic mapping does not balance
// a chain written as a loop).

`default_nettype none
`include "ibcycle_assertions.svh"

module mark_enq #(
  parameter int NEv = 36,
  parameter bit SelfCheck = 1'b1,
  parameter int CW  = $clog2(NEv + 1)
) (
  /* verilator lint_off UNUSEDSIGNAL */
  input  wire logic               clk_i,
  input  wire logic               rst_ni,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire logic [15:0]        marking_rate_i,
  input  wire logic               mode_i,
  input  wire logic [16:0]        lfsr_thresh_i,
  input  wire logic [15:0]        s_i,
  input  wire logic               mstate_i,
  input  wire logic [NEv-1:0]     ev_i,
  input  wire logic [NEv-1:0]     size_ok_i,
  output logic [NEv-1:0]          mark_o,
  output logic [15:0]             s_o
);

  // One C++ class for every instance in a Verilated switch (NPorts x NVl of them): inlined, each instance's
  // unrolled candidates and prefix made ib_switch's model 78 MB of C++ instead of 31.
  /* verilator no_inline_module */

  localparam logic [15:0] LfsrTaps = 16'hB400;

  // Matrix j (j = 0..NEv) at [256*j +: 256], row b at [16*j + ... ]: bit i of row b set when state bit i
  // reaches bit b in 16j shifts. (Written without calls: Icarus 11 evaluates no call in a constant function.)
  function automatic logic [256*(NEv+1)-1:0] leap_maps(input int unused);
    logic [256*(NEv+1)-1:0] r;
    logic [15:0] y;
    for (int i = 0; i < 16; i++) begin
      y = 16'(1) << i;
      for (int j = 0; j <= NEv; j++) begin
        for (int b = 0; b < 16; b++) r[256*j + 16*b + i] = y[b];
        for (int k = 0; k < 16; k++) y = y[0] ? ((y >> 1) ^ LfsrTaps) : (y >> 1);
      end
    end
    leap_maps = r;
  endfunction
  localparam logic [256*(NEv+1)-1:0] LeapMaps = leap_maps(0);

  // Bit b of j mod c for every c at once: bit c set when 1 <= c <= j and bit b of j mod c is 1 (c > j: j mod c
  // is j itself, taken apart below). One constant per (j, b), each from a loop over c alone: a single
  // constant of every (j, b, c) took Verilator's constant evaluation past its limits at 72 events.
  function automatic logic [NEv:0] mod_mask(input int j, input int b);
    logic [NEv:0] r;
    r = '0;
    for (int c = 1; c <= NEv; c++) r[c] = c <= j && (((j % c) >> b) & 1) == 1;
    mod_mask = r;
  endfunction

  // ---------------------------------------------------------------- prefix count
  logic [NEv-1:0] adv;
  logic [CW-1:0]  cnt [NEv+1];
  `IBCYCLE_COMB begin : prefix
    logic [CW-1:0] a [NEv];   // inclusive prefix sums, level by level (Sklansky)
    for (int n = 0; n < NEv; n++) begin
      adv[n] = ev_i[n] && mstate_i && size_ok_i[n];
      a[n] = CW'(adv[n]);
    end
    // Level l: every element with bit l of its index set adds the sum ending just below its block of 2^l
    // (that element's bit l is clear, so it is not written at this level).
    for (int l = 0; l < CW; l++) begin
      for (int n = 0; n < NEv; n++) begin
        if (((n >> l) & 1) == 1) a[n] = a[n] + a[((n >> l) << l) - 1];
      end
    end
    cnt[0] = '0;
    for (int n = 1; n <= NEv; n++) cnt[n] = a[n-1];
  end

  // ---------------------------------------------------------------- candidates
  logic [16*(NEv+1)-1:0] cand;
  logic [NEv:0]          mkc;
  // j mod P for every j, bit by bit: is_p[c] is P == c (c >= 1).
  logic [NEv:0]  is_p;
  logic [CW-1:0] jm [NEv+1];
  assign is_p[0] = 1'b0;
  for (genvar c = 1; c <= NEv; c++) begin : g_is_p
    assign is_p[c] = marking_rate_i == 16'(c - 1);
  end
  for (genvar j = 0; j <= NEv; j++) begin : g_jm
    for (genvar b = 0; b < CW; b++) begin : g_b
      localparam logic [NEv:0] ModMask = mod_mask(j, b);
      if (j == 0) begin : g_0
        assign jm[j][b] = 1'b0;
      end else begin : g_j
        assign jm[j][b] = (32'(marking_rate_i) >= j) ? ((j >> b) & 1) == 1 : |(is_p & ModMask);
      end
    end
  end
  `IBCYCLE_COMB begin : cands
    logic over;
    logic [16:0] g;
    logic wrap;
    logic [15:0] lc, cc;
    logic lm, cm;
    over = s_i > marking_rate_i;
    g = {1'b0, marking_rate_i} + 17'd1 - {1'b0, s_i};
    for (int j = 0; j <= NEv; j++) begin
      // LFSR
      for (int b = 0; b < 16; b++) lc[b] = ^(s_i & LeapMaps[256*j + 16*b +: 16]);
      lm = {1'b0, lc} < lfsr_thresh_i;
      // Counter
      wrap = 17'(jm[j]) >= g;
      if (over) begin
        cc = (j == 0) ? s_i : 16'(jm[(j > 0) ? j - 1 : 0]);
        cm = j != 0 && jm[(j > 0) ? j - 1 : 0] == '0;
      end else begin
        cc = wrap ? 16'(CW'(jm[j] - g[CW-1:0])) : s_i + 16'(jm[j]);
        cm = (s_i == 16'd0) ? jm[j] == '0 : 17'(jm[j]) == g;
      end
      cand[16*j +: 16] = mode_i ? lc : cc;
      mkc[j] = mode_i ? lm : cm;
    end
  end

  // ---------------------------------------------------------------- selection
  `IBCYCLE_COMB begin : pick
    for (int n = 0; n < NEv; n++) mark_o[n] = adv[n] && mkc[cnt[n]];
    s_o = cand[16*cnt[NEv] +: 16];
  end

`ifdef IBCYCLE_ASSERTIONS
  // The chain this replaces: fecn_marker's step event by event, each from the state the earlier ones left.
  // Checked a cycle late (registered), not in reset cycles.
  if (SelfCheck) begin : g_check
    logic a_ok, a_ok_q;
    `IBCYCLE_COMB begin : a_chain
      logic [15:0] x;
      logic m;
      x = s_i;
      a_ok = 1'b1;
      for (int n = 0; n < NEv; n++) begin
        m = 1'b0;
        if (ev_i[n] && mstate_i && size_ok_i[n]) begin
          if (mode_i) begin
            m = {1'b0, x} < lfsr_thresh_i;
            for (int k = 0; k < 16; k++) x = x[0] ? ((x >> 1) ^ LfsrTaps) : (x >> 1);
          end else begin
            m = x == 16'd0;
            x = (x >= marking_rate_i) ? 16'd0 : x + 16'd1;
          end
        end
        a_ok = a_ok && mark_o[n] == m;
      end
      a_ok = a_ok && s_o == x;
    end
    always_ff @(posedge clk_i) a_ok_q <= a_ok || !rst_ni;
    initial a_ok_q = 1'b1;
    always @(posedge clk_i) begin
      assert (a_ok_q);
    end
  end : g_check
`endif
endmodule
`default_nettype wire
