//! Folders for ONNX Runtime code that opens files through narrow `char` strings. Its TensorRT
//! provider keeps its engine and timing caches under `trt_engine_cache_path` and opens them with
//! `std::ifstream(std::string)`: on Windows that string is read in the system code page (not UTF-8)
//! and limited to MAX_PATH (260 characters), so a folder under "D:\模型" or a deep one would break
//! the cache. segrt hands such a folder over by its short (8.3) name, which is ASCII and short.

use std::path::Path;

use crate::error::{Error, ErrorKind, Result};

/// The longest folder given to a narrow-string API as it is: the provider adds file names of its own
/// (the graph's name, a hash, the precision, `.engine`) that must still fit under MAX_PATH.
pub const MAX_NARROW_FOLDER: usize = 150;

/// Whether a narrow-string API on Windows opens `folder` and the files under it as they are.
pub fn fits_narrow_api(folder: &str) -> bool {
    folder.is_ascii() && folder.len() <= MAX_NARROW_FOLDER
}

/// `folder` (which exists) as ONNX Runtime's narrow-string code can open it: as it is where it fits
/// (and on every system but Windows, whose file APIs take UTF-8 bytes of any length), else by its
/// short name; refused when the volume has no short name for it.
pub fn for_narrow_api(folder: &Path, what: &str) -> Result<String> {
    let text = folder.to_str().ok_or_else(|| Error::invalid(format!("{what} '{}' is not valid Unicode", folder.display())))?;
    if !cfg!(windows) || fits_narrow_api(text) {
        return Ok(text.to_string());
    }
    match short_name(folder) {
        Some(short) if fits_narrow_api(&short) => Ok(short),
        _ => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{what} '{text}' cannot be handed to ONNX Runtime's TensorRT provider, which opens it through the system code page \
                 and at most 260 characters, and this volume gives it no short (8.3) name: choose a folder whose path is ASCII \
                 and at most {MAX_NARROW_FOLDER} characters long"
            ),
        )),
    }
}

/// The short (8.3) name Windows gives an existing file or folder, without a `\\?\` prefix.
#[cfg(windows)]
fn short_name(path: &Path) -> Option<String> {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    #[link(name = "kernel32")]
    extern "system" {
        fn GetShortPathNameW(long_path: *const u16, short_path: *mut u16, capacity: u32) -> u32;
    }
    // A drive path goes in as \\?\C:\... to reach folders past MAX_PATH (the prefix is taken off the
    // answer); a path starting with \\ (UNC, or verbatim already) goes in as it is.
    let absolute = std::path::absolute(path).ok()?;
    let wide: Vec<u16> = absolute.as_os_str().encode_wide().collect();
    let prefix: Vec<u16> = if wide.starts_with(&[b'\\' as u16, b'\\' as u16]) { Vec::new() } else { r"\\?\".encode_utf16().collect() };
    let verbatim: Vec<u16> = prefix.into_iter().chain(wide).chain([0]).collect();
    let mut buffer = vec![0u16; 1024];
    loop {
        // SAFETY: `verbatim` is NUL-terminated; `buffer` holds `capacity` u16s.
        let n = unsafe { GetShortPathNameW(verbatim.as_ptr(), buffer.as_mut_ptr(), buffer.len() as u32) } as usize;
        if n == 0 {
            return None;
        }
        if n < buffer.len() {
            buffer.truncate(n);
            break;
        }
        buffer.resize(n + 1, 0);
    }
    let short = std::ffi::OsString::from_wide(&buffer).into_string().ok()?;
    Some(short.strip_prefix(r"\\?\").map(str::to_string).unwrap_or(short))
}

#[cfg(not(windows))]
fn short_name(_: &Path) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_ascii_folders_fit_a_narrow_api() {
        assert!(fits_narrow_api(r"C:\ProgramData\segrt\trt"));
        assert!(!fits_narrow_api("D:\\\u{6a21}\u{578b}\\trt"), "a Chinese folder");
        assert!(!fits_narrow_api(&format!(r"C:\{}", "a".repeat(MAX_NARROW_FOLDER))), "a deep folder");
        assert!(fits_narrow_api(&format!(r"C:\{}", "a".repeat(MAX_NARROW_FOLDER - 3))));
    }

    #[test]
    fn other_systems_get_the_folder_as_it_is() {
        if cfg!(windows) {
            return;
        }
        let folder = Path::new("/var/cache/\u{6a21}\u{578b}").join("a".repeat(300));
        assert_eq!(for_narrow_api(&folder, "trt_cache_dir").unwrap(), folder.to_str().unwrap());
    }
}
