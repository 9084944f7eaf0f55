//! Memory a long-lived process holds only by accident, given back (the daemon, after each pass).
//!
//! Contract: [`shed`] (Linux; a no-op elsewhere) returns the heap's free pages to the kernel
//! (`malloc_trim`, glibc) and drops this process's mappings of code pages: file-backed
//! executable mappings (`r-xp`), which are never written, so a dropped page is mapped again from
//! the page cache (a minor fault) the next time it runs. Nothing written is ever dropped: data,
//! relocated read-only data (RELRO), the stack and anonymous memory stay as they are.
//!
//! Why: a pass runs scan, journal and serde code spread over megabytes of the binary, and the
//! kernel maps code around every fault, so the daemon's resident set kept ~6 MB of park's code
//! and ~1 MB of libc's between passes that sleep 10 s (BENCHMARKS.md, "The daemon's memory").

/// Gives back what [`shed`]'s contract says; what it dropped, in bytes of mappings (for tests
/// and the benchmark).
pub fn shed() -> usize {
    #[cfg(target_os = "linux")]
    {
        #[cfg(target_env = "gnu")]
        // SAFETY: malloc_trim only returns free heap memory to the kernel.
        unsafe {
            libc::malloc_trim(0);
        }
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return 0;
        };
        let mut dropped = 0;
        for (start, len) in code_mappings(&maps) {
            // SAFETY: the range is a private, file-backed, read-only executable mapping of this
            // process (never written: no private copy to lose); MADV_DONTNEED makes the next
            // access read the page from the file again, which is unchanged while it is mapped.
            let r = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            if r == 0 {
                dropped += len;
            }
        }
        dropped
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// The private, file-backed, executable, never-writable mappings in a `/proc/<pid>/maps` text:
/// (start address, length). Pure, for tests.
pub fn code_mappings(maps: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let range = f.next()?;
            let perms = f.next()?;
            let _offset = f.next()?;
            let _dev = f.next()?;
            let inode = f.next()?;
            let path = f.next()?;
            if perms != "r-xp" || inode == "0" || !path.starts_with('/') {
                return None;
            }
            let (a, b) = range.split_once('-')?;
            let (a, b) = (
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            );
            (b > a).then(|| (a, b - a))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only code is dropped: never data, RELRO (`r--p`, relocated in place), writable or shared
    /// mappings, the heap, the stack or the vdso.
    #[test]
    fn only_private_file_backed_code_mappings_are_dropped() {
        let maps = "\
55d0c0000000-55d0c0100000 r--p 00000000 fd:01 131 /usr/bin/park
55d0c0100000-55d0c0900000 r-xp 00100000 fd:01 131 /usr/bin/park
55d0c0900000-55d0c0a00000 r--p 00900000 fd:01 131 /usr/bin/park
55d0c0a00000-55d0c0a10000 rw-p 00a00000 fd:01 131 /usr/bin/park
55d0c1000000-55d0c1200000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0000100000 r-xp 00028000 fd:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000200000-7f0000201000 r-xs 00000000 fd:01 78 /dev/shm/x
7f0000300000-7f0000301000 rwxp 00000000 00:00 0
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]
";
        assert_eq!(
            code_mappings(maps),
            vec![(0x55d0c0100000, 0x800000), (0x7f0000000000, 0x100000)]
        );
    }

    /// The process keeps running the code it dropped (the kernel maps it back on the next call).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_runs_on_after_its_code_is_dropped() {
        let dropped = shed();
        assert!(dropped > 0, "this test binary has code mappings");
        let v: Vec<String> = (0..1000).map(|i| format!("{i:x}")).collect();
        assert_eq!(v[255], "ff");
        assert!(shed() > 0);
    }
}
