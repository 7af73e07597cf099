//! The versioned-struct contract of the C ABI, in one place.
//!
//! Every struct a caller passes by pointer and that may grow in a later release starts with
//! `uint32_t struct_size`, which the caller sets to `sizeof` the struct as it was compiled, before any
//! call that reads or fills it (the `*_default` functions included). segrt then:
//! - reads and writes at most `struct_size` bytes, and never the `struct_size` field itself;
//! - refuses a size below the first published layout, or one that ends inside a field;
//! - accepts a longer struct (a host built against a newer header) when the bytes it does not know
//!   are all zero, and leaves them untouched; a non-zero byte there asks for something this build
//!   cannot do, so the call is refused, naming its offset.
//!
//! Arrays of records (`SegEverythingObject`, `SegTrackObject`) carry no size field: the caller
//! passes the size of one record (`sizeof`), and segrt writes each record's known prefix at that
//! stride.

use std::mem::size_of;

use crate::error::{Error, ErrorKind, Result};

/// A `#[repr(C)]` struct of the C ABI whose first field is `struct_size: u32`.
///
/// # Safety
/// Implementors are `#[repr(C)]`, start with a `u32` holding the caller's size, and `LAYOUTS` lists
/// the sizes of every published layout, oldest first, the last being `size_of::<Self>()`.
pub(crate) unsafe trait Versioned: Copy {
    /// The C name, for messages.
    const NAME: &'static str;
    /// `sizeof` of each published layout, oldest first. ABI 1 has one layout per struct.
    const LAYOUTS: &'static [usize] = &[size_of::<Self>()];
    /// Reserved bytes (must be 0) right after an older layout, which a host declaring a size that
    /// ends inside or at the end of them can only have set by asking for a field this library lacks:
    /// a non-zero byte there is refused like a newer host's unknown tail, naming its offset. (ABI 1's
    /// first hosts test exactly that with `sizeof + 16`, so `SegOptions` grew past such a block.)
    const RESERVED_TAIL: Option<std::ops::Range<usize>> = None;
}

/// Declares a C struct versioned: implements [`Versioned`], named after the type, and checks at
/// compile time the part of the trait's contract the compiler can see, a `u32` `struct_size` as the
/// first field. The braces, when given, hold the struct's published layouts (`LAYOUTS`,
/// `RESERVED_TAIL`); without them it has one. Use it beside the struct's `#[repr(C)]` definition
/// (cbindgen writes only `#[repr(C)]` structs out field by field, so `bindings --check` would catch one
/// that lost it).
macro_rules! versioned {
    ($t:ident $({ $($layouts:tt)* })?) => {
        const _: () = assert!(::std::mem::offset_of!($t, struct_size) == 0, concat!(stringify!($t), ": struct_size must come first"));
        const _: fn(&$t) -> u32 = |s| s.struct_size;
        // SAFETY: a `#[repr(C)]` struct (the macro's contract) whose `u32` `struct_size` is at offset 0
        // (checked above), with the published layouts given here (or the one, its own size).
        unsafe impl $crate::ffi::versioned::Versioned for $t {
            const NAME: &'static str = stringify!($t);
            $($($layouts)*)?
        }
    };
}
pub(crate) use versioned;

/// Bytes segrt may read or write of the caller's struct at `p` (not NULL): its `struct_size`,
/// checked against the contract, capped at the layout this build knows.
///
/// # Safety
/// `p` must point to at least `struct_size` readable bytes.
unsafe fn checked_size<T: Versioned>(p: *const T) -> Result<usize> {
    // SAFETY: the caller guarantees at least the `u32` size field is readable; it may be unaligned.
    let size = unsafe { std::ptr::read_unaligned(p.cast::<u32>()) } as usize;
    let layouts = T::LAYOUTS;
    let ours = size_of::<T>();
    if size < layouts[0] {
        return Err(Error::invalid(format!(
            "{name}.struct_size is {size}, expected {ours} (sizeof({name})): set struct_size before the call, e.g. {name} s = {{ .struct_size = sizeof s }}",
            name = T::NAME
        )));
    }
    if size <= ours {
        if !layouts.contains(&size) {
            return Err(Error::invalid(format!(
                "{name}.struct_size is {size}, which ends inside a field: the sizes of its published layouts are {layouts:?}",
                name = T::NAME
            )));
        }
        if let Some(reserved) = T::RESERVED_TAIL.filter(|r| size > r.start && size <= r.end) {
            // SAFETY: the caller guarantees `size` readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(reserved.start), size - reserved.start) };
            if let Some(i) = bytes.iter().position(|b| *b != 0) {
                return Err(unknown_field::<T>(size, reserved.start + i));
            }
        }
        return Ok(size);
    }
    // A newer host's struct: this build knows only the first `ours` bytes.
    // SAFETY: the caller guarantees `size` readable bytes.
    let tail = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(ours), size - ours) };
    if let Some(i) = tail.iter().position(|b| *b != 0) {
        return Err(unknown_field::<T>(size, ours + i));
    }
    Ok(ours)
}

/// A non-zero byte at `offset` where this library has no field (a newer host's tail, or reserved bytes).
fn unknown_field<T: Versioned>(size: usize, offset: usize) -> Error {
    Error::invalid(format!(
        "{name}.struct_size is {size} but this segrt ({version}) has no field at byte {offset}, and byte {offset} is not zero: \
         the host sets a field this library does not have; ship the segrt library of the host's release",
        name = T::NAME,
        version = env!("CARGO_PKG_VERSION"),
    ))
}

/// Reads the caller's struct (NULL = `defaults`): the bytes its size covers over `defaults`, so
/// fields beyond it take their defaults.
///
/// # Safety
/// `p` must be NULL or point to at least `struct_size` readable bytes.
pub(crate) unsafe fn read_versioned<T: Versioned>(p: *const T, defaults: T) -> Result<T> {
    let mut value = defaults;
    if !p.is_null() {
        // SAFETY: forwarded from the caller.
        let n = unsafe { checked_size(p)? };
        // SAFETY: `n` bytes are readable at `p` and fit in `T`; `value` is a distinct local.
        unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), (&mut value as *mut T).cast::<u8>(), n) };
    }
    Ok(value)
}

/// The number of bytes of an optional output struct segrt may write (0 when `p` is NULL), checked
/// before anything runs so that a refused struct leaves the call without effect.
///
/// # Safety
/// `p` must be NULL or point to at least `struct_size` readable bytes.
pub(crate) unsafe fn out_size<T: Versioned>(p: *const T) -> Result<usize> {
    if p.is_null() {
        return Ok(0);
    }
    // SAFETY: forwarded from the caller.
    unsafe { checked_size(p) }
}

/// Writes `value` into the caller's struct: its first `n` bytes (from `out_size`), except the
/// caller's `struct_size`. Nothing is written when `dst` is NULL.
///
/// # Safety
/// `dst` must be NULL or valid for `n` writable bytes, `n <= size_of::<T>()`.
pub(crate) unsafe fn write_versioned<T: Versioned>(value: &T, dst: *mut T, n: usize) {
    if dst.is_null() || n <= size_of::<u32>() {
        return;
    }
    let n = n.min(size_of::<T>());
    let skip = size_of::<u32>();
    // SAFETY: both ranges hold `n` bytes (checked above and by the caller) and do not overlap.
    unsafe { std::ptr::copy_nonoverlapping((value as *const T).cast::<u8>().add(skip), dst.cast::<u8>().add(skip), n - skip) };
}

/// Fills a caller's struct with `defaults` (a `*_default` function): the caller's `struct_size`
/// is checked and kept, and only the bytes it covers are written.
///
/// # Safety
/// `dst` must be NULL or point to at least `struct_size` writable bytes.
pub(crate) unsafe fn fill_defaults<T: Versioned>(dst: *mut T, defaults: T, what: &str) -> Result<()> {
    if dst.is_null() {
        return Err(Error::null(what));
    }
    // SAFETY: forwarded from the caller.
    let n = unsafe { checked_size(dst)? };
    // SAFETY: `n` bytes are writable at `dst`.
    unsafe { write_versioned(&defaults, dst, n) };
    Ok(())
}

/// The size of one record of a caller's array of `capacity` records (`record_size`), checked: at
/// least the record's first published layout, and an array no larger than the address space allows
/// (`record_size * capacity <= isize::MAX`), so that no record's offset can overflow into a wild
/// address. segrt writes `min(record_size, size_of::<T>())` bytes of each.
pub(crate) fn record_array<T>(record_size: usize, capacity: usize, name: &str) -> Result<usize> {
    let ours = size_of::<T>();
    if record_size < ours {
        return Err(Error::invalid(format!("the {name} record size is {record_size}, expected {ours}: pass sizeof({name})")));
    }
    if record_size.checked_mul(capacity).is_none_or(|bytes| bytes > isize::MAX as usize) {
        return Err(Error::invalid(format!(
            "{capacity} records of {record_size} bytes ({name}) exceed the address space: pass sizeof({name}) and the array's length"
        )));
    }
    Ok(record_size)
}

/// Writes `records` into the caller's array of `record_size`-byte records (from `record_size`):
/// the known prefix of each, at the caller's stride.
///
/// # Safety
/// `dst` must point to `records.len()` records of `record_size` writable bytes each.
pub(crate) unsafe fn write_records<T: Copy>(dst: *mut T, record_size: usize, records: &[T]) {
    let n = record_size.min(size_of::<T>());
    for (i, r) in records.iter().enumerate() {
        // SAFETY: record `i` starts `i * record_size` bytes in and holds `n` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping((r as *const T).cast::<u8>(), dst.cast::<u8>().add(i * record_size), n) };
    }
}

/// The two-call pattern's count: writes `n` into `*out_count` when given, then refuses an array
/// (`array`, `capacity` records; `given` false when NULL) too small for the `n` things `found`
/// (a plural noun), before anything else is written.
///
/// # Safety
/// `out_count` must be NULL or writable.
pub(crate) unsafe fn report_count(out_count: *mut usize, n: usize, array: &str, given: bool, capacity: usize, found: &str) -> Result<()> {
    if !out_count.is_null() {
        // SAFETY: not NULL, so writable (the caller's contract).
        unsafe { out_count.write(n) };
    }
    if given && capacity < n {
        return Err(Error::new(
            ErrorKind::BufferTooSmall,
            format!("{array} holds {capacity} records, {n} {found} found: nothing written (the count is in *out_count)"),
        ));
    }
    Ok(())
}

/// Reads a caller's array of `count` input records of `record_size` bytes (from `record_array`):
/// the known prefix of each, at the caller's stride. The bytes beyond it, a newer host's fields,
/// must be zero: a field this library does not know is refused, never ignored.
///
/// # Safety
/// `src` must point to `count` records of `record_size` readable bytes each.
pub(crate) unsafe fn read_records<T: Copy>(src: *const T, record_size: usize, count: usize, name: &str) -> Result<Vec<T>> {
    let ours = size_of::<T>();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: record `i` starts `i * record_size` bytes in (within isize, checked by
        // `record_array`) and holds `record_size` >= `ours` readable bytes; read unaligned.
        let p = unsafe { src.cast::<u8>().add(i * record_size) };
        // SAFETY: as above.
        let tail = unsafe { std::slice::from_raw_parts(p.add(ours), record_size - ours) };
        if let Some(b) = tail.iter().position(|b| *b != 0) {
            return Err(Error::invalid(format!(
                "{name} record {i}: the record size is {record_size} but this segrt ({version}) knows {ours} bytes, and byte {offset} is not zero: \
                 the host sets a field this library does not have; ship the segrt library of the host's release",
                version = env!("CARGO_PKG_VERSION"),
                offset = ours + b
            )));
        }
        // SAFETY: `ours` readable bytes at `p`.
        out.push(unsafe { std::ptr::read_unaligned(p.cast::<T>()) });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Demo {
        struct_size: u32,
        a: u32,
        b: u64,
    }
    // Two published layouts: `a`, then `b` appended.
    versioned!(Demo {
        const LAYOUTS: &'static [usize] = &[8, 16];
    });
    const DEFAULTS: Demo = Demo { struct_size: 16, a: 1, b: 2 };

    /// A caller's bytes: the struct, then what a newer header appended.
    #[repr(C)]
    struct Newer {
        demo: Demo,
        future: [u8; 8],
    }

    #[test]
    fn reads_only_what_the_size_covers() {
        let old = Demo { struct_size: 8, a: 7, b: 99 };
        // SAFETY: a live local Demo; its struct_size is within its 16 bytes.
        assert_eq!(unsafe { read_versioned(&old, DEFAULTS) }.unwrap(), Demo { struct_size: 8, a: 7, b: 2 });
        let now = Demo { struct_size: 16, a: 7, b: 99 };
        // SAFETY: as above.
        assert_eq!(unsafe { read_versioned(&now, DEFAULTS) }.unwrap().b, 99);
        // SAFETY: NULL is allowed.
        assert_eq!(unsafe { read_versioned(std::ptr::null(), DEFAULTS) }.unwrap(), DEFAULTS);
    }

    #[test]
    fn sizes_below_the_first_layout_or_inside_a_field_are_refused() {
        for size in [0, 4, 7, 12, 15] {
            let d = Demo { struct_size: size, a: 0, b: 0 };
            // SAFETY: a live local Demo; the sizes tried are within its 16 bytes.
            let e = unsafe { read_versioned(&d, DEFAULTS) }.unwrap_err();
            assert!(e.message.contains(&format!("Demo.struct_size is {size}")), "{}", e.message);
        }
    }

    #[test]
    fn a_newer_struct_needs_a_zero_tail() {
        let mut newer = Newer { demo: Demo { struct_size: 24, a: 3, b: 4 }, future: [0; 8] };
        // The pointer covers the whole 24-byte struct, as a host's does.
        let p = |n: &Newer| (n as *const Newer).cast::<Demo>();
        // SAFETY: `p` points to the 24 bytes its struct_size declares.
        assert_eq!(unsafe { read_versioned(p(&newer), DEFAULTS) }.unwrap().b, 4);
        // SAFETY: as above.
        assert_eq!(unsafe { out_size(p(&newer)) }.unwrap(), 16);
        newer.future[5] = 1;
        // SAFETY: as above.
        let e = unsafe { read_versioned(p(&newer), DEFAULTS) }.unwrap_err();
        assert!(e.message.contains("byte 21 is not zero"), "{}", e.message);
    }

    #[test]
    fn writes_stop_at_the_callers_size_and_keep_its_struct_size() {
        // Guard bytes after an old caller's 8-byte struct must survive every write.
        let mut bytes = [0xAAu8; 24];
        bytes[..4].copy_from_slice(&8u32.to_ne_bytes());
        let p = bytes.as_mut_ptr().cast::<Demo>();
        // SAFETY: 24 local bytes: a caller's 8-byte struct then guard bytes, only accessed unaligned.
        unsafe { fill_defaults(p, Demo { struct_size: 16, a: 5, b: 6 }, "demo") }.unwrap();
        assert_eq!(u32::from_ne_bytes(bytes[..4].try_into().unwrap()), 8);
        assert_eq!(u32::from_ne_bytes(bytes[4..8].try_into().unwrap()), 5);
        assert!(bytes[8..].iter().all(|b| *b == 0xAA), "{bytes:?}");
        // A refused size writes nothing.
        let mut bad = [0xAAu8; 24];
        bad[..4].copy_from_slice(&12u32.to_ne_bytes());
        // SAFETY: 24 local bytes: a size the contract refuses, only accessed unaligned.
        assert!(unsafe { fill_defaults(bad.as_mut_ptr().cast::<Demo>(), DEFAULTS, "demo") }.is_err());
        assert!(bad[4..].iter().all(|b| *b == 0xAA));
        // SAFETY: NULL is allowed.
        assert!(unsafe { fill_defaults(std::ptr::null_mut::<Demo>(), DEFAULTS, "demo") }.is_err());
    }

    #[test]
    fn records_are_written_at_the_callers_stride() {
        let mut bytes = [0xAAu8; 40];
        let records = [Demo { struct_size: 0, a: 1, b: 2 }, Demo { struct_size: 0, a: 3, b: 4 }];
        let stride = record_array::<Demo>(20, 2, "Demo").unwrap();
        // SAFETY: 40 writable local bytes: 2 records at a stride of 20, 16 bytes each.
        unsafe { write_records(bytes.as_mut_ptr().cast::<Demo>(), stride, &records) };
        assert_eq!(u32::from_ne_bytes(bytes[24..28].try_into().unwrap()), 3);
        assert!(bytes[16..20].iter().chain(&bytes[36..40]).all(|b| *b == 0xAA));
        assert!(record_array::<Demo>(12, 2, "Demo").is_err());
    }

    #[test]
    fn input_records_are_read_at_the_callers_stride_and_unknown_bytes_must_be_zero() {
        // 2 records at a stride of 20: the 16 known bytes of each, then 4 bytes of a newer host
        let mut bytes = [0u8; 40];
        for (i, a) in [7u32, 9].iter().enumerate() {
            bytes[i * 20 + 4..i * 20 + 8].copy_from_slice(&a.to_ne_bytes());
        }
        let p = bytes.as_ptr().cast::<Demo>();
        // SAFETY: 40 readable local bytes: 2 records of 20, only read unaligned.
        let read = unsafe { read_records(p, 20, 2, "Demo") }.unwrap();
        assert_eq!(read.iter().map(|d| d.a).collect::<Vec<_>>(), vec![7, 9]);
        bytes[20 + 17] = 1;
        let p = bytes.as_ptr().cast::<Demo>();
        // SAFETY: as above.
        let e = unsafe { read_records(p, 20, 2, "Demo") }.unwrap_err();
        assert!(e.message.contains("Demo record 1") && e.message.contains("byte 17 is not zero"), "{}", e.message);
    }

    #[test]
    fn record_arrays_beyond_the_address_space_are_refused() {
        let half = isize::MAX as usize / 2 + 1;
        for (size, capacity) in [(1usize << 63, 192usize), (usize::MAX, 2), (half, 2), (16, usize::MAX / 16 + 1), (16, isize::MAX as usize)]
        {
            let e = record_array::<Demo>(size, capacity, "Demo").unwrap_err();
            assert!(e.message.contains("exceed the address space"), "{size} x {capacity}: {}", e.message);
        }
        // The largest arrays that fit, and any size with no records, are accepted.
        assert_eq!(record_array::<Demo>(16, isize::MAX as usize / 16, "Demo").unwrap(), 16);
        assert_eq!(record_array::<Demo>(1 << 62, 1, "Demo").unwrap(), 1 << 62);
        assert_eq!(record_array::<Demo>(usize::MAX, 0, "Demo").unwrap(), usize::MAX);
    }
}
