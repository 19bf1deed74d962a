// Shared by the replay testbenches (`include'd inside the module, after its ports and its `clk`): the trace
// file and the cycle count, `open_trace` for +trace=FILE, `expect_fields` for a stimulus line, `check`, which
// stops at the first mismatch with the cycle, the port and both values in hex, `clock_edge` and `checked`. A testbench whose outputs are wider than 64 bits defines TB_CHECK_BITS
// before the include.
`ifndef TB_CHECK_BITS
`define TB_CHECK_BITS 64
`endif

  integer fd, kind, r, cycle;
  reg [8*1024-1:0] path;

  task automatic check(input string port, input logic [`TB_CHECK_BITS-1:0] rtl,
                       input logic [`TB_CHECK_BITS-1:0] model);
    if (rtl !== model) begin
      $display("MISMATCH cycle %0d port %s: RTL %h model %h", cycle, port, rtl, model);
      $finish;
    end
  endtask

  // Opens the trace named by +trace=FILE; without one, or when it cannot be read, the run ends with an error
  // (and no "Checked" line, so run.sh counts it as a failure).
  task automatic open_trace;
    if (!$value$plusargs("trace=%s", path)) begin
      $display("ERROR: no +trace=FILE");
      $finish;
    end
    fd = $fopen(path, "r");
    if (fd == 0) begin
      $display("ERROR: cannot open trace");
      $finish;
    end
    cycle = 0;
  endtask

  // A stimulus line must have had `want` fields (`got`, what $fscanf returned).
  task automatic expect_fields(input integer got, input integer want);
    if (got != want) begin
      $display("ERROR: bad trace line at cycle %0d", cycle);
      $finish;
    end
  endtask

  // The rising edge that ends the cycle (outputs were checked before it), and the next cycle.
  task automatic clock_edge;
    clk = 1'b1;
    #1;
    clk = 1'b0;
    cycle = cycle + 1;
  endtask

  // The trace is done and every output matched: the line run.sh looks for.
  task automatic checked;
    $display("Checked %0d cycles", cycle);
    $finish;
  endtask
