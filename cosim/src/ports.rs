//! Port names and values of a block's `In`/`Out` structs, so the checker can name the port that differs and
//! port traces can be written and read without per-block code. Values are [`Wide`]: ports of any width up to
//! 2,048 bits (packed arrays such as `vl_arb`'s `len_i` or `cong_detect`'s `voq_fill_i` are one value, lane 0
//! in the low bits, as the RTL flattens them).

pub use crate::wide::Wide;

/// A struct whose fields are ports, in the order of the port table (`crate::table`).
pub trait Ports: Copy {
    /// Port names, in field order.
    const NAMES: &'static [&'static str];
    /// Value of port `i` (index into [`Ports::NAMES`]), zero-extended.
    fn get(&self, i: usize) -> Wide;
    /// The struct from values in [`Ports::NAMES`] order (missing values read as 0; values are truncated to the
    /// field's Rust type, callers check port widths first).
    fn from_values(v: &[Wide]) -> Self;
}

/// A field type that carries a port value.
pub trait PortValue: Copy {
    /// The value, zero-extended.
    fn to_wide(self) -> Wide;
    /// The value truncated to this type.
    fn from_wide(v: &Wide) -> Self;
}

impl PortValue for bool {
    fn to_wide(self) -> Wide {
        Wide::from(self)
    }
    fn from_wide(v: &Wide) -> Self {
        v.low_u64() & 1 != 0
    }
}

macro_rules! port_value_int {
    ($($t:ty),*) => {$(
        impl PortValue for $t {
            fn to_wide(self) -> Wide {
                Wide::from(self)
            }
            fn from_wide(v: &Wide) -> Self {
                v.low_u64() as $t
            }
        }
    )*};
}
port_value_int!(u8, u16, u32, u64);

/// Packed lanes wider than 64 bits (`ib_switch`'s per-port vectors, `fecn_rewrite_b32`'s beat).
impl PortValue for u128 {
    fn to_wide(self) -> Wide {
        Wide::from(self)
    }
    fn from_wide(v: &Wide) -> Self {
        v.low_u128()
    }
}

/// Implements [`Ports`] for a struct from its field list (which must name every field, in table order).
#[macro_export]
macro_rules! impl_ports {
    ($ty:ty { $($f:ident),* $(,)? }) => {
        impl $crate::ports::Ports for $ty {
            const NAMES: &'static [&'static str] = &[$(stringify!($f)),*];
            #[allow(unused_assignments)]
            fn get(&self, i: usize) -> $crate::ports::Wide {
                let mut k = 0usize;
                $(
                    if i == k {
                        return $crate::ports::PortValue::to_wide(self.$f);
                    }
                    k += 1;
                )*
                $crate::ports::Wide::ZERO
            }
            fn from_values(v: &[$crate::ports::Wide]) -> Self {
                let mut it = v.iter();
                Self { $($f: $crate::ports::PortValue::from_wide(it.next().unwrap_or(&$crate::ports::Wide::ZERO))),* }
            }
        }
    };
}

/// Index of the first port whose value differs between `a` and `b`.
pub fn first_difference<P: Ports>(a: &P, b: &P) -> Option<usize> {
    (0..P::NAMES.len()).find(|&i| a.get(i) != b.get(i))
}
