//! The [`crate::dut::Dut`] impl every RTL adapter shares, generated from the adapter's output conversions.

/// Implements [`crate::dut::Dut`] for an RTL adapter from one conversion per output port (and, given the port
/// struct's type as `Adapter [Io]: ...`, [`crate::ffi::RtlDut`] too).
///
/// The adapter `$rtl` has fields `m: Rtl<Io>` and `io: Io` and an inherent `drive(&mut self, &In)` that
/// writes one cycle's inputs into `io` (held configuration ports are written once, when the adapter is built).
/// Each `field: |v| expr` turns the port value `v` (a reference to the `Io` field of that name) into the `Out`
/// field of that name. `step` builds the `Out`; `step_check`, the lockstep checker's per-cycle path, compares
/// every converted port with the model's field in place (`&`, not `&&`: one branch for all ports) and builds
/// an `Out` only when one differs.
#[macro_export]
macro_rules! rtl_dut {
    ($rtl:ty: $in:ty => $out:ident { $($f:ident: |$v:ident| $conv:expr),* $(,)? }) => {
        $crate::rtl_dut!(@dut $rtl: $in => $out { $($f: |$v| $conv),* });
    };
    // With the port struct's type: also [`crate::ffi::RtlDut`] (its `load` is `drive`, its parts the two fields).
    ($rtl:ty [$io:ty]: $in:ty => $out:ident { $($f:ident: |$v:ident| $conv:expr),* $(,)? }) => {
        $crate::rtl_dut!(@dut $rtl: $in => $out { $($f: |$v| $conv),* });

        impl $crate::ffi::RtlDut for $rtl {
            type Io = $io;

            fn load(&mut self, i: &$in) {
                self.drive(i);
            }

            fn parts(&mut self) -> (&mut $crate::ffi::Rtl<$io>, &mut $io) {
                (&mut self.m, &mut self.io)
            }
        }
    };
    (@dut $rtl:ty: $in:ty => $out:ident { $($f:ident: |$v:ident| $conv:expr),* $(,)? }) => {
        impl $rtl {
            /// The outputs the RTL showed in its last step, before the clock edge.
            #[inline]
            fn outputs(&self) -> $out {
                let io = &self.io;
                $out { $($f: { let $v = &io.$f; $conv }),* }
            }
        }

        impl $crate::dut::Dut for $rtl {
            type In = $in;
            type Out = $out;

            #[inline]
            fn step(&mut self, i: &$in) -> Result<$out, $crate::dut::Halt> {
                self.drive(i);
                self.m.step(&mut self.io)?;
                Ok(self.outputs())
            }

            #[inline]
            fn step_check(
                &mut self,
                i: &$in,
                expected: &$out,
            ) -> Result<Option<$out>, $crate::dut::Halt> {
                self.drive(i);
                self.m.step(&mut self.io)?;
                let io = &self.io;
                let same = true $(& ({ let $v = &io.$f; $conv } == expected.$f))*;
                Ok(if same { None } else { Some(self.outputs()) })
            }
        }
    };
}
