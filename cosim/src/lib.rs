//! Verilator co-simulation of the RTL in `hdl/` against the `rtl-model` blocks.
