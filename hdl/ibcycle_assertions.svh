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
