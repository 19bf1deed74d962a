//! Wire layouts of the management attributes that configure congestion control and VL arbitration, so a
//! configuration can be given in the binary form a subnet manager writes.

pub mod ca_cong;
pub mod cct;
pub mod port_mask;
pub mod sl2vl;
pub mod switch_cong;
pub mod vlarb;
