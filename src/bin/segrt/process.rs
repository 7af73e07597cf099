//! Figures of this process as the system reports them: resident and private memory, the peak, threads
//! and open handles (Linux: file descriptors). Linux reads /proc/self/status, smaps_rollup and fd/;
//! Windows asks kernel32 (GetProcessMemoryInfo, GetProcessHandleCount, a Toolhelp thread snapshot).
//! A figure the system does not give is `None`.

/// One sample; memory in MiB.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Resident set (Linux VmRSS) / working set (Windows).
    pub resident_mib: Option<f64>,
    /// Memory only this process holds: Linux private pages resident or swapped (smaps_rollup
    /// Private_Clean + Private_Dirty + Swap); Windows the commit charge (PrivateUsage). A leak grows it.
    pub private_mib: Option<f64>,
    /// The most resident the process has been (Linux VmHWM, Windows PeakWorkingSetSize).
    pub peak_mib: Option<f64>,
    pub threads: Option<u64>,
    /// Open handles (Windows) or file descriptors (Linux).
    pub handles: Option<u64>,
}

const MIB: f64 = 1024.0 * 1024.0;

#[cfg(target_os = "linux")]
pub fn sample() -> Figures {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |text: &str, key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
    };
    let mib = |kb: f64| kb * 1024.0 / MIB;
    let private = match (field(&rollup, "Private_Clean:"), field(&rollup, "Private_Dirty:")) {
        (Some(clean), Some(dirty)) => Some(mib(clean + dirty + field(&rollup, "Swap:").unwrap_or(0.0))),
        _ => None,
    };
    Figures {
        resident_mib: field(&status, "VmRSS:").map(mib),
        private_mib: private,
        peak_mib: field(&status, "VmHWM:").map(mib),
        threads: field(&status, "Threads:").map(|n| n as u64),
        handles: std::fs::read_dir("/proc/self/fd").ok().map(|d| d.count() as u64),
    }
}

#[cfg(windows)]
pub fn sample() -> Figures {
    windows::sample()
}

#[cfg(not(any(target_os = "linux", windows)))]
pub fn sample() -> Figures {
    Figures { resident_mib: segrt::engine::memory::resident_bytes().map(|b| b as f64 / MIB), ..Figures::default() }
}

#[cfg(windows)]
mod windows {
    use super::{Figures, MIB};
    use std::ffi::c_void;

    /// THREADENTRY32 of tlhelp32.h.
    #[repr(C)]
    #[derive(Default)]
    struct ThreadEntry32 {
        size: u32,
        usage: u32,
        thread_id: u32,
        owner_process_id: u32,
        base_priority: i32,
        delta_priority: i32,
        flags: u32,
    }

    const TH32CS_SNAPTHREAD: u32 = 0x4;
    const INVALID_HANDLE_VALUE: isize = -1;

    #[link(name = "kernel32")]
    extern "system" {
        fn GetCurrentProcess() -> *mut c_void;
        fn GetCurrentProcessId() -> u32;
        fn GetProcessHandleCount(process: *mut c_void, count: *mut u32) -> i32;
        fn CreateToolhelp32Snapshot(flags: u32, process_id: u32) -> *mut c_void;
        fn Thread32First(snapshot: *mut c_void, entry: *mut ThreadEntry32) -> i32;
        fn Thread32Next(snapshot: *mut c_void, entry: *mut ThreadEntry32) -> i32;
        fn CloseHandle(handle: *mut c_void) -> i32;
    }

    pub fn sample() -> Figures {
        let counters = segrt::engine::memory::windows::counters();
        let memory_ok = counters.is_some();
        let c = counters.unwrap_or_default();
        let mut handles = 0u32;
        // SAFETY: this process's pseudo-handle and a writable count.
        let handles_ok = unsafe { GetProcessHandleCount(GetCurrentProcess(), &mut handles) } != 0;
        let mib = |v: usize| memory_ok.then_some(v as f64 / MIB);
        // Wine leaves PrivateUsage at 0; PagefileUsage is the same commit charge on Windows. Neither
        // is ever 0 for a running process, so 0 means "not reported".
        let commit = [c.private_usage, c.pagefile_usage].into_iter().find(|v| *v > 0);
        Figures {
            resident_mib: mib(c.working_set_size),
            private_mib: commit.and_then(mib),
            peak_mib: mib(c.peak_working_set_size),
            threads: threads(),
            // Wine answers 0; a running Windows process always holds some.
            handles: (handles_ok && handles > 0).then_some(handles as u64),
        }
    }

    /// This process's threads, counted in a system-wide thread snapshot (the only documented way).
    fn threads() -> Option<u64> {
        // SAFETY: plain flags; the snapshot handle is closed below.
        let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
        if snapshot.is_null() || snapshot as isize == INVALID_HANDLE_VALUE {
            return None;
        }
        // SAFETY: plain call.
        let me = unsafe { GetCurrentProcessId() };
        let mut entry = ThreadEntry32 { size: size_of::<ThreadEntry32>() as u32, ..Default::default() };
        let mut count = 0u64;
        // SAFETY: a live snapshot and an entry whose `size` is set, as the API asks.
        let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
        while more {
            count += (entry.owner_process_id == me) as u64;
            // SAFETY: as above.
            more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
        }
        // SAFETY: the snapshot handle, closed once.
        unsafe { CloseHandle(snapshot) };
        (count > 0).then_some(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Touching 64 MiB more shows in the resident and private figures; this process has threads and
    /// open descriptors.
    #[test]
    fn a_big_allocation_shows_in_resident_and_private_memory() {
        let before = sample();
        let block = vec![1u8; 64 << 20];
        let during = sample();
        std::hint::black_box(&block);
        for (what, b, d) in [("resident", before.resident_mib, during.resident_mib), ("private", before.private_mib, during.private_mib)] {
            let (b, d) = (b.expect(what), d.expect(what));
            assert!(d - b > 48.0, "{what}: {b:.1} MiB before, {d:.1} MiB after touching 64 MiB");
        }
        assert!(during.peak_mib.unwrap() >= during.resident_mib.unwrap());
        assert!(during.threads.unwrap() >= 1 && during.handles.unwrap() >= 1, "{during:?}");
    }
}
