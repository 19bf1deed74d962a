//! Software prefetch of the blocks a part visits next.
//!
//! In a fabric whose state is several times the last-level cache (the 11,664-node tree: 1,620 switches and
//! 11,664 HCAs), every visit starts cold: a wheel cycle visits thousands of blocks, each running ahead a
//! wire latency, so a block's lines are evicted long before its next visit, and the visit waits on one
//! miss after another. The order of a cycle's visits is known when the cycle starts (the wheel's due
//! list), so while one block steps, the processor can fetch the state of the next ones: a visit three
//! ahead has its block's record and wake-up tables fetched, and the visit after the current one, whose
//! tables are in cache by then, the records of the ports its wake-ups and arriving items say it will look
//! at. A prefetch is a hint: it reads nothing the program sees and changes no result.
//!
//! In a fabric that fits in cache the fetches only cost instructions (5% more on `clos648-shift-cc`),
//! so [`Prefetch::Auto`] turns them on only for a part of at least [`AUTO_MIN_WEIGHT`].

use std::mem::size_of;

use rtl_model::link::serial::Wire;
use switch_asic::port_mask::ports;

use super::{Ev, Part};

/// How many visits ahead a block's own record and wake-up tables are fetched.
const BLOCK_AHEAD: usize = 3;
/// How many visits ahead a switch's due ports' records are fetched (after its tables, which tell which).
const PORTS_AHEAD: usize = 1;

/// A part's weight (switch ports plus two per HCA, as the partition counts them) from which
/// [`Prefetch::Auto`] prefetches. A part's state is about 4 KiB per unit of weight (352 MiB for the
/// 11,664-node tree, 81,648 units), so this is about 64 MiB of state, twice the 32 MiB last-level cache of
/// the machines measured: the 648-port Clos (3,240 units) runs from cache and loses by prefetching, the
/// tree (one part, two threads or four MPI ranks: 81,648 to about 20,400 units) waits on memory and gains.
/// Fabrics between the two have not been measured; [`Prefetch::On`] and [`Prefetch::Off`] decide for them.
pub const AUTO_MIN_WEIGHT: u64 = 16_384;

/// Whether a run prefetches the state of the blocks it visits next (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Prefetch {
    /// On for a part of at least [`AUTO_MIN_WEIGHT`].
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl Prefetch {
    /// Whether a part of `weight` prefetches.
    pub fn on_for(self, weight: u64) -> bool {
        match self {
            Prefetch::Auto => weight >= AUTO_MIN_WEIGHT,
            Prefetch::On => true,
            Prefetch::Off => false,
        }
    }
}

/// Asks the processor to fetch the `bytes` bytes at `p` into cache.
#[inline(always)]
fn prefetch(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let end = (p as usize).saturating_add(bytes);
        let mut line = p as usize & !63;
        while line < end {
            // SAFETY: a prefetch is a hint: it never faults and reads nothing the program sees, whatever
            // the address.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    line as *const i8,
                )
            };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// The address of `x`, for [`prefetch`].
fn addr<T>(x: &T) -> *const u8 {
    (x as *const T).cast()
}

impl Part {
    /// Before visit `j` of `due` (in cycle `t`): the prefetches for the visits after it.
    #[inline]
    pub(super) fn prefetch_ahead(&self, due: &[u32], j: usize, t: u64) {
        if let Some(&id) = due.get(j + BLOCK_AHEAD) {
            self.prefetch_block(id as usize);
        }
        if let Some(&id) = due.get(j + PORTS_AHEAD) {
            self.prefetch_ports(id as usize, t);
        }
    }

    /// Block `id`'s own record and wake-up tables.
    fn prefetch_block(&self, id: usize) {
        let ns = self.switches.len();
        if let Some(sw) = self.switches.get(id) {
            sw.hot_memory(prefetch);
            prefetch(
                self.port_due[id].as_ptr().cast(),
                self.port_due[id].len() * 8,
            );
        } else if let Some(h) = self.hcas.get(id - ns) {
            h.hot_memory(prefetch);
            prefetch(addr(&self.hca_in[id - ns]), size_of::<Wire<Ev>>());
        }
    }

    /// The records of the ports that switch `id` (if a switch) will look at in a visit at `t`: those whose
    /// wake-ups come before the visit's horizon, and those with an item due on their wire in before it.
    fn prefetch_ports(&self, id: usize, t: u64) {
        let Some(sw) = self.switches.get(id) else {
            return;
        };
        let until = t.saturating_add(self.sw_lat[id]);
        let mut arriving = 0;
        for p in ports(self.port_busy[id]) {
            if self.port_due[id][p] < until {
                arriving |= 1 << p;
                prefetch(addr(&self.sw_in[id][p]), size_of::<Option<Wire<Ev>>>());
            }
        }
        sw.hot_port_memory(until, arriving, prefetch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_prefetches_for_the_tree_and_not_for_the_clos() {
        // The 648-port Clos: 54 switches of 36 ports and 648 HCAs; the 11,664-node tree: 1,620 and 11,664,
        // whole or in four parts.
        let clos = 54 * 36 + 2 * 648;
        let tree = 1_620 * 36 + 2 * 11_664;
        assert!(!Prefetch::Auto.on_for(clos));
        assert!(Prefetch::Auto.on_for(tree));
        assert!(Prefetch::Auto.on_for(tree / 4));
        assert!(Prefetch::On.on_for(0) && !Prefetch::Off.on_for(u64::MAX));
    }
}
