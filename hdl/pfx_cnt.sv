// pfx_cnt: the inclusive prefix counts of a bit vector, as a Kogge-Stone tree: log2(N) levels of adders, each
// at most W bits wide, instead of a chain of N increments (Yosys's generic mapping does not rebalance an
// adder chain written as a loop). `cnt_o[W*o +: W]` is the number of set bits among `bits_i[0..o]`, so
// `cnt_o[W*(N-1) +: W]` is the vector's population count.
//
// | port   | dir | width | meaning                                              |
// |--------|-----|-------|------------------------------------------------------|
// | bits_i | in  | N     | the vector                                           |
// | cnt_o  | out | N x W | entry o: set bits among bits_i[0..o]                 |
//
// Parameters: N (bits, at least 1), W (count width; the default holds N).
// Written with continuous assignments to a flattened vector (no unpacked arrays assigned by element), so
// Icarus 11 elaborates it as Verilator and Yosys do.

`default_nettype none

module pfx_cnt #(
  parameter int N = 8,
  parameter int W = $clog2(N + 1)
) (
  input  wire logic [N-1:0]   bits_i,
  output wire logic [N*W-1:0] cnt_o
);
  localparam int L = (N > 1) ? $clog2(N) : 0;

  // Level l, entry o: set bits among bits_i[o - 2^l + 1 .. o] (those that exist).
  wire logic [(L+1)*N*W-1:0] lv /* verilator split_var */;
  for (genvar o = 0; o < N; o++) begin : g_in
    assign lv[W*o +: W] = W'(bits_i[o]);
  end
  for (genvar l = 1; l <= L; l++) begin : g_lv
    for (genvar o = 0; o < N; o++) begin : g_o
      if (o >= (1 << (l - 1))) begin : g_add
        assign lv[W*(l*N + o) +: W] = lv[W*((l-1)*N + o) +: W] + lv[W*((l-1)*N + o - (1 << (l - 1))) +: W];
      end else begin : g_pass
        assign lv[W*(l*N + o) +: W] = lv[W*((l-1)*N + o) +: W];
      end
    end
  end
  assign cnt_o = lv[W*L*N +: N*W];
endmodule

`default_nettype wire
