// test_finish: a test-only module (no Rust twin, never synthesised) that proves the co-simulation cannot pass
// when the RTL calls $finish, $stop or $fatal: the Verilated model reports the call instead of ending the
// process (which Verilator's default second-$finish handler would do with exit status 0).
//
// | port      | dir | width | meaning                                              |
// |-----------|-----|-------|------------------------------------------------------|
// | clk_i     | in  | 1     | clock, rising edge                                   |
// | rst_ni    | in  | 1     | synchronous reset, active low                        |
// | finish_i  | in  | 1     | call $finish at this edge                            |
// | stop_i    | in  | 1     | call $stop at this edge                              |
// | fatal_i   | in  | 1     | call $fatal at this edge                             |
// | count_o   | out | 8     | edges since reset, mod 256 (count_q)                 |
module test_finish (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       finish_i,
  input  logic       stop_i,
  input  logic       fatal_i,
  output logic [7:0] count_o
);

  logic [7:0] count_q, count_d;

  always_comb begin
    count_d = count_q + 8'd1;
    if (!rst_ni) count_d = 8'd0;
    count_o = count_q;
  end

  always_ff @(posedge clk_i) begin
    count_q <= count_d;
    if (finish_i) $finish;
    if (stop_i) $stop;
    if (fatal_i) $fatal(1, "test_finish: fatal_i was raised");
  end

endmodule
