//! macOS process table through libproc (`proc_listallpids`, `proc_pidinfo`, `proc_pidfdinfo`,
//! `proc_pid_rusage`) and `sysctl(KERN_PROCARGS2)`.
//!
//! Contract (the trait's, as on Linux): `processes()` is one pass (per pid: BSD info, task info,
//! argv); `environ`, `cwd`, `open_files` and `memory` are read only when asked. A pid that vanished,
//! or that we may not read, gives `None` / an empty list, never a panic. `start_ticks` is the
//! kernel's `p_start` in **microseconds since the epoch** (`pbi_start_tvsec * 1_000_000 +
//! pbi_start_tvusec`): set at fork, kept across exec, never rewritten, so it is stable for the
//! process's life and differs for a recycled pid (unless it started in the same microsecond).
//!
//! **Untested at run time.** There is no macOS machine in CI: this file is only compiled
//! (`cargo check --target aarch64-apple-darwin`, see `scripts/test`). The pure parts it relies on
//! (`procargs`, `start_stamp`) are unit-tested on Linux; every syscall path here is not.
//!
//! Units and mappings:
//! * `cpu_ticks`: `pti_total_user + pti_total_system` are Mach absolute-time units (nanoseconds
//!   on Intel, 24 MHz ticks on Apple silicon): scaled by `mach_timebase_info` to nanoseconds,
//!   reported in microseconds, so `clock_ticks_per_sec()` is 1_000_000.
//! * `state`: `pbi_status` (`p_stat`): SRUN `R`, SSLEEP `S`, SSTOP `T`, SZOMB `Z`, SIDL `I`.
//!   xnu reports SRUN for nearly every live process (it does not track sleep per process);
//!   park only ever tests for `Z`/`X`.
//! * `memory()`: rss = `pti_resident_size`; uss = anon = `ri_phys_footprint` of
//!   `proc_pid_rusage(RUSAGE_INFO_V4)` (what Activity Monitor shows as "Memory": dirty private
//!   memory, compressed and swapped included); pss = rss, because macOS has no PSS.
//!   `status_mem()` = (rss, footprint). The footprint can exceed the RSS.
//! * `tpgid`: `e_tpgid`, 0 when there is no controlling terminal. `sid`: `getsid(2)`.
//!
//! Permissions: `PROC_PIDTBSDINFO`, `PROC_PIDTASKINFO`, `KERN_PROCARGS2` and the fd/cwd/rusage
//! reads are same-user only for non-root callers (xnu `proc_security_policy`). A process of
//! another user (launchd, `login`, a `sudo` in an agent's tree) is still listed: ppid, pgid,
//! status and name from `PROC_PIDT_SHORTBSDINFO` (unprivileged) and the start time from
//! `sysctl(KERN_PROC_PID)`, with no argv, CPU, RSS or tpgid (0). When neither works the pid is
//! left out, which makes it "gone" to every kill re-check.

use super::{start_stamp, Mem, Platform, ProcInfo};
use libc::{c_char, c_int, c_void};
use std::ffi::OsString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::ptr::null_mut;

// ---- Declared here because libc (0.2.191) does not have them for aarch64-apple-darwin. ----

/// `sys/proc_info.h`: `#define PROC_PIDFDVNODEPATHINFO 2` (flavor of `proc_pidfdinfo`).
const PROC_PIDFDVNODEPATHINFO: c_int = 2;

/// `sys/proc_info.h`: `struct proc_fileinfo`. Declared for its layout; no field is read.
#[allow(dead_code)]
#[repr(C)]
#[derive(Clone, Copy)]
struct ProcFileInfo {
    fi_openflags: u32,
    fi_status: u32,
    fi_offset: libc::off_t,
    fi_type: i32,
    fi_guardflags: u32,
}

/// `sys/proc_info.h`: `struct vnode_fdinfowithpath` (`PROC_PIDFDVNODEPATHINFO_SIZE`).
#[repr(C)]
#[derive(Clone, Copy)]
struct VnodeFdInfoWithPath {
    pfi: ProcFileInfo,
    pvip: libc::vnode_info_path,
}

/// `sys/sysctl.h` `struct kinfo_proc` is 648 bytes on 64-bit Darwin. Only two fields are read,
/// at offsets that have not moved since 4.4BSD's `struct extern_proc` (`sys/proc.h`), which
/// starts `kinfo_proc`: `p_un.__p_starttime` (`struct timeval`: `i64 tv_sec` at 0, `i32 tv_usec`
/// at 8) and `pid_t p_pid` at 40 (after two pointers, `p_vmspace`, `p_sigacts`, `int p_flag`,
/// `char p_stat` and padding). The pid is cross-checked before the time is used.
const KINFO_PROC_SIZE: usize = 648;
const KP_STARTTIME_SEC: usize = 0;
const KP_STARTTIME_USEC: usize = 8;
const KP_PID: usize = 40;

// The kernel checks `buffersize >= sizeof(struct ...)` and copies exactly that many bytes: a
// wrong size here would be a wrong read, so pin every struct to the header's 64-bit size.
const _: () = assert!(size_of::<libc::proc_bsdinfo>() == 136);
const _: () = assert!(size_of::<libc::proc_bsdshortinfo>() == 64);
const _: () = assert!(size_of::<libc::proc_taskinfo>() == 96);
const _: () = assert!(size_of::<libc::proc_vnodepathinfo>() == 2352);
const _: () = assert!(size_of::<libc::proc_fdinfo>() == 8);
const _: () = assert!(size_of::<ProcFileInfo>() == 24);
const _: () = assert!(size_of::<VnodeFdInfoWithPath>() == 1200);
const _: () = assert!(size_of::<libc::rusage_info_v4>() == 296);

/// Plain C structs of integers and arrays: all-zero bytes are a valid value, and any bytes the
/// kernel writes are too.
///
/// # Safety
/// Only for `#[repr(C)]` types without pointers, references, enums or `bool`s.
unsafe trait Plain: Copy {}
unsafe impl Plain for libc::proc_bsdinfo {}
unsafe impl Plain for libc::proc_bsdshortinfo {}
unsafe impl Plain for libc::proc_taskinfo {}
unsafe impl Plain for libc::proc_vnodepathinfo {}
unsafe impl Plain for libc::proc_fdinfo {}
unsafe impl Plain for libc::rusage_info_v4 {}
unsafe impl Plain for VnodeFdInfoWithPath {}

fn zeroed_plain<T: Plain>() -> T {
    // SAFETY: `Plain` types are valid when all-zero.
    unsafe { zeroed() }
}

/// `proc_pidinfo(pid, flavor, arg)` into a `T`; `None` unless the kernel filled all of it.
fn pidinfo<T: Plain>(pid: c_int, flavor: c_int, arg: u64) -> Option<T> {
    let mut v: T = zeroed_plain();
    let size = c_int::try_from(size_of::<T>()).ok()?;
    // SAFETY: the buffer is a live, writable `T` of exactly `size` bytes; the kernel writes at
    // most `size` bytes and returns how many it wrote (0 on error).
    let got = unsafe { libc::proc_pidinfo(pid, flavor, arg, (&mut v as *mut T).cast(), size) };
    (got == size).then_some(v)
}

/// A C `char` array up to its first NUL (or its end: `pbi_comm` need not be terminated).
fn c_bytes<'a>(chars: impl IntoIterator<Item = &'a c_char>) -> Vec<u8> {
    chars
        .into_iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect()
}

fn c_name(chars: &[c_char]) -> String {
    String::from_utf8_lossy(&c_bytes(chars)).into_owned()
}

/// An absolute path from `vnode_info_path.vip_path` (`char[MAXPATHLEN]`, declared by libc as
/// `[[c_char; 32]; 32]`).
fn vip_path(p: &libc::vnode_info_path) -> Option<PathBuf> {
    let b = c_bytes(p.vip_path.iter().flatten());
    let path = PathBuf::from(OsString::from_vec(b));
    path.is_absolute().then_some(path)
}

fn state_char(status: u32) -> char {
    match status {
        libc::SRUN => 'R',
        libc::SSLEEP => 'S',
        libc::SSTOP => 'T',
        libc::SZOMB => 'Z',
        // Being created (fork in progress). Not a Linux letter; only Z/X are ever compared.
        libc::SIDL => 'I',
        _ => '?',
    }
}

fn epoch_micros(sec: u64, usec: u64) -> Option<u64> {
    if usec >= 1_000_000 {
        return None;
    }
    sec.checked_mul(1_000_000)?.checked_add(usec)
}

fn session_of(pid: c_int) -> u32 {
    // SAFETY: getsid has no memory arguments.
    let s = unsafe { libc::getsid(pid) };
    u32::try_from(s).unwrap_or(0)
}

/// Start time of any process (no same-user rule), from `sysctl(KERN_PROC_PID)`.
fn kinfo_start_micros(pid: c_int) -> Option<u64> {
    // Larger than `kinfo_proc` so a kernel with a grown struct is not refused.
    let mut buf = [0u8; 1024];
    let mut len: libc::size_t = buf.len();
    let mut mib = [libc::CTL_KERN, libc::KERN_PROC, libc::KERN_PROC_PID, pid];
    // SAFETY: `mib` holds 4 ints; `buf` is writable for `len` bytes and the kernel writes at most
    // `len`, storing the count back in `len`.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            buf.as_mut_ptr().cast(),
            &mut len,
            null_mut(),
            0,
        )
    };
    if r != 0 || len < KINFO_PROC_SIZE || len > buf.len() {
        return None;
    }
    let i32_at = |o: usize| Some(i32::from_ne_bytes(buf.get(o..o + 4)?.try_into().ok()?));
    let i64_at = |o: usize| Some(i64::from_ne_bytes(buf.get(o..o + 8)?.try_into().ok()?));
    if i32_at(KP_PID)? != pid {
        return None;
    }
    let sec = u64::try_from(i64_at(KP_STARTTIME_SEC)?).ok()?;
    let usec = u64::try_from(i32_at(KP_STARTTIME_USEC)?).ok()?;
    if sec == 0 {
        return None;
    }
    epoch_micros(sec, usec)
}

/// `sysctl([CTL_KERN, KERN_PROCARGS2, pid])` into `buf`; the filled prefix.
fn procargs2(pid: c_int, buf: &mut [u8]) -> Option<&[u8]> {
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut len: libc::size_t = buf.len();
    // SAFETY: `mib` holds 3 ints; `buf` is writable for `len` bytes and the kernel writes at most
    // `len`, storing the count back in `len`.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            buf.as_mut_ptr().cast(),
            &mut len,
            null_mut(),
            0,
        )
    };
    if r != 0 {
        return None;
    }
    buf.get(..len)
}

/// Every pid the kernel lists (the zombies included), pid 0 (the kernel) left out as on Linux.
fn list_pids() -> io::Result<Vec<u32>> {
    // SAFETY: a NULL buffer asks for the size only; libproc returns a pid count (nprocs + 20).
    let hint = unsafe { libc::proc_listallpids(null_mut(), 0) };
    let mut cap = usize::try_from(hint).unwrap_or(0).max(512) + 64;
    for _ in 0..6 {
        let mut pids: Vec<c_int> = vec![0; cap];
        let bytes = c_int::try_from(cap * size_of::<c_int>())
            .map_err(|_| io::Error::other("proc_listallpids: too many processes"))?;
        // SAFETY: `pids` is writable for `bytes` bytes; the kernel writes at most that and libproc
        // returns the number of pids written (0 on error).
        let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        let Ok(got) = usize::try_from(got) else {
            return Err(io::Error::last_os_error());
        };
        if got == 0 {
            return Err(io::Error::last_os_error());
        }
        if got < cap {
            pids.truncate(got);
            let mut out: Vec<u32> = pids
                .into_iter()
                .filter_map(|p| u32::try_from(p).ok())
                .filter(|&p| p > 0)
                .collect();
            out.sort_unstable();
            out.dedup();
            return Ok(out);
        }
        // The buffer filled up: the list may be cut, ask again with more room.
        cap *= 2;
    }
    Err(io::Error::other(
        "proc_listallpids: the process list kept growing",
    ))
}

pub struct MacOs {
    /// Mach absolute-time units to nanoseconds: `numer / denom`.
    timebase: (u64, u64),
    /// `kern.argmax`: the largest KERN_PROCARGS2 answer.
    argmax: usize,
}

impl MacOs {
    pub fn new() -> Self {
        MacOs {
            timebase: timebase(),
            argmax: argmax(),
        }
    }

    fn cpu_micros(&self, mach_units: u64) -> u64 {
        let (numer, denom) = self.timebase;
        let ns = u128::from(mach_units) * u128::from(numer) / u128::from(denom);
        u64::try_from(ns / 1000).unwrap_or(u64::MAX)
    }

    /// One row, `argv` read into the reusable `buf`.
    fn read(&self, pid: u32, buf: &mut [u8]) -> Option<ProcInfo> {
        let cpid = c_int::try_from(pid).ok().filter(|&p| p > 0)?;
        // arg 1: zombies too, so they show as `Z` (as on Linux) rather than vanish.
        let mut p = match pidinfo::<libc::proc_bsdinfo>(cpid, libc::PROC_PIDTBSDINFO, 1) {
            Some(b) => {
                if b.pbi_pid != pid {
                    return None;
                }
                let name = c_name(&b.pbi_name);
                ProcInfo {
                    pid,
                    ppid: b.pbi_ppid,
                    pgid: b.pbi_pgid,
                    sid: session_of(cpid),
                    tpgid: b.e_tpgid as i32,
                    start_ticks: epoch_micros(b.pbi_start_tvsec, b.pbi_start_tvusec)?,
                    state: state_char(b.pbi_status),
                    comm: if name.is_empty() {
                        c_name(&b.pbi_comm)
                    } else {
                        name
                    },
                    ..ProcInfo::default()
                }
            }
            // Another user's process (or one that just exited): the unprivileged reads.
            None => other_user_row(cpid, pid)?,
        };
        if let Some(t) = pidinfo::<libc::proc_taskinfo>(cpid, libc::PROC_PIDTASKINFO, 0) {
            p.cpu_ticks = self.cpu_micros(t.pti_total_user.saturating_add(t.pti_total_system));
            p.rss_bytes = t.pti_resident_size;
        }
        p.argv = procargs2(cpid, buf)
            .and_then(super::procargs::parse_procargs2)
            .map(|(argv, _)| argv)
            .unwrap_or_default();
        Some(p)
    }

    fn task_and_footprint(&self, pid: u32) -> Option<(u64, u64)> {
        let cpid = c_int::try_from(pid).ok().filter(|&p| p > 0)?;
        let t = pidinfo::<libc::proc_taskinfo>(cpid, libc::PROC_PIDTASKINFO, 0)?;
        let mut ri: libc::rusage_info_v4 = zeroed_plain();
        // SAFETY: `ri` is a live, writable `rusage_info_v4`, the size the V4 flavor writes.
        let r = unsafe {
            libc::proc_pid_rusage(
                cpid,
                libc::RUSAGE_INFO_V4,
                (&mut ri as *mut libc::rusage_info_v4).cast(),
            )
        };
        (r == 0).then_some((t.pti_resident_size, ri.ri_phys_footprint))
    }
}

impl Default for MacOs {
    fn default() -> Self {
        Self::new()
    }
}

fn other_user_row(cpid: c_int, pid: u32) -> Option<ProcInfo> {
    let s = pidinfo::<libc::proc_bsdshortinfo>(cpid, libc::PROC_PIDT_SHORTBSDINFO, 1)?;
    if s.pbsi_pid != pid {
        return None;
    }
    Some(ProcInfo {
        pid,
        ppid: s.pbsi_ppid,
        pgid: s.pbsi_pgid,
        sid: session_of(cpid),
        tpgid: 0,
        start_ticks: kinfo_start_micros(cpid)?,
        state: state_char(s.pbsi_status),
        comm: c_name(&s.pbsi_comm),
        ..ProcInfo::default()
    })
}

#[allow(deprecated)] // libc points at the `mach2` crate; the call itself is current API.
fn timebase() -> (u64, u64) {
    let mut tb: libc::mach_timebase_info = libc::mach_timebase_info { numer: 0, denom: 0 };
    // SAFETY: `tb` is a live, writable `mach_timebase_info`.
    let r = unsafe { libc::mach_timebase_info(&mut tb) };
    if r != 0 || tb.numer == 0 || tb.denom == 0 {
        // Only Intel Macs are 1/1; there is no better guess, and this call does not fail.
        return (1, 1);
    }
    (u64::from(tb.numer), u64::from(tb.denom))
}

fn argmax() -> usize {
    const FALLBACK: usize = 1 << 20;
    let mut v: c_int = 0;
    let mut len: libc::size_t = size_of::<c_int>();
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    // SAFETY: `mib` holds 2 ints; `v` is a writable int and `len` its size.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            (&mut v as *mut c_int).cast::<c_void>(),
            &mut len,
            null_mut(),
            0,
        )
    };
    match usize::try_from(v) {
        Ok(n) if r == 0 && len == size_of::<c_int>() && (4096..=(64 << 20)).contains(&n) => n,
        _ => FALLBACK,
    }
}

impl Platform for MacOs {
    fn processes(&self) -> io::Result<Vec<ProcInfo>> {
        let pids = list_pids()?;
        let mut buf = vec![0u8; self.argmax];
        Ok(pids
            .into_iter()
            .filter_map(|pid| self.read(pid, &mut buf))
            .collect())
    }

    fn process(&self, pid: u32) -> Option<ProcInfo> {
        let mut buf = vec![0u8; self.argmax];
        self.read(pid, &mut buf)
    }

    fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
        let cpid = c_int::try_from(pid).ok().filter(|&p| p > 0)?;
        let mut buf = vec![0u8; self.argmax];
        // Fails (EINVAL) for another user's process: None, as the contract asks.
        let (_, env) = super::procargs::parse_procargs2(procargs2(cpid, &mut buf)?)?;
        Some(env)
    }

    fn cwd(&self, pid: u32) -> Option<PathBuf> {
        let cpid = c_int::try_from(pid).ok().filter(|&p| p > 0)?;
        let v = pidinfo::<libc::proc_vnodepathinfo>(cpid, libc::PROC_PIDVNODEPATHINFO, 0)?;
        vip_path(&v.pvi_cdir)
    }

    fn open_files(&self, pid: u32) -> Vec<PathBuf> {
        let Some(cpid) = c_int::try_from(pid).ok().filter(|&p| p > 0) else {
            return vec![];
        };
        let fd_size = size_of::<libc::proc_fdinfo>();
        // SAFETY: a NULL buffer asks for the size only (bytes, an upper bound of the fd table).
        let need = unsafe { libc::proc_pidinfo(cpid, libc::PROC_PIDLISTFDS, 0, null_mut(), 0) };
        let Ok(need) = usize::try_from(need) else {
            return vec![];
        };
        if need == 0 {
            return vec![];
        }
        // Room for fds opened between the two calls.
        let cap = need / fd_size + 32;
        let mut fds: Vec<libc::proc_fdinfo> = vec![zeroed_plain(); cap];
        let Ok(bytes) = c_int::try_from(cap * fd_size) else {
            return vec![];
        };
        // SAFETY: `fds` is writable for `bytes` bytes; the kernel writes at most that and returns
        // the number of bytes written (0 on error).
        let got = unsafe {
            libc::proc_pidinfo(
                cpid,
                libc::PROC_PIDLISTFDS,
                0,
                fds.as_mut_ptr().cast(),
                bytes,
            )
        };
        let n = usize::try_from(got).unwrap_or(0) / fd_size;
        fds.truncate(n.min(cap));
        fds.iter()
            .filter(|f| f.proc_fdtype == libc::PROX_FDTYPE_VNODE as u32)
            .filter_map(|f| fd_path(cpid, f.proc_fd))
            .collect()
    }

    fn memory(&self, pid: u32) -> Option<Mem> {
        let (rss, footprint) = self.task_and_footprint(pid)?;
        // macOS has no PSS (no per-page share count is exported): pss = rss, an upper bound.
        // The footprint is the private memory a kill gives back, compressed pages included.
        Some(Mem {
            rss,
            pss: rss,
            uss: footprint,
            anon: footprint,
        })
    }

    fn status_mem(&self, pid: u32) -> Option<(u64, u64)> {
        self.task_and_footprint(pid)
    }

    fn clock_ticks_per_sec(&self) -> u64 {
        1_000_000
    }

    fn started_secs_ago(&self, start_ticks: u64) -> Option<u64> {
        // start_ticks is microseconds since the epoch here.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_micros() as u64;
        Some(now.saturating_sub(start_ticks) / 1_000_000)
    }

    fn proc_start_matches(&self, start_ticks: u64, recorded: &str) -> bool {
        start_stamp::matches_epoch_micros(start_ticks, recorded)
    }
}

/// The path of one vnode fd, if it still is one.
fn fd_path(pid: c_int, fd: i32) -> Option<PathBuf> {
    let mut v: VnodeFdInfoWithPath = zeroed_plain();
    let size = c_int::try_from(size_of::<VnodeFdInfoWithPath>()).ok()?;
    // SAFETY: `v` is a live, writable `vnode_fdinfowithpath` of exactly `size` bytes; the kernel
    // writes at most `size` bytes and returns how many it wrote (0 on error).
    let got = unsafe {
        libc::proc_pidfdinfo(
            pid,
            fd,
            PROC_PIDFDVNODEPATHINFO,
            (&mut v as *mut VnodeFdInfoWithPath).cast(),
            size,
        )
    };
    if got != size {
        return None;
    }
    vip_path(&v.pvip)
}
