//! Per-flow state of one HCA, for the flows that touch it only.
//!
//! An HCA keeps counters per scenario flow (received, injected, CNPs) but only ever sees the flows it sends
//! or receives. A dense vector per HCA over every flow of the scenario costs HCAs x flows entries: on the
//! 11,664-host fat tree with one flow per host, 136 million entries per counter. The
//! table keeps entries only for flows it was told of ([`FlowTable::note`], at fabric assembly) or that
//! reached it (a flow whose destination changes during a run, as the uniform bench's do), sorted by flow
//! number, so a lookup is a binary search over the few flows of one HCA. Where HCAs x flows is small the
//! table is dense ([`FlowTable::make_dense`]): a lookup is an index, as cheap as the plain vector, where a
//! search would run for every packet received over all the flows that ever reached the HCA (hundreds on
//! the uniform bench, whose destinations change with every packet).

use std::ops::{Index, IndexMut};

/// Values of type `T` per flow number below a limit (the scenario's flow count); absent flows read as
/// `T::default()`.
#[derive(Debug, Clone)]
pub struct FlowTable<T> {
    /// Flow numbers of `vals`, sorted; unused when `dense`.
    ids: Vec<u32>,
    /// Every flow below the limit has its entry, at its own index.
    dense: bool,
    vals: Vec<T>,
    limit: usize,
    absent: T,
}

impl<T: Default + Clone> FlowTable<T> {
    /// An empty table for flows `0..limit`.
    pub fn new(limit: usize) -> Self {
        FlowTable {
            ids: Vec::new(),
            dense: false,
            vals: Vec::new(),
            limit,
            absent: T::default(),
        }
    }

    /// Gives every flow below the limit its entry, kept at its own index: lookups become indexing, at
    /// `limit` entries of memory.
    pub fn make_dense(&mut self) {
        let mut vals = vec![T::default(); self.limit];
        for (&i, v) in self.ids.iter().zip(self.vals.drain(..)) {
            vals[i as usize] = v;
        }
        self.vals = vals;
        self.ids = Vec::new();
        self.dense = true;
    }

    /// Flow numbers with an entry, in order.
    fn keys(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        if self.dense {
            Box::new(0..self.limit)
        } else {
            Box::new(self.ids.iter().map(|&i| i as usize))
        }
    }

    /// Flow numbers accepted: `0..limit`.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Makes room for flow `i` (a no-op if it has an entry or is beyond the limit). Cheap when flows are
    /// noted in increasing order, as fabric assembly does.
    pub fn note(&mut self, i: usize) {
        let _ = self.get_mut(i);
    }

    fn find(&self, i: usize) -> Result<usize, usize> {
        if self.dense {
            return if i < self.limit { Ok(i) } else { Err(i) };
        }
        // Noted in increasing order, so the last entry is the likeliest insertion point.
        match self.ids.last() {
            Some(&last) if (last as usize) < i => Err(self.ids.len()),
            None => Err(0),
            _ => self.ids.binary_search(&(i as u32)),
        }
    }

    /// The entry of flow `i`, if it has one.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.find(i).ok().map(|k| &self.vals[k])
    }

    /// The entry of flow `i`, made if missing; `None` beyond the limit.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.limit {
            return None;
        }
        let k = match self.find(i) {
            Ok(k) => k,
            Err(k) => {
                self.ids.insert(k, i as u32);
                self.vals.insert(k, T::default());
                k
            }
        };
        Some(&mut self.vals[k])
    }

    /// The entries, in flow order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.vals.iter()
    }
}

/// Equal as maps over `0..limit`: a flow one table has no entry for reads as `T::default()` there.
impl<T: Default + Clone + PartialEq> PartialEq for FlowTable<T> {
    fn eq(&self, other: &Self) -> bool {
        self.limit == other.limit && self.keys().chain(other.keys()).all(|i| self[i] == other[i])
    }
}

impl<T: Default + Clone + Eq> Eq for FlowTable<T> {}

impl<T: Default + Clone> Index<usize> for FlowTable<T> {
    type Output = T;

    /// Flow `i`'s entry, `T::default()` if it has none. Panics beyond the limit, as a vector would.
    fn index(&self, i: usize) -> &T {
        assert!(i < self.limit, "flow {i} of {}", self.limit);
        self.get(i).unwrap_or(&self.absent)
    }
}

impl<T: Default + Clone> IndexMut<usize> for FlowTable<T> {
    /// Flow `i`'s entry, made if missing. Panics beyond the limit.
    fn index_mut(&mut self, i: usize) -> &mut T {
        let limit = self.limit;
        self.get_mut(i)
            .unwrap_or_else(|| panic!("flow {i} of {limit}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_default_writes_insert_in_order() {
        let mut t = FlowTable::<u64>::new(10);
        assert_eq!(t[7], 0);
        assert!(t.get(7).is_none());
        t[7] += 2;
        t.note(3);
        t[9] += 1;
        *t.get_mut(3).unwrap() += 5;
        assert_eq!((t[3], t[7], t[9], t[0]), (5, 2, 1, 0));
        assert_eq!(t.iter().copied().collect::<Vec<_>>(), vec![5, 2, 1]);
        assert!(t.get_mut(10).is_none());
        let mut u = FlowTable::<u64>::new(10);
        u.note(4);
        (u[3], u[7], u[9]) = (5, 2, 1);
        assert_eq!(t, u);
        u[4] = 1;
        assert_ne!(t, u);
        let mut d = t.clone();
        d.make_dense();
        assert_eq!((d[3], d[7], d[9], d[0]), (5, 2, 1, 0));
        assert_eq!(d, t);
        d[0] = 4;
        assert_ne!(d, t);
        assert!(d.get_mut(10).is_none());
    }

    #[test]
    #[should_panic(expected = "flow 10 of 10")]
    fn beyond_the_limit_panics_as_a_vector_would() {
        let t = FlowTable::<u64>::new(10);
        let _ = t[10];
    }
}
