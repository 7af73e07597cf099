//! `c_enum!`: the conversions of a C enum, which arrives from C as a plain `int32_t` (an
//! out-of-range value in a Rust enum would be undefined behaviour): `TryFrom<i32>` with the accepted
//! values listed in the error, and `From` the library's own enum where the C enum has a twin there.

/// Conversions of a C enum. `C <=> Library`: `From<Library> for C` and `TryFrom<i32> for Library`;
/// `C` alone (its values are read into richer library types, or choose what the boundary does):
/// `TryFrom<i32> for C`. An unknown value is `kind`, with the accepted values listed.
macro_rules! c_enum {
    ($c:ident <=> $lib:ident, $kind:expr, $what:literal, { $($variant:ident <=> $lib_variant:ident),+ $(,)? }) => {
        impl From<$lib> for $c {
            fn from(v: $lib) -> Self {
                match v {
                    $($lib::$lib_variant => $c::$variant,)+
                }
            }
        }
        impl TryFrom<i32> for $lib {
            type Error = $crate::error::Error;
            fn try_from(v: i32) -> $crate::error::Result<Self> {
                $(if v == $c::$variant as i32 { return Ok($lib::$lib_variant); })+
                Err(c_enum!(@unknown $c, $kind, $what, v, $($variant),+))
            }
        }
    };
    ($c:ident, $kind:expr, $what:literal, { $($variant:ident),+ $(,)? }) => {
        impl TryFrom<i32> for $c {
            type Error = $crate::error::Error;
            fn try_from(v: i32) -> $crate::error::Result<Self> {
                $(if v == $c::$variant as i32 { return Ok($c::$variant); })+
                Err(c_enum!(@unknown $c, $kind, $what, v, $($variant),+))
            }
        }
    };
    (@unknown $c:ident, $kind:expr, $what:literal, $v:expr, $($variant:ident),+) => {
        $crate::error::Error::new($kind, format!(
            concat!("unknown ", $what, " {} (expected one of:", $(" ", stringify!($variant), "=", "{}"),+, ")"),
            $v, $($c::$variant as i32),+
        ))
    };
}
pub(crate) use c_enum;
