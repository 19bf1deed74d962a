//! The RTL modules the co-simulation builds, with their ports: the one table both `build.rs` (which Verilates
//! every module and bug variant and generates the C ABI shim and the `#[repr(C)]` port structs from it) and the
//! library (block list, port names) read. Adding a module to the co-simulation starts with an entry here.
//!
//! `clk_i` is implicit: every module has it and the shim drives it. Port order is the field order of the
//! generated port struct.

/// How the co-simulation drives or reads a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// An input driven from the stimulus every cycle.
    In,
    /// A configuration input, held constant for a whole run (a `Config` field of the Rust block).
    Held,
    /// An output, compared every cycle.
    Out,
}

/// One port of an RTL module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    /// Name as in the SystemVerilog source and the Rust block's `In`/`Out` field.
    pub name: &'static str,
    /// Direction.
    pub dir: Dir,
    /// Width in bits.
    pub width: u32,
}

/// One co-simulated RTL module: `hdl/<top>.sv` elaborated with `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    /// Block name (`ibcycle cosim BLOCK`, Verilator prefix); the Rust block's module name when it equals
    /// `top`, else `top` plus the parameters (e.g. `fecn_rewrite_b8`).
    pub name: &'static str,
    /// RTL module and file name in `hdl/`.
    pub top: &'static str,
    /// Parameter overrides (`-G<name>=<value>` for Verilator, `chparam` for Yosys).
    pub params: &'static [(&'static str, u32)],
    /// Ports other than `clk_i`.
    pub ports: &'static [Port],
    /// Fault-injection variants: each is built with `-D<name>` as a separate Verilated model.
    pub bugs: &'static [&'static str],
    /// Parameters the fault variants are built at instead of `params` (empty: at `params`), behind a
    /// generated top with the table's port widths (each port's low lanes feed the smaller module, its
    /// outputs read zero above them), together with a control: the clean RTL at the same parameters
    /// ([`control_prefix`]; with [`Module::fault_select`], the model with every fault in and none on). A fault variant runs only until a trace shows its fault, and the traces that show
    /// the switch's faults have at most 8 ports: at 8 ports instead of 18 a switch model is a third of the C++
    /// to compile, and the switch's seven variants were most of the test command's build time.
    pub bug_params: &'static [(&'static str, u32)],
    /// Whether the bug variants (and the control) are one model, built with every fault in
    /// (`IBCYCLE_FAULTS_SELECT`), each turned on at run time by the plusarg `+IBCYCLE_FAULT_<NAME>`, instead
    /// of a model per variant. The RTL must support it (ib_switch does): for the switch, seven models of
    /// 40 MB of C++ each became one.
    pub fault_select: bool,
    /// Whether the module is the twin of a Rust block (false for test-only modules, which `--list` omits).
    pub twin: bool,
}

const fn p(name: &'static str, dir: Dir, width: u32) -> Port {
    Port { name, dir, width }
}

/// Every module the co-simulation builds.
pub const MODULES: &[Module] = &[
    Module {
        name: "credit_tx",
        top: "credit_tx",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("fccl_reset_i", Dir::Held, 12),
            p("fc_valid_i", Dir::In, 1),
            p("fc_fccl_i", Dir::In, 12),
            p("req_valid_i", Dir::In, 1),
            p("req_blocks_i", Dir::In, 7),
            p("take_i", Dir::In, 1),
            p("fctbs_o", Dir::Out, 12),
            p("fccl_o", Dir::Out, 12),
            p("avail_o", Dir::Out, 12),
            p("send_ok_o", Dir::Out, 1),
            p("err_o", Dir::Out, 1),
        ],
        bugs: &["BUG_CREDIT_WRAP", "BUG_FC_ORDER"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "credit_rx",
        top: "credit_rx",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("buf_blocks_i", Dir::Held, 16),
            p("fc_interval_i", Dir::Held, 16),
            p("fc_on_change_i", Dir::Held, 1),
            p("fccl_cap_i", Dir::Held, 12),
            p("blk_rx_i", Dir::In, 7),
            p("fc_valid_i", Dir::In, 1),
            p("fc_fctbs_i", Dir::In, 12),
            p("blk_free_i", Dir::In, 7),
            p("abr_o", Dir::Out, 12),
            p("free_o", Dir::Out, 16),
            p("fccl_o", Dir::Out, 12),
            p("fc_send_o", Dir::Out, 1),
            p("overflow_o", Dir::Out, 1),
            p("drain_err_o", Dir::Out, 1),
            p("cfg_err_o", Dir::Out, 4),
        ],
        bugs: &[
            "BUG_FCCL_CAP",
            "BUG_ABR_LOAD",
            "BUG_FC_TIMER",
            "BUG_OVERFLOW_AT_FULL",
            "BUG_CAP_CHECK",
        ],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "timebase",
        top: "timebase",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("inc_i", Dir::Held, 32),
            p("modulus_i", Dir::Held, 32),
            p("tick_o", Dir::Out, 1),
            p("ts_o", Dir::Out, 32),
            p("cfg_err_o", Dir::Out, 2),
        ],
        bugs: &["BUG_TICK_DRIFT"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "fecn_marker",
        top: "fecn_marker",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("packet_size_i", Dir::Held, 8),
            p("marking_rate_i", Dir::Held, 16),
            p("mode_i", Dir::Held, 1),
            p("lfsr_seed_i", Dir::Held, 16),
            p("lfsr_thresh_i", Dir::Held, 17),
            p("pkt_valid_i", Dir::In, 1),
            p("pkt_bytes_i", Dir::In, 13),
            p("mark_state_i", Dir::In, 1),
            p("mark_o", Dir::Out, 1),
            p("cfg_err_o", Dir::Out, 1),
        ],
        bugs: &["BUG_COUNTER_RELOAD", "BUG_PACKET_SIZE", "BUG_LFSR_STALL"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "vl_arb",
        top: "vl_arb",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("hi_vl_i", Dir::Held, 256),
            p("hi_weight_i", Dir::Held, 512),
            p("hi_n_i", Dir::Held, 7),
            p("lo_vl_i", Dir::Held, 256),
            p("lo_weight_i", Dir::Held, 512),
            p("lo_n_i", Dir::Held, 7),
            p("vl_high_limit_i", Dir::Held, 8),
            p("ready_i", Dir::In, 1),
            p("req_i", Dir::In, 16),
            p("len_i", Dir::In, 112),
            p("credit_ok_i", Dir::In, 16),
            p("hold_i", Dir::In, 1),
            p("gnt_valid_o", Dir::Out, 1),
            p("gnt_vl_o", Dir::Out, 4),
            p("gnt_high_o", Dir::Out, 1),
            p("cfg_err_o", Dir::Out, 4),
        ],
        bugs: &["BUG_WEIGHT_UNIT", "BUG_VL15_PRIORITY", "BUG_HIGH_LIMIT"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "cong_detect",
        top: "cong_detect",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("threshold_i", Dir::Held, 4),
            p("thr_table_i", Dir::Held, 256),
            p("compare_i", Dir::Held, 2),
            p("root_min_credits_i", Dir::Held, 12),
            p("root_rule_i", Dir::Held, 1),
            p("stall_window_i", Dir::Held, 16),
            p("victim_mask_i", Dir::Held, 1),
            p("voq_fill_i", Dir::In, 1024),
            p("voq_cnt_i", Dir::In, 7),
            p("credit_avail_i", Dir::In, 12),
            p("stall_i", Dir::In, 1),
            p("cong_o", Dir::Out, 1),
            p("root_o", Dir::Out, 1),
            p("victim_o", Dir::Out, 1),
            p("mark_state_o", Dir::Out, 1),
            p("cfg_err_o", Dir::Out, 1),
        ],
        bugs: &[
            "BUG_THRESHOLD_OFF_BY_ONE",
            "BUG_VICTIM_MASK",
            "BUG_THRESHOLD_INDEX",
            "BUG_STALL_WINDOW",
        ],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "cct_shaper",
        top: "cct_shaper",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("cct_i", Dir::Held, 2048),
            p("ccti_limit_i", Dir::Held, 7),
            p("ccti_min_i", Dir::Held, 7),
            p("ccti_increase_i", Dir::Held, 8),
            p("ccti_timer_i", Dir::Held, 16),
            p("trigger_threshold_i", Dir::Held, 8),
            p("t_pkt_i", Dir::Held, 16),
            p("becn_i", Dir::In, 1),
            p("tick_i", Dir::In, 1),
            p("sent_i", Dir::In, 1),
            p("ccti_o", Dir::Out, 7),
            p("ird_o", Dir::Out, 24),
            p("ready_o", Dir::Out, 1),
            p("trigger_o", Dir::Out, 1),
            p("cfg_err_o", Dir::Out, 2),
        ],
        bugs: &[
            "BUG_TIMER_LATE",
            "BUG_CCTI_LIMIT",
            "BUG_CCTI_MIN",
            "BUG_BECN_FIRST",
        ],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "fecn_rewrite_b8",
        top: "fecn_rewrite",
        params: &[("BeatBytes", 8)],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("valid_i", Dir::In, 1),
            p("sop_i", Dir::In, 1),
            p("eop_i", Dir::In, 1),
            p("bytes_i", Dir::In, 4),
            p("data_i", Dir::In, 64),
            p("mark_i", Dir::In, 1),
            p("valid_o", Dir::Out, 1),
            p("sop_o", Dir::Out, 1),
            p("eop_o", Dir::Out, 1),
            p("bytes_o", Dir::Out, 4),
            p("data_o", Dir::Out, 64),
            p("ebp_o", Dir::Out, 1),
            p("vcrc_errs_o", Dir::Out, 16),
        ],
        bugs: &["BUG_VCRC_BYTE_ORDER", "BUG_FECN_BIT"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "fecn_rewrite_b32",
        top: "fecn_rewrite",
        params: &[("BeatBytes", 32)],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("valid_i", Dir::In, 1),
            p("sop_i", Dir::In, 1),
            p("eop_i", Dir::In, 1),
            p("bytes_i", Dir::In, 6),
            p("data_i", Dir::In, 256),
            p("mark_i", Dir::In, 1),
            p("valid_o", Dir::Out, 1),
            p("sop_o", Dir::Out, 1),
            p("eop_o", Dir::Out, 1),
            p("bytes_o", Dir::Out, 6),
            p("data_o", Dir::Out, 256),
            p("ebp_o", Dir::Out, 1),
            p("vcrc_errs_o", Dir::Out, 16),
        ],
        bugs: &["BUG_VCRC_BYTE_ORDER", "BUG_FECN_BIT"],
        bug_params: &[],
        fault_select: false,
        twin: true,
    },
    Module {
        name: "ib_switch",
        top: "ib_switch",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("nports_i", Dir::Held, 6),
            p("mtu_blocks_i", Dir::Held, 7),
            p("rate_num_i", Dir::Held, 306),
            p("rate_den_i", Dir::Held, 306),
            p("nvl_i", Dir::Held, 72),
            p("speedup_i", Dir::Held, 126),
            p("mark_enq_i", Dir::Held, 18),
            p("buf_blocks_i", Dir::Held, 576),
            p("fc_interval_i", Dir::Held, 288),
            p("fc_on_change_i", Dir::Held, 1),
            p("fccl_cap_i", Dir::Held, 12),
            p("fccl_reset_i", Dir::Held, 12),
            p("threshold_i", Dir::Held, 72),
            p("thr_table_i", Dir::Held, 9216),
            p("compare_i", Dir::Held, 36),
            p("root_min_credits_i", Dir::Held, 216),
            p("root_rule_i", Dir::Held, 18),
            p("stall_window_i", Dir::Held, 288),
            p("victim_mask_i", Dir::Held, 18),
            p("packet_size_i", Dir::Held, 144),
            p("marking_rate_i", Dir::Held, 288),
            p("mode_i", Dir::Held, 18),
            p("lfsr_seed_i", Dir::Held, 288),
            p("lfsr_thresh_i", Dir::Held, 306),
            p("hi_vl_i", Dir::Held, 4608),
            p("hi_weight_i", Dir::Held, 9216),
            p("hi_n_i", Dir::Held, 126),
            p("lo_vl_i", Dir::Held, 4608),
            p("lo_weight_i", Dir::Held, 9216),
            p("lo_n_i", Dir::Held, 126),
            p("vl_high_limit_i", Dir::Held, 144),
            p("tbl_we_i", Dir::In, 1),
            p("tbl_sel_i", Dir::In, 1),
            p("tbl_addr_i", Dir::In, 16),
            p("tbl_data_i", Dir::In, 64),
            p("rx_pkt_i", Dir::In, 18),
            p("rx_dlid_i", Dir::In, 288),
            p("rx_sl_i", Dir::In, 72),
            p("rx_vl_i", Dir::In, 72),
            p("rx_len_i", Dir::In, 234),
            p("rx_fecn_i", Dir::In, 18),
            p("rx_off_i", Dir::In, 306),
            p("rx_tag_i", Dir::In, 576),
            p("rx_fc_i", Dir::In, 18),
            p("rx_fc_vl_i", Dir::In, 72),
            p("rx_fc_fctbs_i", Dir::In, 216),
            p("rx_fc_fccl_i", Dir::In, 216),
            p("tx_pkt_o", Dir::Out, 18),
            p("tx_vl_o", Dir::Out, 72),
            p("tx_fecn_o", Dir::Out, 18),
            p("tx_len_o", Dir::Out, 234),
            p("tx_off_o", Dir::Out, 306),
            p("tx_tag_o", Dir::Out, 576),
            p("tx_fc_o", Dir::Out, 18),
            p("tx_fc_vl_o", Dir::Out, 72),
            p("tx_fc_fctbs_o", Dir::Out, 216),
            p("tx_fc_fccl_o", Dir::Out, 216),
            p("drop_o", Dir::Out, 18),
            p("overflow_o", Dir::Out, 36),
            p("cfg_err_o", Dir::Out, 1),
        ],
        bugs: &[
            "BUG_CREDIT_LEAK",
            "BUG_FECN_INVERT",
            "BUG_DUP_PACKET",
            "BUG_VL_MIX",
            "BUG_SL2VL_INDEX",
            "BUG_CREDIT_BYPASS",
            "BUG_RR_STUCK",
        ],
        bug_params: &[("NPorts", 8), ("PW", 3)],
        fault_select: true,
        twin: false,
    },
    Module {
        name: "test_finish",
        top: "test_finish",
        params: &[],
        ports: &[
            p("rst_ni", Dir::In, 1),
            p("finish_i", Dir::In, 1),
            p("stop_i", Dir::In, 1),
            p("fatal_i", Dir::In, 1),
            p("mid_i", Dir::In, 40),
            p("wide_i", Dir::In, 100),
            p("count_o", Dir::Out, 8),
            p("mid_o", Dir::Out, 40),
            p("wide_o", Dir::Out, 100),
        ],
        bugs: &[],
        bug_params: &[],
        fault_select: false,
        twin: false,
    },
];

/// The module named `name`, if the table has it.
pub fn module(name: &str) -> Option<&'static Module> {
    MODULES.iter().find(|m| m.name == name)
}

/// Modules Verilated behind a generated top that registers their held configuration ports and `rst_ni`, as
/// a switch's configuration registers and reset synchroniser would (`build.rs`, `registered_top`): the
/// driver releases reset a cycle earlier, and the module sees the same reset and configuration on every
/// clock edge. Why: Verilator evaluates the logic fed by a top-level input on every `eval`, twice a step
/// (the shim evaluates before and after the edge), and `ib_switch` gates its outputs with `rst_ni` and reads
/// its configuration ports nearly everywhere, so almost all of its logic was input-fed; behind registers it
/// is evaluated once a step, after the edge (the Verilated input-fed code fell from 28 MB to 0.3 MB).
pub const REGISTERED_TOP: &[&str] = &["ib_switch"];

/// The Verilator `--prefix` (and C symbol prefix) of a module's variant: `V<module>` for the clean RTL,
/// `V<module>_<bug in lower case>` for a bug variant.
pub fn prefix(module: &str, bug: Option<&str>) -> String {
    match bug {
        None => format!("V{module}"),
        Some(b) => format!("V{module}_{}", b.to_ascii_lowercase()),
    }
}

/// The Verilator prefix of a module's control model (the clean RTL at its `bug_params`): `V<module>_control`.
pub fn control_prefix(module: &str) -> String {
    format!("V{module}_control")
}

/// The Verilator prefix of a module's model with every fault in (`Module::fault_select`): `V<module>_faults`.
pub fn faults_prefix(module: &str) -> String {
    format!("V{module}_faults")
}

/// The preprocessor macro that builds bug variant `bug` (`BUG_<NAME>` -> `IBCYCLE_FAULT_<NAME>`): defined
/// together with `IBCYCLE_FAULTS_ENABLE`, never alone (the RTL stops elaboration when a variant's macro is
/// defined without the enable, so a stray define cannot build a broken block unnoticed).
pub fn fault_macro(bug: &str) -> String {
    format!("IBCYCLE_FAULT_{}", bug.strip_prefix("BUG_").unwrap_or(bug))
}
