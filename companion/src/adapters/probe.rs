//! Probes for timed wake-ups: the waker runs a [`Probe`] now and then and asks [`matches`] whether
//! the condition a parked agent waits for holds yet.
//!
//! Contract:
//! - A command runs its argv directly, with no shell, unless it was parsed with `shell = true`
//!   (then it is `sh -c <text>`): a probe written as `gh pr checks 42; rm -rf x` must not become
//!   two commands behind the user's back.
//! - A command runs in its own process group, with stdin closed. On timeout the whole group gets
//!   SIGKILL and the leader is reaped; when the leader exits by itself, whatever it left running in
//!   its group is killed too. A probe is a question, not a launcher: nothing it starts may outlive
//!   it or hold its output pipe open.
//! - Output is capped: [`ProbeResult::body`] keeps at most [`BODY_CAP`] bytes (stdout of a
//!   command, the body of a response) and says so in `truncated`; the rest is drained and dropped
//!   so a chatty child never stalls on a full pipe. stderr is drained and dropped.
//! - URLs are `http://` and `https://` only, redirects included (at most 5), so a probe can never
//!   be bent into reading a local file.
//! - Two ways a probe can fail to answer, kept apart on purpose. `error`: it could not run at all
//!   (program missing, bad URL, DNS failure, TLS failure, a redirect off http(s)) — retrying soon
//!   will fail the same way, so the waker backs off on it and never retries it in a tight loop.
//!   `not_ready`: it ran but got no answer yet (connection refused or reset, timed out, killed by a
//!   signal) — the normal "not yet" while a server starts, retried at the usual pace. A non-zero
//!   exit or an HTTP 500 is neither: it is an answer, judged by the matchers.
//! - A result with `error` or `not_ready` never matches.

use crate::model::probe::*;
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// No probe is worth waiting a day for; the clamp also keeps `Instant + timeout` from overflowing.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// Runs the probe once, never longer than `timeout` (plus the moment it takes to kill and reap).
pub fn run(p: &Probe, timeout: Duration, cwd: &Path) -> ProbeResult {
    let start = Instant::now();
    let timeout = timeout.min(MAX_TIMEOUT);
    let mut r = match p {
        Probe::Cmd { argv, .. } => run_cmd(argv, timeout, cwd),
        Probe::Url { url } => run_url(url, timeout),
    };
    r.took_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    r
}

fn timed_out(timeout: Duration) -> String {
    if timeout.subsec_millis() == 0 {
        format!("timed out after {}s", timeout.as_secs())
    } else {
        format!("timed out after {:.1}s", timeout.as_secs_f64())
    }
}

/// Decodes a capped body. A cut through a multi-byte character would decode as a spurious U+FFFD,
/// so the partial character at a cut is dropped.
fn body_text(mut buf: Vec<u8>, truncated: bool) -> String {
    if truncated {
        let len = buf.len();
        for back in 1..=len.min(3) {
            let b = buf[len - back];
            if b & 0xC0 != 0x80 {
                let width = match b {
                    0xF0.. => 4,
                    0xE0.. => 3,
                    0xC0.. => 2,
                    _ => 1,
                };
                if width > back {
                    buf.truncate(len - back);
                }
                break;
            }
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

// ---- commands ----

/// How long to wait for the output pipes to close once the group is dead. Only a process that
/// left the group (setsid) can still hold them; the probe does not wait on it.
const PIPE_GRACE: Duration = Duration::from_millis(500);

#[derive(Default)]
struct Sink {
    buf: Vec<u8>,
    truncated: bool,
}

/// A pipe read to its end on its own thread, keeping the first `keep` bytes.
struct Drain {
    sink: Arc<Mutex<Sink>>,
    done: mpsc::Receiver<()>,
}

impl Drain {
    fn start(mut pipe: impl Read + Send + 'static, keep: usize) -> io::Result<Drain> {
        let sink = Arc::new(Mutex::new(Sink::default()));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&sink);
        std::thread::Builder::new()
            .name("probe-pipe".into())
            .spawn(move || {
                // Dropped when the pipe ends: the receiver then sees the drain finished.
                let _tx: mpsc::Sender<()> = tx;
                let mut chunk = [0u8; 8192];
                loop {
                    match pipe.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                            let take = keep.saturating_sub(s.buf.len()).min(n);
                            s.buf.extend_from_slice(&chunk[..take]);
                            s.truncated |= take < n;
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })?;
        Ok(Drain { sink, done })
    }

    fn finish(self, by: Instant) -> (Vec<u8>, bool) {
        let _ = self
            .done
            .recv_timeout(by.saturating_duration_since(Instant::now()));
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        (std::mem::take(&mut s.buf), s.truncated)
    }
}

/// Whether the child has exited, without reaping it: while it is an unreaped zombie its pid
/// cannot be reused, so signalling its process group afterwards cannot hit a stranger.
fn leader_exited(pid: libc::pid_t) -> io::Result<bool> {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid out-parameter; waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child with a valid pointer.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // POSIX: with WNOHANG and nothing to report, si_pid stays 0.
            // SAFETY: waitid filled (or left zeroed) the SIGCHLD fields read here.
            return Ok(unsafe { info.si_pid() } != 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn kill_group(pgid: libc::pid_t) {
    // ESRCH (the group is already empty) is the common, fine case.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

fn run_cmd(argv: &[String], timeout: Duration, cwd: &Path) -> ProbeResult {
    let mut r = ProbeResult::default();
    let Some(prog) = argv.first() else {
        r.error = Some("cannot run an empty command".into());
        return r;
    };
    // Spawning in a missing directory fails with ENOENT, which would read as "program not found".
    if !cwd.is_dir() {
        r.error = Some(format!(
            "cannot run {prog}: working directory {} does not exist",
            cwd.display()
        ));
        return r;
    }
    let deadline = Instant::now() + timeout;
    let spawned = Command::new(prog)
        .args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(format!("cannot run {prog}: {e}"));
            return r;
        }
    };
    let pid = child.id() as libc::pid_t;
    let drains = (
        child.stdout.take().map(|p| Drain::start(p, BODY_CAP)),
        child.stderr.take().map(|p| Drain::start(p, 0)),
    );
    let (out, err) = match drains {
        (Some(Ok(out)), Some(Ok(err))) => (out, err),
        (o, e) => {
            kill_group(pid);
            let _ = child.wait();
            let why = [o, e]
                .into_iter()
                .find_map(|d| match d {
                    Some(Err(e)) => Some(e.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| "no output pipe".into());
            r.error = Some(format!("cannot run {prog}: cannot read its output: {why}"));
            return r;
        }
    };

    let mut reaped: Option<io::Result<ExitStatus>> = None;
    let mut nap = Duration::from_millis(1);
    let timed_out_now = loop {
        match leader_exited(pid) {
            Ok(true) => break false,
            Ok(false) => {}
            // waitid should not fail on our own child; if it does, fall back to reaping (losing
            // only the pid-reuse guarantee for the sweep below).
            Err(_) => match child.try_wait() {
                Ok(Some(st)) => {
                    reaped = Some(Ok(st));
                    break false;
                }
                Ok(None) => {}
                Err(e) => {
                    reaped = Some(Err(e));
                    break false;
                }
            },
        }
        let now = Instant::now();
        if now >= deadline {
            break true;
        }
        std::thread::sleep(nap.min(deadline - now));
        nap = (nap * 2).min(Duration::from_millis(50));
    };
    kill_group(pid);
    let status = reaped.unwrap_or_else(|| child.wait());

    let by = Instant::now() + PIPE_GRACE;
    let (stdout, truncated) = out.finish(by);
    let _ = err.finish(by);
    r.body = body_text(stdout, truncated);
    r.truncated = truncated;
    if timed_out_now {
        r.not_ready = Some(timed_out(timeout));
        return r;
    }
    match status {
        Ok(st) => match st.code() {
            Some(c) => r.exit = Some(c),
            None => {
                r.not_ready = Some(format!("killed by signal {}", st.signal().unwrap_or(0)));
            }
        },
        Err(e) => r.error = Some(format!("cannot run {prog}: waiting for it failed: {e}")),
    }
    r
}

// ---- URLs ----

const MAX_REDIRECTS: usize = 5;
const USER_AGENT: &str = concat!("park-waker/", env!("CARGO_PKG_VERSION"));

enum Fail {
    Error(String),
    NotReady(String),
}

/// The "not yet" family of I/O errors: the peer is not (yet) there or not answering.
fn transient(e: &io::Error, timeout: Duration) -> Option<String> {
    use io::ErrorKind as K;
    Some(match e.kind() {
        K::ConnectionRefused => "connection refused".into(),
        K::ConnectionReset => "connection reset".into(),
        K::ConnectionAborted | K::UnexpectedEof | K::BrokenPipe | K::NotConnected => {
            "connection closed before a full response".into()
        }
        K::TimedOut | K::WouldBlock => timed_out(timeout),
        _ => match e.raw_os_error() {
            Some(libc::ENETUNREACH | libc::EHOSTUNREACH | libc::ENETDOWN) => {
                "network unreachable".into()
            }
            _ => return None,
        },
    })
}

fn classify(t: &ureq::Transport, timeout: Duration) -> Fail {
    use ureq::ErrorKind as K;
    let msg = t.to_string();
    match t.kind() {
        // Configuration problems: the same request will fail the same way next time.
        K::InvalidUrl
        | K::UnknownScheme
        | K::Dns
        | K::InsecureRequestHttpsOnly
        | K::InvalidProxyUrl
        | K::ProxyUnauthorized
        | K::TooManyRedirects
        | K::BadStatus
        | K::BadHeader => Fail::Error(msg),
        // ConnectionFailed covers both a refused TCP connect (not yet) and a failed TLS handshake
        // (never), so the underlying I/O error decides.
        _ => {
            let mut cause = std::error::Error::source(t);
            while let Some(e) = cause {
                if let Some(io) = e.downcast_ref::<io::Error>() {
                    return match transient(io, timeout) {
                        Some(m) => Fail::NotReady(m),
                        None => Fail::Error(msg),
                    };
                }
                cause = e.source();
            }
            Fail::Error(msg)
        }
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Where a redirect goes, or why it is not followed.
fn redirect_target(from: &str, location: &str) -> Result<String, String> {
    let next = url::Url::parse(from)
        .and_then(|base| base.join(location))
        .map_err(|e| format!("bad redirect Location `{location}`: {e}"))?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(format!(
            "refused redirect to `{location}`: only http(s) URLs are followed"
        ));
    }
    parse_url(next.as_str()).map_err(|e| format!("refused redirect: {e}"))?;
    Ok(next.into())
}

fn run_url(url: &str, timeout: Duration) -> ProbeResult {
    let mut r = ProbeResult::default();
    // A probe may come from the ledger rather than from parse_url; check again before any I/O.
    if let Err(e) = parse_url(url) {
        r.error = Some(e);
        return r;
    }
    let deadline = Instant::now() + timeout;
    // Redirects are followed by hand so each hop is checked against http(s) before any request.
    let agent = ureq::AgentBuilder::new()
        .redirects(0)
        .user_agent(USER_AGENT)
        .build();
    let mut current = url.to_string();
    let mut hops = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            r.not_ready = Some(timed_out(timeout));
            return r;
        }
        let resp = match agent.get(&current).timeout(left).call() {
            Ok(resp) | Err(ureq::Error::Status(_, resp)) => resp,
            Err(ureq::Error::Transport(t)) => {
                match classify(&t, timeout) {
                    Fail::Error(m) => r.error = Some(m),
                    Fail::NotReady(m) => r.not_ready = Some(m),
                }
                return r;
            }
        };
        let status = resp.status();
        r.status = Some(status);
        if is_redirect(status) {
            if let Some(location) = resp.header("location") {
                if hops == MAX_REDIRECTS {
                    r.error = Some(format!("more than {MAX_REDIRECTS} redirects from {url}"));
                    return r;
                }
                match redirect_target(resp.get_url(), location) {
                    Ok(next) => current = next,
                    Err(e) => {
                        r.error = Some(e);
                        return r;
                    }
                }
                hops += 1;
                continue;
            }
        }
        let mut buf = Vec::new();
        let read = resp
            .into_reader()
            .take(BODY_CAP as u64 + 1)
            .read_to_end(&mut buf);
        if let Err(e) = read {
            match transient(&e, timeout) {
                Some(m) => r.not_ready = Some(m),
                None => r.error = Some(format!("reading the body of {current}: {e}")),
            }
        }
        r.truncated = buf.len() > BODY_CAP;
        buf.truncate(BODY_CAP);
        r.body = body_text(buf, r.truncated);
        return r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::thread;

    const T: Duration = Duration::from_secs(10);

    fn cmd(s: &str, shell: bool) -> Probe {
        parse_cmd(s, shell).unwrap()
    }

    fn here() -> std::path::PathBuf {
        std::env::temp_dir()
    }

    // ---- parse_matcher ----

    #[test]
    fn parse_matcher_accepts_every_form() {
        assert_eq!(parse_matcher("exit=0"), Ok(Matcher::Exit(0)));
        assert_eq!(parse_matcher("exit=3"), Ok(Matcher::Exit(3)));
        assert_eq!(parse_matcher("status=200"), Ok(Matcher::Status(200, 200)));
        assert_eq!(
            parse_matcher("status=200..299"),
            Ok(Matcher::Status(200, 299))
        );
        assert_eq!(
            parse_matcher("body contains:ready"),
            Ok(Matcher::BodyContains("ready".into()))
        );
        // Verbatim after the colon: the space is part of the needle.
        assert_eq!(
            parse_matcher("body contains: ok"),
            Ok(Matcher::BodyContains(" ok".into()))
        );
        assert_eq!(
            parse_matcher("body matches:^rea"),
            Ok(Matcher::BodyMatches("^rea".into()))
        );
    }

    #[test]
    fn parse_matcher_rejects_bad_forms() {
        for bad in [
            "exit=x",
            "exit=",
            "exit=256",
            "exit=-1",
            "status=500..200",
            "status=abc",
            "status=200..",
            "status=99",
            "status=600",
            "body matches:(",
            "body matches:",
            "body contains:",
            "foo",
            "",
        ] {
            let e = parse_matcher(bad).expect_err(bad);
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        assert!(parse_matcher("foo").unwrap_err().contains(FORMS));
    }

    #[test]
    fn matcher_text_round_trips_through_parse_and_serde() {
        for s in [
            "exit=0",
            "status=204",
            "status=200..299",
            "body contains:a b",
            "body matches:^x$",
        ] {
            let m = parse_matcher(s).unwrap();
            assert_eq!(m.to_string(), s);
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, serde_json::to_string(s).unwrap());
            assert_eq!(serde_json::from_str::<Matcher>(&json).unwrap(), m);
        }
        assert!(serde_json::from_str::<Matcher>("\"body matches:(\"").is_err());
    }

    #[test]
    fn probe_serde_is_tagged_by_kind() {
        let p = cmd("true", false);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind": "cmd", "argv": ["true"], "shell": false})
        );
        let u = parse_url("http://x/health").unwrap();
        let v = serde_json::to_value(&u).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind": "url", "url": "http://x/health"})
        );
        assert_eq!(serde_json::from_value::<Probe>(v).unwrap(), u);
    }

    // ---- parse_cmd ----

    #[test]
    fn parse_cmd_keeps_quoted_args_whole() {
        assert_eq!(
            cmd(r#"gh pr checks "my branch" 'a b' c\ d"#, false),
            Probe::Cmd {
                argv: vec![
                    "gh".into(),
                    "pr".into(),
                    "checks".into(),
                    "my branch".into(),
                    "a b".into(),
                    "c d".into()
                ],
                shell: false
            }
        );
    }

    #[test]
    fn parse_cmd_rejects_empty_and_unbalanced() {
        assert!(parse_cmd("", false).is_err());
        assert!(parse_cmd("   ", false).is_err());
        assert!(parse_cmd("  ", true).is_err());
        assert!(parse_cmd("echo 'oops", false)
            .unwrap_err()
            .contains("echo 'oops"));
        assert!(parse_cmd("echo a\0b", false).is_err());
    }

    #[test]
    fn without_shell_a_semicolon_is_an_argument_and_runs_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("x");
        let text = format!("echo hi ; touch {}", marker.display());
        let p = cmd(&text, false);
        let Probe::Cmd { argv, .. } = &p else {
            panic!()
        };
        assert_eq!(argv[..4], ["echo", "hi", ";", "touch"]);
        let r = run(&p, T, dir.path());
        assert_eq!(r.exit, Some(0), "{r:?}");
        assert_eq!(r.body, format!("hi ; touch {}\n", marker.display()));
        assert!(!marker.exists(), "a shell ran the second command");
    }

    #[test]
    fn with_shell_the_text_runs_through_sh() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("x");
        let text = format!("echo hi ; touch {}", marker.display());
        let p = cmd(&text, true);
        assert_eq!(
            p,
            Probe::Cmd {
                argv: vec!["sh".into(), "-c".into(), text.clone()],
                shell: true
            }
        );
        let r = run(&p, T, dir.path());
        assert_eq!(r.exit, Some(0), "{r:?}");
        assert_eq!(r.body, "hi\n");
        assert!(marker.exists());
    }

    // ---- run: commands ----

    #[test]
    fn run_cmd_captures_exit_code_and_stdout() {
        let r = run(&cmd("echo out; echo err >&2; exit 3", true), T, &here());
        assert_eq!(r.exit, Some(3), "{r:?}");
        assert_eq!(r.body, "out\n");
        assert!(r.error.is_none() && r.not_ready.is_none());
        assert_eq!(summary(&r), "exit 3");
    }

    #[test]
    fn run_cmd_runs_in_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(&cmd("pwd -P", false), T, dir.path());
        let want = dir.path().canonicalize().unwrap();
        assert_eq!(r.body.trim_end(), want.to_str().unwrap());
        let r = run(&cmd("true", false), T, &dir.path().join("missing"));
        assert!(r.error.unwrap().contains("working directory"));
    }

    #[test]
    fn run_cmd_caps_the_body_and_says_truncated() {
        let r = run(
            &cmd("head -c 200000 /dev/zero | tr '\\0' a", true),
            T,
            &here(),
        );
        assert_eq!(r.exit, Some(0), "{r:?}");
        assert!(r.truncated);
        assert_eq!(r.body.len(), BODY_CAP);
        assert!(r.body.bytes().all(|b| b == b'a'));
        assert_eq!(summary(&r), "exit 0 (truncated)");

        let r = run(&cmd("printf abc", false), T, &here());
        assert!(!r.truncated);
        assert_eq!(r.body, "abc");
    }

    #[test]
    fn a_chatty_stderr_does_not_block_the_child() {
        // 1 MB on stderr is far past a pipe buffer: unless it is drained the child never exits.
        let r = run(
            &cmd("head -c 1000000 /dev/zero >&2; echo done", true),
            T,
            &here(),
        );
        assert_eq!(r.exit, Some(0), "{r:?}");
        assert_eq!(r.body, "done\n");
    }

    fn gone(pid: i32) -> bool {
        #[cfg(target_os = "linux")]
        {
            // A killed orphan may sit as a zombie until init reaps it; that is dead enough.
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => true,
                Ok(stat) => stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err()
        }
    }

    fn soon_gone(pid: i32) -> bool {
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            if gone(pid) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn pid_in(path: &Path) -> i32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn timeout_kills_the_whole_group_including_a_grandchild() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let p = cmd(
            &format!("sleep 30 & echo $! > {}; sleep 30", pidfile.display()),
            true,
        );
        let t0 = Instant::now();
        let r = run(&p, Duration::from_secs(1), dir.path());
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(r.not_ready.as_deref(), Some("timed out after 1s"), "{r:?}");
        assert_eq!(r.exit, None);
        assert!(r.error.is_none());
        let grandchild = pid_in(&pidfile);
        assert!(soon_gone(grandchild), "grandchild {grandchild} survived");
        assert!(!matches(&[], &p, &r));
    }

    #[test]
    fn a_probe_that_exits_leaves_nothing_running_in_its_group() {
        // The background sleep holds stdout open: without the sweep the probe would wait for it.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let p = cmd(
            &format!("sleep 30 & echo $! > {}; echo started", pidfile.display()),
            true,
        );
        let t0 = Instant::now();
        let r = run(&p, T, dir.path());
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(r.exit, Some(0), "{r:?}");
        assert_eq!(r.body, "started\n");
        let grandchild = pid_in(&pidfile);
        assert!(
            soon_gone(grandchild),
            "background child {grandchild} survived"
        );
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_not_ready() {
        let r = run(
            &cmd("/nonexistent/park-probe-xyz --flag", false),
            T,
            &here(),
        );
        let e = r.error.clone().expect("error");
        assert!(
            e.starts_with("cannot run /nonexistent/park-probe-xyz: "),
            "{e}"
        );
        assert!(r.not_ready.is_none() && r.exit.is_none());
        assert!(summary(&r).starts_with("cannot run /nonexistent"));
        let r = run(
            &Probe::Cmd {
                argv: vec![],
                shell: false,
            },
            T,
            &here(),
        );
        assert!(r.error.is_some());
    }

    #[test]
    fn death_by_signal_is_not_ready() {
        let r = run(&cmd("kill -9 $$", true), T, &here());
        assert_eq!(r.exit, None, "{r:?}");
        assert_eq!(r.not_ready.as_deref(), Some("killed by signal 9"));
        assert!(r.error.is_none());
    }

    // ---- parse_url ----

    #[test]
    fn parse_url_takes_http_and_https_only() {
        for ok in [
            "http://127.0.0.1:8080/health",
            "https://example.com",
            "HTTP://example.com/x?y=1",
            "HttpS://h/",
        ] {
            assert_eq!(parse_url(ok), Ok(Probe::Url { url: ok.into() }), "{ok}");
        }
        for bad in [
            "ftp://x",
            "file:///etc/passwd",
            "example.com",
            "http://",
            "http:///path",
            "http://a b/",
            "http://x/\n",
            "javascript:alert(1)",
            "",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        let long = format!("http://x/{}", "a".repeat(URL_MAX));
        assert!(parse_url(&long).unwrap_err().contains("2048"));
        assert!(parse_url("ftp://x").unwrap_err().contains("ftp://x"));
    }

    // ---- run: URLs, against a hand-written server on loopback ----

    fn reply(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
            body.len()
        )
    }

    fn read_head(s: &mut TcpStream) -> String {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16384 {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// Serves each reply to one connection in turn; hands back the request heads it read.
    fn serve(replies: Vec<String>) -> (String, thread::JoinHandle<Vec<String>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let h = thread::spawn(move || {
            replies
                .into_iter()
                .map(|reply| {
                    let (mut s, _) = l.accept().unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let head = read_head(&mut s);
                    let _ = s.write_all(reply.as_bytes());
                    head
                })
                .collect()
        });
        (base, h)
    }

    fn url(u: &str) -> Probe {
        parse_url(u).unwrap()
    }

    #[test]
    fn run_url_reads_status_and_body_and_the_matchers_judge_them() {
        let (base, server) = serve(vec![
            reply("503 Service Unavailable", "", "starting"),
            reply("200 OK", "", "ready"),
        ]);
        let p = url(&format!("{base}/health"));

        let r = run(&p, T, &here());
        assert_eq!(r.status, Some(503), "{r:?}");
        assert_eq!(r.body, "starting");
        assert!(r.error.is_none() && r.not_ready.is_none());
        assert_eq!(summary(&r), "HTTP 503");
        assert!(!matches(&[], &p, &r));
        assert!(!matches(&[parse_matcher("status=200").unwrap()], &p, &r));
        assert!(matches(
            &[parse_matcher("status=500..599").unwrap()],
            &p,
            &r
        ));

        let r = run(&p, T, &here());
        assert_eq!(r.status, Some(200), "{r:?}");
        assert_eq!(r.body, "ready");
        assert!(matches(&[], &p, &r));
        for m in [
            "status=200",
            "status=200..299",
            "body contains:ready",
            "body matches:^rea",
        ] {
            assert!(matches(&[parse_matcher(m).unwrap()], &p, &r), "{m}");
        }
        assert!(!matches(
            &[parse_matcher("body matches:^eady").unwrap()],
            &p,
            &r
        ));

        let heads = server.join().unwrap();
        assert!(
            heads[0].starts_with("GET /health HTTP/1.1\r\n"),
            "{}",
            heads[0]
        );
        let ua = format!("user-agent: park-waker/{}\r\n", env!("CARGO_PKG_VERSION"));
        assert!(heads[0].to_ascii_lowercase().contains(&ua), "{}", heads[0]);
    }

    #[test]
    fn run_url_caps_the_body() {
        let big = "b".repeat(BODY_CAP + 5000);
        let (base, _server) = serve(vec![reply("200 OK", "", &big)]);
        let r = run(&url(&base), T, &here());
        assert_eq!(r.status, Some(200), "{r:?}");
        assert!(r.truncated);
        assert_eq!(r.body.len(), BODY_CAP);
        assert_eq!(summary(&r), "HTTP 200 (truncated)");
    }

    #[test]
    fn connection_refused_is_not_ready() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let p = url(&format!("http://127.0.0.1:{port}/"));
        let r = run(&p, T, &here());
        assert_eq!(r.not_ready.as_deref(), Some("connection refused"), "{r:?}");
        assert!(r.error.is_none() && r.status.is_none());
        assert_eq!(summary(&r), "not ready: connection refused");
        assert!(!matches(&[], &p, &r));
    }

    #[test]
    fn a_silent_server_times_out_as_not_ready() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        thread::spawn(move || {
            let conn = l.accept();
            thread::sleep(Duration::from_secs(3));
            drop(conn);
        });
        let t0 = Instant::now();
        let r = run(&url(&base), Duration::from_millis(500), &here());
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_eq!(
            r.not_ready.as_deref(),
            Some("timed out after 0.5s"),
            "{r:?}"
        );
        assert!(r.error.is_none());
    }

    #[test]
    fn tls_failure_is_an_error_not_a_not_ready() {
        // An https probe against a plain-http server: the handshake reads garbage.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        thread::spawn(move || {
            if let Ok((mut s, _)) = l.accept() {
                let _ = s.write_all(reply("200 OK", "", "plain").as_bytes());
                thread::sleep(Duration::from_millis(500));
            }
        });
        let r = run(&url(&format!("https://127.0.0.1:{port}/")), T, &here());
        assert!(r.error.is_some(), "{r:?}");
        assert!(r.not_ready.is_none() && r.status.is_none());
        assert!(summary(&r).starts_with("cannot run: "));
    }

    #[test]
    fn a_relative_redirect_is_followed() {
        let (base, server) = serve(vec![
            reply("302 Found", "Location: /ready\r\n", ""),
            reply("200 OK", "", "ready"),
        ]);
        let p = url(&format!("{base}/start"));
        let r = run(&p, T, &here());
        assert_eq!(r.status, Some(200), "{r:?}");
        assert_eq!(r.body, "ready");
        assert!(matches(&[], &p, &r));
        let heads = server.join().unwrap();
        assert!(heads[1].starts_with("GET /ready "), "{}", heads[1]);
    }

    #[test]
    fn a_redirect_to_a_file_url_is_not_followed() {
        let (base, _server) = serve(vec![reply(
            "302 Found",
            "Location: file:///etc/passwd\r\n",
            "",
        )]);
        let p = url(&base);
        let r = run(&p, T, &here());
        assert_eq!(r.status, Some(302), "{r:?}");
        assert!(r.error.as_deref().unwrap().contains("file:///etc/passwd"));
        assert!(!r.body.contains("root:"));
        assert!(!matches(&[], &p, &r));
        assert!(!matches(&[Matcher::BodyContains("root".into())], &p, &r));
    }

    #[test]
    fn more_than_five_redirects_is_an_error() {
        let hop = reply("302 Found", "Location: /again\r\n", "");
        let (base, server) = serve(vec![hop; 6]);
        let r = run(&url(&base), T, &here());
        assert!(r.error.as_deref().unwrap().contains("redirects"), "{r:?}");
        // The first request plus exactly five followed hops.
        assert_eq!(server.join().unwrap().len(), 6);
    }

    // ---- matches / validate / describe ----

    fn result(exit: Option<i32>, status: Option<u16>, body: &str) -> ProbeResult {
        ProbeResult {
            exit,
            status,
            body: body.into(),
            ..Default::default()
        }
    }

    #[test]
    fn no_matchers_means_exit_0_or_2xx() {
        let c = cmd("true", false);
        let u = url("http://x/");
        assert!(matches(&[], &c, &result(Some(0), None, "")));
        assert!(!matches(&[], &c, &result(Some(1), None, "")));
        assert!(matches(&[], &u, &result(None, Some(200), "")));
        assert!(matches(&[], &u, &result(None, Some(299), "")));
        assert!(!matches(&[], &u, &result(None, Some(300), "")));
        assert!(!matches(&[], &u, &result(None, Some(503), "")));
    }

    #[test]
    fn error_or_not_ready_never_matches() {
        let c = cmd("true", false);
        let anything = [Matcher::BodyContains("x".into())];
        let mut r = result(Some(0), None, "x");
        assert!(matches(&[], &c, &r) && matches(&anything, &c, &r));
        r.error = Some("boom".into());
        assert!(!matches(&[], &c, &r) && !matches(&anything, &c, &r));
        r.error = None;
        r.not_ready = Some("timed out after 1s".into());
        assert!(!matches(&[], &c, &r) && !matches(&anything, &c, &r));
    }

    #[test]
    fn every_matcher_must_hold() {
        let c = cmd("true", false);
        let r = result(Some(0), None, "build ok\n");
        let ok = Matcher::BodyContains("ok".into());
        let exit0 = Matcher::Exit(0);
        let exit1 = Matcher::Exit(1);
        let nope = Matcher::BodyMatches("^fail".into());
        assert!(matches(&[exit0.clone(), ok.clone()], &c, &r));
        assert!(!matches(&[exit0.clone(), nope], &c, &r));
        assert!(!matches(&[ok.clone(), exit1], &c, &r));
        // Only the given matchers count: a body matcher alone ignores the exit code.
        assert!(matches(&[ok], &c, &result(Some(2), None, "ok")));
    }

    #[test]
    fn cross_kind_matchers_never_match_and_are_refused() {
        let c = cmd("true", false);
        let u = url("http://x/");
        let both = result(Some(0), Some(200), "");
        let exit0 = [Matcher::Exit(0)];
        let s200 = [Matcher::Status(200, 200)];
        assert!(!matches(&exit0, &u, &both));
        assert!(!matches(&s200, &c, &both));
        assert!(validate_matchers(&u, &exit0)
            .unwrap_err()
            .contains("exit=0"));
        assert!(validate_matchers(&c, &s200)
            .unwrap_err()
            .contains("status=200"));
        let body = Matcher::BodyContains("x".into());
        assert!(validate_matchers(&c, &[Matcher::Exit(0), body.clone()]).is_ok());
        assert!(validate_matchers(&u, &[Matcher::Status(200, 200), body]).is_ok());
    }

    #[test]
    fn describe_is_one_short_line() {
        assert_eq!(
            describe(&cmd("gh pr checks 42", false), &[]),
            "cmd `gh pr checks 42` until exit=0"
        );
        assert_eq!(
            describe(&url("http://x/health"), &[]),
            "url http://x/health until 2xx"
        );
        assert_eq!(
            describe(
                &url("http://x/"),
                &[
                    Matcher::Status(200, 299),
                    Matcher::BodyContains("up".into())
                ]
            ),
            "url http://x/ until status=200..299 and body contains:up"
        );
        assert_eq!(
            describe(&cmd("make test | tail -1", true), &[Matcher::Exit(0)]),
            "sh `make test | tail -1` until exit=0"
        );
        assert_eq!(
            describe(&cmd("echo 'a b'", false), &[]),
            "cmd `echo 'a b'` until exit=0"
        );
        let long = format!("echo {}", "x".repeat(200));
        let d = describe(&cmd(&long, false), &[]);
        assert!(d.contains('…') && d.chars().count() < 90, "{d}");
        let multi = describe(&cmd("echo a\necho b", true), &[]);
        assert!(!multi.contains('\n'), "{multi}");
    }

    #[test]
    fn summary_names_the_outcome() {
        assert_eq!(summary(&result(Some(1), None, "")), "exit 1");
        assert_eq!(summary(&result(None, Some(503), "")), "HTTP 503");
        let mut r = ProbeResult {
            not_ready: Some("connection refused".into()),
            ..Default::default()
        };
        assert_eq!(summary(&r), "not ready: connection refused");
        r.not_ready = None;
        r.error = Some("dns failed\nfor x".into());
        assert_eq!(summary(&r), "cannot run: dns failed for x");
        r.error = Some("e".repeat(500));
        assert!(summary(&r).chars().count() <= 100);
    }

    #[test]
    fn a_cut_through_a_multibyte_char_drops_it() {
        let mut buf = "ab".as_bytes().to_vec();
        buf.extend_from_slice(&"é".as_bytes()[..1]);
        assert_eq!(body_text(buf.clone(), true), "ab");
        assert_eq!(body_text(buf, false), "ab\u{FFFD}");
        assert_eq!(body_text("abé".as_bytes().to_vec(), true), "abé");
    }
}
