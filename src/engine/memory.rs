//! Memory figures of this process, for reporting what sessions cost.

/// Resident memory of this process in bytes (Linux: resident set; Windows: working set), for
/// reporting per-session cost.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: sysconf takes a constant name and touches no memory of ours.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * page.max(1) as u64)
    }
    #[cfg(windows)]
    {
        windows::working_set()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        None
    }
}

/// This process's memory counters as Windows reports them (also read by the CLI's process figures).
#[cfg(windows)]
pub mod windows {
    /// PROCESS_MEMORY_COUNTERS_EX of psapi.h.
    #[repr(C)]
    #[derive(Default)]
    pub struct ProcessMemoryCountersEx {
        pub cb: u32,
        pub page_fault_count: u32,
        pub peak_working_set_size: usize,
        pub working_set_size: usize,
        pub quota_peak_paged_pool_usage: usize,
        pub quota_paged_pool_usage: usize,
        pub quota_peak_non_paged_pool_usage: usize,
        pub quota_non_paged_pool_usage: usize,
        pub pagefile_usage: usize,
        pub peak_pagefile_usage: usize,
        pub private_usage: usize,
    }

    #[link(name = "kernel32")]
    extern "system" {
        fn GetCurrentProcess() -> *mut std::ffi::c_void;
        // kernel32's name for psapi's GetProcessMemoryInfo (Windows 7 and later): no psapi.dll import.
        fn K32GetProcessMemoryInfo(process: *mut std::ffi::c_void, counters: *mut ProcessMemoryCountersEx, cb: u32) -> i32;
    }

    /// This process's counters; None when the call fails.
    pub fn counters() -> Option<ProcessMemoryCountersEx> {
        let mut c = ProcessMemoryCountersEx { cb: std::mem::size_of::<ProcessMemoryCountersEx>() as u32, ..Default::default() };
        // SAFETY: the pseudo-handle of this process and a counters struct of the size given in `cb`.
        let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &mut c, c.cb) };
        (ok != 0).then_some(c)
    }

    pub fn working_set() -> Option<u64> {
        counters().map(|c| c.working_set_size as u64)
    }
}
