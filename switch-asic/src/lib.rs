//! The InfiniBand / RoCEv2 switch pipeline (see issue: switch-asic). Built on `rtl-model` blocks.
