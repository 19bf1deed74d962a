//! Sets of ports as the bits of a `u64` (a switch has at most [`crate::config::PORTS_MAX`] = 64 ports), used
//! wherever a per-cycle path looks for the ports that are due: one branch-free pass instead of a branch per
//! port.

/// The ports whose wake-up cycle in `wake` is at or before `t`, as bits (a branch-free pass the compiler
/// vectorises: finding the due ports of a 36-port switch costs a few instructions, not 36 branches).
pub fn due_mask(wake: &[u64], t: u64) -> u64 {
    wake.iter()
        .enumerate()
        .fold(0u64, |m, (p, &w)| m | (u64::from(w <= t) << p))
}

/// The mask of ports `0..n` (`n` at most 64; 0 gives no port).
pub fn all_ports(n: usize) -> u64 {
    u64::MAX.checked_shr(64 - n.min(64) as u32).unwrap_or(0)
}

/// The set bits of `mask`, lowest first.
pub fn ports(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            p
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_ports_come_out_lowest_first() {
        let wake = [5, 9, 3, u64::MAX, 7];
        assert_eq!(due_mask(&wake, 6), 0b00101);
        assert_eq!(ports(due_mask(&wake, 7)).collect::<Vec<_>>(), vec![0, 2, 4]);
        assert_eq!(ports(0).count(), 0);
        assert_eq!(ports(1 << 63).collect::<Vec<_>>(), vec![63]);
        assert_eq!(all_ports(3), 0b111);
        assert_eq!(all_ports(64), u64::MAX);
        assert_eq!(all_ports(0), 0);
    }
}
