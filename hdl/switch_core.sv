// switch_core: a small InfiniBand switch composed of the blocks in this directory, validated as a whole.
//
// Twin of rtl_model::blocks::switch_core::SwitchCore (same ports, widths, reset values and composition).
// NPorts ports, NVl data VLs (VL15 is not modelled), per input VL a credit_rx, per output VL a credit_tx, a
// cong_detect and a fecn_marker, per output a vl_arb. Packets are descriptors: the payload is not stored, only
// its length in bytes (the 64-byte block count follows from it), as switch-asic's port interface passes them.
//
// | port               | dir | width          | meaning                                                       |
// |--------------------|-----|----------------|---------------------------------------------------------------|
// | clk_i, rst_ni      | in  | 1              | clock; synchronous reset, active low                          |
// | configuration (held constant; shared by every port or port-VL)                                         |
// | buf_blocks_i, fc_interval_i, fc_on_change_i, fccl_cap_i | in | 16,16,1,12 | every credit_rx          |
// | fccl_reset_i       | in  | 12             | every credit_tx                                               |
// | hi_vl_i, hi_weight_i, hi_n_i, lo_*, vl_high_limit_i | in | 4x4, 4x8, 3, ..., 8 | every vl_arb (4 entries) |
// | threshold_i, thr_table_i, compare_i, root_min_credits_i, victim_mask_i | in | 4,256,2,12,1 | cong_detect |
// | packet_size_i, marking_rate_i, mode_i, lfsr_seed_i, lfsr_thresh_i | in | 8,16,1,16,17 | fecn_marker    |
// | per-cycle inputs (lane p of a vector belongs to port p)                                                 |
// | pkt_valid_i        | in  | NPorts         | a packet starts arriving on input p                           |
// | pkt_vl_i           | in  | NPorts x VlW   | its VL                                                        |
// | pkt_bytes_i        | in  | NPorts x 13    | its length in bytes (blocks = ceil(bytes / 64), 7 bits)       |
// | pkt_dst_i          | in  | NPorts x PW    | its output port (the forwarding decision, made upstream)      |
// | fc_valid_i         | in  | NPorts         | a flow-control packet arrived on port p                       |
// | fc_vl_i            | in  | NPorts x VlW   | its VL                                                        |
// | fc_fctbs_i         | in  | NPorts x 12    | its FCTBS (to credit_rx of input p, that VL)                  |
// | fc_fccl_i          | in  | NPorts x 12    | its FCCL (to credit_tx of output p, that VL)                  |
// | out_ready_i        | in  | NPorts         | output p's link may start a packet (back-pressure when 0)     |
// | outputs                                                                                                 |
// | out_valid_o        | out | NPorts         | a packet starts on output p (vl_arb grant)                    |
// | out_vl_o, out_src_o, out_bytes_o, out_fecn_o | out | NPorts x (VlW, PW, 13, 1) | its VL, input, length, FECN |
// | fc_send_o, fccl_o  | out | NPorts*NVl (x12) | credit_rx of input p VL v sends an FC packet with this FCCL |
// | avail_o            | out | NPorts*NVl x 12 | credit_tx avail_o of output p VL v                           |
// | mark_state_o       | out | NPorts*NVl     | cong_detect mark_state_o of output p VL v                     |
// | tx_err_o, overflow_o | out | NPorts*NVl   | credit_tx err_o, credit_rx overflow_o                         |
// | drop_o             | out | NPorts         | input p's packet was dropped: no free slot (beyond credit) or |
// |                    |     |                | longer than BytesMax                                          |
// Lane (p, v) of a per-port-VL vector is lane p * NVl + v. Outputs other than strobes are 0 with no grant.
//
// Composition (designer choices, the Rust twin follows them):
// - Descriptors (byte lengths) live in one pool of BufMax slots per input VL (i, v), shared by its VoQs
//   (i, o, v); each VoQ is a linked list through the pool (head, tail, count) plus its fill in blocks (16
//   bits). An arrival takes the lowest slot free at the cycle's start (a slot dequeued this cycle is free
//   from the next). Lossless: every queued packet holds at least one buffer block in credit_rx until it is
//   granted and buf_blocks_i <= BufMax, so a sender within its credit always finds a slot. An arrival beyond
//   its credit that finds the pool empty, or a malformed packet (0 bytes, which would hold no block, or
//   longer than BytesMax: 127 blocks, the most the 7-bit block ports carry), is dropped (drop_o) and its blocks return to credit_rx at once.
// - Head of (o, v): round robin over inputs from rr_q[o][v]; the pointer moves past the input granted.
// - credit_tx (o, v) checks the head's blocks; its send_ok_o is vl_arb's credit_ok_i; vl_arb's grant is
//   take_i. vl_arb is ready when out_ready_i and the output is not streaming.
// - A granted packet streams one block per cycle for `blocks` cycles after the grant cycle; each streamed
//   block is freed in credit_rx of its input and VL (blk_free_i: up to NPorts plus a dropped packet's blocks).
//   The VoQ fill drops by the packet's blocks at the grant.
// - cong_detect (o, v) sees the registered fills of VoQs (i, o, v), i = 0..NPorts-1, and credit_tx avail_o;
//   fecn_marker (o, v) marks the granted packet with cong_detect's mark_state_o.
//
// Fault-injection variants (build-time, for the co-simulation's self-test; never define them otherwise):
//   IBCYCLE_FAULT_CONG_VL_INDEX   cong_detect of VL v is fed the VoQ fills of VL NVl-1-v (a wrong index into the fills)
//   IBCYCLE_FAULT_CREDIT_BYPASS   vl_arb's credit_ok_i is tied to its requests: the credit check is left out of the
//                       arbitration, so packets go without credit (tx_err_o) and FCTBS runs past FCCL
// credit_tx evaluates send_ok_o (read by vl_arb) and take_i (driven by vl_arb's grant) in one always_comb, so
// the Verilator scheduler sees a loop grant -> take_i -> send_ok_o -> grant at block granularity; send_ok_o does not depend
// on take_i, the loop is false, and Verilator settles it by iterating (the co-simulation compares every cycle).
// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

/* verilator lint_off UNOPTFLAT */
module switch_core #(
  parameter int NPorts = 4,
  parameter int NVl = 2,
  // Descriptor slots per input VL, and the largest buf_blocks_i the switch is built for.
  parameter int BufMax = 128,
  parameter int PW = $clog2(NPorts),
  parameter int VlW = $clog2(NVl)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // configuration, held constant
  input  logic [15:0]              buf_blocks_i,
  input  logic [15:0]              fc_interval_i,
  input  logic                     fc_on_change_i,
  input  logic [11:0]              fccl_cap_i,
  input  logic [11:0]              fccl_reset_i,
  input  logic [15:0]              hi_vl_i,
  input  logic [31:0]              hi_weight_i,
  input  logic [2:0]               hi_n_i,
  input  logic [15:0]              lo_vl_i,
  input  logic [31:0]              lo_weight_i,
  input  logic [2:0]               lo_n_i,
  input  logic [7:0]               vl_high_limit_i,
  input  logic [3:0]               threshold_i,
  input  logic [255:0]             thr_table_i,
  input  logic [1:0]               compare_i,
  input  logic [11:0]              root_min_credits_i,
  input  logic                     victim_mask_i,
  input  logic [7:0]               packet_size_i,
  input  logic [15:0]              marking_rate_i,
  input  logic                     mode_i,
  input  logic [15:0]              lfsr_seed_i,
  input  logic [16:0]              lfsr_thresh_i,
  // per-cycle inputs
  input  logic [NPorts-1:0]        pkt_valid_i,
  input  logic [NPorts*VlW-1:0]    pkt_vl_i,
  input  logic [NPorts*13-1:0]     pkt_bytes_i,
  input  logic [NPorts*PW-1:0]     pkt_dst_i,
  input  logic [NPorts-1:0]        fc_valid_i,
  input  logic [NPorts*VlW-1:0]    fc_vl_i,
  input  logic [NPorts*12-1:0]     fc_fctbs_i,
  input  logic [NPorts*12-1:0]     fc_fccl_i,
  input  logic [NPorts-1:0]        out_ready_i,
  // outputs
  output logic [NPorts-1:0]        out_valid_o,
  output logic [NPorts*VlW-1:0]    out_vl_o,
  output logic [NPorts*PW-1:0]     out_src_o,
  output logic [NPorts*13-1:0]     out_bytes_o,
  output logic [NPorts-1:0]        out_fecn_o,
  output logic [NPorts*NVl-1:0]    fc_send_o,
  output logic [NPorts*NVl*12-1:0] fccl_o,
  output logic [NPorts*NVl*12-1:0] avail_o,
  output logic [NPorts*NVl-1:0]    mark_state_o,
  output logic [NPorts*NVl-1:0]    tx_err_o,
  output logic [NPorts*NVl-1:0]    overflow_o,
  output logic [NPorts-1:0]        drop_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_CONG_VL_INDEX
  $fatal(1, "IBCYCLE_FAULT_CONG_VL_INDEX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_CREDIT_BYPASS
  $fatal(1, "IBCYCLE_FAULT_CREDIT_BYPASS is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  localparam int NPv = NPorts * NVl;           // port-VL lanes
  localparam int NQ = NPorts * NPorts * NVl;   // VoQs, index (i * NPorts + o) * NVl + v
  localparam int SW = $clog2(BufMax);          // slot number
  localparam int CW = $clog2(BufMax + 1);      // VoQ count
  localparam logic [12:0] BytesMax = 13'd8128; // 127 blocks
  localparam int CntW = $clog2(NPorts + 1);

  // Blocks of a packet of b bytes: ceil(b / 64), saturating at 127, the most the 7-bit block ports carry.
  function automatic logic [6:0] blocks_of(input logic [12:0] b);
    /* verilator lint_off UNUSEDSIGNAL */
    logic [13:0] s;
    /* verilator lint_on UNUSEDSIGNAL */
    s = {1'b0, b} + 14'd63;
    blocks_of = s[13] ? 7'd127 : s[12:6];
  endfunction

  // state
  logic [12:0]            mem_q [NPv][BufMax]; // descriptor pools: byte lengths (RAM, not reset)
  logic [SW-1:0]          nxt_q [NPv][BufMax]; // next slot of the VoQ's list (RAM, not reset)
  logic [NPv*BufMax-1:0]  free_q, free_d;  // free slots
  logic [NQ*SW-1:0]       hd_q, hd_d;     // head slot of each VoQ's list
  logic [NQ*SW-1:0]       tl_q, tl_d;     // tail slot
  logic [NQ*CW-1:0]       cnt_q, cnt_d;   // descriptors held
  logic [NQ*16-1:0]       fill_q, fill_d; // blocks held
  logic [NPorts*7-1:0]    busy_q, busy_d; // blocks still to stream
  logic [NPorts*PW-1:0]   bsrc_q, bsrc_d; // input of the streaming packet
  logic [NPorts*VlW-1:0]  bvl_q, bvl_d;   // VL of the streaming packet
  logic [NPv*PW-1:0]      rr_q, rr_d;     // round-robin pointer per output VL

  // composition wires
  logic [NPv-1:0]      has;       // (o, v) has a head packet
  logic [NPv*PW-1:0]   sel;       // its input
  logic [NPv*13-1:0]   hbytes;    // its bytes
  logic [NPv*7-1:0]    hblk;      // its blocks
  // Unread in the IBCYCLE_FAULT_CREDIT_BYPASS variant, which leaves the credit check out.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NPv-1:0]      send_ok;   // credit_tx send_ok_o
  /* verilator lint_on UNUSEDSIGNAL */
  logic [NPv-1:0]      take;      // credit_tx take_i (grant of that VL)
  logic [NPv-1:0]      txfc;      // credit_tx fc_valid_i
  logic [NPv-1:0]      rxfc;      // credit_rx fc_valid_i
  logic [NPv*7-1:0]    blk_rx;    // credit_rx blk_rx_i
  logic [NPv*7-1:0]    blk_free;  // credit_rx blk_free_i
  logic [NPv*NPorts*16-1:0] cd_fill; // cong_detect voq_fill_i of (o, v)
  logic [NPorts-1:0]   ready;     // vl_arb ready_i
  logic [NPorts-1:0]   gnt;       // vl_arb gnt_valid_o
  logic [NPorts*4-1:0] gnt_vl4;   // vl_arb gnt_vl_o
  logic [NPv-1:0]      mark;      // fecn_marker mark_o

  // Loop variables of the head selection (module scope: Yosys 0.23 takes no declarations inside always).
  logic [PW-1:0] hp;
  int            hq;

  always_comb begin
    hp = '0;
    hq = 0;
    has = '0;
    sel = '0;
    hbytes = '0;
    hblk = '0;
    for (int o = 0; o < NPorts; o++) begin
      for (int v = 0; v < NVl; v++) begin
        for (int k = NPorts - 1; k >= 0; k--) begin
          // Walking k downwards leaves the first non-empty input from the pointer in sel.
          hp = rr_q[PW*(o*NVl+v) +: PW] + PW'(k);
          hq = (32'(hp) * NPorts + o) * NVl + v;
          if (cnt_q[CW*hq +: CW] != '0) begin
            has[o*NVl+v] = 1'b1;
            sel[PW*(o*NVl+v) +: PW] = hp;
            hbytes[13*(o*NVl+v) +: 13] = mem_q[32'(hp) * NVl + v][hd_q[SW*hq +: SW]];
          end
        end
        hblk[7*(o*NVl+v) +: 7] = blocks_of(hbytes[13*(o*NVl+v) +: 13]);
      end
    end
  end

  // Pool writes of the cycle (one arrival per input, so at most one of each per pool).
  logic [NPv-1:0]    wr_en, lnk_en;
  logic [NPv*SW-1:0] wr_slot, lnk_slot, lnk_val;
  logic [NPv*13-1:0] wr_bytes;

  // Loop variables of the datapath block below.
  logic [VlW-1:0] gv, pv;
  logic [SW-1:0]  slot, h;
  logic [6:0]     b;
  int             ov, q, l, pl;

  always_comb begin
    gv = '0;
    pv = '0;
    slot = '0;
    h = '0;
    b = '0;
    ov = 0;
    q = 0;
    l = 0;
    pl = 0;
    wr_en = '0;
    lnk_en = '0;
    wr_slot = '0;
    lnk_slot = '0;
    lnk_val = '0;
    wr_bytes = '0;
    take = '0;
    txfc = '0;
    rxfc = '0;
    blk_rx = '0;
    blk_free = '0;
    cd_fill = '0;
    drop_o = '0;
    out_vl_o = '0;
    out_src_o = '0;
    out_bytes_o = '0;
    out_fecn_o = '0;
    free_d = free_q;
    hd_d = hd_q;
    tl_d = tl_q;
    cnt_d = cnt_q;
    fill_d = fill_q;
    busy_d = busy_q;
    bsrc_d = bsrc_q;
    bvl_d = bvl_q;
    rr_d = rr_q;
    for (int o = 0; o < NPorts; o++) begin
      ready[o] = out_ready_i[o] && busy_q[7*o +: 7] == '0;
      for (int v = 0; v < NVl; v++) begin
        take[o*NVl+v] = gnt[o] && gnt_vl4[4*o +: 4] == 4'(v);
        txfc[o*NVl+v] = fc_valid_i[o] && fc_vl_i[VlW*o +: VlW] == VlW'(v);
        for (int i = 0; i < NPorts; i++) begin
`ifdef IBCYCLE_FAULT_CONG_VL_INDEX
          cd_fill[16*((o*NVl+v)*NPorts+i) +: 16] = fill_q[16*((i*NPorts+o)*NVl+(NVl-1-v)) +: 16];
`else
          cd_fill[16*((o*NVl+v)*NPorts+i) +: 16] = fill_q[16*((i*NPorts+o)*NVl+v) +: 16];
`endif
        end
      end
      // streaming frees one block of its input VL per cycle
      if (busy_q[7*o +: 7] != '0) begin
        blk_free[7*(32'(bsrc_q[PW*o +: PW])*NVl + 32'(bvl_q[VlW*o +: VlW])) +: 7] =
          blk_free[7*(32'(bsrc_q[PW*o +: PW])*NVl + 32'(bvl_q[VlW*o +: VlW])) +: 7] + 7'd1;
        busy_d[7*o +: 7] = busy_q[7*o +: 7] - 7'd1;
      end
      gv = gnt_vl4[4*o +: VlW];
      ov = o * NVl + 32'(gv);
      q = (32'(sel[PW*ov +: PW]) * NPorts + o) * NVl + 32'(gv);
      pl = 32'(sel[PW*ov +: PW]) * NVl + 32'(gv);
      h = hd_q[SW*q +: SW];
      if (gnt[o]) begin
        out_vl_o[VlW*o +: VlW] = gv;
        out_src_o[PW*o +: PW] = sel[PW*ov +: PW];
        out_bytes_o[13*o +: 13] = hbytes[13*ov +: 13];
        out_fecn_o[o] = mark[ov];
        busy_d[7*o +: 7] = hblk[7*ov +: 7];
        bsrc_d[PW*o +: PW] = sel[PW*ov +: PW];
        bvl_d[VlW*o +: VlW] = gv;
        rr_d[PW*ov +: PW] = sel[PW*ov +: PW] + PW'(1);
        // The head leaves its list; its slot is free from the next cycle.
        free_d[pl*BufMax + 32'(h)] = 1'b1;
        hd_d[SW*q +: SW] = nxt_q[pl][h];
        cnt_d[CW*q +: CW] = cnt_q[CW*q +: CW] - CW'(1);
        fill_d[16*q +: 16] = fill_q[16*q +: 16] - 16'(hblk[7*ov +: 7]);
      end
    end
    for (int i = 0; i < NPorts; i++) begin
      pv = pkt_vl_i[VlW*i +: VlW];
      b = blocks_of(pkt_bytes_i[13*i +: 13]);
      q = (i * NPorts + 32'(pkt_dst_i[PW*i +: PW])) * NVl + 32'(pv);
      l = i * NVl + 32'(pv);
      // The lowest slot free at the cycle's start: walking down leaves the lowest in slot.
      slot = '0;
      for (int k = BufMax - 1; k >= 0; k--) begin
        if (free_q[l*BufMax + k]) slot = SW'(k);
      end
      for (int v = 0; v < NVl; v++) begin
        rxfc[i*NVl+v] = fc_valid_i[i] && fc_vl_i[VlW*i +: VlW] == VlW'(v);
      end
      if (pkt_valid_i[i]) begin
        blk_rx[7*(i*NVl+32'(pv)) +: 7] = b;
        if (free_q[l*BufMax +: BufMax] == '0 || pkt_bytes_i[13*i +: 13] == '0
            || pkt_bytes_i[13*i +: 13] > BytesMax) begin
          drop_o[i] = rst_ni;
          blk_free[7*l +: 7] = blk_free[7*l +: 7] + b;
        end else begin
          free_d[l*BufMax + 32'(slot)] = 1'b0;
          wr_en[l] = 1'b1;
          wr_slot[SW*l +: SW] = slot;
          wr_bytes[13*l +: 13] = pkt_bytes_i[13*i +: 13];
          if (cnt_d[CW*q +: CW] == '0) begin
            hd_d[SW*q +: SW] = slot;
          end else begin
            lnk_en[l] = 1'b1;
            lnk_slot[SW*l +: SW] = tl_q[SW*q +: SW];
            lnk_val[SW*l +: SW] = slot;
          end
          tl_d[SW*q +: SW] = slot;
          cnt_d[CW*q +: CW] = cnt_d[CW*q +: CW] + CW'(1);
          fill_d[16*q +: 16] = fill_d[16*q +: 16] + 16'(b);
        end
      end
    end
    if (!rst_ni) begin
      free_d = '1;
      hd_d = '0;
      tl_d = '0;
      cnt_d = '0;
      fill_d = '0;
      busy_d = '0;
      bsrc_d = '0;
      bvl_d = '0;
      rr_d = '0;
    end
  end

  assign out_valid_o = gnt;

  // The pools: one write port each for descriptors and for links.
  always_ff @(posedge clk_i) begin
    for (int k = 0; k < NPv; k++) begin
      if (wr_en[k]) mem_q[k][wr_slot[SW*k +: SW]] <= wr_bytes[13*k +: 13];
      if (lnk_en[k]) nxt_q[k][lnk_slot[SW*k +: SW]] <= lnk_val[SW*k +: SW];
    end
  end

  always_ff @(posedge clk_i) begin
    free_q <= free_d;
    hd_q   <= hd_d;
    tl_q   <= tl_d;
    cnt_q  <= cnt_d;
    fill_q <= fill_d;
    busy_q <= busy_d;
    bsrc_q <= bsrc_d;
    bvl_q  <= bvl_d;
    rr_q   <= rr_d;
  end

  // Outputs of the blocks the switch does not use.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NPv*12-1:0] rx_abr, tx_fctbs, tx_fccl;
  logic [NPv*16-1:0] rx_free;
  logic [NPv-1:0]    rx_drain_err, cd_cong, cd_root, cd_victim;
  logic [NPorts-1:0] arb_high;
  // The blocks' configuration checks (every instance sees the same held ports).
  logic [NPorts*4-1:0] arb_cfg_err;
  logic [NPv*4-1:0]  rx_cfg_err;
  logic [NPv-1:0]    cd_cfg_err, fm_cfg_err;
  /* verilator lint_on UNUSEDSIGNAL */

  for (genvar p = 0; p < NPorts; p++) begin : g_port
    logic [15:0]  req16, ok16;
    logic [111:0] len112;
    always_comb begin
      req16 = '0;
      ok16 = '0;
      len112 = '0;
      for (int v = 0; v < NVl; v++) begin
        req16[v] = has[p*NVl+v];
`ifdef IBCYCLE_FAULT_CREDIT_BYPASS
        ok16[v] = has[p*NVl+v];
`else
        ok16[v] = send_ok[p*NVl+v];
`endif
        len112[7*v +: 7] = hblk[7*(p*NVl+v) +: 7];
      end
    end

    vl_arb #(.TableMax(4)) u_arb (
      .clk_i, .rst_ni,
      .hi_vl_i, .hi_weight_i, .hi_n_i, .lo_vl_i, .lo_weight_i, .lo_n_i, .vl_high_limit_i,
      .ready_i(ready[p]), .req_i(req16), .len_i(len112), .credit_ok_i(ok16),
      .gnt_valid_o(gnt[p]), .gnt_vl_o(gnt_vl4[4*p +: 4]), .gnt_high_o(arb_high[p]),
      .cfg_err_o(arb_cfg_err[4*p +: 4])
    );

    for (genvar v = 0; v < NVl; v++) begin : g_vl
      localparam int L = p * NVl + v;

      credit_rx u_rx (
        .clk_i, .rst_ni,
        .buf_blocks_i, .fc_interval_i, .fc_on_change_i, .fccl_cap_i,
        .blk_rx_i(blk_rx[7*L +: 7]), .fc_valid_i(rxfc[L]), .fc_fctbs_i(fc_fctbs_i[12*p +: 12]),
        .blk_free_i(blk_free[7*L +: 7]),
        .abr_o(rx_abr[12*L +: 12]), .free_o(rx_free[16*L +: 16]), .fccl_o(fccl_o[12*L +: 12]),
        .fc_send_o(fc_send_o[L]), .overflow_o(overflow_o[L]), .drain_err_o(rx_drain_err[L]),
        .cfg_err_o(rx_cfg_err[4*L +: 4])
      );

      credit_tx u_tx (
        .clk_i, .rst_ni,
        .fccl_reset_i,
        .fc_valid_i(txfc[L]), .fc_fccl_i(fc_fccl_i[12*p +: 12]),
        .req_valid_i(has[L]), .req_blocks_i(hblk[7*L +: 7]), .take_i(take[L]),
        .fctbs_o(tx_fctbs[12*L +: 12]), .fccl_o(tx_fccl[12*L +: 12]), .avail_o(avail_o[12*L +: 12]),
        .send_ok_o(send_ok[L]), .err_o(tx_err_o[L])
      );

      cong_detect #(.NIn(NPorts)) u_cd (
        .clk_i, .rst_ni,
        .threshold_i, .thr_table_i, .compare_i, .root_min_credits_i, .victim_mask_i,
        .voq_fill_i(cd_fill[16*NPorts*L +: 16*NPorts]), .voq_cnt_i(CntW'(NPorts)),
        .credit_avail_i(avail_o[12*L +: 12]),
        .cong_o(cd_cong[L]), .root_o(cd_root[L]), .victim_o(cd_victim[L]), .mark_state_o(mark_state_o[L]),
        .cfg_err_o(cd_cfg_err[L])
      );

      fecn_marker u_fm (
        .clk_i, .rst_ni,
        .packet_size_i, .marking_rate_i, .mode_i, .lfsr_seed_i, .lfsr_thresh_i,
        .pkt_valid_i(take[L]), .pkt_bytes_i(hbytes[13*L +: 13]), .mark_state_i(mark_state_o[L]),
        .mark_o(mark[L]), .cfg_err_o(fm_cfg_err[L])
      );
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // Losslessness and the credit loop: the arbiter never sends without credit; a packet is dropped only when
  // it came beyond its credit (credit_rx of its input VL overflows in that cycle) or is malformed (0 bytes,
  // above BytesMax); credit_rx is never asked to free blocks it does not hold; a packet leaves with a length
  // the core accepts.
  logic [NPv-1:0]        a_ovf_seen_q;  // lanes whose credit was overrun since reset
  logic [NPorts-1:0]     a_ovf;   // overflow_o of each input's arriving VL, now or since reset
  logic [NPorts-1:0]     a_bad;   // its length is malformed
  always_comb begin
    for (int i = 0; i < NPorts; i++) begin
      a_ovf[i] = overflow_o[i*NVl + 32'(pkt_vl_i[VlW*i +: VlW])]
                 || a_ovf_seen_q[i*NVl + 32'(pkt_vl_i[VlW*i +: VlW])];
      a_bad[i] = pkt_bytes_i[13*i +: 13] == '0 || pkt_bytes_i[13*i +: 13] > BytesMax;
    end
  end
  logic [3:0] a_ok, a_ok_q;
  always_comb begin
    a_ok = '1;
    if (rst_ni) begin
      a_ok[0] = tx_err_o == '0;
      // After an overrun credit_rx's count saturated below what the buffer holds, so frees can exceed it.
      a_ok[1] = (rx_drain_err & ~(a_ovf_seen_q | overflow_o)) == '0;
      for (int i = 0; i < NPorts; i++) begin
        if (drop_o[i] && !(a_ovf[i] || a_bad[i])) a_ok[2] = 1'b0;
        if (out_valid_o[i] && (out_bytes_o[13*i +: 13] == '0 || out_bytes_o[13*i +: 13] > BytesMax)) a_ok[3] = 1'b0;
      end
    end
  end
  // Registered, then asserted (a cycle late), so the check does not depend on how a simulator orders clocked
  // blocks.
  always_ff @(posedge clk_i) begin
    a_ok_q <= a_ok;
    a_ovf_seen_q <= rst_ni ? (a_ovf_seen_q | overflow_o) : '0;
  end
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // no packet sent without credit
    assert (a_ok_q[1]);  // no block freed that was not held (unless the credit was overrun)
    assert (a_ok_q[2]);  // a drop only beyond credit (now or since reset) or for a malformed length
    assert (a_ok_q[3]);  // a packet leaves with a length the core accepts
  end
`endif

endmodule

`default_nettype wire
