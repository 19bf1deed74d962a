// test_finish: a test-only module (no Rust twin, never synthesised) that proves the co-simulation cannot pass
// when the RTL calls $finish, $stop or $fatal: the Verilated model reports the call instead of ending the
// process (which Verilator's default second-$finish handler would do with exit status 0). It also carries a
// 40-bit and a 100-bit register so the shim's 33-64-bit and multi-word port paths are tested.
//
// | port      | dir | width | meaning                                              |
// |-----------|-----|-------|------------------------------------------------------|
// | clk_i     | in  | 1     | clock, rising edge                                   |
// | rst_ni    | in  | 1     | synchronous reset, active low                        |
// | finish_i  | in  | 1     | call $finish at this edge                            |
// | stop_i    | in  | 1     | call $stop at this edge                              |
// | fatal_i   | in  | 1     | call $fatal at this edge                             |
// | mid_i     | in  | 40    | latched into mid_q                                   |
// | wide_i    | in  | 100   | latched into wide_q                                  |
// | count_o   | out | 8     | edges since reset, mod 256 (count_q)                 |
// | mid_o     | out | 40    | mid_q (reset 0)                                      |
// | wide_o    | out | 100   | ~wide_q (reset all ones)                             |
// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

module test_finish (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        finish_i,
  input  logic        stop_i,
  input  logic        fatal_i,
  input  logic [39:0] mid_i,
  input  logic [99:0] wide_i,
  output logic [7:0]  count_o,
  output logic [39:0] mid_o,
  output logic [99:0] wide_o
);

  logic [7:0]  count_q, count_d;
  logic [39:0] mid_q, mid_d;
  logic [99:0] wide_q, wide_d;

  always_comb begin
    count_d = count_q + 8'd1;
    mid_d   = mid_i;
    wide_d  = wide_i;
    if (!rst_ni) begin
      count_d = 8'd0;
      mid_d   = '0;
      wide_d  = '0;
    end
    count_o = count_q;
    mid_o   = mid_q;
    wide_o  = ~wide_q;
  end

  always_ff @(posedge clk_i) begin
    count_q <= count_d;
    mid_q   <= mid_d;
    wide_q  <= wide_d;
    if (finish_i) $finish;
    if (stop_i) $stop;
    if (fatal_i) $fatal(1, "test_finish: fatal_i was raised");
  end

endmodule

`default_nettype wire
