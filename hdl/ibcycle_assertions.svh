// Whether a module's assertions are compiled: its `ifdef IBCYCLE_ASSERTIONS` block holds the spec's
// invariants at its ports, checked every cycle out of reset. On in every simulation (Verilator with
// --assert, Icarus) and in formal runs (Yosys read_verilog -formal -DFORMAL); off in synthesis (Yosys
// defines SYNTHESIS). They are immediate assertions in `always` blocks, the form Icarus 11 and Yosys's
// open-source frontend both read (neither takes `bind` or concurrent properties). Tools find this file
// beside the modules (Verilator: -y or -I hdl; Icarus: -I hdl; Yosys: the including file's directory).
`ifndef SYNTHESIS
`ifndef IBCYCLE_ASSERTIONS
`define IBCYCLE_ASSERTIONS
`endif
`endif
`ifdef FORMAL
`ifndef IBCYCLE_ASSERTIONS
`define IBCYCLE_ASSERTIONS
`endif
`endif
// The process keyword of combinational logic in ib_switch and the blocks whose outputs close its
// block-level loop (grant -> credit_tx -> vl_arb -> grant, the FECN decision through cong_detect). Under
// Icarus 11 always_comb (which is also sensitive to what called functions read) kept every process of
// every instance re-running in one time step with no input changing: the switch stalled at its first
// grant, time frozen. The same code with always @* settles each cycle. Every other tool gets always_comb.
`ifndef IBCYCLE_COMB
`ifdef __ICARUS__
`define IBCYCLE_COMB always @*
`else
`define IBCYCLE_COMB always_comb
`endif
`endif
