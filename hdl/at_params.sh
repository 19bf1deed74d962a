#!/usr/bin/env bash
# Writes a copy of a module's source with parameter defaults replaced, for Yosys to elaborate that module once
# at those values: `read_verilog -defer` and `chparam` elaborate it twice (chparam derives it, then
# `hierarchy` derives it again from the syntax tree), and at the fabrics' switch sizes an elaboration of
# ib_switch takes CPU-hours. Used by hdl/synth.sh and hdl/cones.py.
# usage: hdl/at_params.sh SRC.sv OUT.sv NAME=VALUE...   each NAME's `parameter int NAME = <integer>` default
#        becomes VALUE (a non-negative integer); exit 1 when a NAME is not declared so exactly once.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SRC.sv OUT.sv NAME=VALUE..." >&2; exit 2; }
src=$1 dst=$2
shift 2
text=$(cat "$src")
for kv in "$@"; do
  k=${kv%%=*} v=${kv#*=}
  [[ $kv == *=* && $k =~ ^[A-Za-z_][A-Za-z0-9_]*$ && $v =~ ^[0-9]+$ ]] \
    || { echo "at_params.sh: $kv: expected NAME=VALUE, VALUE a non-negative integer" >&2; exit 1; }
  pat="^([[:space:]]*parameter int $k[[:space:]]*=[[:space:]]*)[0-9]+"
  n=$(grep -cE "$pat" <<<"$text" || true)
  [ "$n" = 1 ] || { echo "at_params.sh: $src declares 'parameter int $k = <integer>' $n times, not once" >&2; exit 1; }
  text=$(sed -E "s/$pat/\1$v/" <<<"$text")
done
printf '%s\n' "$text" >"$dst"
