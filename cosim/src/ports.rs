//! Port names and values of a block's `In`/`Out` structs, so the checker can name the port that differs and
//! port traces can be written and read without per-block code.

/// A struct whose fields are ports, in the order of the port table (`crate::table`).
pub trait Ports: Copy {
    /// Port names, in field order.
    const NAMES: &'static [&'static str];
    /// Value of port `i` (index into [`Ports::NAMES`]), zero-extended (ports up to 128 bits; packed arrays
    /// such as `vl_arb`'s `len_i` are one value, lane 0 in the low bits).
    fn get(&self, i: usize) -> u128;
    /// The struct from values in [`Ports::NAMES`] order (missing values read as 0; values are truncated to the
    /// field's Rust type, callers check port widths first).
    fn from_values(v: &[u128]) -> Self;
}

/// A field type that carries a port value.
pub trait PortValue: Copy {
    /// The value, zero-extended.
    fn to_u128(self) -> u128;
    /// The value truncated to this type.
    fn from_u128(v: u128) -> Self;
}

impl PortValue for bool {
    fn to_u128(self) -> u128 {
        u128::from(self)
    }
    fn from_u128(v: u128) -> Self {
        v != 0
    }
}

macro_rules! port_value_int {
    ($($t:ty),*) => {$(
        impl PortValue for $t {
            fn to_u128(self) -> u128 {
                u128::from(self)
            }
            fn from_u128(v: u128) -> Self {
                v as $t
            }
        }
    )*};
}
port_value_int!(u8, u16, u32, u64);

/// Implements [`Ports`] for a struct from its field list (which must name every field, in table order).
#[macro_export]
macro_rules! impl_ports {
    ($ty:ty { $($f:ident),* $(,)? }) => {
        impl $crate::ports::Ports for $ty {
            const NAMES: &'static [&'static str] = &[$(stringify!($f)),*];
            #[allow(unused_assignments)]
            fn get(&self, i: usize) -> u128 {
                let mut k = 0usize;
                $(
                    if i == k {
                        return $crate::ports::PortValue::to_u128(self.$f);
                    }
                    k += 1;
                )*
                0
            }
            fn from_values(v: &[u128]) -> Self {
                let mut it = v.iter().copied();
                Self { $($f: $crate::ports::PortValue::from_u128(it.next().unwrap_or(0))),* }
            }
        }
    };
}

/// Index of the first port whose value differs between `a` and `b`.
pub fn first_difference<P: Ports>(a: &P, b: &P) -> Option<usize> {
    (0..P::NAMES.len()).find(|&i| a.get(i) != b.get(i))
}
