//! Memory figures of this process, for reporting what sessions cost.

/// Resident memory of this process in bytes (Linux), for reporting per-session cost.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: sysconf takes a constant name and touches no memory of ours.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * page.max(1) as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
