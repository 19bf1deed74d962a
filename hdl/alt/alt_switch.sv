// alt_switch: a second InfiniBand switch implementation, for `ibcycle rtl-check` to prove itself on RTL that is
// not the Rust model's twin. It differs from hdl/ib_switch.sv at its ports and in its timing as a real design
// would, and is checked only through a port map (hdl/alt/alt_switch.map.toml) by the transaction-level
// scoreboard, never cycle by cycle.
//
// What differs from ib_switch:
// - A byte-stream interface: per port a receive and a transmit stream of BeatBytes-byte beats (default 16;
//   byte k of a beat in bits 8k+7:8k) with valid, sop, eop and the count of valid bytes of the last beat,
//   packed per port into vectors (in_data, in_valid, ..., out_data, ...), and link flow-control packets as a
//   32-bit word per port (lfc_in, lfc_out: bytes 0 to 3 of the IBA flow-control packet, byte 0 in bits
//   31:24). ib_switch takes packet descriptors and per-field flow-control ports.
// - Its own packet buffer: a pool of NSlots packet slots per input (a slot per packet, SlotBeats beats
//   each), a free stack per input, the bytes held until the packet has streamed out.
// - A longer pipeline: an input register stage before the header parse, OutDelay cycles between the
//   core's decision to send and the first beat out, and an output register stage.
// - Its own egress rewrite: the LRH VL and the BTH FECN bit are written into the beats as they stream out and
//   the VCRC is recomputed byte-serially over the rewritten bytes (ib_switch rewrites no bytes).
//
// What is shared with ib_switch: the switching decisions. The front end parses the LRH and BTH of the first
// beat (DLID, SL, VL, PktLen, FECN) into the descriptor an ib_switch core (an instance of hdl/ib_switch.sv,
// NVl 2, TableMax 64) takes; the core's routing, SL2VL, VoQs, credits, VL arbitration (so its round-robin
// start), congestion detection and FECN decision are the twin's. The held configuration ports and the table
// write port are the core's, passed through under the same names (a port map's `config = "ib_switch"`).
// Limits: IBA-local packets only (no GRH: the FECN bit must be in the first beat), at most SlotBeats beats
// per packet, at most NSlots packets held per input (an assertion stops the simulation beyond).
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it; the core gets none of them):
//   IBCYCLE_FAULT_ALT_CREDIT_DROP  input 0 VL 0 tells the core its buffer is a block smaller: a block of
//                                  credit is never advertised
//   IBCYCLE_FAULT_ALT_FECN_WRONG   the FECN written is the inverse of the core's decision
//   IBCYCLE_FAULT_ALT_DUP          a packet held in a slot whose number ends in binary 011 streams out twice
//   IBCYCLE_FAULT_ALT_VL_MIX       the LRH VL out is left as it came in (the input VL), not the core's
//   IBCYCLE_FAULT_ALT_VCRC         the VCRC is written most significant byte first
`default_nettype none
`include "ibcycle_assertions.svh"

module alt_switch #(
  parameter int NPorts    = 8,
  parameter int BeatBytes = 16,
  parameter int NSlots    = 256,
  parameter int SlotBeats = 136,
  parameter int OutDelay  = 24,
  parameter int SlotMax   = 2048,
  parameter int LftMax    = 1024,
  parameter int NVl       = 2,
  parameter int TableMax  = 64,
  parameter int IdxW      = (TableMax > 1) ? $clog2(TableMax) : 1,
  parameter int NbW       = $clog2(BeatBytes + 1),
  parameter int PW        = (NPorts > 2) ? $clog2(NPorts) : 1
) (
  input  wire logic                              clk,
  input  wire logic                              rst_n,
  input  wire logic [5:0]                        nports_i,
  input  wire logic [6:0]                        mtu_blocks_i,
  input  wire logic [NPorts*17-1:0]              rate_num_i,
  input  wire logic [NPorts*17-1:0]              rate_den_i,
  input  wire logic [NPorts*4-1:0]               nvl_i,
  input  wire logic [NPorts*7-1:0]               speedup_i,
  input  wire logic [NPorts-1:0]                 mark_enq_i,
  input  wire logic [NPorts*NVl*16-1:0]          buf_blocks_i,
  input  wire logic [NPorts*16-1:0]              fc_interval_i,
  input  wire logic                              fc_on_change_i,
  input  wire logic [11:0]                       fccl_cap_i,
  input  wire logic [11:0]                       fccl_reset_i,
  input  wire logic [NPorts*4-1:0]               threshold_i,
  input  wire logic [NPorts*NVl*256-1:0]         thr_table_i,
  input  wire logic [NPorts*2-1:0]               compare_i,
  input  wire logic [NPorts*12-1:0]              root_min_credits_i,
  input  wire logic [NPorts-1:0]                 victim_mask_i,
  input  wire logic [NPorts*8-1:0]               packet_size_i,
  input  wire logic [NPorts*16-1:0]              marking_rate_i,
  input  wire logic [NPorts-1:0]                 mode_i,
  input  wire logic [NPorts*16-1:0]              lfsr_seed_i,
  input  wire logic [NPorts*17-1:0]              lfsr_thresh_i,
  input  wire logic [NPorts*TableMax*4-1:0]      hi_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0]      hi_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]        hi_n_i,
  input  wire logic [NPorts*TableMax*4-1:0]      lo_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0]      lo_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]        lo_n_i,
  input  wire logic [NPorts*8-1:0]               vl_high_limit_i,
  input  wire logic                              tbl_we_i,
  input  wire logic                              tbl_sel_i,
  input  wire logic [15:0]                       tbl_addr_i,
  input  wire logic [63:0]                       tbl_data_i,
  input  wire logic [NPorts*BeatBytes*8-1:0]     in_data,
  input  wire logic [NPorts-1:0]                 in_valid,
  input  wire logic [NPorts-1:0]                 in_sop,
  input  wire logic [NPorts-1:0]                 in_eop,
  input  wire logic [NPorts*NbW-1:0]             in_nbytes,
  input  wire logic [NPorts-1:0]                 lfc_in_valid,
  input  wire logic [NPorts*32-1:0]              lfc_in,
  output logic [NPorts*BeatBytes*8-1:0]          out_data,
  output logic [NPorts-1:0]                      out_valid,
  output logic [NPorts-1:0]                      out_sop,
  output logic [NPorts-1:0]                      out_eop,
  output logic [NPorts*NbW-1:0]                  out_nbytes,
  output logic [NPorts-1:0]                      lfc_out_valid,
  output logic [NPorts*32-1:0]                   lfc_out,
  output logic [NPorts*NVl-1:0]                  overflow,
  output logic                                   cfg_err
);

`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_ALT_CREDIT_DROP
  $fatal(1, "IBCYCLE_FAULT_ALT_CREDIT_DROP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_FECN_WRONG
  $fatal(1, "IBCYCLE_FAULT_ALT_FECN_WRONG is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_DUP
  $fatal(1, "IBCYCLE_FAULT_ALT_DUP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
  $fatal(1, "IBCYCLE_FAULT_ALT_VL_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VCRC
  $fatal(1, "IBCYCLE_FAULT_ALT_VCRC is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  localparam int BW = BeatBytes * 8;
  localparam int SlW = (NSlots > 1) ? $clog2(NSlots) : 1;
  localparam int KW = $clog2(SlotBeats + 1);
  // Per output, what the core sent waits OutDelay cycles in a queue, packets and flow-control packets in
  // the core's order: a flow-control packet's FCTBS counts the blocks of the packets before it, so it must
  // not overtake them on the way out.
  localparam int DQ = 32;
  localparam int DW = 1 + 32 + 4 + 1 + 13 + 32;  // is-FC, tag (FC: its word), VL, FECN, length, due cycle

  function automatic logic [15:0] crc_byte(input logic [15:0] c, input logic [7:0] x);
    logic [15:0] r;
    r = c ^ {8'd0, x};
    for (int i = 0; i < 8; i++) r = r[0] ? ((r >> 1) ^ 16'hD008) : (r >> 1);
    return r;
  endfunction

  // The core's hand-ins (from the input register stage) and outputs.
  logic [NPorts-1:0]     rx_pkt, rx_fecn, rx_fc;
  logic [NPorts*16-1:0]  rx_dlid;
  logic [NPorts*4-1:0]   rx_sl, rx_vl, rx_fc_vl;
  logic [NPorts*13-1:0]  rx_len;
  logic [NPorts*32-1:0]  rx_tag;
  logic [NPorts*12-1:0]  rx_fc_fctbs, rx_fc_fccl;
  logic [NPorts-1:0]     tx_pkt, tx_fecn, tx_fc;
  logic [NPorts*4-1:0]   tx_vl, tx_fc_vl;
  logic [NPorts*13-1:0]  tx_len;
  logic [NPorts*32-1:0]  tx_tag;
  logic [NPorts*12-1:0]  tx_fc_fctbs, tx_fc_fccl;
  logic [NPorts*NVl*16-1:0] core_buf_blocks;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NPorts*17-1:0]  tx_off;   // the byte stream starts every packet on a beat
  logic [NPorts-1:0]     drop;     // a dropped packet's slot is never streamed: see the assertion below
  /* verilator lint_on UNUSEDSIGNAL */

  // Packet buffer: per input NSlots slots of SlotBeats beats, and how many beats of each slot are written.
  logic [BW-1:0]         mem_q [NPorts][NSlots*SlotBeats];
  logic [KW-1:0]         written_q [NPorts][NSlots];
  // Slots in use, per input (a bit per slot); slots returned by the outputs in the last cycle.
  logic [NSlots-1:0]     used_q [NPorts];
  logic                  ret_v_q [NPorts];
  logic [7:0]            ret_in_q [NPorts];
  logic [SlW-1:0]        ret_slot_q [NPorts];
  logic [31:0]           now_q;

  always_ff @(posedge clk) begin
    if (!rst_n) now_q <= '0;
    else now_q <= now_q + 1;
  end

  // ---------------------------------------------------------------- per input: register stage, header
  // parse, slot allocation, beat store
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic [BW-1:0]    d1_q;
    logic             v1_q, sop1_q, fcv1_q;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0]      fc1_q;  // Op (bits 31:28): only normal flow-control packets come in
    /* verilator lint_on UNUSEDSIGNAL */
    logic [SlW-1:0]   cur_q, free_slot;
    logic [KW-1:0]    wbeat_q;
    logic             none_free;
    logic [NSlots-1:0] ret_mask;

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        v1_q <= 1'b0; sop1_q <= 1'b0; fcv1_q <= 1'b0; d1_q <= '0; fc1_q <= '0;
      end else begin
        v1_q <= in_valid[p]; sop1_q <= in_sop[p]; d1_q <= in_data[p*BW +: BW];
        fcv1_q <= lfc_in_valid[p]; fc1_q <= lfc_in[p*32 +: 32];
      end
    end

    // The lowest free slot.
    always_comb begin
      free_slot = '0;
      none_free = 1'b1;
      for (int s = NSlots - 1; s >= 0; s--) begin
        if (!used_q[p][s]) begin
          free_slot = SlW'(s);
          none_free = 1'b0;
        end
      end
      ret_mask = '0;
      for (int o = 0; o < NPorts; o++) begin
        if (ret_v_q[o] && int'(ret_in_q[o]) == p) ret_mask[ret_slot_q[o]] = 1'b1;
      end
    end

    always_comb begin
      rx_pkt[p]               = v1_q && sop1_q;
      rx_dlid[p*16 +: 16]     = {d1_q[23:16], d1_q[31:24]};
      rx_sl[p*4 +: 4]         = d1_q[15:12];
      rx_vl[p*4 +: 4]         = d1_q[7:4];
      // PktLen (LRH bytes 4-5, 11 bits) counts 4-byte words from the LRH through the ICRC; the VCRC adds 2.
      rx_len[p*13 +: 13]      = {d1_q[34:32], d1_q[47:40], 2'b00} + 13'd2;
      rx_fecn[p]              = d1_q[12*8 + 7];
      rx_tag[p*32 +: 32]      = {8'(p), 8'd0, 16'(free_slot)};
      rx_fc[p]                = fcv1_q;
      rx_fc_fctbs[p*12 +: 12] = fc1_q[16 +: 12];
      rx_fc_vl[p*4 +: 4]      = fc1_q[12 +: 4];
      rx_fc_fccl[p*12 +: 12]  = fc1_q[0 +: 12];
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        used_q[p] <= '0;
        cur_q <= '0;
        wbeat_q <= '0;
      end else begin
        if (v1_q) begin
          logic [SlW-1:0] s;
          logic [KW-1:0] k;
          s = sop1_q ? free_slot : cur_q;
          k = sop1_q ? '0 : wbeat_q;
          if (int'(k) < SlotBeats) mem_q[p][int'(s) * SlotBeats + int'(k)] <= d1_q;
          written_q[p][s] <= k + 1'b1;
          cur_q <= s;
          wbeat_q <= k + 1'b1;
        end
        used_q[p] <= (used_q[p] & ~ret_mask) | ((v1_q && sop1_q) ? (NSlots'(1) << free_slot) : '0);
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && v1_q && sop1_q && none_free) $fatal(1, "alt_switch: input %0d has no free packet slot", p);
      if (rst_n && v1_q && !sop1_q && int'(wbeat_q) >= SlotBeats)
        $fatal(1, "alt_switch: input %0d: a packet beyond %0d beats", p, SlotBeats);
      if (rst_n && drop[p]) $fatal(1, "alt_switch: the core dropped a packet at input %0d (its slot would leak)", p);
    end
`endif
  end

  // The unused inputs of the stream: every beat but the last is whole, and a packet's end is its length.
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_in;
  assign unused_in = ^{in_eop, in_nbytes};
  /* verilator lint_on UNUSEDSIGNAL */

  // ---------------------------------------------------------------- the core
`ifdef IBCYCLE_FAULT_ALT_CREDIT_DROP
  assign core_buf_blocks = {buf_blocks_i[NPorts*NVl*16-1:16], buf_blocks_i[15:0] - 16'd1};
`else
  assign core_buf_blocks = buf_blocks_i;
`endif

  ib_switch #(.NPorts(NPorts), .NVl(NVl), .SlotMax(SlotMax), .LftMax(LftMax), .TableMax(TableMax), .PW(PW)) core (
    .clk_i(clk),
    .rst_ni(rst_n),
    .nports_i(nports_i),
    .mtu_blocks_i(mtu_blocks_i),
    .rate_num_i(rate_num_i),
    .rate_den_i(rate_den_i),
    .nvl_i(nvl_i),
    .speedup_i(speedup_i),
    .mark_enq_i(mark_enq_i),
    .fc_interval_i(fc_interval_i),
    .fc_on_change_i(fc_on_change_i),
    .fccl_cap_i(fccl_cap_i),
    .fccl_reset_i(fccl_reset_i),
    .threshold_i(threshold_i),
    .thr_table_i(thr_table_i),
    .compare_i(compare_i),
    .root_min_credits_i(root_min_credits_i),
    .victim_mask_i(victim_mask_i),
    .packet_size_i(packet_size_i),
    .marking_rate_i(marking_rate_i),
    .mode_i(mode_i),
    .lfsr_seed_i(lfsr_seed_i),
    .lfsr_thresh_i(lfsr_thresh_i),
    .hi_vl_i(hi_vl_i),
    .hi_weight_i(hi_weight_i),
    .hi_n_i(hi_n_i),
    .lo_vl_i(lo_vl_i),
    .lo_weight_i(lo_weight_i),
    .lo_n_i(lo_n_i),
    .vl_high_limit_i(vl_high_limit_i),
    .tbl_we_i(tbl_we_i),
    .tbl_sel_i(tbl_sel_i),
    .tbl_addr_i(tbl_addr_i),
    .tbl_data_i(tbl_data_i),
    .buf_blocks_i(core_buf_blocks),
    .rx_pkt_i(rx_pkt),
    .rx_dlid_i(rx_dlid),
    .rx_sl_i(rx_sl),
    .rx_vl_i(rx_vl),
    .rx_len_i(rx_len),
    .rx_fecn_i(rx_fecn),
    .rx_off_i('0),
    .rx_tag_i(rx_tag),
    .rx_fc_i(rx_fc),
    .rx_fc_vl_i(rx_fc_vl),
    .rx_fc_fctbs_i(rx_fc_fctbs),
    .rx_fc_fccl_i(rx_fc_fccl),
    .tx_pkt_o(tx_pkt),
    .tx_vl_o(tx_vl),
    .tx_fecn_o(tx_fecn),
    .tx_len_o(tx_len),
    .tx_off_o(tx_off),
    .tx_tag_o(tx_tag),
    .tx_fc_o(tx_fc),
    .tx_fc_vl_o(tx_fc_vl),
    .tx_fc_fctbs_o(tx_fc_fctbs),
    .tx_fc_fccl_o(tx_fc_fccl),
    .drop_o(drop),
    .overflow_o(overflow),
    .cfg_err_o(cfg_err)
  );

  // ---------------------------------------------------------------- per output: descriptors wait OutDelay
  // cycles, then the packet streams out a beat per cycle (when written) with its VL and FECN written and its
  // VCRC recomputed, through an output register stage.
  for (genvar o = 0; o < NPorts; o++) begin : g_out
    logic [DQ-1:0][DW-1:0] dq_q;
    logic [5:0]       dn_q;
    logic             busy_q, dup_q;
    logic [7:0]       in_q;
    logic [SlW-1:0]   slot_q;
    logic [KW-1:0]    k_q;
    logic [12:0]      len_q;
    logic [3:0]       vl_q;
    logic             fecn_q;
    logic [15:0]      crc_q;

    /* verilator lint_off UNUSEDSIGNAL */
    logic [DW-1:0]    head;   // the tag's middle byte is 0
    /* verilator lint_on UNUSEDSIGNAL */
    logic [DW-1:0]    incoming, fc_in;
    logic             start, beat_ok, head_fc;
    logic [BW-1:0]    b;
    logic [15:0]      c, fin;
    logic [12:0]      base;
    logic             last;

    assign head = dq_q[0];
    assign head_fc = head[DW-1];
    assign start = !busy_q && dn_q != 0 && now_q >= head[31:0];
`ifdef IBCYCLE_FAULT_ALT_FECN_WRONG
    assign incoming = {1'b0, tx_tag[o*32 +: 32], tx_vl[o*4 +: 4], !tx_fecn[o], tx_len[o*13 +: 13], now_q + 32'(OutDelay)};
`else
    assign incoming = {1'b0, tx_tag[o*32 +: 32], tx_vl[o*4 +: 4], tx_fecn[o], tx_len[o*13 +: 13], now_q + 32'(OutDelay)};
`endif
    // Op 0 (normal), FCTBS, VL, FCCL.
    assign fc_in = {1'b1, 4'd0, tx_fc_fctbs[o*12 +: 12], tx_fc_vl[o*4 +: 4], tx_fc_fccl[o*12 +: 12],
                    4'd0, 1'b0, 13'd0, now_q + 32'(OutDelay)};
    assign beat_ok = busy_q && written_q[int'(in_q)][slot_q] > k_q;

    always_comb begin
      b = mem_q[int'(in_q)][int'(slot_q) * SlotBeats + int'(k_q)];
      base = 13'(int'(k_q) * BeatBytes);
      last = (base + 13'(BeatBytes)) >= len_q;
      if (k_q == 0) begin
`ifndef IBCYCLE_FAULT_ALT_VL_MIX
        b[7:4] = vl_q;
`endif
        if (fecn_q) b[12*8 + 7] = 1'b1;
      end
      c = crc_q;
      for (int i = 0; i < BeatBytes; i++) begin
        if (base + 13'(i) + 13'd2 < len_q) c = crc_byte(c, b[i*8 +: 8]);
      end
      fin = ~c;
      if (last) begin
        for (int i = 0; i < BeatBytes; i++) begin
`ifdef IBCYCLE_FAULT_ALT_VCRC
          if (base + 13'(i) + 13'd2 == len_q) b[i*8 +: 8] = fin[15:8];
          if (base + 13'(i) + 13'd1 == len_q) b[i*8 +: 8] = fin[7:0];
`else
          if (base + 13'(i) + 13'd2 == len_q) b[i*8 +: 8] = fin[7:0];
          if (base + 13'(i) + 13'd1 == len_q) b[i*8 +: 8] = fin[15:8];
`endif
        end
      end
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        dq_q <= '0;
        dn_q <= '0;
        busy_q <= 1'b0;
        dup_q <= 1'b0;
        in_q <= '0;
        slot_q <= '0;
        k_q <= '0;
        len_q <= '0;
        vl_q <= '0;
        fecn_q <= 1'b0;
        crc_q <= 16'hFFFF;
        out_valid[o] <= 1'b0;
        out_sop[o] <= 1'b0;
        out_eop[o] <= 1'b0;
        out_nbytes[o*NbW +: NbW] <= '0;
        out_data[o*BW +: BW] <= '0;
        lfc_out_valid[o] <= 1'b0;
        lfc_out[o*32 +: 32] <= '0;
        ret_v_q[o] <= 1'b0;
        ret_in_q[o] <= '0;
        ret_slot_q[o] <= '0;
      end else begin
        logic [5:0] n;
        logic [DQ-1:0][DW-1:0] q;
        n = dn_q;
        q = dq_q;
        lfc_out_valid[o] <= 1'b0;
        if (start && head_fc) begin
          lfc_out_valid[o] <= 1'b1;
          lfc_out[o*32 +: 32] <= head[81:50];
          q = q >> DW;
          n = n - 1'b1;
        end else if (start) begin
          busy_q <= 1'b1;
          in_q <= head[81:74];
          slot_q <= SlW'(head[65:50]);
          k_q <= '0;
          vl_q <= head[49:46];
          fecn_q <= head[45];
          len_q <= head[44:32];
          crc_q <= 16'hFFFF;
          q = q >> DW;
          n = n - 1'b1;
        end
        // The core puts at most one of the two on a port in a cycle; a flow-control packet first.
        if (tx_fc[o]) begin
          q[n[4:0]] = fc_in;
          n = n + 1'b1;
        end
        if (tx_pkt[o]) begin
          q[n[4:0]] = incoming;
          n = n + 1'b1;
        end
        dq_q <= q;
        dn_q <= n;

        out_valid[o] <= beat_ok;
        out_sop[o] <= beat_ok && k_q == 0;
        out_eop[o] <= beat_ok && last;
        out_nbytes[o*NbW +: NbW] <= (beat_ok && last) ? NbW'(len_q - base) : '0;
        if (beat_ok) out_data[o*BW +: BW] <= b;
        ret_v_q[o] <= 1'b0;
        if (beat_ok) begin
          crc_q <= c;
          k_q <= k_q + 1'b1;
          if (last) begin
`ifdef IBCYCLE_FAULT_ALT_DUP
            if (!dup_q && slot_q[2:0] == 3'b011) begin
              dup_q <= 1'b1;
              k_q <= '0;
              crc_q <= 16'hFFFF;
            end else begin
              dup_q <= 1'b0;
              busy_q <= 1'b0;
              ret_v_q[o] <= 1'b1;
              ret_in_q[o] <= in_q;
              ret_slot_q[o] <= slot_q;
            end
`else
            busy_q <= 1'b0;
            ret_v_q[o] <= 1'b1;
            ret_in_q[o] <= in_q;
            ret_slot_q[o] <= slot_q;
`endif
          end
        end
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && 32'(dn_q) + 32'(tx_pkt[o]) + 32'(tx_fc[o]) > DQ + 32'(start))
        $fatal(1, "alt_switch: output %0d: queue full", o);
    end
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_vl;
    assign unused_vl = ^vl_q;
    /* verilator lint_on UNUSEDSIGNAL */
`endif
`ifndef IBCYCLE_FAULT_ALT_DUP
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_dup;
    assign unused_dup = dup_q;
    /* verilator lint_on UNUSEDSIGNAL */
`endif
  end
endmodule
