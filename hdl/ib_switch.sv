// ib_switch: the RTL twin of the fabric's switch, switch_asic::Switch (IB credit mode), cycle for cycle at its
// ports: what `Switch::step` returns for the hand-ins of a cycle (`rx_packet`, `rx_fc`) is what this module
// shows on its tx_* outputs in that cycle. The reference is `Switch::set_eager(true)` (every block clocked
// every cycle), whose results equal the default event-driven stepping by the Switch's contract.
//
// Composition (switch-asic/src/switch/mod.rs names the designer choices; this file follows them):
// per input VL a credit_rx, per output VL a credit_tx and a cong_detect, per output a vl_arb, and the FECN
// decision of fecn_marker per output VL. Lossless virtual cut-through: a packet joins its VoQ when its head
// arrives (when its tail has arrived if its output link is faster than its input link), its input buffer
// blocks are released when its last byte leaves the output, one packet per input feeds at most `speedup`
// outputs at once. Link timing is the serialiser and arrival arithmetic of rtl_model::link::{rate,serial}
// done with tick counters (adds, compares and a multiply by the rate's ticks per byte; no divider).
// Flow-control packets occupy the wire (6 bytes), start on a cycle boundary and go before waiting data.
//
// | port               | dir | width            | meaning                                                    |
// |--------------------|-----|------------------|------------------------------------------------------------|
// | clk_i, rst_ni      | in  | 1                | clock; synchronous reset, active low                       |
// | configuration (held while out of reset; lane p of a vector is port p, lane p*NVl+v port p VL v)        |
// | nports_i           | in  | 6                | ports in use (1..NPorts)                                   |
// | mtu_blocks_i       | in  | 7                | longest packet in blocks; longer ones are dropped          |
// | rate_num_i/den_i   | in  | NPorts x 17      | link rate: num/den bytes per cycle (reduced, num <= 64 den)|
// | nvl_i              | in  | NPorts x 4       | data VLs of port p (1..NVl)                                |
// | speedup_i          | in  | NPorts x 7       | outputs one input feeds at once (1..NPorts)                |
// | mark_enq_i         | in  | NPorts           | output p decides FECN at enqueue (else at dequeue)         |
// | buf_blocks_i       | in  | NPorts*NVl x 16  | credit_rx buffer of input p VL v                           |
// | fc_interval_i      | in  | NPorts x 16      | credit_rx flow-control period of port p                    |
// | fc_on_change_i, fccl_cap_i, fccl_reset_i | in | 1, 12, 12 | every credit_rx / credit_tx                   |
// | threshold_i, compare_i, root_min_credits_i, victim_mask_i | in | NPorts x (4,2,12,1) | cong_detect     |
// | root_rule_i, stall_window_i | in | NPorts x (1,16) | cong_detect root rule (0 credit, 1 stall window) |
// | thr_table_i        | in  | NPorts*NVl x 256 | cong_detect threshold table of output p VL v               |
// | packet_size_i, marking_rate_i, mode_i, lfsr_seed_i, lfsr_thresh_i | in | NPorts x (8,16,1,16,17) | FECN |
// | hi_vl_i, hi_weight_i, hi_n_i, lo_*, vl_high_limit_i | in | NPorts x vl_arb's | VL arbitration of port p |
// | table write port (a subnet manager's: used in or out of reset, tables are not reset)                  |
// | tbl_we_i           | in  | 1                | write one entry this cycle                                 |
// | tbl_sel_i          | in  | 1                | 0: LFT entry tbl_addr_i (DLID) := tbl_data_i[7:0] (255 none)|
// |                    |     |                  | 1: SL2VL of pair tbl_addr_i = in*NPorts+out := 16 x 4 bits |
// | tbl_addr_i         | in  | 16               |                                                            |
// | tbl_data_i         | in  | 64               |                                                            |
// | per-cycle hand-ins (Switch::rx_packet / rx_fc)                                                         |
// | rx_pkt_i           | in  | NPorts           | a packet head arrives on port p                            |
// | rx_dlid_i, rx_sl_i, rx_vl_i, rx_len_i, rx_fecn_i | in | NPorts x (16,4,4,13,1) | LRH/BTH fields, wire len |
// | rx_off_i           | in  | NPorts x 17      | its first byte's tick within the cycle (< num)             |
// | rx_tag_i           | in  | NPorts x 32      | the caller's handle of the packet, carried to the output   |
// | rx_fc_i, rx_fc_vl_i, rx_fc_fctbs_i, rx_fc_fccl_i | in | NPorts x (1,4,12,12) | a flow-control packet  |
// | outputs (Switch::step's TxEvents of this cycle)                                                        |
// | tx_pkt_o           | out | NPorts           | a packet head leaves port p                                |
// | tx_vl_o, tx_fecn_o, tx_len_o, tx_off_o, tx_tag_o | out | NPorts x (4,1,13,17,32) | as sent (out VL, FECN)|
// | tx_fc_o, tx_fc_vl_o, tx_fc_fctbs_o, tx_fc_fccl_o | out | NPorts x (1,4,12,12) | a flow-control packet   |
// | drop_o             | out | NPorts           | a packet head on port p is dropped (no route, VL15, MTU)   |
// | overflow_o         | out | NPorts*NVl       | credit_rx overflow_o (a sender beyond its credit)          |
// | cfg_err_o          | out | 1                | a configuration out of range (or a block's cfg_err_o)      |
//
// Parameters: NPorts, NVl, SlotMax (descriptor slots per input: at least the sum of its VL buffers, since
// every queued packet holds a buffer block), LftMax (LFT entries), TableMax (VL arbitration entries).
//
// Designer choices of the RTL (not visible at the ports):
// - Descriptors live in a pool of SlotMax slots per input, linked per VoQ (input, output, VL); a slot is
//   taken from a free stack (or the next never-used one) and returned at the grant. Each input's pool is
//   one memory per field (g_pool), each written at most once a cycle: see the pools' section.
// - Several packets may join the VoQs of one output VL in one cycle (one head and one store-and-forward
//   tail per input); their FECN decisions are taken in input order, so fecn_marker's single-decision port
//   cannot carry them: one mark_enq per output VL takes them all at once on the same registered marking
//   state (the marker's step, counter or LFSR leap and Packet_Size check, as a parallel prefix: each
//   decision from the state advanced by the count of eligible events before it; the chain of steps it
//   replaces is kept as the reference under IBCYCLE_ASSERTIONS).
// - The look-ahead allocator (switch_asic::config::Allocator::Lookahead, the fabric's default on IB ports):
//   each output decides its next packet in three registered stages (requests among the inputs with a free
//   read slot at the cycle's start; vl_arb's proposal, held; the input's accept, round robin over the
//   outputs proposing it up to its free read slots, then the commit) begun when its wire frees within
//   LookCycles, and starts it when the wire frees. No output's decision reads another's of the same cycle.
//   An output whose packet on the wire reads the input it proposes takes that read slot over (if_keep_q).
//   Stage 1 does not run in the cycle a packet starts (its credit check is credit_tx's registered state).
// - Combinational processes write arrays only at constant indices (a loop's index is the element written).
//   The VoQ state (head, tail, count,
//   fill) is registers, updated procedurally in one always_ff: every output reads every VoQ's count each
//   cycle, so it is not a memory.
//
// Fault-injection variants (for the co-simulation's self-test; each needs IBCYCLE_FAULTS_ENABLE; one built by its
// macro, or all built in with IBCYCLE_FAULTS_SELECT and one turned on by the plusarg +IBCYCLE_FAULT_<NAME>):
//   IBCYCLE_FAULT_CREDIT_LEAK   a released packet returns one block less to its input's credit_rx
//   IBCYCLE_FAULT_FECN_INVERT   the marking state read by the FECN decision is inverted
//   IBCYCLE_FAULT_DUP_PACKET    a granted packet of more than one block stays at its VoQ head (sent twice)
//   IBCYCLE_FAULT_VL_MIX        the output VL in the LRH is the input VL, not SL2VL's
//   IBCYCLE_FAULT_SL2VL_INDEX   SL2VL is read at the (output, input) pair instead of (input, output)
//   IBCYCLE_FAULT_CREDIT_BYPASS vl_arb's credit_ok_i is tied to its requests (packets go without credit)
//   IBCYCLE_FAULT_RR_STUCK      the round-robin pointer of an output VL does not move past the input granted
`default_nettype none
`include "ibcycle_assertions.svh"

module ib_switch #(
  parameter int NPorts   = 18,
  parameter int NVl      = 2,
  parameter int SlotMax  = 2048,
  parameter int LftMax   = 1024,
  parameter int TableMax = 64,
  parameter int PW       = 5,   // port index width; holds NPorts - 1
  parameter int SW       = $clog2(SlotMax),
  parameter int IdxW     = (TableMax > 1) ? $clog2(TableMax) : 1
) (
  input  wire logic                        clk_i,
  input  wire logic                        rst_ni,
  input  wire logic [5:0]                  nports_i,
  input  wire logic [6:0]                  mtu_blocks_i,
  input  wire logic [NPorts*17-1:0]        rate_num_i,
  input  wire logic [NPorts*17-1:0]        rate_den_i,
  input  wire logic [NPorts*4-1:0]         nvl_i,
  input  wire logic [NPorts*7-1:0]         speedup_i,
  input  wire logic [NPorts-1:0]           mark_enq_i,
  input  wire logic [NPorts*NVl*16-1:0]    buf_blocks_i,
  input  wire logic [NPorts*16-1:0]        fc_interval_i,
  input  wire logic                        fc_on_change_i,
  input  wire logic [11:0]                 fccl_cap_i,
  input  wire logic [11:0]                 fccl_reset_i,
  input  wire logic [NPorts*4-1:0]         threshold_i,
  input  wire logic [NPorts*NVl*256-1:0]   thr_table_i,
  input  wire logic [NPorts*2-1:0]         compare_i,
  input  wire logic [NPorts*12-1:0]        root_min_credits_i,
  input  wire logic [NPorts-1:0]           root_rule_i,
  input  wire logic [NPorts*16-1:0]        stall_window_i,
  input  wire logic [NPorts-1:0]           victim_mask_i,
  input  wire logic [NPorts*8-1:0]         packet_size_i,
  input  wire logic [NPorts*16-1:0]        marking_rate_i,
  input  wire logic [NPorts-1:0]           mode_i,
  input  wire logic [NPorts*16-1:0]        lfsr_seed_i,
  input  wire logic [NPorts*17-1:0]        lfsr_thresh_i,
  input  wire logic [NPorts*TableMax*4-1:0] hi_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0] hi_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]  hi_n_i,
  input  wire logic [NPorts*TableMax*4-1:0] lo_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0] lo_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]  lo_n_i,
  input  wire logic [NPorts*8-1:0]         vl_high_limit_i,
  input  wire logic                        tbl_we_i,
  input  wire logic                        tbl_sel_i,
  input  wire logic [15:0]                 tbl_addr_i,
  input  wire logic [63:0]                 tbl_data_i,
  input  wire logic [NPorts-1:0]           rx_pkt_i,
  input  wire logic [NPorts*16-1:0]        rx_dlid_i,
  input  wire logic [NPorts*4-1:0]         rx_sl_i,
  input  wire logic [NPorts*4-1:0]         rx_vl_i,
  input  wire logic [NPorts*13-1:0]        rx_len_i,
  input  wire logic [NPorts-1:0]           rx_fecn_i,
  input  wire logic [NPorts*17-1:0]        rx_off_i,
  input  wire logic [NPorts*32-1:0]        rx_tag_i,
  input  wire logic [NPorts-1:0]           rx_fc_i,
  input  wire logic [NPorts*4-1:0]         rx_fc_vl_i,
  input  wire logic [NPorts*12-1:0]        rx_fc_fctbs_i,
  input  wire logic [NPorts*12-1:0]        rx_fc_fccl_i,
  output logic [NPorts-1:0]                tx_pkt_o,
  output logic [NPorts*4-1:0]              tx_vl_o,
  output logic [NPorts-1:0]                tx_fecn_o,
  output logic [NPorts*13-1:0]             tx_len_o,
  output logic [NPorts*17-1:0]             tx_off_o,
  output logic [NPorts*32-1:0]             tx_tag_o,
  output logic [NPorts-1:0]                tx_fc_o,
  output logic [NPorts*4-1:0]              tx_fc_vl_o,
  output logic [NPorts*12-1:0]             tx_fc_fctbs_o,
  output logic [NPorts*12-1:0]             tx_fc_fccl_o,
  output logic [NPorts-1:0]                drop_o,
  output logic [NPorts*NVl-1:0]            overflow_o,
  output logic                             cfg_err_o
);

`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_CREDIT_LEAK
  $fatal(1, "IBCYCLE_FAULT_CREDIT_LEAK is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_FECN_INVERT
  $fatal(1, "IBCYCLE_FAULT_FECN_INVERT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_DUP_PACKET
  $fatal(1, "IBCYCLE_FAULT_DUP_PACKET is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_VL_MIX
  $fatal(1, "IBCYCLE_FAULT_VL_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_SL2VL_INDEX
  $fatal(1, "IBCYCLE_FAULT_SL2VL_INDEX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_CREDIT_BYPASS
  $fatal(1, "IBCYCLE_FAULT_CREDIT_BYPASS is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_RR_STUCK
  $fatal(1, "IBCYCLE_FAULT_RR_STUCK is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Each fault's flag is a constant, 1 only in its variant, so a build without faults folds the fault's
  // logic away. With IBCYCLE_FAULTS_SELECT (and the enable) every fault is built in and a plusarg named as
  // its macro (+IBCYCLE_FAULT_<NAME>) turns one on at run time: the co-simulation's fault hunt compiles one
  // model instead of one per fault.
`ifdef IBCYCLE_FAULTS_SELECT
`ifndef IBCYCLE_FAULTS_ENABLE
  $fatal(1, "IBCYCLE_FAULTS_SELECT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
  logic FltCreditLeak, FltFecnInvert, FltDupPacket, FltVlMix, FltSl2vlIndex, FltCreditBypass, FltRrStuck;
  initial begin
    FltCreditLeak = $test$plusargs("IBCYCLE_FAULT_CREDIT_LEAK") != 0;
    FltFecnInvert = $test$plusargs("IBCYCLE_FAULT_FECN_INVERT") != 0;
    FltDupPacket = $test$plusargs("IBCYCLE_FAULT_DUP_PACKET") != 0;
    FltVlMix = $test$plusargs("IBCYCLE_FAULT_VL_MIX") != 0;
    FltSl2vlIndex = $test$plusargs("IBCYCLE_FAULT_SL2VL_INDEX") != 0;
    FltCreditBypass = $test$plusargs("IBCYCLE_FAULT_CREDIT_BYPASS") != 0;
    FltRrStuck = $test$plusargs("IBCYCLE_FAULT_RR_STUCK") != 0;
  end
`else
`ifdef IBCYCLE_FAULT_CREDIT_LEAK
  localparam bit FltCreditLeak = 1'b1;
`else
  localparam bit FltCreditLeak = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_FECN_INVERT
  localparam bit FltFecnInvert = 1'b1;
`else
  localparam bit FltFecnInvert = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_DUP_PACKET
  localparam bit FltDupPacket = 1'b1;
`else
  localparam bit FltDupPacket = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_VL_MIX
  localparam bit FltVlMix = 1'b1;
`else
  localparam bit FltVlMix = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_SL2VL_INDEX
  localparam bit FltSl2vlIndex = 1'b1;
`else
  localparam bit FltSl2vlIndex = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_CREDIT_BYPASS
  localparam bit FltCreditBypass = 1'b1;
`else
  localparam bit FltCreditBypass = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_RR_STUCK
  localparam bit FltRrStuck = 1'b1;
`else
  localparam bit FltRrStuck = 1'b0;
`endif
`endif

  localparam int NK = NPorts * NVl;
  localparam int CntW = $clog2(NPorts + 1);
  localparam logic [7:0] NoRoute = 8'hFF;
  localparam logic [3:0] VlDrop = 4'd15;

  // ---------------------------------------------------------------- tables (not reset)
  logic [7:0]  lft_q   [LftMax];
  logic [63:0] sl2vl_q [NPorts*NPorts];
  always_ff @(posedge clk_i) begin
    if (tbl_we_i) begin
      if (!tbl_sel_i) begin
        if (32'(tbl_addr_i) < LftMax) lft_q[32'(tbl_addr_i)] <= tbl_data_i[7:0];
      end else if (32'(tbl_addr_i) < NPorts * NPorts) begin
        sl2vl_q[32'(tbl_addr_i)] <= tbl_data_i;
      end
    end
  end

  // ---------------------------------------------------------------- state
  // Descriptor pools, per input: the memories of g_pool (below). Their asynchronous read ports: the length
  // at the head of each VoQ (input q, output o, VL v: entry (q*NPorts + o)*NVl + v), the fields of the slot
  // each output's grant names (input q, output o: entry q*NPorts + o), the deferred packet's length (entry q
  // of a vector at [13*q +: 13]), the slot on top of each free stack bank (input q, bank b: entry q*NB + b).
  // The wide ones are arrays, not flattened vectors: Verilator built a flattened vector each cycle as a chain
  // of concatenations, each copying the whole vector so far (quadratic in the entries: 648 of hd_len at 18
  // ports, 8,424 bits); with `ct_pairs` (below), more than half of the 18-port model's instructions a cycle.
  localparam int LB = (NPorts > 2) ? $clog2(NPorts) : 1;   // free stack banks: 2^LB >= NPorts
  localparam int NB = 1 << LB;
  localparam int NPL = (NPorts + 1) / 2;                   // pairs of outputs: the carry-save sums' leaves
  localparam int FD = (SlotMax + NB - 1) / NB;              // words per bank
  localparam int FW = (FD > 1) ? $clog2(FD) : 1;
  logic [12:0]     hd_len [NPorts*NPorts*NVl];
  logic [NPorts*13-1:0] tl_len;
  logic [31:0]     gr_tag [NPorts*NPorts];
  logic [3:0]      gr_ivl [NPorts*NPorts];
  logic [1:0]      gr_fh [NPorts*NPorts];    // {deferred, FECN at the head: arrived with it or marked}
  logic            gr_mt [NPorts*NPorts];    // marked at the tail's enqueue (a deferred packet)
  logic [SW-1:0]   gr_next [NPorts*NPorts];
  logic [SW-1:0]   fk_rd [NPorts*NB];
  logic [SW-1:0]   fk_top [NPorts];
  // The write ports: a head's descriptor; a free stack bank's push; a VoQ link (one a cycle per input: a
  // second link of the cycle, a tail's and a head's, waits in the pending register nl_*_q a cycle).
  logic            fw_we [NPorts*NB];
  logic [FW-1:0]   fw_a [NPorts*NB];
  logic [SW-1:0]   fw_d [NPorts*NB];
  logic            nw_we [NPorts];
  logic [SW-1:0]   nw_a [NPorts];
  logic [SW-1:0]   nw_d [NPorts];
  logic            nl_v_q [NPorts];
  logic [SW-1:0]   nl_a_q [NPorts];
  logic [SW-1:0]   nl_d_q [NPorts];
  logic            nl_v_d [NPorts];
  logic [SW-1:0]   nl_a_d [NPorts];
  logic [SW-1:0]   nl_d_d [NPorts];
  logic            nl_over [NPorts];
  logic [SW:0]   ftop_q [NPorts];
  logic [SW:0]   fresh_q [NPorts];
  // VoQs (input, output, VL): index (i*NPorts + o)*NVl + v.
  logic [SW-1:0] vh_q [NPorts*NPorts*NVl];
  logic [SW-1:0] vt_q [NPorts*NPorts*NVl];
  logic [SW:0]   vn_q [NPorts*NPorts*NVl];
  logic [15:0]   fill_q [NPorts*NPorts*NVl];
  logic [PW-1:0] rr_q [NK];
  logic [6:0]    reads_q [NPorts];
  // speedup - reads_q, the input's free read slots at the cycle's start, kept as a register of its own so
  // the accept adds the slots released to it instead of two subtractions first; its next value is the
  // accept's (e_rdfree: free less min(free, proposals)). Asserted equal; reads_q, still counted per
  // completion and commit, is then read by the assertions only.
  logic [6:0]    rd_free_q [NPorts];
  // Egress: serialiser (ticks still busy at the cycle's start), packet in flight, pending FC packets.
  logic [31:0]   ser_q [NPorts];
  // ser_q's compares with the rate's numerator, registered from the serialiser's next value (ser_n) so that
  // no decision of the cycle waits for a 32-bit compare: the packet on the wire ends in the cycle (ser_q <=
  // num), the wire is free for a start (ser_q < num), idle (ser_q == 0). Asserted equal to the compares.
  logic          ser_le_q [NPorts];
  logic          ser_lt_q [NPorts];
  logic          ser_z_q [NPorts];
  logic          if_v_q [NPorts];
  logic [PW-1:0] if_in_q [NPorts];
  logic [3:0]    if_vl_q [NPorts];
  logic [6:0]    if_blk_q [NPorts];
  logic [NVl-1:0] fcp_q [NPorts];
  logic [11:0]   fcfccl_q [NK];
  // Ingress: free blocks waiting for credit_rx, packet arriving.
  logic [15:0]   fpend_q [NK];
  // The blocks each input VL gets back in this cycle from the packets whose last byte leaves (the sum over
  // the outputs of the packets in flight that end), computed a cycle ahead from the next values of the
  // registers it reads (if_*, ser_le): the drain adds a register instead of a sum over the outputs. Asserted
  // equal to that sum.
  logic [15:0]   fr_q [NK];
  logic          ar_v_q [NPorts];
  logic [31:0]   ar_e_q [NPorts];     // ticks of the arriving packet at the end of this cycle
  logic [31:0]   ar_thr_q [NPorts];   // the next block's threshold ...
  logic [31:0]   ar_thn_q [NPorts];   // ... and the one after it (with at least two blocks left)
  // ar_e_q >= ar_thr_q and ar_e_q >= ar_thn_q, registered from the registers' next values (asserted equal):
  // the cycle's block compares are then flags, not 32-bit compares before the blocks' arithmetic.
  logic          ar_ge_thr_q [NPorts];
  logic          ar_ge_thn_q [NPorts];
  logic [31:0]   ar_end_q [NPorts];
  logic [6:0]    ar_left_q [NPorts];
  logic [6:0]    ar_blk_q [NPorts];
  logic [3:0]    ar_vl_q [NPorts];
  logic          ar_def_q [NPorts];
  logic          ar_drop_q [NPorts];
  logic [SW-1:0] ar_slot_q [NPorts];
  logic [PW-1:0] ar_out_q [NPorts];
  logic [3:0]    ar_ovl_q [NPorts];
  // FECN marker state per output VL.
  logic [15:0]   mk_q [NK];

  // ---------------------------------------------------------------- configuration views
  // Macros, not functions: Icarus 11 re-runs processes that call one function on each other's calls.
`define IB_SWITCH_NUM(P) rate_num_i[17*(P) +: 17]
`define IB_SWITCH_DEN(P) rate_den_i[17*(P) +: 17]
`define IB_SWITCH_NVL(P) nvl_i[4*(P) +: 4]
  // A register array's update from its next value, one non-blocking write. Verilator 5.006 does not unroll
  // a long loop of non-blocking array writes (BLKLOOPINIT: at 36 ports, a loop over the ports or the VL
  // queues of a dozen such writes); Yosys 0.23 and Icarus 11 take no whole-array non-blocking assignment.
  // The same registers either way.
`ifdef VERILATOR
`define IB_SWITCH_REGS(D, N, LEN) D <= N;
`else
`define IB_SWITCH_REGS(D, N, LEN) for (int i_ = 0; i_ < (LEN); i_++) D[i_] <= N[i_];
`endif

  // One FECN decision: {mark, next state} (fecn_marker's step, see the header). One function per process
  // that calls it (egress, ingress, the state update), all three made by this macro from one text: see the
  // macros above (Icarus 11 and shared functions).
  localparam logic [15:0] LfsrTaps = 16'hB400;
`define IB_SWITCH_MK_STEP(NAME) \
  function automatic logic [16:0] NAME(input logic [15:0] s, input int p, input logic [12:0] bytes, \
                                       input logic mstate); \
    logic [15:0] x; \
    logic m; \
    x = s; \
    m = 1'b0; \
    if (mstate && {1'b0, bytes} >= {packet_size_i[8*p +: 8], 6'b0}) begin \
      if (mode_i[p]) begin \
        m = {1'b0, s} < lfsr_thresh_i[17*p +: 17]; \
        for (int k = 0; k < 16; k++) x = x[0] ? ((x >> 1) ^ LfsrTaps) : (x >> 1); \
      end else begin \
        m = s == 16'd0; \
        x = (s >= marking_rate_i[16*p +: 16]) ? 16'd0 : s + 16'd1; \
      end \
    end \
    NAME = {m, x}; \
  endfunction
  `IB_SWITCH_MK_STEP(mk_step)
  `IB_SWITCH_MK_STEP(mk_step_eg)
`ifdef IBCYCLE_ASSERTIONS
  `IB_SWITCH_MK_STEP(mk_step_in)
`endif
  // The carry-save sums and fast adds of the exact retimings, one text each, a copy per process that calls
  // them (Icarus 11 and shared functions, as above). Rows are 35 bits (the widest use, the cut-through
  // compare's difference); a narrower sum passes its rows zero-extended (or, for a subtracted term,
  // complemented: high bits all ones), constants that synthesis folds away.
  //
  // A 4:2 compressor: two carry-save pairs {x2, x1}, {x4, x3} (x = {x2, x1}) to one {c, s} with s + c = x1 +
  // x2 + x3 + x4 (mod 2^35): three gate levels, as in cct_shaper (the majority of a bit's first three rows
  // goes to the next bit, so no bit waits for its neighbour's carry). Nonnegative rows below 2^w give a pair
  // below 2^(w+1), so the sum is exact when it fits.
`define IB_SWITCH_CS_ADD(NAME) \
  function automatic logic [69:0] NAME(input logic [69:0] x, input logic [69:0] y); \
    logic [34:0] x1, x2, x3, x4, p12, p, cout, cin, cy; \
    x1 = x[34:0]; \
    x2 = x[69:35]; \
    x3 = y[34:0]; \
    x4 = y[69:35]; \
    p12 = x1 ^ x2; \
    p = p12 ^ (x3 ^ x4); \
    cout = (p12 & x3) | (~p12 & x1); \
    cin = cout << 1; \
    cy = (p & cin) | (~p & x4); \
    NAME = {cy << 1, p ^ cin}; \
  endfunction
  // a + b + ci (mod 2^35), the carries from a Kogge-Stone tree whose nodes are one multiplexer each
  // (generate and propagate exclude each other; the carry in is folded into bit 0's generate): six levels of
  // carries where Yosys's generic adder (Brent-Kung) takes about twice as many. A caller that reads one bit
  // (a compare's sign) keeps only the carries that bit needs.
`define IB_SWITCH_KS_ADD(NAME) \
  function automatic logic [34:0] NAME(input logic [34:0] a, input logic [34:0] b, input logic ci); \
    logic [34:0] g, p, gn; \
    g = a & b; \
    p = a ^ b; \
    g[0] = g[0] | (p[0] & ci); \
    p[0] = 1'b0; \
    for (int k = 1; k < 35; k = 2 * k) begin \
      gn = (p & (g << k)) | (~p & g); \
      g = gn; \
      p = p & (p << k); \
    end \
    NAME = a ^ b ^ {g[33:0], ci}; \
  endfunction
  // The round robin's pick as a one-hot vector: the lowest set bit of `hi` (the candidates at or after the
  // pointer) if any, else the lowest of `all` (every candidate), both found in parallel and one chosen after
  // (a choice of the candidates before one search would put the OR over `hi` in front of it). One text for
  // stage 1's pick in egress and the stall input's pick in `stall`, which must pick the same input; a copy
  // per process (Icarus 11 and shared functions, as above).
`define IB_SWITCH_RR_PICK(NAME) \
  function automatic logic [NPorts-1:0] NAME(input logic [NPorts-1:0] hi, input logic [NPorts-1:0] all); \
    logic [NPorts-1:0] sh, sa, ph, pa; \
    sh[0] = hi[0]; \
    ph[0] = hi[0]; \
    sa[0] = all[0]; \
    pa[0] = all[0]; \
    for (int q = 1; q < NPorts; q++) begin \
      sh[q] = sh[q-1] || hi[q]; \
      ph[q] = hi[q] && !sh[q-1]; \
      sa[q] = sa[q-1] || all[q]; \
      pa[q] = all[q] && !sa[q-1]; \
    end \
    NAME = (hi != '0) ? ph : pa; \
  endfunction
  function automatic logic [15:0] mk_seed(input int p);
    mk_seed = (lfsr_seed_i[16*p +: 16] == 16'd0) ? 16'hACE1 : lfsr_seed_i[16*p +: 16];
  endfunction

  // ---------------------------------------------------------------- the registered ingress stage
  // What is handed in during a cycle is the switch's input in the next (switch_asic's `handin.rs`): the
  // hand-ins are registered (rg_*_q), and what depends on a packet head alone is computed in its hand-in
  // cycle and registered beside it (pc_*_q): the route (LFT, SL2VL; a table entry written in the hand-in
  // cycle is the one the next cycle reads), the drop checks that need no state, the cut-through decision,
  // the blocks, the end and the first block's compare. So none of that work shares a cycle with the
  // enqueue, the credit and the congestion updates it feeds.
  logic [NPorts-1:0]    rg_pkt_q;
  logic [NPorts*4-1:0]  rg_vl_q;
  logic [NPorts*13-1:0] rg_len_q;
  logic [NPorts-1:0]    rg_fecn_q;
  logic [NPorts*32-1:0] rg_tag_q;
  logic [NPorts-1:0]    rg_fc_q;
  logic [NPorts*4-1:0]  rg_fc_vl_q;
  logic [NPorts*12-1:0] rg_fc_fctbs_q;
  logic [NPorts*12-1:0] rg_fc_fccl_q;
  logic [7:0]    pc_out_q [NPorts];    // the routed output (NoRoute: none)
  logic [3:0]    pc_ovl_q [NPorts];    // the output VL (VlDrop: none)
  logic          pc_bad_q [NPorts];    // dropped whatever the state: no route, VL15, MTU, no blocks
  logic          pc_ct_q [NPorts];     // cut-through: the output is not faster than the input
  logic [6:0]    pc_blocks_q [NPorts];
  logic [31:0]   pc_end_q [NPorts];    // len den
  logic          pc_got_q [NPorts];    // the first block is in in the cycle the switch takes the head
  logic [31:0]   pc_thr_q [NPorts];    // the next threshold after that cycle's compare ...
  logic [31:0]   pc_thn_q [NPorts];    // ... and the one after it
  logic [31:0]   pc_e_q [NPorts];      // the tick count at the end of the cycle after
  logic [7:0]    pc_d_out [NPorts];
  logic [3:0]    pc_d_ovl [NPorts];
  logic          pc_d_bad [NPorts];
  logic          pc_d_ct [NPorts];
  logic [6:0]    pc_d_blocks [NPorts];
  logic [31:0]   pc_d_end [NPorts];
  logic          pc_d_got [NPorts];
  logic [31:0]   pc_d_thr [NPorts];
  logic [31:0]   pc_d_thn [NPorts];
  logic [31:0]   pc_d_e [NPorts];
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_es_ok;        // the short product is the end where a threshold reads it (asserted)
  logic [NPorts-1:0] a_es_ok_q;
  always_ff @(posedge clk_i) a_es_ok_q <= rst_ni ? a_es_ok : '1;
  logic [NPorts-1:0] a_ct_ok;        // every pair's rate compare is the compare of the products (asserted)
  logic [NPorts-1:0] a_ct_ok_q;
  always_ff @(posedge clk_i) a_ct_ok_q <= rst_ni ? a_ct_ok : '1;
`endif
  // The cut-through decision's rate compare of two ports a and b (rates num/den): the sign and the zero test
  // of d = num_a den_b - num_b den_a, {d < 0, d == 0}, without a multiplier and a compare in series (Yosys's
  // generic product and its Brent-Kung adder were 45 levels). d is one sum of 35 rows (35 bits: each product
  // is below 2^34, so d is within the 35-bit signed range): the 17 partial products of num_a den_b, the
  // complements of the 17 of num_b den_a and the 17 their complements leave out (-x = ~x + 1). The rows,
  // paired, are reduced to one carry-save pair {c, s} by five levels of 4:2 compressors (three gate levels
  // each, as in cct_shaper: the majority of a bit's first three rows goes to the next bit, so no bit waits
  // for its neighbour's carry); the sign is bit 34 of s + c, its carry in from a Kogge-Stone tree whose
  // nodes are one multiplexer each (generate and propagate exclude each other); s + c is 0 mod 2^35 exactly
  // when s ^ c equals (s | c) << 1. The compressor (`IB_SWITCH_CS_ADD`, above) is the hand-in process's copy.
  `IB_SWITCH_CS_ADD(ct_cs_add)
  function automatic logic [1:0] ct_rate_diff(input logic [16:0] na, input logic [16:0] da,
                                              input logic [16:0] nb, input logic [16:0] db);
    logic [18*70-1:0] l0;   // the rows in pairs, level by level (packed: Yosys and Icarus take no arrays here)
    logic [9*70-1:0] l1;
    logic [5*70-1:0] l2;
    logic [3*70-1:0] l3;
    logic [2*70-1:0] l4;
    logic [69:0] l5;
    logic [34:0] s, c, g, pr, gn;
    for (int j = 0; j < 17; j++) begin
      l0[70*j +: 70] = {db[j] ? (35'(na) << j) : 35'd0, ~(da[j] ? (35'(nb) << j) : 35'd0)};
    end
    l0[70*17 +: 70] = {35'd0, 35'd17};
    for (int i = 0; i < 9; i++) l1[70*i +: 70] = ct_cs_add(l0[70*(2*i) +: 70], l0[70*(2*i + 1) +: 70]);
    for (int i = 0; i < 4; i++) l2[70*i +: 70] = ct_cs_add(l1[70*(2*i) +: 70], l1[70*(2*i + 1) +: 70]);
    l2[70*4 +: 70] = l1[70*8 +: 70];
    for (int i = 0; i < 2; i++) l3[70*i +: 70] = ct_cs_add(l2[70*(2*i) +: 70], l2[70*(2*i + 1) +: 70]);
    l3[70*2 +: 70] = l2[70*4 +: 70];
    l4[0 +: 70] = ct_cs_add(l3[0 +: 70], l3[70 +: 70]);
    l4[70 +: 70] = l3[140 +: 70];
    l5 = ct_cs_add(l4[0 +: 70], l4[70 +: 70]);
    s = l5[34:0];
    c = l5[69:35];
    // The carries out of each bit of s + c (bit i: out of bits i..0); bit 33's is bit 34's carry in.
    g = s & c;
    pr = s ^ c;
    for (int k = 1; k < 35; k = 2 * k) begin
      gn = (pr & (g << k)) | (~pr & g);
      g = gn;
      pr = pr & (pr << k);
    end
    ct_rate_diff = {s[34] ^ c[34] ^ g[33], (s ^ c) == ((s | c) << 1)};
  endfunction
  // The rate compare for every pair of outputs (cut-through at input p to output r: num_r den_p <= num_p
  // den_r, i.e. d >= 0 with d = num_p den_r - num_r den_p; and at input r to output p, d <= 0), each pair
  // once, beside the route's table read; the routed output's selected in `handin`. A process of its own
  // that reads the configuration only: inside `handin`, which reads the hand-in ports, Verilator evaluated
  // all NPorts (NPorts - 1) / 2 compares (153 at 18 ports, each a tree of 17 rows) on each of the two
  // evaluations per cycle, as input-combinational logic; on its own it is evaluated once per clock edge.
  logic [NPorts-1:0] ct [NPorts];
  `IBCYCLE_COMB begin : ct_pairs
    logic [1:0] ctd;
    for (int p = 0; p < NPorts; p++) begin
      ct[p][p] = 1'b1;
      for (int r = p + 1; r < NPorts; r++) begin
        ctd = ct_rate_diff(`IB_SWITCH_NUM(p), `IB_SWITCH_DEN(p), `IB_SWITCH_NUM(r), `IB_SWITCH_DEN(r));
        ct[p][r] = !ctd[1];
        ct[r][p] = ctd[1] || ctd[0];
      end
    end
  end : ct_pairs
  `IBCYCLE_COMB begin : handin
    logic [7:0] o [NPorts];
    logic [3:0] ov [NPorts];
    logic [63:0] t [NPorts];
    logic [31:0] row [NPorts];
    logic [6:0] b [NPorts];
    logic [31:0] e [NPorts];
    logic [31:0] es [NPorts];
    logic [31:0] t1 [NPorts];
    logic [31:0] t2 [NPorts];
    logic [31:0] t3 [NPorts];
    logic g [NPorts];
    logic [NPorts-1:0] cts [NPorts];
    for (int p = 0; p < NPorts; p++) begin
      o[p] = (32'(rx_dlid_i[16*p +: 16]) < LftMax) ? lft_q[32'(rx_dlid_i[16*p +: 16])] : NoRoute;
      if (tbl_we_i && !tbl_sel_i && tbl_addr_i == rx_dlid_i[16*p +: 16]) o[p] = tbl_data_i[7:0];
      ov[p] = VlDrop;
      t[p] = '0;
      row[p] = FltSl2vlIndex ? 32'(o[p])*NPorts + p : p*NPorts + 32'(o[p]);
      if (o[p] != NoRoute && 32'(o[p]) < NPorts) begin
        t[p] = sl2vl_q[row[p]];
        if (tbl_we_i && tbl_sel_i && 32'(tbl_addr_i) == row[p]) t[p] = tbl_data_i;
        ov[p] = t[p][4*32'(rx_sl_i[4*p +: 4]) +: 4];
      end
      b[p] = 7'((rx_len_i[13*p +: 13] + 13'd63) >> 6);
      pc_d_out[p] = o[p];
      pc_d_ovl[p] = ov[p];
      pc_d_bad[p] = o[p] == NoRoute || 32'(o[p]) >= NPorts || ov[p] == VlDrop || 32'(ov[p]) >= NVl
        || b[p] > mtu_blocks_i || b[p] == '0;
      // Cut-through unless the routed output is faster: the rate compare for every output (above), the
      // routed one's selected (an output out of range is a drop: no value is read) by an AND with the
      // route's decode and an OR over the outputs. Written as "the compare of the last output equal to the
      // route" it was a chain of a multiplexer per output, a level of depth per port (hdl/README.md, "Depth
      // at the fabrics' sizes").
      for (int r = 0; r < NPorts; r++) cts[p][r] = 32'(o[p]) == r && ct[p][r];
      pc_d_ct[p] = cts[p] != '0;
`ifdef IBCYCLE_ASSERTIONS
      a_ct_ok[p] = 1'b1;
      for (int r = 0; r < NPorts; r++) begin
        if (ct[p][r] != (64'(`IB_SWITCH_NUM(r)) * 64'(`IB_SWITCH_DEN(p))
                         <= 64'(`IB_SWITCH_NUM(p)) * 64'(`IB_SWITCH_DEN(r)))) a_ct_ok[p] = 1'b0;
      end
`endif
      pc_d_blocks[p] = b[p];
      pc_d_end[p] = 32'(rx_len_i[13*p +: 13]) * 32'(`IB_SWITCH_DEN(p));
      // The block thresholds (see ingress): the first, second and third block's. The end is one of them
      // only for a packet of at most three blocks (at most 192 bytes), so they take the product of the
      // length's low 8 bits (es, equal to the end there), shorter than the 13-bit one; and the first
      // block's compare is made against both candidates, the block count selecting after.
      e[p] = 32'(`IB_SWITCH_NUM(p)) - 32'(rx_off_i[17*p +: 17]);
      es[p] = 32'(rx_len_i[13*p +: 8]) * 32'(`IB_SWITCH_DEN(p));
      t1[p] = (b[p] == 7'd1) ? es[p] : 32'd64 * 32'(`IB_SWITCH_DEN(p));
      t2[p] = (b[p] == 7'd2) ? es[p] : 32'd128 * 32'(`IB_SWITCH_DEN(p));
      t3[p] = (b[p] == 7'd3) ? es[p] : 32'd192 * 32'(`IB_SWITCH_DEN(p));
      g[p] = b[p] != '0 && ((b[p] == 7'd1) ? e[p] >= es[p] : e[p] >= 32'd64 * 32'(`IB_SWITCH_DEN(p)));
`ifdef IBCYCLE_ASSERTIONS
      a_es_ok[p] = b[p] > 7'd3 || es[p] == pc_d_end[p];
`endif
      pc_d_got[p] = g[p];
      pc_d_thr[p] = g[p] ? t2[p] : t1[p];
      pc_d_thn[p] = g[p] ? t3[p] : t2[p];
      pc_d_e[p] = e[p] + 32'(`IB_SWITCH_NUM(p));
    end
  end : handin
  always_ff @(posedge clk_i) begin
    rg_pkt_q <= rst_ni ? rx_pkt_i : '0;
    rg_fc_q <= rst_ni ? rx_fc_i : '0;
    rg_vl_q <= rx_vl_i;
    rg_len_q <= rx_len_i;
    rg_fecn_q <= rx_fecn_i;
    rg_tag_q <= rx_tag_i;
    rg_fc_vl_q <= rx_fc_vl_i;
    rg_fc_fctbs_q <= rx_fc_fctbs_i;
    rg_fc_fccl_q <= rx_fc_fccl_i;
    `IB_SWITCH_REGS(pc_out_q, pc_d_out, NPorts)
    `IB_SWITCH_REGS(pc_ovl_q, pc_d_ovl, NPorts)
    `IB_SWITCH_REGS(pc_bad_q, pc_d_bad, NPorts)
    `IB_SWITCH_REGS(pc_ct_q, pc_d_ct, NPorts)
    `IB_SWITCH_REGS(pc_blocks_q, pc_d_blocks, NPorts)
    `IB_SWITCH_REGS(pc_end_q, pc_d_end, NPorts)
    `IB_SWITCH_REGS(pc_got_q, pc_d_got, NPorts)
    `IB_SWITCH_REGS(pc_thr_q, pc_d_thr, NPorts)
    `IB_SWITCH_REGS(pc_thn_q, pc_d_thn, NPorts)
    `IB_SWITCH_REGS(pc_e_q, pc_d_e, NPorts)
  end

  // ---------------------------------------------------------------- block ports
  logic [6:0]  crx_blk [NK];
  logic        crx_fcv [NK];
  logic [6:0]  crx_free [NK];
  logic [11:0] crx_fccl [NK];
  logic        crx_send [NK];
  logic        crx_ovf [NK];
  logic [3:0]  crx_cfg [NK];
  logic        ctx_fcv [NK];
  logic        ctx_req [NK];
  logic [6:0]  ctx_blocks [NK];
  logic        ctx_take [NK];
  logic [11:0] ctx_fctbs [NK];
  logic [11:0] ctx_fcclq [NK];
  logic        ctx_err [NK];
  logic [11:0] cd_avail [NK];
  logic [NPorts*16-1:0] cd_fill [NK];
  logic        cd_stall [NK];    // this cycle's XmitWait condition of output VL k (see the detect section)
  logic        cd_stall_q [NK];  // ... registered: the detector's stall_i
  logic        cd_mark [NK];
  logic        cd_cfg [NK];
  logic        arb_ready [NPorts];
  logic        arb_hold [NPorts];
  logic [15:0] arb_req [NPorts];
  logic [16*7-1:0] arb_len [NPorts];
  logic [15:0] arb_ok [NPorts];
  logic        arb_gv [NPorts];
  logic [3:0]  arb_gvl [NPorts];
  logic [3:0]  arb_cfg [NPorts];

  // Each submodule's ports connect to wires of its own (c_*), assigned from and to the arrays: a port
  // connected to an array element makes Yosys elaborate the whole switch a second time once the submodule
  // is derived (it needs the port's direction), and at the fabrics' sizes an elaboration takes CPU-hours.
  for (genvar p = 0; p < NPorts; p++) begin : g_port
    for (genvar v = 0; v < NVl; v++) begin : g_vl
      localparam int K = p * NVl + v;
      /* verilator lint_off PINCONNECTEMPTY */
      logic [6:0] c_crx_blk;
      logic c_crx_fcv;
      logic [6:0] c_crx_free;
      logic [11:0] c_crx_fccl;
      logic c_crx_send;
      logic c_crx_ovf;
      logic [3:0] c_crx_cfg;
      credit_rx u_crx (
        .clk_i, .rst_ni,
        .buf_blocks_i(buf_blocks_i[16*K +: 16]), .fc_interval_i(fc_interval_i[16*p +: 16]),
        .fc_on_change_i, .fccl_cap_i,
        .blk_rx_i(c_crx_blk), .fc_valid_i(c_crx_fcv), .fc_fctbs_i(rg_fc_fctbs_q[12*p +: 12]),
        .blk_free_i(c_crx_free),
        .abr_o(), .free_o(), .fccl_o(c_crx_fccl), .fc_send_o(c_crx_send), .overflow_o(c_crx_ovf),
        .drain_err_o(), .cfg_err_o(c_crx_cfg)
      );
      assign c_crx_blk = crx_blk[K];
      assign c_crx_fcv = crx_fcv[K];
      assign c_crx_free = crx_free[K];
      assign crx_fccl[K] = c_crx_fccl;
      assign crx_send[K] = c_crx_send;
      assign crx_ovf[K] = c_crx_ovf;
      assign crx_cfg[K] = c_crx_cfg;
      logic c_ctx_fcv;
      logic c_ctx_req;
      logic [6:0] c_ctx_blocks;
      logic c_ctx_take;
      logic [11:0] c_ctx_fctbs;
      logic [11:0] c_ctx_fcclq;
      logic c_ctx_err;
      credit_tx u_ctx (
        .clk_i, .rst_ni, .fccl_reset_i,
        .fc_valid_i(c_ctx_fcv), .fc_fccl_i(rg_fc_fccl_q[12*p +: 12]),
        .req_valid_i(c_ctx_req), .req_blocks_i(c_ctx_blocks), .take_i(c_ctx_take),
        .fctbs_o(c_ctx_fctbs), .fccl_o(c_ctx_fcclq), .avail_o(), .send_ok_o(), .err_o(c_ctx_err)
      );
      assign c_ctx_fcv = ctx_fcv[K];
      assign c_ctx_req = ctx_req[K];
      assign c_ctx_blocks = ctx_blocks[K];
      assign c_ctx_take = ctx_take[K];
      assign ctx_fctbs[K] = c_ctx_fctbs;
      assign ctx_fcclq[K] = c_ctx_fcclq;
      assign ctx_err[K] = c_ctx_err;
      logic [NPorts*16-1:0] c_cd_fill;
      logic [11:0] c_cd_avail;
      logic c_cd_stall_q;
      logic c_cd_mark;
      logic c_cd_cfg;
      cong_detect #(.NIn(NPorts)) u_cd (
        .clk_i, .rst_ni,
        .threshold_i(threshold_i[4*p +: 4]), .thr_table_i(thr_table_i[256*K +: 256]),
        .compare_i(compare_i[2*p +: 2]), .root_min_credits_i(root_min_credits_i[12*p +: 12]),
        .root_rule_i(root_rule_i[p]), .stall_window_i(stall_window_i[16*p +: 16]),
        .victim_mask_i(victim_mask_i[p]),
        .voq_fill_i(c_cd_fill), .voq_cnt_i(CntW'(nports_i)), .credit_avail_i(c_cd_avail),
        .stall_i(c_cd_stall_q),
        .cong_o(), .root_o(), .victim_o(), .mark_state_o(c_cd_mark), .cfg_err_o(c_cd_cfg)
      );
      assign c_cd_fill = cd_fill[K];
      assign c_cd_avail = cd_avail[K];
      assign c_cd_stall_q = cd_stall_q[K];
      assign cd_mark[K] = c_cd_mark;
      assign cd_cfg[K] = c_cd_cfg;
    end
    logic c_arb_ready;
    logic [15:0] c_arb_req;
    logic [16*7-1:0] c_arb_len;
    logic [15:0] c_arb_ok;
    logic c_arb_hold;
    logic c_arb_gv;
    logic [3:0] c_arb_gvl;
    logic [3:0] c_arb_cfg;
    vl_arb #(.TableMax(TableMax)) u_arb (
      .clk_i, .rst_ni,
      .hi_vl_i(hi_vl_i[p*TableMax*4 +: TableMax*4]), .hi_weight_i(hi_weight_i[p*TableMax*8 +: TableMax*8]),
      .hi_n_i(hi_n_i[p*(IdxW+1) +: IdxW+1]),
      .lo_vl_i(lo_vl_i[p*TableMax*4 +: TableMax*4]), .lo_weight_i(lo_weight_i[p*TableMax*8 +: TableMax*8]),
      .lo_n_i(lo_n_i[p*(IdxW+1) +: IdxW+1]), .vl_high_limit_i(vl_high_limit_i[8*p +: 8]),
      .ready_i(c_arb_ready), .req_i(c_arb_req), .len_i(c_arb_len), .credit_ok_i(c_arb_ok), .hold_i(c_arb_hold),
      .gnt_valid_o(c_arb_gv), .gnt_vl_o(c_arb_gvl), .gnt_high_o(), .cfg_err_o(c_arb_cfg)
    );
    assign c_arb_ready = arb_ready[p];
    assign c_arb_req = arb_req[p];
    assign c_arb_len = arb_len[p];
    assign c_arb_ok = arb_ok[p];
    assign c_arb_hold = arb_hold[p];
    assign arb_gv[p] = c_arb_gv;
    assign arb_gvl[p] = c_arb_gvl;
    assign arb_cfg[p] = c_arb_cfg;
    /* verilator lint_on PINCONNECTEMPTY */
  end

  // ---------------------------------------------------------------- egress (phases 0 and 1)
  // The look-ahead allocator (switch_asic::config::Allocator::Lookahead; hdl/README.md gives the plan and
  // its timing). Each output is in one of four states, a registered decision stage each:
  //   Idle: stage 1 may register this cycle's requests (round-robin heads among the inputs with a free read
  //         slot at the cycle's start, and their credit checks) when the wire frees within LookCycles;
  //   Rq:   stage 2: vl_arb, with hold_i, proposes a VL over the registered requests (its state not moved);
  //   Pr:   stage 3: the proposed input accepts or refuses (the accept below); accepted, vl_arb commits the
  //         same inputs (the grant is the proposal), the VoQ head is dequeued and the read slot claimed;
  //   Nx:   the dequeued packet starts when the wire frees (a flow-control packet first), and takes its
  //         credit then.
  // No output's decision reads another output's decision of the same cycle: the chain through the outputs
  // in port order of the same-cycle allocator is gone.
  localparam logic [1:0] LaIdle = 2'd0;
  localparam logic [1:0] LaRq   = 2'd1;
  localparam logic [1:0] LaPr   = 2'd2;
  localparam logic [1:0] LaNx   = 2'd3;
  // switch_asic::config::LOOKAHEAD_CYCLES: stage 1 begins when the wire frees within this many cycles.
  localparam int LookCycles = 3;
  logic [1:0]    la_st_q [NPorts];
  logic [NVl-1:0] la_req_q [NPorts];
  logic [NVl-1:0] la_ok_q [NPorts];
  logic [NVl*7-1:0] la_len_q [NPorts];
  logic [NVl*PW-1:0] la_pick_q [NPorts];
  logic [3:0]    la_vl_q [NPorts];     // the proposed or decided packet's VL ...
  logic [PW-1:0] la_in_q [NPorts];     // ... its input,
  logic [SW-1:0] la_slot_q [NPorts];   // ... and (decided) its descriptor slot, wire length and blocks
  logic [12:0]   la_glen_q [NPorts];
  // den x la_glen_q, the decided packet's ticks on the wire, multiplied at the commit beside la_glen_q
  // (asserted equal): the start adds it to the serialiser, so no product waits for the start's decision
  // before the serialiser's next value and its compares.
  logic [31:0]   la_gser_q [NPorts];
  logic [6:0]    la_blk_q [NPorts];
  logic [PW-1:0] acc_ptr_q [NPorts];   // per input: the output its accept's round robin starts from
  logic          if_keep_q [NPorts];   // the packet in flight hands its read slot to the decided one
  // Per input: the read slots released in this cycle (the outputs whose packet in flight ends and hands its
  // read slot to no decided packet), counted a cycle ahead from the next values of the registers it reads
  // (if_*, ser_le, if_keep), so the accept's free count is two registers added. Asserted equal to the count.
  logic [6:0]    relc_q [NPorts];

  logic          e_done [NPorts];
  logic          e_fc [NPorts];
  logic [3:0]    e_fcvl [NPorts];
  logic          e_gnt [NPorts];       // the decided packet starts
  logic          e_cmt [NPorts];       // stage 3 commits (dequeue)
  logic          e_xfer [NPorts];      // ... taking over the read slot of the packet on the wire
  logic [SW-1:0] e_cslot [NPorts];     // the committed VoQ head's slot, wire length and blocks
  logic [12:0]   e_cglen [NPorts];
  logic [31:0]   e_cgser [NPorts];     // ... and den x its length (la_gser_q's next value)
  logic [6:0]    e_cblk [NPorts];
  logic          e_rq [NPorts];        // stage 1 registers its requests
  logic          e_pr [NPorts];        // stage 2 proposes
  logic [3:0]    e_pvl [NPorts];
  logic [PW-1:0] e_pin [NPorts];
  logic [3:0]    e_gvl [NPorts];
  logic [PW-1:0] e_gin [NPorts];
  logic [SW-1:0] e_gslot [NPorts];
  logic          e_gmark [NPorts];
  logic [31:0]   e_ser [NPorts];
  logic [12:0]   e_glen [NPorts];
  logic [NVl-1:0] e_req [NPorts];
  logic [NVl-1:0] e_ok [NPorts];
  // Stage 1's credit check for every input's VoQ head in parallel beside the pick (decided in `decide`, which
  // reads credit_tx's registers): per output VL, the pick as a one-hot vector and each head's blocks.
  logic [NPorts-1:0] e_poh [NPorts][NVl];
  logic [6:0]    e_hblk [NPorts][NVl][NPorts];
  logic [NVl*7-1:0] e_len [NPorts];
  logic [NVl*PW-1:0] e_pick [NPorts];
  logic [PW-1:0] e_accptr [NPorts];
  logic [NPorts-1:0] e_acc;            // per output: its proposal accepted (or its read slot taken over)
  // Per input q, per output p: p's proposal to q accepted (or its read slot taken over), 0 for an output
  // proposing to another input: e_cmt[p] && la_in_q[p] == q (asserted) without the OR over the inputs
  // that makes e_acc. The dequeues (each at a VoQ of one input and output) read these, so that no path from
  // the accept to the VoQ state passes through that OR, the commit, and a compare of la_in_q.
  logic [NPorts-1:0] e_accq [NPorts];
  logic [6:0]    e_rdfree [NPorts];    // per input: its free read slots after the cycle (the accept's)

  // Stage 3's accept, per input: proposals from last cycle's stage 2 (registered), taken round robin from
  // the input's pointer up to its free read slots after this cycle's completions; an output whose packet on
  // the wire reads this input takes that read slot over (the packet before ends before this one starts).
  // Split in two processes around the prefix counts (pfx_cnt): the proposals and the read slots released,
  // then the accepts. An input's accepts are its first `free` proposals in round-robin order from its
  // pointer (the outputs at or after it, `hi`, then those before it, `lo`), each proposal's rank in that
  // order a prefix count: no chain of NPorts steps.
  logic          a_done [NPorts];
  logic [NPorts-1:0] a_prop [NPorts];
  logic [NPorts-1:0] a_xfer [NPorts];
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_rel [NPorts];   // per input: the outputs whose packet ends this cycle, releasing its read
  logic [NPorts*8-1:0] a_crel [NPorts];
`endif
  logic [NPorts-1:0] a_hi [NPorts];
  logic [NPorts-1:0] a_lo [NPorts];
  logic [NPorts*8-1:0] a_chi [NPorts];  // prefix counts (8 bits: NPorts <= 64) of a_hi and a_lo (and a_rel)
  logic [NPorts*8-1:0] a_clo [NPorts];
  `IBCYCLE_COMB begin : accept_req
    logic [NPorts-1:0] m;
    for (int p = 0; p < NPorts; p++) a_done[p] = rst_ni && if_v_q[p] && ser_le_q[p];
    for (int q = 0; q < NPorts; q++) begin
      for (int p = 0; p < NPorts; p++) begin
`ifdef IBCYCLE_ASSERTIONS
        a_rel[q][p] = a_done[p] && !if_keep_q[p] && 32'(if_in_q[p]) == q;
`endif
        a_prop[q][p] = rst_ni && la_st_q[p] == LaPr && 32'(la_in_q[p]) == q;
        a_xfer[q][p] = a_prop[q][p] && if_v_q[p] && !a_done[p] && 32'(if_in_q[p]) == q;
        m[p] = a_prop[q][p] && !a_xfer[q][p];
        a_hi[q][p] = m[p] && p >= 32'(acc_ptr_q[q]);
        a_lo[q][p] = m[p] && p < 32'(acc_ptr_q[q]);
      end
    end
  end : accept_req
  for (genvar q = 0; q < NPorts; q++) begin : g_acc
    logic [NPorts-1:0] c_a_hi, c_a_lo;
    logic [NPorts*8-1:0] c_a_chi, c_a_clo;
    pfx_cnt #(.N(NPorts), .W(8)) u_chi (.bits_i(c_a_hi), .cnt_o(c_a_chi));
    pfx_cnt #(.N(NPorts), .W(8)) u_clo (.bits_i(c_a_lo), .cnt_o(c_a_clo));
    assign c_a_hi = a_hi[q];
    assign c_a_lo = a_lo[q];
    assign a_chi[q] = c_a_chi;
    assign a_clo[q] = c_a_clo;
`ifdef IBCYCLE_ASSERTIONS
    logic [NPorts-1:0] c_a_rel;
    logic [NPorts*8-1:0] c_a_crel;
    pfx_cnt #(.N(NPorts), .W(8)) u_crel (.bits_i(c_a_rel), .cnt_o(c_a_crel));
    assign c_a_rel = a_rel[q];
    assign a_crel[q] = c_a_crel;
`endif
  end
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_acc_ok;   // per input: the accepts equal the compares they replace (asserted)
  logic [NPorts-1:0] a_acc_ok_q;
  always_ff @(posedge clk_i) a_acc_ok_q <= rst_ni ? a_acc_ok : '1;
`endif
  `IB_SWITCH_CS_ADD(ac_cs_add)
  `IB_SWITCH_KS_ADD(ac_ks_add)
  `IBCYCLE_COMB begin : accept
    logic [NPorts-1:0] acc [NPorts];
    logic [NPorts-1:0] alo [NPorts];
    logic [6:0] free [NPorts];
    logic [34:0] rf, rl, rh;
    logic [69:0] rc;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [34:0] ry, sh, sl;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [7:0] nhi;
    logic [7:0] ntot;
    logic [PW-1:0] ptr [NPorts];
    for (int q = 0; q < NPorts; q++) begin
      free[q] = rd_free_q[q] + (rst_ni ? relc_q[q] : 7'd0);
      nhi = a_chi[q][8*(NPorts-1) +: 8];
      // An output of `hi` is accepted when its rank is within the free slots, rd_free + relc - rank >= 0;
      // one of `lo` when nhi + its rank is, rd_free + relc - nhi - rank >= 0: each the sign of one sum of
      // the registers and the complemented counts (-x = ~x + 1), three rows by one row of full adders (the
      // + 1 in the free low bit of the carries), four by a 4:2 compressor (the + 2 as the carry in and the
      // free low bit), then one Kogge-Stone add: not an add (the free count) and a compare in series, nor,
      // for `lo`, two adds and a compare. Asserted equal to the compares.
      rf = 35'(rd_free_q[q]);
      rl = rst_ni ? 35'(relc_q[q]) : 35'd0;
`ifdef IBCYCLE_ASSERTIONS
      a_acc_ok[q] = 1'b1;
`endif
      for (int p = 0; p < NPorts; p++) begin
        rh = ~(35'(a_chi[q][8*p +: 8]));
        ry = (rf & rl) | (rf & rh) | (rl & rh);
        sh = ac_ks_add(rf ^ rl ^ rh, {ry[33:0], 1'b1}, 1'b0);
        rc = ac_cs_add({~(35'(nhi)), rf}, {~(35'(a_clo[q][8*p +: 8])), rl});
        sl = ac_ks_add(rc[34:0], rc[69:35] | 35'd1, 1'b1);
        acc[q][p] = (a_hi[q][p] && !sh[34]) || (a_lo[q][p] && !sl[34]);
        alo[q][p] = a_lo[q][p] && acc[q][p];
`ifdef IBCYCLE_ASSERTIONS
        if (acc[q][p] != ((a_hi[q][p] && a_chi[q][8*p +: 8] <= {1'b0, free[q]})
                          || (a_lo[q][p] && nhi + a_clo[q][8*p +: 8] <= {1'b0, free[q]}))) a_acc_ok[q] = 1'b0;
`endif
      end
      // The free read slots after the cycle: those free now, with the releases, less the accepts, which
      // are the first `free` proposals in round-robin order, min(free, proposals) of them; from the count
      // of the proposals, not from the commits one by one (in the update, an input's count was a chain of
      // writes at computed indices over the outputs: 75 levels at 4 ports). Asserted: rd_free_q is speedup
      // less reads_q, which the update still counts that way.
      ntot = nhi + a_clo[q][8*(NPorts-1) +: 8];
      e_rdfree[q] = (ntot >= {1'b0, free[q]}) ? 7'd0 : free[q] - ntot[6:0];
      // The pointer moves past the last accept: the highest accepted of `lo` if any, else of `hi`.
      ptr[q] = acc_ptr_q[q];
      if (alo[q] != '0) begin
        for (int p = 0; p < NPorts; p++) if (alo[q][p]) ptr[q] = (p + 1 >= 32'(nports_i)) ? '0 : PW'(p + 1);
      end else begin
        for (int p = 0; p < NPorts; p++) if (acc[q][p]) ptr[q] = (p + 1 >= 32'(nports_i)) ? '0 : PW'(p + 1);
      end
    end
    for (int q = 0; q < NPorts; q++) e_accq[q] = acc[q] | a_xfer[q];
    for (int p = 0; p < NPorts; p++) begin
      e_acc[p] = 1'b0;
      e_xfer[p] = 1'b0;
      for (int q = 0; q < NPorts; q++) begin
        if (e_accq[q][p]) e_acc[p] = 1'b1;
        if (a_xfer[q][p]) e_xfer[p] = 1'b1;
      end
    end
    for (int q = 0; q < NPorts; q++) begin
      e_done[q] = a_done[q];
      e_accptr[q] = ptr[q];
    end
  end : accept

  // Per output: completion, flow-control start, the decided packet's start, stage 3's commit, stage 2's
  // proposal, stage 1's requests. Worked out on local copies (`*_w`) and each output written once at the
  // end: a default then an override would be a change event for vl_arb and credit_tx, whose outputs come
  // back here. Every local is written at constant indices only (a loop's index is the element written): an
  // array written at a computed index in a combinational process came out of Yosys as a logic loop.
  `IB_SWITCH_CS_ADD(eg_cs_add)
  `IB_SWITCH_KS_ADD(eg_ks_add)
  `IB_SWITCH_RR_PICK(eg_rr_pick)
  `IBCYCLE_COMB begin : egress
    logic e_fc_w [NPorts];
    logic [3:0] e_fcvl_w [NPorts];
    logic e_gnt_w [NPorts];
    logic e_cmt_w [NPorts];
    logic [SW-1:0] e_cslot_w [NPorts];
    logic [12:0] e_cglen_w [NPorts];
    logic [31:0] e_cgser_w [NPorts];
    logic [34:0] gpr [14];
    logic [69:0] gpt [14];
    /* verilator lint_off UNUSEDSIGNAL */
    logic [34:0] gps;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [6:0] e_cblk_w [NPorts];
    logic [15:0] e_gmk_w [NPorts];
    logic e_gms_w [NPorts];
    logic e_gmark_w [NPorts];
    logic [31:0] e_ser_w [NPorts];
    logic [NPorts-1:0] held_w [NPorts];
    logic [PW-1:0] e_pick_w [NPorts][NVl];
    logic [6:0] e_len_w [NPorts][NVl];
    logic [NPorts-1:0] e_fre_w [NPorts][NVl];
    logic [NPorts-1:0] e_hi_w [NPorts][NVl];
    logic [NPorts-1:0] e_poh_w [NPorts][NVl];
    logic [6:0] e_hblk_w [NPorts][NVl][NPorts];
    logic [NVl-1:0] e_req_w [NPorts];
    logic [15:0] arb_req_w [NPorts];
    logic [16*7-1:0] arb_len_w [NPorts];
    logic [15:0] arb_ok_w [NPorts];
    logic arb_ready_w [NPorts];
    logic ctx_req_w [NK];
    logic [6:0] ctx_blocks_w [NK];
    logic ctx_fcv_w [NK];
    logic ctx_take_w [NK];
    /* verilator lint_off UNUSEDSIGNAL */
    logic [16:0] e_mk_w [NPorts];
    /* verilator lint_on UNUSEDSIGNAL */
    for (int p = 0; p < NPorts; p++) begin
      e_fc_w[p] = rst_ni && fcp_q[p] != '0 && ser_z_q[p];
      e_fcvl_w[p] = 4'd0;
      if (e_fc_w[p]) begin
        for (int v = NVl - 1; v >= 0; v--) if (fcp_q[p][v]) e_fcvl_w[p] = 4'(v);
      end
      // The decided packet starts when the wire frees (a flow-control packet first).
      e_gnt_w[p] = rst_ni && la_st_q[p] == LaNx && !e_fc_w[p] && ser_lt_q[p];
      // Stage 3: the accepted proposal commits; its VoQ head's slot.
      e_cmt_w[p] = rst_ni && la_st_q[p] == LaPr && e_acc[p];
      e_cslot_w[p] = '0;
      e_cglen_w[p] = '0;
      e_cblk_w[p] = '0;
      for (int q = 0; q < NPorts; q++) begin
        for (int v = 0; v < NVl; v++) begin
          if (32'(la_in_q[p]) == q && 32'(la_vl_q[p]) == v) begin
            e_cslot_w[p] = vh_q[(q*NPorts + p)*NVl + v];
            e_cglen_w[p] = hd_len[(q*NPorts + p)*NVl + v];
          end
        end
      end
      for (int v = 0; v < NVl; v++) if (32'(la_vl_q[p]) == v) e_cblk_w[p] = la_len_q[p][7*v +: 7];
      // The committed packet's ticks on the wire, den x its length (la_gser_q), as a carry-save product: the
      // 13 partial products (and a zero row) in pairs, reduced by three levels of 4:2 compressors (node i from
      // 2i and 2i + 1, the pairs the leaves 7..13) and one Kogge-Stone add, after the head's length is
      // selected (Yosys's generic product was the 41-level path at 4 ports). Asserted equal to the product.
      for (int j = 0; j < 14; j++) begin
        gpr[j] = (j < 13 && e_cglen_w[p][j % 13]) ? 35'(`IB_SWITCH_DEN(p)) << j : 35'd0;
      end
      for (int i = 0; i < 7; i++) gpt[7 + i] = {gpr[2*i + 1], gpr[2*i]};
      for (int i = 6; i >= 1; i--) gpt[i] = eg_cs_add(gpt[2*i], gpt[2*i + 1]);
      gpt[0] = '0;
      gps = eg_ks_add(gpt[1][34:0], gpt[1][69:35], 1'b0);
      e_cgser_w[p] = gps[31:0];
      // Stage 1's requests: round robin among the inputs with a packet and a free read slot at the cycle's
      // start (an input whose read this output's packet on the wire holds counts as free: it passes on).
      for (int q = 0; q < NPorts; q++) begin
        held_w[p][q] = if_v_q[p] && !e_done[p] && 32'(if_in_q[p]) == q;
      end
      for (int v = 0; v < NVl; v++) begin
        // The lowest at or after the pointer, else the lowest.
        for (int q = 0; q < NPorts; q++) begin
          e_fre_w[p][v][q] = vn_q[(q*NPorts + p)*NVl + v] != '0
            && (rd_free_q[q] != '0 || held_w[p][q]);
          e_hi_w[p][v][q] = e_fre_w[p][v][q] && q >= 32'(rr_q[p*NVl + v]);
        end
        e_pick_w[p][v] = '0;
        e_len_w[p][v] = '0;
        e_req_w[p][v] = 1'b0;
        // Every input's head in blocks, beside the pick (the pick's selected after, and its credit check in
        // `decide` for every input in parallel, the pick's selected there): nothing waits for the pick
        // before a 13-bit multiplexer, an add and the credit compare.
        for (int q = 0; q < NPorts; q++) begin
          e_hblk_w[p][v][q] = 7'((hd_len[(q*NPorts + p)*NVl + v] + 13'd63) >> 6);
        end
        // The pick as a one-hot vector: the lowest of `hi` if any, else the lowest of `fre`.
        e_poh_w[p][v] = eg_rr_pick(e_hi_w[p][v], e_fre_w[p][v]);
        if (e_fre_w[p][v] != '0 && v < 32'(`IB_SWITCH_NVL(p))) begin
          if (e_hi_w[p][v] != '0) begin
            for (int q = NPorts - 1; q >= 0; q--) if (e_hi_w[p][v][q]) e_pick_w[p][v] = PW'(q);
          end else begin
            for (int q = NPorts - 1; q >= 0; q--) if (e_fre_w[p][v][q]) e_pick_w[p][v] = PW'(q);
          end
          for (int q = 0; q < NPorts; q++) begin
            if (e_poh_w[p][v][q]) e_len_w[p][v] = e_hblk_w[p][v][q];
          end
          e_req_w[p][v] = 1'b1;
        end
        // credit_tx's request port carries the starting packet's take only; stage 1's credit check is
        // decide's, per input head.
        ctx_take_w[p*NVl + v] = e_gnt_w[p] && 32'(la_vl_q[p]) == v;
        ctx_req_w[p*NVl + v] = ctx_take_w[p*NVl + v];
        ctx_blocks_w[p*NVl + v] = la_blk_q[p];
        ctx_fcv_w[p*NVl + v] = rst_ni && rg_fc_q[p] && rg_fc_vl_q[4*p +: 4] == 4'(v);
      end
      // vl_arb over the registered requests: a held proposal in stage 2, the commit in stage 3.
      arb_req_w[p] = '0;
      arb_len_w[p] = '0;
      arb_ok_w[p] = '0;
      for (int v = 0; v < NVl; v++) begin
        arb_req_w[p][v] = la_req_q[p][v];
        arb_ok_w[p][v] = la_ok_q[p][v];
        arb_len_w[p][7*v +: 7] = la_len_q[p][7*v +: 7];
      end
      // Ready in stages 2 and 3 (registers only), held unless stage 3 commits: the state moves exactly at
      // a commit, as with ready at the commit only, and the grant, the same in both stages (the same
      // registered requests), no longer waits for the accept; stage 2's proposal reads it, stage 3 reads
      // it only at a commit (asserted to be the proposal).
      arb_ready_w[p] = rst_ni && (la_st_q[p] == LaRq || la_st_q[p] == LaPr);
      // The starting packet's marking state (FECN decided at dequeue).
      e_gmk_w[p] = '0;
      e_gms_w[p] = 1'b0;
      for (int v = 0; v < NVl; v++) begin
        if (32'(la_vl_q[p]) == v) begin
          e_gmk_w[p] = mk_q[p*NVl + v];
          e_gms_w[p] = FltFecnInvert ^ cd_mark[p*NVl + v];
        end
      end
      // The step as if the marking state were set (from registers), the detector's decision (late: its
      // compares of the registered sums with the thresholds) ANDed after: a step with the state clear
      // neither marks nor moves.
      e_mk_w[p] = mk_step_eg(e_gmk_w[p], p, la_glen_q[p], 1'b1);
      e_gmark_w[p] = e_gnt_w[p] && !mark_enq_i[p] && e_gms_w[p] && e_mk_w[p][16];
      // The serialiser's busy ticks after this cycle's start (before the cycle's own ticks are counted).
      if (e_fc_w[p]) e_ser_w[p] = 32'(`IB_SWITCH_DEN(p)) * 32'd6;
      else if (e_gnt_w[p]) e_ser_w[p] = ser_q[p] + la_gser_q[p];
      else e_ser_w[p] = ser_q[p];
    end
    // Each output written once, with its final value.
    for (int p = 0; p < NPorts; p++) begin
      e_fc[p] = e_fc_w[p];
      e_fcvl[p] = e_fcvl_w[p];
      e_gnt[p] = e_gnt_w[p];
      e_cmt[p] = e_cmt_w[p];
      e_cslot[p] = e_cslot_w[p];
      e_cglen[p] = e_cglen_w[p];
      e_cgser[p] = e_cgser_w[p];
      e_cblk[p] = e_cblk_w[p];
      e_gvl[p] = la_vl_q[p];
      e_gin[p] = la_in_q[p];
      e_gslot[p] = la_slot_q[p];
      e_glen[p] = la_glen_q[p];
      e_gmark[p] = e_gmark_w[p];
      e_ser[p] = e_ser_w[p];
      e_req[p] = e_req_w[p];
      for (int v = 0; v < NVl; v++) begin
        e_len[p][7*v +: 7] = e_len_w[p][v];
        e_pick[p][PW*v +: PW] = e_pick_w[p][v];
        e_poh[p][v] = e_poh_w[p][v];
        for (int q = 0; q < NPorts; q++) e_hblk[p][v][q] = e_hblk_w[p][v][q];
      end
      arb_req[p] = arb_req_w[p];
      arb_len[p] = arb_len_w[p];
      arb_ok[p] = arb_ok_w[p];
      arb_ready[p] = arb_ready_w[p];
      arb_hold[p] = !e_cmt_w[p];
    end
    for (int k = 0; k < NK; k++) begin
      ctx_req[k] = ctx_req_w[k];
      ctx_blocks[k] = ctx_blocks_w[k];
      ctx_fcv[k] = ctx_fcv_w[k];
      ctx_take[k] = ctx_take_w[k];
    end
  end : egress
  // What the blocks' outputs decide (a process of its own: the egress process drives their inputs).
  `IBCYCLE_COMB begin : decide
    logic [11:0] gap;
    logic [NPorts-1:0] fit;
    for (int p = 0; p < NPorts; p++) begin
      // Stage 1's credit check: credit_tx's (the blocks fit when FCCL - (FCTBS + blocks) is within the
      // credit window) for every input's head, the pick's selected.
      for (int v = 0; v < NVl; v++) begin
        for (int q = 0; q < NPorts; q++) begin
          gap = ctx_fcclq[p*NVl + v] - (ctx_fctbs[p*NVl + v] + 12'(e_hblk[p][v][q]));
          fit[q] = gap <= 12'd2048;
        end
        e_ok[p][v] = e_req[p][v] && (e_poh[p][v] & fit) != '0;
      end
      if (FltCreditBypass) e_ok[p] = e_req[p];
      // Stage 1: no decision under way, a request with credit, the wire free within LookCycles (its
      // ready cycle, t + busy ticks / ticks per cycle, at most t + LookCycles: no divider needed).
      e_rq[p] = rst_ni && la_st_q[p] == LaIdle && (e_req[p] & e_ok[p]) != '0
        && e_ser[p] < 32'(LookCycles + 1) * 32'(`IB_SWITCH_NUM(p));
      // Stage 2: vl_arb's held grant over the registered requests is the proposal.
      e_pr[p] = rst_ni && la_st_q[p] == LaRq && arb_gv[p] && arb_gvl[p] < `IB_SWITCH_NVL(p);
      e_pvl[p] = arb_gvl[p];
      e_pin[p] = '0;
      for (int v = 0; v < NVl; v++) if (32'(arb_gvl[p]) == v) e_pin[p] = la_pick_q[p][PW*v +: PW];
    end
  end : decide
  // Outputs of the cycle.
  `IBCYCLE_COMB begin : tx
    logic [31:0] tag [NPorts];
    /* verilator lint_off UNUSEDSIGNAL */
    logic [3:0] ivl [NPorts];
    /* verilator lint_on UNUSEDSIGNAL */
    logic [1:0] fh [NPorts];
    logic mt [NPorts];
    for (int p = 0; p < NPorts; p++) begin
      tag[p] = '0;
      ivl[p] = '0;
      fh[p] = '0;
      mt[p] = 1'b0;
      for (int q = 0; q < NPorts; q++) begin
        if (32'(e_gin[p]) == q) begin
          tag[p] = gr_tag[q*NPorts + p];
          ivl[p] = gr_ivl[q*NPorts + p];
          fh[p] = gr_fh[q*NPorts + p];
          mt[p] = gr_mt[q*NPorts + p];
        end
      end
      tx_pkt_o[p] = e_gnt[p];
      tx_fc_o[p] = e_fc[p];
      tx_fc_vl_o[4*p +: 4] = e_fc[p] ? e_fcvl[p] : 4'd0;
      tx_fc_fctbs_o[12*p +: 12] = e_fc[p] ? ctx_fctbs[p*NVl + 32'(e_fcvl[p])] : 12'd0;
      tx_fc_fccl_o[12*p +: 12] = e_fc[p] ? fcfccl_q[p*NVl + 32'(e_fcvl[p])] : 12'd0;
      tx_vl_o[4*p +: 4] = '0;
      tx_fecn_o[p] = 1'b0;
      tx_len_o[13*p +: 13] = '0;
      tx_off_o[17*p +: 17] = '0;
      tx_tag_o[32*p +: 32] = '0;
      if (e_gnt[p]) begin
        tx_vl_o[4*p +: 4] = FltVlMix ? ivl[p] : e_gvl[p];
        tx_fecn_o[p] = fh[p][0] | (fh[p][1] & mt[p]) | e_gmark[p];
        tx_len_o[13*p +: 13] = e_glen[p];
        tx_off_o[17*p +: 17] = 17'(ser_q[p]);
        tx_tag_o[32*p +: 32] = tag[p];
      end
    end
  end

  // ---------------------------------------------------------------- ingress (phase 2)
  // Per input: the arrival's blocks this cycle, a store-and-forward tail's enqueue, a new head (routed,
  // dropped or given a slot and enqueued), the blocks freed, and each VL's credit_rx inputs.
  logic          i_tail_enq [NPorts];   // the arriving packet's tail is in: enqueue its deferred slot
  logic          i_head [NPorts];       // a head is accepted (not an error)
  logic          i_head_drop [NPorts];
  logic          i_head_enq [NPorts];   // enqueued this cycle (cut-through, or all in at once)
  logic          i_head_done [NPorts];
  logic [PW-1:0] i_out [NPorts];
  logic [3:0]    i_ovl [NPorts];
  logic [SW-1:0] i_slot [NPorts];
  logic          i_fresh [NPorts];
  logic [31:0]   i_e [NPorts];
  logic [31:0]   i_thr [NPorts];
  logic [31:0]   i_thn [NPorts];
  logic [31:0]   i_end [NPorts];
  logic [6:0]    i_left [NPorts];
  logic [6:0]    i_blocks [NPorts];
  logic [15:0]   i_fpend [NK];
  logic          i_mark_tail [NPorts];
  logic          i_mark_head [NPorts];
  logic [15:0]   i_mk [NK];
  // FECN decisions at enqueue in the Switch's order: input p's tail is event 2p, its head event 2p + 1,
  // each at output VL ev_k (output ev_k / NVl) when ev_on (enqueued at an output that marks at enqueue).
  logic          ev_on [2*NPorts];
  logic [31:0]   ev_k [2*NPorts];
  logic [2*NPorts-1:0] ev_sz;         // the event's packet is at least its output's Packet_Size
`ifdef IBCYCLE_ASSERTIONS
  logic [2*NPorts*13-1:0] ev_len;
`endif
  logic [2*NPorts-1:0] mk_ev [NK];     // the events at output VL k
  logic [2*NPorts-1:0] mk_mark [NK];   // their marks (mark_enq of output VL k)
  logic [NPorts*16-1:0] i_fill [NK];
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_hd_ok;   // the arrival's and the head's flags equal the forms they replace
  logic [NPorts-1:0] a_hd_ok_q;
  always_ff @(posedge clk_i) a_hd_ok_q <= rst_ni ? a_hd_ok : '1;
  logic [NK-1:0] a_drain_ok;  // the drain and the count left pending, the fills, as one sum each (asserted)
`endif

  // The state update after the ingress phase, each element from the cycle's events that touch it (a loop
  // whose index is the element: no array is written at a computed index here, see egress).
`define IB_SWITCH_MSTATE(K) (FltFecnInvert ^ cd_mark[K])

  // a + b (9 bits) with the carries from a Kogge-Stone tree, each node one multiplexer (generate and
  // propagate exclude each other, as in cct_shaper): the drain's last add, four levels of carries where
  // Yosys's generic adder (Brent-Kung) takes twice as many. Called by the ingress process only (Icarus 11
  // and shared functions).
  function automatic logic [8:0] dr_add9(input logic [8:0] a, input logic [8:0] b);
    logic [8:0] g, p, gn;
    g = a & b;
    p = a ^ b;
    for (int k = 1; k < 9; k = 2 * k) begin
      gn = (p & (g << k)) | (~p & g);
      g = gn;
      p = p & (p << k);
    end
    dr_add9 = a ^ b ^ {g[7:0], 1'b0};
  endfunction

  `IBCYCLE_COMB begin : ingress
    // The arriving packet's blocks of this cycle (at most two: only the last block is short).
    logic [31:0] a_thr [NPorts];
    logic [31:0] a_thn [NPorts];
    logic [31:0] a_t2 [NPorts];
    logic [31:0] a_t3 [NPorts];
    logic [6:0] a_left [NPorts];
    logic [6:0] a_got [NPorts];
    logic a_free [NPorts];
    // A new head: its first block, its route.
    logic [6:0] h_left [NPorts];
    logic h_got [NPorts];
    logic h_free [NPorts];
    logic h_in [NPorts];
    logic h_dc [NPorts];
    logic a_g2 [NPorts];
    logic a_g1 [NPorts];
    logic a_in [NPorts];
    logic [7:0] h_out [NPorts];
    logic [3:0] h_ovl [NPorts];
    logic [12:0] t_len [NPorts];
    logic [7:0] ps_t, ps_h;
    logic [15:0] fr [NK];
    logic [15:0] fpb;
    logic [8:0] fl_a, fl_b, fl_c, fl_d, fl_s1, fl_s2;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [8:0] fl_y1, fl_y2;   // the carries (the top one is 0: the four terms sum to at most 508)
    /* verilator lint_on UNUSEDSIGNAL */
    logic [8:0] fl [4];
    logic fsat [4];
    logic [6:0] frc [4];
    logic [15:0] fpn [4];
    logic fs_h, fs_a;
    logic [15:0] fe, fed;
    logic fdq;
`ifdef IBCYCLE_ASSERTIONS
    logic a_in_s, a_hin_s;
    logic [7:0] a_fd;
    logic [15:0] a_fpc;
    logic [8:0] a_fl;
    logic [6:0] a_frc;
`endif
    logic [3:0] fsel;
    for (int p = 0; p < NPorts; p++) begin
      // The block thresholds of a packet of `blocks` blocks: block j is in when e >= 64 j den, the last
      // when e >= len den (the end). Both of this cycle's compares read registers: the tick count at the
      // cycle's end (ar_e_q, advanced a cycle ahead) against the current threshold and the one after it
      // (ar_thn_q, computed a cycle ahead), instead of a compare, an add and a clamp and a second compare
      // in series. The threshold after is the end when exactly one block is left after the current one,
      // else 64 den more (the clamp `min(thr + 64 den, end)` of rtl_model's arithmetic, decided by the
      // count of blocks left instead of a compare with the end).
      a_thr[p] = ar_thr_q[p];
      a_thn[p] = ar_thn_q[p];
      a_left[p] = ar_left_q[p];
      a_got[p] = '0;
      a_free[p] = 1'b0;
      i_tail_enq[p] = 1'b0;
      t_len[p] = tl_len[13*p +: 13];
      a_t2[p] = (ar_left_q[p] == 7'd3) ? ar_end_q[p] : ar_thn_q[p] + 32'd64 * 32'(`IB_SWITCH_DEN(p));
      a_t3[p] = (ar_left_q[p] == 7'd4) ? ar_end_q[p] : ar_thn_q[p] + 32'd128 * 32'(`IB_SWITCH_DEN(p));
      // The blocks got (two, one or none) and whether the packet is then in (the count left equals the
      // blocks got) as flags from compares of the count with constants, beside each other: the head's
      // acceptance and the drain's case wait for no compare of the count with a selected value.
      a_g2[p] = ar_left_q[p] > 7'd1 && ar_ge_thn_q[p];
      a_g1[p] = !a_g2[p] && ar_left_q[p] != '0 && ar_ge_thr_q[p];
      // In after this cycle: nothing left, or one block left and its threshold reached, or two and the
      // threshold after reached (the blocks got are then all that is left): compares of the count with
      // constants ANDed with the registered flags, no selection between them (asserted equal to the form
      // that selects by a_g2 and a_g1).
      a_in[p] = ar_left_q[p] == '0 || (ar_left_q[p] == 7'd1 && ar_ge_thr_q[p])
                || (ar_left_q[p] == 7'd2 && ar_ge_thn_q[p]);
      if (rst_ni && ar_v_q[p]) begin
        if (a_g2[p]) begin
          a_got[p] = 7'd2;
          a_thr[p] = a_t2[p];
          a_thn[p] = a_t3[p];
        end else if (a_g1[p]) begin
          a_got[p] = 7'd1;
          a_thr[p] = ar_thn_q[p];
          a_thn[p] = a_t2[p];
        end
        a_left[p] = ar_left_q[p] - a_got[p];
        // In (no blocks left): the count equals the blocks got, compared instead of the difference's zero test.
        if (a_in[p]) begin
          a_free[p] = ar_drop_q[p];
          i_tail_enq[p] = !ar_drop_q[p] && ar_def_q[p];
        end
      end
      // A new head, from the registered ingress stage: taken in the cycle after its hand-in.
      i_head[p] = rst_ni && rg_pkt_q[p] && !(ar_v_q[p] && !a_in[p]) && rg_vl_q[4*p +: 4] < `IB_SWITCH_NVL(p);
      i_blocks[p] = pc_blocks_q[p];
      i_end[p] = pc_end_q[p];
      h_got[p] = i_head[p] && pc_got_q[p];
      // All of the head in (its blocks equal the blocks got) and its drop, from registers: every reader
      // ANDs them with the acceptance (i_head) last, as the late decision, and with the head accepted the
      // blocks got are pc_got_q's. The forms that select by the acceptance first are asserted equal.
      h_in[p] = pc_got_q[p] ? pc_blocks_q[p] == 7'd1 : pc_blocks_q[p] == '0;
      h_dc[p] = pc_bad_q[p] || (ftop_q[p] == '0 && 32'(fresh_q[p]) >= SlotMax);
      h_left[p] = i_blocks[p] - 7'(h_got[p]);
      // The tick count at the end of the next cycle; the thresholds after this cycle's compares.
      i_e[p] = i_head[p] ? pc_e_q[p] : ar_e_q[p] + 32'(`IB_SWITCH_NUM(p));
      i_thr[p] = i_head[p] ? pc_thr_q[p] : a_thr[p];
      i_thn[p] = i_head[p] ? pc_thn_q[p] : a_thn[p];
      i_left[p] = i_head[p] ? h_left[p] : a_left[p];
      i_head_done[p] = i_head[p] && h_in[p];
      h_out[p] = pc_out_q[p];
      h_ovl[p] = pc_ovl_q[p];
      i_out[p] = i_head[p] ? PW'(h_out[p]) : '0;
      i_ovl[p] = i_head[p] ? h_ovl[p] : '0;
      i_head_drop[p] = i_head[p] && h_dc[p];
      h_free[p] = i_head[p] && (h_dc[p] && h_in[p]);
      i_fresh[p] = i_head[p] && (!h_dc[p] && ftop_q[p] == '0);
      i_slot[p] = '0;
      if (i_head[p] && !i_head_drop[p]) i_slot[p] = i_fresh[p] ? SW'(fresh_q[p]) : fk_top[p];
      // Cut-through unless the output is faster than the input (then store-and-forward).
      i_head_enq[p] = i_head[p] && (!h_dc[p] && (h_in[p] || pc_ct_q[p]));
`ifdef IBCYCLE_ASSERTIONS
      a_in_s = a_g2[p] ? ar_left_q[p] == 7'd2 : a_g1[p] ? ar_left_q[p] == 7'd1 : ar_left_q[p] == '0;
      a_hin_s = h_got[p] ? pc_blocks_q[p] == 7'd1 : pc_blocks_q[p] == '0;
      a_hd_ok[p] = a_in[p] == a_in_s && i_head_done[p] == (i_head[p] && a_hin_s)
        && h_free[p] == (i_head_drop[p] && a_hin_s)
        && i_head_enq[p] == (i_head[p] && !i_head_drop[p] && (a_hin_s || pc_ct_q[p]))
        && i_fresh[p] == (i_head[p] && !i_head_drop[p] && ftop_q[p] == '0);
`endif
      // The enqueue events of this input. Each packet's size compare with its output's Packet_Size (the
      // marker's `bytes >= 64 x Packet_Size`) is decided here, from the length and the route alone, and
      // registered with the events, so mark_enq's prefix count starts from registers.
      ps_t = '0;
      ps_h = '0;
      for (int o = 0; o < NPorts; o++) begin
        if (32'(ar_out_q[p]) == o) ps_t = packet_size_i[8*o +: 8];
        if (32'(h_out[p]) == o) ps_h = packet_size_i[8*o +: 8];
      end
      ev_on[2*p] = i_tail_enq[p] && mark_enq_i[ar_out_q[p]];
      ev_k[2*p] = 32'(ar_out_q[p])*NVl + 32'(ar_ovl_q[p]);
      ev_sz[2*p] = {1'b0, t_len[p]} >= {ps_t, 6'b000000};
      ev_on[2*p+1] = i_head_enq[p] && mark_enq_i[i_out[p]];
      ev_k[2*p+1] = 32'(i_out[p])*NVl + 32'(i_ovl[p]);
      ev_sz[2*p+1] = {1'b0, rg_len_q[13*p +: 13]} >= {ps_h, 6'b000000};
`ifdef IBCYCLE_ASSERTIONS
      ev_len[13*(2*p) +: 13] = t_len[p];
      ev_len[13*(2*p+1) +: 13] = rg_len_q[13*p +: 13];
`endif
    end
    for (int k = 0; k < NK; k++) begin
      for (int n = 0; n < 2*NPorts; n++) mk_ev[k][n] = ev_on[n] && ev_k[n] == k;
    end
    for (int k = 0; k < NK; k++) begin
      // credit_rx's hand-ins: the arriving packet's blocks, a head's first block, blocks freed (released
      // by completed packets, or of a dropped packet whose last block is in).
      crx_blk[k] = (rst_ni && ar_v_q[k / NVl] && 32'(ar_vl_q[k / NVl]) == k % NVl ? a_got[k / NVl] : 7'd0)
                   + 7'(i_head[k / NVl] && h_got[k / NVl] && 32'(rg_vl_q[4*(k / NVl) +: 4]) == k % NVl);
      // The blocks released by completions (from registers) summed first, the arrival's and the head's
      // dropped blocks (late in the cycle) added to that sum and the pending count after it, not in
      // series after the completions'.
      fr[k] = rst_ni ? fr_q[k] : 16'd0;
      // The drain for each of the four cases of the late terms (the arriving packet's blocks freed, the
      // dropped head's), from registers only, the case selected after: the late decisions wait for no adder.
      // The drain itself (frc) needs the sum's low 7 bits and whether it exceeds 127: the low bits of the
      // four terms (the pending count's, the completions', the arrival's and the dropped head's blocks;
      // 9 bits: at most 4 x 127) reduced to two rows by two rows of full adders, one short add (dr_add9,
      // Kogge-Stone), and any term's bit above 6 set. What stays pending (fpn) is 0 unless the drain
      // saturates, then the whole 16-bit sum less 127.
      fpb = fpend_q[k] + fr[k] - 16'd127;
      for (int c = 0; c < 4; c++) begin
        fl_a = {2'b00, fpend_q[k][6:0]};
        fl_b = {2'b00, fr[k][6:0]};
        fl_c = (c % 2 == 1) ? {2'b00, ar_blk_q[k / NVl]} : 9'd0;
        fl_d = (c / 2 == 1) ? {2'b00, i_blocks[k / NVl]} : 9'd0;
        fl_s1 = fl_a ^ fl_b ^ fl_c;
        fl_y1 = (fl_a & fl_b) | (fl_a & fl_c) | (fl_b & fl_c);
        fl_s2 = fl_s1 ^ {fl_y1[7:0], 1'b0} ^ fl_d;
        fl_y2 = (fl_s1 & {fl_y1[7:0], 1'b0}) | (fl_s1 & fl_d) | ({fl_y1[7:0], 1'b0} & fl_d);
        fl[c] = dr_add9(fl_s2, {fl_y2[7:0], 1'b0});
        fsat[c] = fpend_q[k][15:7] != '0 || fr[k][15:7] != '0 || fl[c][8:7] != '0;
        frc[c] = fl[c][6:0] | {7{fsat[c]}};
        fpn[c] = fsat[c] ? fpb + 16'(fl_c[6:0]) + 16'(fl_d[6:0]) : 16'd0;
      end
      // The case, one-hot, selected by AND-OR: a multiplexer of the four sums would let Yosys share one
      // adder between them with the multiplexer before it (opt_share), the late decisions before the adds.
      fs_h = h_free[k / NVl] && 32'(rg_vl_q[4*(k / NVl) +: 4]) == k % NVl;
      fs_a = a_free[k / NVl] && 32'(ar_vl_q[k / NVl]) == k % NVl;
      fsel = {fs_h && fs_a, fs_h && !fs_a, !fs_h && fs_a, !fs_h && !fs_a};
      crx_free[k] = '0;
      i_fpend[k] = '0;
      for (int c = 0; c < 4; c++) begin
        crx_free[k] = crx_free[k] | ({7{fsel[c]}} & frc[c]);
        i_fpend[k] = i_fpend[k] | ({16{fsel[c]}} & fpn[c]);
      end
`ifdef IBCYCLE_ASSERTIONS
      // The drain as one sum of the selected terms, its saturation at 127 and the rest kept pending.
      a_fd = (fs_a ? 8'(ar_blk_q[k / NVl]) : 8'd0) + (fs_h ? 8'(i_blocks[k / NVl]) : 8'd0);
      a_fpc = (fpend_q[k] + fr[k]) + 16'(a_fd);
      a_fl = 9'(fpend_q[k][6:0]) + 9'(fr[k][6:0]) + 9'(a_fd);
      a_frc = (fpend_q[k][15:7] != '0 || fr[k][15:7] != '0 || a_fl[8:7] != '0) ? 7'd127 : a_fl[6:0];
      a_drain_ok[k] = crx_free[k] == a_frc && i_fpend[k] == a_fpc - 16'(a_frc);
`endif
      crx_fcv[k] = rst_ni && rg_fc_q[k / NVl] && 32'(rg_fc_vl_q[4*(k / NVl) +: 4]) == k % NVl;
      // VoQ (q, output k / NVl, VL k % NVl): a grant's dequeue, a tail's and a head's enqueue.
      for (int q = 0; q < NPorts; q++) begin
        // The fill after the enqueues with and without the dequeue, both summed beside the commit (a
        // decision late in the cycle), which selects last (AND-OR: a multiplexer of the two sums would let
        // Yosys share one adder with the multiplexer before it).
        fe = fill_q[(q*NPorts + k / NVl)*NVl + k % NVl]
          + (i_tail_enq[q] && 32'(ar_out_q[q])*NVl + 32'(ar_ovl_q[q]) == k ? (16'(t_len[q]) + 16'd63) >> 6 : 16'd0)
          + (i_head_enq[q] && 32'(i_out[q])*NVl + 32'(i_ovl[q]) == k
             ? (16'(rg_len_q[13*q +: 13]) + 16'd63) >> 6 : 16'd0);
        fed = fill_q[(q*NPorts + k / NVl)*NVl + k % NVl] - 16'(e_cblk[k / NVl])
          + (i_tail_enq[q] && 32'(ar_out_q[q])*NVl + 32'(ar_ovl_q[q]) == k ? (16'(t_len[q]) + 16'd63) >> 6 : 16'd0)
          + (i_head_enq[q] && 32'(i_out[q])*NVl + 32'(i_ovl[q]) == k
             ? (16'(rg_len_q[13*q +: 13]) + 16'd63) >> 6 : 16'd0);
        fdq = e_accq[q][k / NVl] && 32'(e_gvl[k / NVl]) == k % NVl;
        i_fill[k][16*q +: 16] = ({16{fdq}} & fed) | ({16{!fdq}} & fe);
`ifdef IBCYCLE_ASSERTIONS
        // The fill as one sum: the dequeue's blocks taken off, the enqueues' added.
        if (i_fill[k][16*q +: 16] != fill_q[(q*NPorts + k / NVl)*NVl + k % NVl]
            - (fdq ? 16'(e_cblk[k / NVl]) : 16'd0)
            + (i_tail_enq[q] && 32'(ar_out_q[q])*NVl + 32'(ar_ovl_q[q]) == k ? (16'(t_len[q]) + 16'd63) >> 6 : 16'd0)
            + (i_head_enq[q] && 32'(i_out[q])*NVl + 32'(i_ovl[q]) == k
               ? (16'(rg_len_q[13*q +: 13]) + 16'd63) >> 6 : 16'd0)) a_drain_ok[k] = 1'b0;
`endif
      end
    end
  end : ingress

  // Each output VL's decisions at enqueue and its marking state after them: mark_enq, a parallel prefix
  // over the events (see the header); an event's mark is its output VL's. The decisions are taken in the
  // cycle after the enqueues, on the events, lengths and marking states registered from it (mq_*_q), so
  // that neither ingress's arithmetic nor mark_enq's prefix waits for the other: the marks go to memories
  // of their own (mh_m, mt_m) a cycle after the descriptor, and the marking state mk_q is a cycle behind
  // the enqueues at an output marking at enqueue. Nothing reads either sooner: a packet enqueued in cycle t
  // is requested in stage 1 at t + 1 at the earliest, committed at t + 3 and started later, and its slot
  // is not reused before its start; mk_q of an output marking at enqueue is read only by mark_enq.
  logic [2*NPorts-1:0]    mq_ev_q [NK];
  logic [2*NPorts-1:0]    mq_sz_q;
`ifdef IBCYCLE_ASSERTIONS
  logic [2*NPorts*13-1:0] mq_len_q;   // the lengths, for the reference chain below
  always_ff @(posedge clk_i) mq_len_q <= ev_len;
`endif
  logic                   mq_ms_q [NK];
  logic                   mq_hv_q [NPorts];   // input p gave a head a slot (its mark, or 0, is written)
  logic [SW-1:0]          mq_hs_q [NPorts];
  logic                   mq_tv_q [NPorts];   // input p enqueued a deferred tail (its mark is written)
  logic [SW-1:0]          mq_ts_q [NPorts];
  // Per-index processes (generate loops) where a register array's writes are not plain copies: Verilator
  // 5.006 unrolls no long loop of non-blocking array writes (see `IB_SWITCH_REGS`).
  always_ff @(posedge clk_i) mq_sz_q <= ev_sz;
  for (genvar k = 0; k < NK; k++) begin : g_mq_k
    always_ff @(posedge clk_i) begin
      mq_ev_q[k] <= mk_ev[k];
      mq_ms_q[k] <= `IB_SWITCH_MSTATE(k);
    end
  end
  for (genvar p = 0; p < NPorts; p++) begin : g_mq_p
    always_ff @(posedge clk_i) begin
      mq_hv_q[p] <= i_head[p] && !i_head_drop[p];
      mq_hs_q[p] <= i_slot[p];
      mq_tv_q[p] <= i_tail_enq[p];
      mq_ts_q[p] <= ar_slot_q[p];
    end
  end
  for (genvar k = 0; k < NK; k++) begin : g_mk
    logic [15:0] c_mk_q;
    logic c_mq_ms_q;
    logic [2*NPorts-1:0] c_mq_ev_q;
    logic [2*NPorts-1:0] c_mk_mark;
    logic [15:0] c_i_mk;
    mark_enq #(.NEv(2*NPorts), .SelfCheck(1'b0)) u_mk (
      .clk_i, .rst_ni,
      .marking_rate_i(marking_rate_i[16*(k / NVl) +: 16]),
      .mode_i(mode_i[k / NVl]), .lfsr_thresh_i(lfsr_thresh_i[17*(k / NVl) +: 17]),
      .s_i(c_mk_q), .mstate_i(c_mq_ms_q), .ev_i(c_mq_ev_q), .size_ok_i(mq_sz_q),
      .mark_o(c_mk_mark), .s_o(c_i_mk)
    );
    assign c_mk_q = mk_q[k];
    assign c_mq_ms_q = mq_ms_q[k];
    assign c_mq_ev_q = mq_ev_q[k];
    assign mk_mark[k] = c_mk_mark;
    assign i_mk[k] = c_i_mk;
  end
  `IBCYCLE_COMB begin : mkenq
    logic [NK-1:0] mt, mh;
    for (int p = 0; p < NPorts; p++) begin
      for (int k = 0; k < NK; k++) begin
        mt[k] = mk_mark[k][2*p];
        mh[k] = mk_mark[k][2*p+1];
      end
      i_mark_tail[p] = |mt;
      i_mark_head[p] = |mh;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // The chain mark_enq replaces, kept as the reference: the events in order, each from its output VL's
  // register or the latest earlier event's state at that VL. Equal marks and states every cycle, and the
  // counter's state never above Marking_Rate (the states mark_enq's counter candidates are derived for;
  // reset puts 0, every step keeps it there while the configuration is held), checked a cycle late.
  logic a_mk_ok, a_mk_ok_q;
  logic        a_evon_q [2*NPorts];   // the events mark_enq decides this cycle (registered with mq_*_q)
  logic [31:0] a_evk_q [2*NPorts];
  always_ff @(posedge clk_i) begin
    `IB_SWITCH_REGS(a_evon_q, ev_on, 2*NPorts)
    `IB_SWITCH_REGS(a_evk_q, ev_k, 2*NPorts)
  end
  `IBCYCLE_COMB begin : a_mk
    logic [15:0] ev_in [2*NPorts];
    logic ev_ms [2*NPorts];
    logic [16:0] ev_out [2*NPorts];
    logic [15:0] mks [NK];
    for (int n = 0; n < 2*NPorts; n++) ev_out[n] = '0;
    for (int n = 0; n < 2*NPorts; n++) begin
      ev_in[n] = '0;
      for (int k = 0; k < NK; k++) if (a_evk_q[n] == k) ev_in[n] = mk_q[k];
      for (int m = 0; m < n; m++) if (a_evon_q[m] && a_evk_q[m] == a_evk_q[n]) ev_in[n] = ev_out[m][15:0];
      ev_ms[n] = 1'b0;
      for (int k = 0; k < NK; k++) if (a_evk_q[n] == k) ev_ms[n] = mq_ms_q[k];
      ev_out[n] = mk_step_in(ev_in[n], a_evk_q[n] / NVl, mq_len_q[13*n +: 13], ev_ms[n]);
    end
    a_mk_ok = 1'b1;
    for (int p = 0; p < NPorts; p++) begin
      a_mk_ok = a_mk_ok && i_mark_tail[p] == (a_evon_q[2*p] && ev_out[2*p][16])
                && i_mark_head[p] == (a_evon_q[2*p+1] && ev_out[2*p+1][16]);
    end
    for (int k = 0; k < NK; k++) begin
      mks[k] = mk_q[k];
      for (int n = 0; n < 2*NPorts; n++) if (a_evon_q[n] && a_evk_q[n] == k) mks[k] = ev_out[n][15:0];
      a_mk_ok = a_mk_ok && i_mk[k] == mks[k]
                && (mode_i[k / NVl] || mk_q[k] <= marking_rate_i[16*(k / NVl) +: 16]);
    end
  end
  always_ff @(posedge clk_i) a_mk_ok_q <= a_mk_ok || !rst_ni;
  initial a_mk_ok_q = 1'b1;
  always @(posedge clk_i) begin
    assert (a_mk_ok_q);
  end
  // A starting packet's marks are written: no mark of its slot is still waiting for this cycle's write.
  logic a_mkw_ok;
  `IBCYCLE_COMB begin : a_mkw
    a_mkw_ok = 1'b1;
    for (int p = 0; p < NPorts; p++) begin
      for (int q = 0; q < NPorts; q++) begin
        if (rst_ni && e_gnt[p] && 32'(e_gin[p]) == q
            && ((mq_hv_q[q] && mq_hs_q[q] == e_gslot[p]) || (mq_tv_q[q] && mq_ts_q[q] == e_gslot[p])))
          a_mkw_ok = 1'b0;
      end
    end
  end
  always @(posedge clk_i) begin
    assert (a_mkw_ok);
  end
`endif
`undef IB_SWITCH_MSTATE


  // Congestion detection (phase 3): every cong_detect samples registered state, the VoQ fills and the
  // credit at the cycle's start (fill_q; credit_tx's FCTBS and FCCL registers), so its outputs follow a
  // cycle's changes two cycles later (the Rust Switch reads them a cycle late: `Switch::cong_seen`). Fed the
  // fills after the cycle instead, the detector's input stage summed the outputs of the cycle's route,
  // enqueue and commit decisions in the same cycle.
  `IBCYCLE_COMB begin : detect
    logic [11:0] c;
    for (int k = 0; k < NK; k++) begin
      for (int q = 0; q < NPorts; q++) cd_fill[k][16*q +: 16] = fill_q[(q*NPorts + k / NVl)*NVl + k % NVl];
      c = ctx_fcclq[k] - ctx_fctbs[k];
      cd_avail[k] = (c <= 12'd2048) ? c : 12'd0;
    end
  end

  // The detectors' stall input (the stall window root rule): output VL k's XmitWait condition of this
  // cycle, as the Rust Switch sets it (`Switch::requests`' `stall`, then cleared by a commit): some input
  // has a packet queued for it, and the VoQ head the round robin would pick among all of them (read slots
  // aside) does not fit the credit. The Rust switch asks after a starting packet has taken its credit, so
  // for the VL of a packet starting now the credit is credit_tx's next state (FCTBS plus its blocks, the
  // FCCL of a flow-control packet for that VL latched); a commit this cycle clears it for its VL.
  // Registered (cd_stall_q), as the fills and credit the detectors sample are registered state.
  // The pick is a one-hot vector and every input's head is compared with the credit in parallel (its
  // blocks, then the gap FCCL - (FCTBS + blocks) as one Kogge-Stone sum of three rows), the pick selecting
  // one compare's bit: not the pick's index, a multiplexer of the head lengths, the blocks' add, the gap's
  // two adds and the compare in series (49 levels at 8 ports, the switch's longest path then). The form it
  // replaces is kept under IBCYCLE_ASSERTIONS and asserted equal every cycle.
`ifdef IBCYCLE_ASSERTIONS
  logic [NK-1:0] a_st_ok;
  logic [NK-1:0] a_st_ok_q;
  always_ff @(posedge clk_i) a_st_ok_q <= rst_ni ? a_st_ok : '1;
`endif
  `IB_SWITCH_KS_ADD(st_ks_add)
  `IB_SWITCH_RR_PICK(st_rr_pick)
  `IBCYCLE_COMB begin : stall
    logic [NPorts-1:0] ne, hi, poh, big;
    logic [6:0] hb;
    logic [11:0] fccl, fctbs;
    logic [34:0] ra, rb, rc;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [34:0] ry, rs;
    /* verilator lint_on UNUSEDSIGNAL */
`ifdef IBCYCLE_ASSERTIONS
    logic [PW-1:0] pick;
    logic [12:0] hlen;
    logic [6:0] blk;
    logic [11:0] dst_gap;
`endif
    for (int p = 0; p < NPorts; p++) begin
      for (int v = 0; v < NVl; v++) begin
        for (int q = 0; q < NPorts; q++) begin
          ne[q] = vn_q[(q*NPorts + p)*NVl + v] != '0;
          hi[q] = ne[q] && q >= 32'(rr_q[p*NVl + v]);
        end
        // The lowest of `hi` if any, else the lowest of `ne`: stage 1's pick over every input with a
        // packet, read slots aside.
        poh = st_rr_pick(hi, ne);
        if (e_gnt[p] && 32'(la_vl_q[p]) == v) begin
          fctbs = ctx_fctbs[p*NVl + v] + 12'(la_blk_q[p]);
          fccl = ctx_fcv[p*NVl + v] ? rg_fc_fccl_q[12*p +: 12] : ctx_fcclq[p*NVl + v];
        end else begin
          fctbs = ctx_fctbs[p*NVl + v];
          fccl = ctx_fcclq[p*NVl + v];
        end
        // Per input: (FCCL - (FCTBS + blocks)) mod 4096 > 2048, the gap FCCL + ~FCTBS + ~blocks + 2 (the
        // + 2 as the free low bit of the carries and the carry in), its low 12 bits.
        for (int q = 0; q < NPorts; q++) begin
          hb = 7'((hd_len[(q*NPorts + p)*NVl + v] + 13'd63) >> 6);
          ra = 35'(fccl);
          rb = ~(35'(fctbs));
          rc = ~(35'(hb));
          ry = (ra & rb) | (ra & rc) | (rb & rc);
          rs = st_ks_add(ra ^ rb ^ rc, {ry[33:0], 1'b1}, 1'b1);
          big[q] = rs[11] && rs[10:0] != '0;
        end
        cd_stall[p*NVl + v] = rst_ni && ne != '0 && v < 32'(`IB_SWITCH_NVL(p)) && (poh & big) != '0
          && !(e_cmt[p] && 32'(la_vl_q[p]) == v);
`ifdef IBCYCLE_ASSERTIONS
        pick = '0;
        if (hi != '0) begin
          for (int q = NPorts - 1; q >= 0; q--) if (hi[q]) pick = PW'(q);
        end else begin
          for (int q = NPorts - 1; q >= 0; q--) if (ne[q]) pick = PW'(q);
        end
        hlen = '0;
        for (int q = 0; q < NPorts; q++) begin
          if (32'(pick) == q) hlen = hd_len[(q*NPorts + p)*NVl + v];
        end
        blk = 7'((hlen + 13'd63) >> 6);
        dst_gap = fccl - (fctbs + 12'(blk));
        a_st_ok[p*NVl + v] = cd_stall[p*NVl + v] == (rst_ni && ne != '0 && v < 32'(`IB_SWITCH_NVL(p))
          && dst_gap > 12'd2048 && !(e_cmt[p] && 32'(la_vl_q[p]) == v));
`endif
      end
    end
  end : stall
  for (genvar k = 0; k < NK; k++) begin : g_cd_stall
    always_ff @(posedge clk_i) cd_stall_q[k] <= rst_ni && cd_stall[k];
  end

  // ---------------------------------------------------------------- descriptor pools
  // One memory per field and input, each written at most once a cycle (a head's descriptor; its mark at
  // enqueue, a cycle later; the tail mark of a deferred packet, a cycle after its tail's enqueue; one VoQ
  // link), read asynchronously at the ports declared with the state. A packet's FECN is the head's bit (as
  // it arrived, or marked at its enqueue: `mh_m`, 0 for a head not enqueued at once), or, for a deferred
  // (store-and-forward) packet, the head's bit or the tail's mark (`mt_m`); both are written before any
  // grant can name the slot (see the marks at enqueue above). The free stack of an
  // input is NB banks, address a in bank a mod NB: the cycle's pushes (one per output granting the input)
  // go to consecutive addresses, so to different banks.
  for (genvar q = 0; q < NPorts; q++) begin : g_pool
    logic [12:0]   len_m [SlotMax];
    logic [31:0]   tag_m [SlotMax];
    logic [3:0]    ivl_m [SlotMax];
    logic [1:0]    fh_m [SlotMax];
    logic          mh_m [SlotMax];
    logic          mt_m [SlotMax];
    logic [SW-1:0] next_m [SlotMax];
    always_ff @(posedge clk_i) begin
      if (i_head[q] && !i_head_drop[q]) begin
        len_m[i_slot[q]] <= rg_len_q[13*q +: 13];
        tag_m[i_slot[q]] <= rg_tag_q[32*q +: 32];
        ivl_m[i_slot[q]] <= rg_vl_q[4*q +: 4];
        fh_m[i_slot[q]] <= {!i_head_enq[q], rg_fecn_q[q]};
      end
    end
    always_ff @(posedge clk_i) begin
      if (mq_hv_q[q]) mh_m[mq_hs_q[q]] <= i_mark_head[q];
    end
    always_ff @(posedge clk_i) begin
      if (mq_tv_q[q]) mt_m[mq_ts_q[q]] <= i_mark_tail[q];
    end
    always_ff @(posedge clk_i) begin
      if (nw_we[q]) next_m[nw_a[q]] <= nw_d[q];
    end
    assign tl_len[13*q +: 13] = len_m[ar_slot_q[q]];
    for (genvar o = 0; o < NPorts; o++) begin : g_out
      for (genvar v = 0; v < NVl; v++) begin : g_vl
        assign hd_len[(q*NPorts + o)*NVl + v] = len_m[vh_q[(q*NPorts + o)*NVl + v]];
      end
      assign gr_tag[q*NPorts + o] = tag_m[e_gslot[o]];
      assign gr_ivl[q*NPorts + o] = ivl_m[e_gslot[o]];
      assign gr_fh[q*NPorts + o] = fh_m[e_gslot[o]] | {1'b0, mh_m[e_gslot[o]]};
      assign gr_mt[q*NPorts + o] = mt_m[e_gslot[o]];
      assign gr_next[q*NPorts + o] = next_m[e_cslot[o]];
    end
    // The free stack's top (address ftop - 1): every bank read at its word, the bank chosen by the low bits.
    logic [SW:0] top_a;
    assign top_a = ftop_q[q] - 1'b1;
    for (genvar b = 0; b < NB; b++) begin : g_bank
      logic [SW-1:0] fb_m [FD];
      always_ff @(posedge clk_i) begin
        if (fw_we[q*NB + b]) fb_m[fw_a[q*NB + b]] <= fw_d[q*NB + b];
      end
      assign fk_rd[q*NB + b] = fb_m[FW'(top_a >> LB)];
    end
    // The bank is the address modulo NB, taken from the address zero-extended: with fewer slots than banks
    // (SlotMax < NB) the address is narrower than LB bits.
    assign fk_top[q] = fk_rd[q*NB + (32'(top_a) & (NB - 1))];
  end

  // The cycle's pushes: output p's grant from input q returns its slot; the k-th push of input q (in port
  // order) goes to address ftop + k, ftop after this cycle's pop (k a prefix count, pfx_cnt).
  logic [NPorts-1:0] fp_push [NPorts];
  logic [NPorts*8-1:0] fp_cnt [NPorts];
  `IBCYCLE_COMB begin : fpush_req
    for (int q = 0; q < NPorts; q++) begin
      for (int p = 0; p < NPorts; p++) begin
        fp_push[q][p] = e_gnt[p] && 32'(e_gin[p]) == q;
        if (FltDupPacket && la_blk_q[p] != 7'd1) fp_push[q][p] = 1'b0;
      end
    end
  end : fpush_req
  for (genvar q = 0; q < NPorts; q++) begin : g_fpush
    logic [NPorts-1:0] c_fp_push;
    logic [NPorts*8-1:0] c_fp_cnt;
    pfx_cnt #(.N(NPorts), .W(8)) u_cnt (.bits_i(c_fp_push), .cnt_o(c_fp_cnt));
    assign c_fp_push = fp_push[q];
    assign fp_cnt[q] = c_fp_cnt;
  end
  `IBCYCLE_COMB begin : fpush
    logic [SW:0] pa [NPorts][NPorts];
    // With fewer than 128 slots (SW < 7) the count's upper bits go unread: they are zero, an input returning
    // no more slots in a cycle than it holds.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [7:0] nbef;
    /* verilator lint_on UNUSEDSIGNAL */
    for (int q = 0; q < NPorts; q++) begin
      for (int p = 0; p < NPorts; p++) begin
        nbef = fp_cnt[q][8*p +: 8] - 8'(fp_push[q][p]);
        pa[q][p] = ftop_q[q] - (SW+1)'(i_head[q] && !i_head_drop[q] && !i_fresh[q]) + (SW+1)'(nbef);
      end
      for (int b = 0; b < NB; b++) begin
        fw_we[q*NB + b] = 1'b0;
        fw_a[q*NB + b] = '0;
        fw_d[q*NB + b] = '0;
        for (int p = 0; p < NPorts; p++) begin
          if (fp_push[q][p] && (32'(pa[q][p]) & (NB - 1)) == b) begin
            fw_we[q*NB + b] = 1'b1;
            fw_a[q*NB + b] = FW'(pa[q][p] >> LB);
            fw_d[q*NB + b] = e_gslot[p];
          end
        end
      end
    end
  end : fpush

  // The cycle's VoQ links per input, in the Switch's order: the deferred tail's (its VoQ not empty after this
  // cycle's dequeue), then the head's (not empty after those). The memory takes the oldest of the pending
  // link and these; the next waits a cycle. An input's links are one per packet, made at its head or (a
  // deferred packet) at its tail, and no head is accepted while a deferred packet arrives: a link of the
  // cycle and a pending one never come with a third (asserted).
  //
  // The commits are the late decisions here (stage 3's accept), so they come last: whether output o's
  // commit dequeues the tail's or the head's VoQ is a compare of registers (la_in_q, la_vl_q and the
  // arrival's or the head's route), ANDed with the input's accepts (e_accq) and ORed over the outputs; each
  // VoQ's "not empty after the dequeue" is its count compared with 1 and with 0, the dequeue selecting. The
  // head's VoQ is its route's (pc_out_q, pc_ovl_q: i_out and i_ovl wherever a head is enqueued).
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_nl_ok;   // the links' decisions equal the form they replace (asserted)
`endif
  `IBCYCLE_COMB begin : nlink
    logic [31:0] jt [NPorts];
    logic [31:0] jh [NPorts];
    logic [NPorts-1:0] mt [NPorts];
    logic [NPorts-1:0] mh [NPorts];
    logic dt [NPorts];
    logic dh [NPorts];
    logic tw [NPorts];
    logic hw [NPorts];
    logic [SW-1:0] ha [NPorts];
`ifdef IBCYCLE_ASSERTIONS
    logic [31:0] a_jh;
    logic a_dt, a_dh;
`endif
    for (int q = 0; q < NPorts; q++) begin
      jt[q] = (q*NPorts + 32'(ar_out_q[q]))*NVl + 32'(ar_ovl_q[q]);
      jh[q] = (q*NPorts + 32'(PW'(pc_out_q[q])))*NVl + 32'(pc_ovl_q[q]);
      for (int o = 0; o < NPorts; o++) begin
        mt[q][o] = 1'b0;
        mh[q][o] = 1'b0;
        for (int v = 0; v < NVl; v++) begin
          if (32'(la_in_q[o]) == q && 32'(la_vl_q[o]) == v && (!FltDupPacket || e_cblk[o] == 7'd1)) begin
            if ((q*NPorts + o)*NVl + v == jt[q]) mt[q][o] = 1'b1;
            if ((q*NPorts + o)*NVl + v == jh[q]) mh[q][o] = 1'b1;
          end
        end
      end
      dt[q] = (e_accq[q] & mt[q]) != '0;
      dh[q] = (e_accq[q] & mh[q]) != '0;
      tw[q] = i_tail_enq[q] && (dt[q] ? vn_q[jt[q]] != (SW+1)'(1) : vn_q[jt[q]] != '0);
      hw[q] = i_head_enq[q] && ((dh[q] ? vn_q[jh[q]] != (SW+1)'(1) : vn_q[jh[q]] != '0)
                                || (i_tail_enq[q] && jt[q] == jh[q]));
      ha[q] = (i_tail_enq[q] && jt[q] == jh[q]) ? ar_slot_q[q] : vt_q[jh[q]];
      nw_we[q] = nl_v_q[q] || tw[q] || hw[q];
      nw_a[q] = nl_v_q[q] ? nl_a_q[q] : tw[q] ? vt_q[jt[q]] : ha[q];
      nw_d[q] = nl_v_q[q] ? nl_d_q[q] : tw[q] ? ar_slot_q[q] : i_slot[q];
      nl_v_d[q] = (nl_v_q[q] && (tw[q] || hw[q])) || (tw[q] && hw[q]);
      nl_a_d[q] = (nl_v_q[q] && tw[q]) ? vt_q[jt[q]] : ha[q];
      nl_d_d[q] = (nl_v_q[q] && tw[q]) ? ar_slot_q[q] : i_slot[q];
      nl_over[q] = nl_v_q[q] && tw[q] && hw[q];
`ifdef IBCYCLE_ASSERTIONS
      // The decisions as computed before: the dequeue matched against the VoQ index of the granted input
      // and VL, the head's index from i_out and i_ovl, the count compared with the dequeue's bit.
      a_jh = (q*NPorts + 32'(i_out[q]))*NVl + 32'(i_ovl[q]);
      a_dt = 1'b0;
      a_dh = 1'b0;
      for (int o = 0; o < NPorts; o++) begin
        for (int v = 0; v < NVl; v++) begin
          if (e_cmt[o] && 32'(e_gin[o]) == q && 32'(e_gvl[o]) == v && (!FltDupPacket || e_cblk[o] == 7'd1)) begin
            if ((q*NPorts + o)*NVl + v == jt[q]) a_dt = 1'b1;
            if ((q*NPorts + o)*NVl + v == a_jh) a_dh = 1'b1;
          end
        end
      end
      a_nl_ok[q] = tw[q] == (i_tail_enq[q] && vn_q[jt[q]] != (SW+1)'(a_dt))
        && hw[q] == (i_head_enq[q] && (vn_q[a_jh] != (SW+1)'(a_dh) || (i_tail_enq[q] && jt[q] == a_jh)))
        && (!hw[q] || ha[q] == ((i_tail_enq[q] && jt[q] == a_jh) ? ar_slot_q[q] : vt_q[a_jh]));
`endif
    end
  end
`ifdef IBCYCLE_ASSERTIONS
  logic [NPorts-1:0] a_nl_ok_q;
  always_ff @(posedge clk_i) a_nl_ok_q <= rst_ni ? a_nl_ok : '1;
`endif
  for (genvar q = 0; q < NPorts; q++) begin : g_nl
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        nl_v_q[q] <= 1'b0;
        nl_a_q[q] <= '0;
        nl_d_q[q] <= '0;
      end else begin
        nl_v_q[q] <= nl_v_d[q];
        nl_a_q[q] <= nl_a_d[q];
        nl_d_q[q] <= nl_d_d[q];
      end
    end
  end

  // The look-ahead allocator's registers: each output's stage, what it carries to the next, and each input's
  // accept pointer; a committed packet's read slot handed over by the packet on the wire (if_keep_q).
  for (genvar p = 0; p < NPorts; p++) begin : g_la
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        la_st_q[p] <= LaIdle;
        la_req_q[p] <= '0;
        la_ok_q[p] <= '0;
        la_len_q[p] <= '0;
        la_pick_q[p] <= '0;
        la_vl_q[p] <= '0;
        la_in_q[p] <= '0;
        la_slot_q[p] <= '0;
        la_glen_q[p] <= '0;
        la_gser_q[p] <= '0;
        la_blk_q[p] <= '0;
        acc_ptr_q[p] <= '0;
        if_keep_q[p] <= 1'b0;
      end else begin
        acc_ptr_q[p] <= e_accptr[p];
        if (e_gnt[p]) if_keep_q[p] <= 1'b0;
        else if (e_xfer[p]) if_keep_q[p] <= 1'b1;
        case (la_st_q[p])
          LaIdle: if (e_rq[p]) begin
            la_st_q[p] <= LaRq;
            la_req_q[p] <= e_req[p];
            la_ok_q[p] <= e_ok[p];
            la_len_q[p] <= e_len[p];
            la_pick_q[p] <= e_pick[p];
          end
          LaRq: begin
            la_st_q[p] <= e_pr[p] ? LaPr : LaIdle;
            la_vl_q[p] <= e_pvl[p];
            la_in_q[p] <= e_pin[p];
          end
          LaPr: begin
            la_st_q[p] <= e_cmt[p] ? LaNx : LaIdle;
            la_slot_q[p] <= e_cslot[p];
            la_glen_q[p] <= e_cglen[p];
            la_gser_q[p] <= e_cgser[p];
            la_blk_q[p] <= e_cblk[p];
          end
          default: if (e_gnt[p]) la_st_q[p] <= LaIdle;
        endcase
      end
    end
  end

  // ---------------------------------------------------------------- state update
`ifdef IBCYCLE_ASSERTIONS
  logic vq_ok_q;   // the per-VoQ updates equal the chain over the ports they replace (asserted)
  initial vq_ok_q = 1'b1;
  always @(posedge clk_i) assert (vq_ok_q);
`endif
  // Procedural: one output's dequeue and up to two enqueues per input (a store-and-forward tail, then a
  // head) may touch one VoQ in a cycle, applied in the Switch's order (egress, then ingress in port order)
  // on local copies of the queue state, which are registered at the end (non-blocking, as every register
  // here: the combinational logic that reads them never sees a half-updated cycle); the descriptor pools
  // are written by their own ports (g_pool), from the same decisions.
  `IB_SWITCH_CS_ADD(up_cs_add)
  `IB_SWITCH_KS_ADD(up_ks_add)
  always_ff @(posedge clk_i) begin : update
    logic [SW:0] ftop_n [NPorts];
    logic [SW:0] fresh_n [NPorts];
    logic [6:0] reads_n [NPorts];
    logic [6:0] rd_free_n [NPorts];
    logic [31:0] ser_n [NPorts];
    logic ser_le_n [NPorts];
    logic ser_lt_n [NPorts];
    logic ser_z_n [NPorts];
    logic if_v_n [NPorts];
    logic [PW-1:0] if_in_n [NPorts];
    logic [3:0] if_vl_n [NPorts];
    logic [6:0] if_blk_n [NPorts];
    logic [NVl-1:0] fcp_n [NPorts];
    logic ar_v_n [NPorts];
    logic [31:0] ar_e_n [NPorts];
    logic [31:0] ar_thr_n [NPorts];
    logic [31:0] ar_thn_n [NPorts];
    logic [31:0] ar_end_n [NPorts];
    logic [6:0] ar_left_n [NPorts];
    logic [6:0] ar_blk_n [NPorts];
    logic [3:0] ar_vl_n [NPorts];
    logic ar_def_n [NPorts];
    logic ar_drop_n [NPorts];
    logic [SW-1:0] ar_slot_n [NPorts];
    logic [PW-1:0] ar_out_n [NPorts];
    logic [3:0] ar_ovl_n [NPorts];
    logic [PW-1:0] rr_n [NK];
    logic [11:0] fcfccl_n [NK];
    logic [15:0] fpend_n [NK];
    logic [15:0] fr_n [NK];
    logic [69:0] frt [2*NPorts];
    logic [6:0] relc_n [NPorts];
    logic ar_ge_thr_n [NPorts];
    logic ar_ge_thn_n [NPorts];
    logic [69:0] rlt [2*NPorts];
    logic [34:0] frl [2*NPL];
    logic [34:0] rll [2*NPL];
    /* verilator lint_off UNUSEDSIGNAL */
    logic [34:0] frs;
    logic [34:0] rls;
    /* verilator lint_on UNUSEDSIGNAL */
`ifdef IBCYCLE_ASSERTIONS
    logic [15:0] a_frs;
    logic [6:0] a_rls;
    logic a_sum_ok;
    logic a_sle_ok [NPorts];
`endif
    logic keep_n [NPorts];
    logic [15:0] mk_n [NK];
    logic [SW-1:0] vh_n [NPorts*NPorts*NVl];
    logic [SW-1:0] vt_n [NPorts*NPorts*NVl];
    logic [SW:0] vn_n [NPorts*NPorts*NVl];
    logic [15:0] fill_n [NPorts*NPorts*NVl];
    logic vq_deq, vq_tenq, vq_henq, vq_e0;
`ifdef IBCYCLE_ASSERTIONS
    // The VoQ updates as a chain over the ports in the Switch's order (writes at computed indices), kept to
    // check the per-VoQ updates that replace it.
    logic [SW-1:0] vh_c [NPorts*NPorts*NVl];
    logic [SW-1:0] vt_c [NPorts*NPorts*NVl];
    logic [SW:0] vn_c [NPorts*NPorts*NVl];
    logic [SW:0] ftop_c [NPorts];
    logic vq_ok;
`endif
    /* verilator lint_off UNUSEDSIGNAL */
    int j;
    logic [16:0] mk;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [SW-1:0] slot;
    logic [31:0] r;
    logic [34:0] le_a, le_b, le_c;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [34:0] le_y, le_s, le_z, le_f;
    logic [69:0] le_fc;
    /* verilator lint_on UNUSEDSIGNAL */
`ifdef IBCYCLE_ASSERTIONS
    a_sum_ok = 1'b1;
`endif
    for (int q = 0; q < NPorts; q++) begin
      ftop_n[q] = ftop_q[q];
`ifdef IBCYCLE_ASSERTIONS
      ftop_c[q] = ftop_q[q];
      a_sle_ok[q] = 1'b1;
`endif
      fresh_n[q] = fresh_q[q];
      reads_n[q] = reads_q[q];
      rd_free_n[q] = rd_free_q[q];
      ser_n[q] = ser_q[q];
      ser_le_n[q] = ser_le_q[q];
      ser_lt_n[q] = ser_lt_q[q];
      ser_z_n[q] = ser_z_q[q];
      if_v_n[q] = if_v_q[q];
      if_in_n[q] = if_in_q[q];
      if_vl_n[q] = if_vl_q[q];
      if_blk_n[q] = if_blk_q[q];
      fcp_n[q] = fcp_q[q];
      ar_v_n[q] = ar_v_q[q];
      ar_e_n[q] = ar_e_q[q];
      ar_thr_n[q] = ar_thr_q[q];
      ar_thn_n[q] = ar_thn_q[q];
      ar_end_n[q] = ar_end_q[q];
      ar_left_n[q] = ar_left_q[q];
      ar_blk_n[q] = ar_blk_q[q];
      ar_vl_n[q] = ar_vl_q[q];
      ar_def_n[q] = ar_def_q[q];
      ar_drop_n[q] = ar_drop_q[q];
      ar_slot_n[q] = ar_slot_q[q];
      ar_out_n[q] = ar_out_q[q];
      ar_ovl_n[q] = ar_ovl_q[q];
    end
    for (int q = 0; q < NK; q++) begin
      rr_n[q] = rr_q[q];
      fcfccl_n[q] = fcfccl_q[q];
      fpend_n[q] = fpend_q[q];
      mk_n[q] = mk_q[q];
    end
    for (int q = 0; q < NPorts*NPorts*NVl; q++) begin
      vh_n[q] = vh_q[q];
      vt_n[q] = vt_q[q];
      vn_n[q] = vn_q[q];
`ifdef IBCYCLE_ASSERTIONS
      vh_c[q] = vh_q[q];
      vt_c[q] = vt_q[q];
      vn_c[q] = vn_q[q];
`endif
      fill_n[q] = fill_q[q];
    end
    if (!rst_ni) begin
      for (int p = 0; p < NPorts; p++) begin
        ftop_n[p] = '0;
        fresh_n[p] = '0;
        reads_n[p] = '0;
        rd_free_n[p] = speedup_i[7*p +: 7];
        ser_n[p] = '0;
        ser_le_n[p] = 1'b1;
        ser_lt_n[p] = `IB_SWITCH_NUM(p) != '0;
        ser_z_n[p] = 1'b1;
        if_v_n[p] = 1'b0;
        if_in_n[p] = '0;
        if_vl_n[p] = '0;
        if_blk_n[p] = '0;
        fcp_n[p] = '0;
        ar_v_n[p] = 1'b0;
        ar_e_n[p] = '0;
        ar_thr_n[p] = '0;
        ar_thn_n[p] = '0;
        ar_end_n[p] = '0;
        ar_left_n[p] = '0;
        ar_blk_n[p] = '0;
        ar_vl_n[p] = '0;
        ar_def_n[p] = 1'b0;
        ar_drop_n[p] = 1'b0;
        ar_slot_n[p] = '0;
        ar_out_n[p] = '0;
        ar_ovl_n[p] = '0;
      end
      for (int k = 0; k < NK; k++) begin
        rr_n[k] = '0;
        fcfccl_n[k] = '0;
        fpend_n[k] = '0;
        mk_n[k] = mode_i[k / NVl] ? mk_seed(k / NVl) : 16'd0;
      end
      for (int q = 0; q < NPorts*NPorts*NVl; q++) begin
        vh_n[q] = '0;
        vt_n[q] = '0;
        vn_n[q] = '0;
        fill_n[q] = '0;
      end
    end else begin
      // Slots taken by this cycle's heads first: a slot popped from the free stack is the one on top at
      // the cycle's start, before this cycle's grants push theirs. The pushes are counted by the free
      // stack's prefix count (fp_cnt, its last entry: the pushes to input q's stack), not added one by one
      // at computed indices (a chain over the outputs; kept under IBCYCLE_ASSERTIONS, asserted equal).
      for (int p = 0; p < NPorts; p++) begin
        if (i_head[p] && !i_head_drop[p]) begin
          if (i_fresh[p]) fresh_n[p] = fresh_n[p] + 1'b1;
          else ftop_n[p] = ftop_n[p] - 1'b1;
        end
        ftop_n[p] = ftop_n[p] + (SW+1)'(fp_cnt[p][8*(NPorts-1) +: 8]);
        rd_free_n[p] = e_rdfree[p];
      end
`ifdef IBCYCLE_ASSERTIONS
      for (int p = 0; p < NPorts; p++) begin
        if (i_head[p] && !i_head_drop[p] && !i_fresh[p]) ftop_c[p] = ftop_c[p] - 1'b1;
      end
`endif
      // Egress: completions (a read handed over stays), commits (dequeue, round robin, read slot claimed),
      // starts (slot freed, packet in flight, FECN at dequeue), serialisers, FC.
      for (int p = 0; p < NPorts; p++) begin
        if (e_done[p]) begin
          if (!if_keep_q[p]) reads_n[if_in_n[p]] = reads_n[if_in_n[p]] - 7'd1;
          if_v_n[p] = 1'b0;
        end
      end
      for (int p = 0; p < NPorts; p++) begin
        if (e_fc[p]) fcp_n[p][32'(e_fcvl[p])] = 1'b0;
        if (e_cmt[p]) begin
          j = (32'(e_gin[p])*NPorts + p)*NVl + 32'(e_gvl[p]);
`ifdef IBCYCLE_ASSERTIONS
          if (!FltDupPacket || e_cblk[p] == 7'd1) begin
            vn_c[j] = vn_c[j] - 1'b1;
            for (int q = 0; q < NPorts; q++) begin
              if (32'(e_gin[p]) == q) begin
                vh_c[j] = (nl_v_q[q] && nl_a_q[q] == e_cslot[p]) ? nl_d_q[q] : gr_next[q*NPorts + p];
              end
            end
          end
`endif
          // Written per VL at constant indices (a committed packet's VL is one of its output's, asserted):
          // at a computed index every output's write was a multiplexer in every pointer's chain, a path
          // that grew with the ports (50 levels at 8).
          if (!FltRrStuck) begin
            for (int v = 0; v < NVl; v++) begin
              if (32'(e_gvl[p]) == v) begin
                rr_n[p*NVl + v] = (32'(e_gin[p]) + 1 >= 32'(nports_i)) ? '0 : e_gin[p] + 1'b1;
              end
            end
          end
          if (!e_xfer[p]) reads_n[e_gin[p]] = reads_n[e_gin[p]] + 7'd1;
        end
        if (e_gnt[p]) begin
`ifdef IBCYCLE_ASSERTIONS
          if (!FltDupPacket || la_blk_q[p] == 7'd1) ftop_c[e_gin[p]] = ftop_c[e_gin[p]] + 1'b1;
`endif
          // Released when its last byte leaves; one whose last byte leaves in its start cycle, in the next
          // (completions are decided before this cycle's starts, as in the Switch).
          if_v_n[p] = 1'b1;
          if_in_n[p] = e_gin[p];
          for (int q = 0; q < NPorts; q++) if (32'(e_gin[p]) == q) if_vl_n[p] = gr_ivl[q*NPorts + p];
          if_blk_n[p] = la_blk_q[p];
          if (!mark_enq_i[p]) begin
            // Stepped as if the marking state were set, kept only if it is (the detector's decision selects
            // last, as in egress). Written per VL at constant indices (a started packet's VL is one of its
            // output's, asserted), so no output's step reads what another's wrote in the cycle.
            for (int v = 0; v < NVl; v++) begin
              if (32'(e_gvl[p]) == v) begin
                mk = mk_step(mk_q[p*NVl + v], p, e_glen[p], 1'b1);
                if (FltFecnInvert ^ cd_mark[p*NVl + v]) mk_n[p*NVl + v] = mk[15:0];
              end
            end
          end
        end
        r = e_ser[p];
        ser_n[p] = (r > 32'(`IB_SWITCH_NUM(p))) ? r - 32'(`IB_SWITCH_NUM(p)) : 32'd0;
        // ser_n's compares from r, beside the subtraction (num n): ser_n <= n iff r <= 2n (r <= n gives 0);
        // ser_n < n iff r < 2n (for n = 0 both sides are false); ser_n == 0 iff r <= n.
        // r <= 2n is compared for each case of r in parallel and the case selected after (the release sum
        // fr_n follows it in this cycle), each compare the sign of a difference from one Kogge-Stone add
        // (up_ks_add): a start's ser_q + den glen <= 2n (den glen: la_gser_q) is the sign of 2n - ser_q - den
        // glen, that is of (2n + 1) + ~ser_q + ~(den glen) + 1, the three rows reduced to two by one row of
        // full adders and the + 1 put in the free low bit of the carries; neither's ser_q <= 2n the sign of
        // 2n + ~ser_q + 1; a flow-control packet's 6 den <= 2n that of 2n + ~(4 den) + ~(2 den) + 2, four
        // rows by one 4:2 compressor (up_cs_add), the + 2 as the carry in and the free low bit of the carries.
        le_a = {17'd0, `IB_SWITCH_NUM(p), 1'b1};
        le_b = ~(35'(ser_q[p]));
        le_c = ~(35'(la_gser_q[p]));
        le_y = (le_a & le_b) | (le_a & le_c) | (le_b & le_c);
        le_s = up_ks_add(le_a ^ le_b ^ le_c, {le_y[33:0], 1'b1}, 1'b0);
        le_z = up_ks_add({17'd0, `IB_SWITCH_NUM(p), 1'b0}, ~(35'(ser_q[p])), 1'b1);
        le_fc = up_cs_add({~(35'(`IB_SWITCH_DEN(p)) << 2), {17'd0, `IB_SWITCH_NUM(p), 1'b0}},
                          {35'd0, ~(35'(`IB_SWITCH_DEN(p)) << 1)});
        le_f = up_ks_add(le_fc[34:0], le_fc[69:35] | 35'd1, 1'b1);
        if (e_fc[p]) ser_le_n[p] = !le_f[34];
        else if (e_gnt[p]) ser_le_n[p] = !le_s[34];
        else ser_le_n[p] = !le_z[34];
`ifdef IBCYCLE_ASSERTIONS
        // The three compares as they were written before (asserted equal, with the sums below, in vq_ok).
        a_sle_ok[p] = !le_f[34] == (35'(`IB_SWITCH_DEN(p)) * 35'd6 <= 35'({`IB_SWITCH_NUM(p), 1'b0}))
          && !le_s[34] == (33'(ser_q[p]) + 33'(la_gser_q[p]) <= 33'({`IB_SWITCH_NUM(p), 1'b0}))
          && !le_z[34] == (33'(ser_q[p]) <= 33'({`IB_SWITCH_NUM(p), 1'b0}));
`endif
        ser_lt_n[p] = 33'(r) < 33'({`IB_SWITCH_NUM(p), 1'b0});
        ser_z_n[p] = r <= 32'(`IB_SWITCH_NUM(p));
      end
      // Ingress in port order: tail enqueue, head (slot, arrival, enqueue), FC packets wanted by credit_rx.
      for (int p = 0; p < NPorts; p++) begin
        if (ar_v_n[p]) begin
          ar_e_n[p] = i_e[p];
          ar_thr_n[p] = i_thr[p];
          ar_thn_n[p] = i_thn[p];
          ar_left_n[p] = i_left[p];
          if (i_left[p] == '0) ar_v_n[p] = 1'b0;
`ifdef IBCYCLE_ASSERTIONS
          if (i_tail_enq[p]) begin
            j = (p*NPorts + 32'(ar_out_n[p]))*NVl + 32'(ar_ovl_n[p]);
            if (vn_c[j] == '0) vh_c[j] = ar_slot_n[p];
            vt_c[j] = ar_slot_n[p];
            vn_c[j] = vn_c[j] + 1'b1;
          end
`endif
        end
        if (i_head[p]) begin
          if (!i_head_drop[p]) begin
            slot = i_slot[p];
`ifdef IBCYCLE_ASSERTIONS
            if (i_head_enq[p]) begin
              j = (p*NPorts + 32'(i_out[p]))*NVl + 32'(i_ovl[p]);
              if (vn_c[j] == '0) vh_c[j] = slot;
              vt_c[j] = slot;
              vn_c[j] = vn_c[j] + 1'b1;
            end
`endif
          end
          ar_v_n[p] = !i_head_done[p];
          ar_e_n[p] = i_e[p];
          ar_thr_n[p] = i_thr[p];
          ar_thn_n[p] = i_thn[p];
          ar_end_n[p] = i_end[p];
          ar_left_n[p] = i_left[p];
          ar_blk_n[p] = i_blocks[p];
          ar_vl_n[p] = rg_vl_q[4*p +: 4];
          ar_drop_n[p] = i_head_drop[p];
          ar_def_n[p] = !i_head_drop[p] && !i_head_enq[p];
          ar_slot_n[p] = i_slot[p];
          ar_out_n[p] = i_out[p];
          ar_ovl_n[p] = i_ovl[p];
        end
        for (int v = 0; v < NVl; v++) begin
          if (crx_send[p*NVl + v] && v < 32'(`IB_SWITCH_NVL(p))) begin
            fcp_n[p][v] = 1'b1;
            fcfccl_n[p*NVl + v] = crx_fccl[p*NVl + v];
          end
        end
      end
      for (int k = 0; k < NK; k++) begin
        fpend_n[k] = i_fpend[k];
        if (mark_enq_i[k / NVl]) mk_n[k] = i_mk[k];
      end
      // The VoQs, each from its own writers in parallel (constant indices): its output's dequeue, then its
      // input's tail enqueue and head enqueue, the Switch's order. The queue is empty before the enqueues
      // when its count at the cycle's start is 0 without the dequeue or 1 with it, so the head written
      // waits for no count of the cycle (a chain over the ports' writes at computed indices before).
      for (int k = 0; k < NPorts*NPorts*NVl; k++) begin
        vq_deq = e_accq[k / (NPorts*NVl)][k / NVl % NPorts] && 32'(e_gvl[k / NVl % NPorts]) == k % NVl;
        vq_deq = vq_deq && (!FltDupPacket || e_cblk[k / NVl % NPorts] == 7'd1);
        vq_tenq = ar_v_q[k / (NPorts*NVl)] && i_tail_enq[k / (NPorts*NVl)]
                  && 32'(ar_out_q[k / (NPorts*NVl)]) == k / NVl % NPorts && 32'(ar_ovl_q[k / (NPorts*NVl)]) == k % NVl;
        vq_henq = i_head[k / (NPorts*NVl)] && !i_head_drop[k / (NPorts*NVl)] && i_head_enq[k / (NPorts*NVl)]
                  && 32'(i_out[k / (NPorts*NVl)]) == k / NVl % NPorts && 32'(i_ovl[k / (NPorts*NVl)]) == k % NVl;
        vq_e0 = vq_deq ? vn_q[k] == {{SW{1'b0}}, 1'b1} : vn_q[k] == '0;
        if (vq_deq) begin
          vh_n[k] = (nl_v_q[k / (NPorts*NVl)] && nl_a_q[k / (NPorts*NVl)] == e_cslot[k / NVl % NPorts])
                    ? nl_d_q[k / (NPorts*NVl)] : gr_next[k / NVl];
        end
        if (vq_tenq && vq_e0) vh_n[k] = ar_slot_q[k / (NPorts*NVl)];
        if (vq_henq && vq_e0 && !vq_tenq) vh_n[k] = i_slot[k / (NPorts*NVl)];
        if (vq_tenq) vt_n[k] = ar_slot_q[k / (NPorts*NVl)];
        if (vq_henq) vt_n[k] = i_slot[k / (NPorts*NVl)];
        vn_n[k] = vn_q[k] - {{SW{1'b0}}, vq_deq} + {{SW{1'b0}}, vq_tenq} + {{SW{1'b0}}, vq_henq};
      end
      for (int q = 0; q < NPorts*NPorts*NVl; q++) fill_n[q] = i_fill[(q / NVl) % NPorts * NVl + q % NVl][16*(q / (NPorts*NVl)) +: 16];
    end
    // The blocks released in the next cycle at each input VL (fr_q, above): the packets in flight after
    // this cycle whose end flag is set, summed over the outputs as carry-save pairs (the outputs 2i and 2i + 1
    // the rows of leaf i), reduced by a tree of 4:2 compressors (node i from 2i and 2i + 1, the leaves
    // NPL..2 NPL - 1) and one Kogge-Stone add: no adder waits for another (a tree of adds before). After a
    // reset cycle no packet is in flight.
    for (int k = 0; k < NK; k++) begin
      frt[0] = '0;
      for (int p = 0; p < 2*NPL; p++) begin
        frl[p] = '0;
        if (p < NPorts && if_v_n[p % NPorts] && ser_le_n[p % NPorts]
            && 32'(if_in_n[p % NPorts])*NVl + 32'(if_vl_n[p % NPorts]) == k) begin
          frl[p] = 35'(if_blk_n[p % NPorts]) - 35'(FltCreditLeak && if_blk_n[p % NPorts] > 7'd1);
        end
      end
      for (int i = 0; i < NPL; i++) frt[NPL + i] = {frl[2*i + 1], frl[2*i]};
      for (int i = NPL - 1; i >= 1; i--) frt[i] = up_cs_add(frt[2*i], frt[2*i + 1]);
      frs = up_ks_add(frt[1][34:0], frt[1][69:35], 1'b0);
      fr_n[k] = frs[15:0];
`ifdef IBCYCLE_ASSERTIONS
      // The sum as the tree of adds computed it.
      a_frs = '0;
      for (int p = 0; p < NPorts; p++) a_frs = a_frs + frl[p][15:0];
      a_sum_ok = a_sum_ok && a_frs == fr_n[k];
`endif
    end
    // The read slots released in the next cycle per input (relc_q, above), counted by the same tree; a packet
    // in flight keeps its read slot for the decided one as if_keep_q's update decides it (the look-ahead
    // allocator's registers).
    for (int p = 0; p < NPorts; p++) begin
      keep_n[p] = if_keep_q[p];
      if (!rst_ni || e_gnt[p]) keep_n[p] = 1'b0;
      else if (e_xfer[p]) keep_n[p] = 1'b1;
    end
    for (int q = 0; q < NPorts; q++) begin
      rlt[0] = '0;
      for (int p = 0; p < 2*NPL; p++) begin
        rll[p] = 35'(p < NPorts && if_v_n[p % NPorts] && ser_le_n[p % NPorts] && !keep_n[p % NPorts]
                     && 32'(if_in_n[p % NPorts]) == q);
      end
      for (int i = 0; i < NPL; i++) rlt[NPL + i] = {rll[2*i + 1], rll[2*i]};
      for (int i = NPL - 1; i >= 1; i--) rlt[i] = up_cs_add(rlt[2*i], rlt[2*i + 1]);
      rls = up_ks_add(rlt[1][34:0], rlt[1][69:35], 1'b0);
      relc_n[q] = rls[6:0];
`ifdef IBCYCLE_ASSERTIONS
      a_rls = '0;
      for (int p = 0; p < NPorts; p++) a_rls = a_rls + 7'(rll[p][0]);
      a_sum_ok = a_sum_ok && a_rls == relc_n[q];
`endif
    end
    for (int q = 0; q < NPorts; q++) begin
      ar_ge_thr_n[q] = ar_e_n[q] >= ar_thr_n[q];
      ar_ge_thn_n[q] = ar_e_n[q] >= ar_thn_n[q];
    end
    // Whole arrays (`IB_SWITCH_REGS`, above): Verilator unrolls no long loop of non-blocking array writes.
    `IB_SWITCH_REGS(relc_q, relc_n, NPorts)
    `IB_SWITCH_REGS(ar_ge_thr_q, ar_ge_thr_n, NPorts)
    `IB_SWITCH_REGS(ar_ge_thn_q, ar_ge_thn_n, NPorts)
    `IB_SWITCH_REGS(ftop_q, ftop_n, NPorts)
    `IB_SWITCH_REGS(fresh_q, fresh_n, NPorts)
    `IB_SWITCH_REGS(reads_q, reads_n, NPorts)
    `IB_SWITCH_REGS(rd_free_q, rd_free_n, NPorts)
    `IB_SWITCH_REGS(ser_q, ser_n, NPorts)
    `IB_SWITCH_REGS(ser_le_q, ser_le_n, NPorts)
    `IB_SWITCH_REGS(ser_lt_q, ser_lt_n, NPorts)
    `IB_SWITCH_REGS(ser_z_q, ser_z_n, NPorts)
    `IB_SWITCH_REGS(if_v_q, if_v_n, NPorts)
    `IB_SWITCH_REGS(if_in_q, if_in_n, NPorts)
    `IB_SWITCH_REGS(if_vl_q, if_vl_n, NPorts)
    `IB_SWITCH_REGS(if_blk_q, if_blk_n, NPorts)
    `IB_SWITCH_REGS(fcp_q, fcp_n, NPorts)
    `IB_SWITCH_REGS(ar_v_q, ar_v_n, NPorts)
    `IB_SWITCH_REGS(ar_e_q, ar_e_n, NPorts)
    `IB_SWITCH_REGS(ar_thr_q, ar_thr_n, NPorts)
    `IB_SWITCH_REGS(ar_thn_q, ar_thn_n, NPorts)
    `IB_SWITCH_REGS(ar_end_q, ar_end_n, NPorts)
    `IB_SWITCH_REGS(ar_left_q, ar_left_n, NPorts)
    `IB_SWITCH_REGS(ar_blk_q, ar_blk_n, NPorts)
    `IB_SWITCH_REGS(ar_vl_q, ar_vl_n, NPorts)
    `IB_SWITCH_REGS(ar_def_q, ar_def_n, NPorts)
    `IB_SWITCH_REGS(ar_drop_q, ar_drop_n, NPorts)
    `IB_SWITCH_REGS(ar_slot_q, ar_slot_n, NPorts)
    `IB_SWITCH_REGS(ar_out_q, ar_out_n, NPorts)
    `IB_SWITCH_REGS(ar_ovl_q, ar_ovl_n, NPorts)
    `IB_SWITCH_REGS(rr_q, rr_n, NK)
    `IB_SWITCH_REGS(fcfccl_q, fcfccl_n, NK)
    `IB_SWITCH_REGS(fpend_q, fpend_n, NK)
    `IB_SWITCH_REGS(fr_q, fr_n, NK)
    `IB_SWITCH_REGS(mk_q, mk_n, NK)
    `IB_SWITCH_REGS(vh_q, vh_n, NPorts*NPorts*NVl)
    `IB_SWITCH_REGS(vt_q, vt_n, NPorts*NPorts*NVl)
    `IB_SWITCH_REGS(vn_q, vn_n, NPorts*NPorts*NVl)
    `IB_SWITCH_REGS(fill_q, fill_n, NPorts*NPorts*NVl)
`ifdef IBCYCLE_ASSERTIONS
    // The serialiser's end flag's compares and the carry-save sums of fr_n and relc_n as computed before.
    vq_ok = a_sum_ok;
    for (int q = 0; q < NPorts; q++) vq_ok = vq_ok && a_sle_ok[q];
    // The free stacks' tops as the chain of pushes computed them.
    for (int q = 0; q < NPorts; q++) vq_ok = vq_ok && (!rst_ni || ftop_c[q] == ftop_n[q]);
    for (int q = 0; q < NPorts*NPorts*NVl; q++) begin
      // The head of an empty queue is no value (after its last dequeue, the link read at an unwritten slot).
      vq_ok = vq_ok && vt_c[q] == vt_n[q] && vn_c[q] == vn_n[q] && (vn_n[q] == '0 || vh_c[q] == vh_n[q]);
    end
    vq_ok_q <= vq_ok || !rst_ni;
`endif
  end : update


`ifdef IBCYCLE_ASSERTIONS
  // The spec's invariants at the switch's level, registered and asserted a cycle late (as the blocks do):
  // no packet starts without credit (credit_tx err_o), no credit_rx overflow unless a sender broke its
  // credit (checked at the ports by the co-simulation; here: no block freed beyond what an input holds),
  // one packet start or flow-control packet per output per cycle, a packet's descriptor slot count within
  // the pool, and a flagged configuration never leaves reset unnoticed.
  logic a_ok_q;
  logic a_ok;
  `IBCYCLE_COMB begin
    logic [15:0] frc;
    logic [12:0] hl;
    logic [6:0] hb;
    a_ok = 1'b1;
    // Stage 1's requests as credit_tx's request port checked them: the head length at the binary pick, its
    // blocks, the credit check (the per-input checks and the one-hot pick replace them).
    for (int p = 0; p < NPorts; p++) begin
      for (int v = 0; v < NVl; v++) begin
        hl = '0;
        for (int q = 0; q < NPorts; q++) begin
          if (32'(e_pick[p][PW*v +: PW]) == q) hl = hd_len[(q*NPorts + p)*NVl + v];
        end
        hb = 7'((hl + 13'd63) >> 6);
        a_ok = a_ok && !(rst_ni && e_req[p][v] && e_len[p][7*v +: 7] != hb);
        a_ok = a_ok && (FltCreditBypass || !(rst_ni && e_ok[p][v]
                         != (e_req[p][v] && ctx_fcclq[p*NVl + v] - (ctx_fctbs[p*NVl + v] + 12'(hb)) <= 12'd2048)));
      end
    end
    for (int k = 0; k < NK; k++) a_ok = a_ok && !(rst_ni && ctx_err[k]);
    // The blocks released at each input VL, registered a cycle ahead, are the sum over the outputs whose
    // packet in flight ends in the cycle (the chain it replaces).
    for (int k = 0; k < NK; k++) begin
      frc = '0;
      for (int p = 0; p < NPorts; p++) begin
        if (e_done[p] && 32'(if_in_q[p])*NVl + 32'(if_vl_q[p]) == k) begin
          frc = frc + 16'(if_blk_q[p]) - 16'(FltCreditLeak && if_blk_q[p] > 7'd1);
        end
      end
      a_ok = a_ok && !(rst_ni && fr_q[k] != frc);
      a_ok = a_ok && !(rst_ni && !a_drain_ok[k]);
    end
    for (int p = 0; p < NPorts; p++) begin
      a_ok = a_ok && !(rst_ni && !a_es_ok_q[p]);
      a_ok = a_ok && !(rst_ni && !a_ct_ok_q[p]);
      a_ok = a_ok && !(rst_ni && !a_nl_ok_q[p]);
      a_ok = a_ok && !(rst_ni && !a_hd_ok_q[p]);
      a_ok = a_ok && !(rst_ni && !a_acc_ok_q[p]);
    end
    for (int k = 0; k < NK; k++) a_ok = a_ok && !(rst_ni && !a_st_ok_q[k]);
    for (int p = 0; p < NPorts; p++) begin
      a_ok = a_ok && !(e_fc[p] && e_gnt[p]);
      a_ok = a_ok && 32'(fresh_q[p]) <= SlotMax && 32'(ftop_q[p]) <= SlotMax;
      a_ok = a_ok && !(rst_ni && nl_over[p]);
      // The look-ahead allocator: a commit is granted the VL it proposed (vl_arb's state did not move in
      // between), and no input reads for more outputs than its speed-up.
      a_ok = a_ok && !(e_cmt[p] && !(arb_gv[p] && arb_gvl[p] == la_vl_q[p]));
      a_ok = a_ok && !(rst_ni && reads_q[p] > speedup_i[7*p +: 7]);
      a_ok = a_ok && !(rst_ni && rd_free_q[p] != speedup_i[7*p +: 7] - reads_q[p]);
      a_ok = a_ok && !(rst_ni && (ar_ge_thr_q[p] != (ar_e_q[p] >= ar_thr_q[p])
                                  || ar_ge_thn_q[p] != (ar_e_q[p] >= ar_thn_q[p])));
      // The cut-through decision selected from every output's compare is the routed output's compare.
      a_ok = a_ok && !(rst_ni && 32'(pc_out_q[p]) < NPorts
                       && pc_ct_q[p] != (64'(`IB_SWITCH_NUM(32'(pc_out_q[p]))) * 64'(`IB_SWITCH_DEN(p))
                                         <= 64'(`IB_SWITCH_NUM(p)) * 64'(`IB_SWITCH_DEN(32'(pc_out_q[p])))));
      // The read slots released, counted a cycle ahead, are those the outputs' packets in flight release.
      a_ok = a_ok && !(rst_ni && relc_q[p] != a_crel[p][8*(NPorts-1) +: 7]);
      // A starting or committed packet's VL is one of its output's (the marking state's and the round-robin
      // pointers' updates write no other).
      a_ok = a_ok && !((e_gnt[p] || e_cmt[p]) && 32'(e_gvl[p]) >= NVl);
      // The accepts per input are the commits at that input; a read slot taken over is a commit.
      for (int q = 0; q < NPorts; q++) a_ok = a_ok && e_accq[q][p] == (e_cmt[p] && 32'(la_in_q[p]) == q);
      a_ok = a_ok && !(e_xfer[p] && !e_cmt[p]);
      // The decided packet's ticks on the wire, multiplied at its commit, are its length's.
      a_ok = a_ok && !(rst_ni && la_gser_q[p] != 32'(`IB_SWITCH_DEN(p)) * 32'(la_glen_q[p]));
      // The serialiser's registered compares are the compares of ser_q they replace.
      a_ok = a_ok && !(rst_ni && (ser_le_q[p] != (ser_q[p] <= 32'(`IB_SWITCH_NUM(p)))
                                  || ser_lt_q[p] != (ser_q[p] < 32'(`IB_SWITCH_NUM(p)))
                                  || ser_z_q[p] != (ser_q[p] == 32'd0)));
    end
  end
  // Not checked in reset cycles: before the first reset edge the registers hold X (4-state simulators).
  always_ff @(posedge clk_i) a_ok_q <= a_ok || !rst_ni;
  initial a_ok_q = 1'b1;
  always @(posedge clk_i) begin
    assert (a_ok_q);
  end
`endif

  // ---------------------------------------------------------------- strobes and checks
  // cfg_err_o: each check a bit of a vector, the vectors OR-reduced (a tree), not ORed into one flag port by
  // port: written that way it was a chain over the ports and VLs (42 levels at 4 ports, from a vl_arb's
  // tables to this output), the same function.
  `IBCYCLE_COMB begin : strobes
    logic [NPorts-1:0] ce_arb, ce_rate;
    logic [NK-1:0] ce_k;
    for (int p = 0; p < NPorts; p++) begin
      drop_o[p] = i_head[p] && i_head_drop[p];
      ce_arb[p] = p < 32'(nports_i) && arb_cfg[p] != '0;
    end
    for (int k = 0; k < NK; k++) begin
      overflow_o[k] = crx_ovf[k];
      ce_k[k] = k / NVl < 32'(nports_i) && k % NVl < 32'(`IB_SWITCH_NVL(k / NVl))
                && ((crx_cfg[k] != '0) || cd_cfg[k]);
    end
    for (int p = 0; p < NPorts; p++) begin
      ce_rate[p] = p < 32'(nports_i) && (`IB_SWITCH_NUM(p) == '0 || `IB_SWITCH_DEN(p) == '0
          || 64'(`IB_SWITCH_NUM(p)) > 64'd64 * 64'(`IB_SWITCH_DEN(p)) || `IB_SWITCH_NVL(p) == '0
          || 32'(`IB_SWITCH_NVL(p)) > NVl || speedup_i[7*p +: 7] == '0);
    end
    cfg_err_o = ce_arb != '0 || ce_k != '0 || ce_rate != '0
                || nports_i == '0 || 32'(nports_i) > NPorts || mtu_blocks_i == '0;
  end
`undef IB_SWITCH_NUM
`undef IB_SWITCH_DEN
`undef IB_SWITCH_NVL
`undef IB_SWITCH_REGS
`undef IB_SWITCH_CS_ADD
`undef IB_SWITCH_KS_ADD
`undef IB_SWITCH_RR_PICK
`undef IB_SWITCH_MK_STEP
endmodule
`default_nettype wire
