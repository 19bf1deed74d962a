//! Wire layouts of the management attributes that configure congestion control and VL arbitration, so a
//! configuration can be given in the binary form a subnet manager writes.
