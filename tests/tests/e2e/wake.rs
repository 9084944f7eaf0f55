//! Wake-ups in a real tmux server: a parked session comes back by itself at a time or when a
//! command/URL probe matches, and its first prompt is the `[park]` note; the waker is one small
//! process that a crash does not stop for good (`--ensure` restarts it and a missed time fires
//! once); a deadline ends the wait. The first test uses the REAL Claude Code CLI against the mock
//! model server; the others use the deterministic fake agent.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

fn waker_pid(sb: &Sandbox) -> Option<u32> {
    let s = std::fs::read_to_string(sb.park_home.join("waker.pid")).ok()?;
    let pid: u32 = s.split_whitespace().next()?.parse().ok()?;
    pid_alive(pid).then_some(pid)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn wake_log(sb: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sb.park_home.join("wakes.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn entry_json(sb: &Sandbox) -> Option<Value> {
    let es = entries(sb);
    let p = es.first()?;
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// Parks `pane` with extra args (see `action_settled`).
fn park_with(sb: &Sandbox, pane: &str, extra: &[&str]) -> (i32, String, Option<String>) {
    let mut a = vec!["park", pane];
    a.extend_from_slice(extra);
    let (c, out) = action_settled(sb, &a);
    let r = out.results.into_iter().next().expect("one result");
    (c, r.outcome.to_string(), r.reason)
}

#[test]
fn real_claude_parked_with_wake_in_resumes_by_itself_and_reads_the_note() {
    let sb = Sandbox::new();
    // With the journal on (the default) the daemon stays to keep it while tmux runs; this test
    // ends by checking that a daemon with nothing left to do goes away.
    let cfg = sb.home.join(".config/park");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), "[journal]\nenabled = false\n").unwrap();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let dir = sb.project_dir("wake");
    let pane = sb.new_shell_window("w", "wake", &dir, &env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(&sb, &pane, "wait for the build please", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let r = wait_row(&sb, &pane, SECS(30), |r| {
        r.status == Status::Idle && r.state == RowState::Live
    });
    let sid = r.session_id.unwrap();
    let transcript = claude_transcript(&sb.home, &dir, &sid);
    let (c, oc, why) = park_with(
        &sb,
        &pane,
        &[
            "--wake-in",
            "3s",
            "--note",
            "the build is green: merge PR 42",
        ],
    );
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    // The waker is up, small, and `ls` shows what it waits for.
    let pid = poll(SECS(5), || waker_pid(&sb)).expect("a waker runs");
    let rss = rss_kb(pid);
    eprintln!("MEASURE waker RSS while waiting: {rss} kB (pid {pid})");
    let parked = row(&sb, &pane).unwrap();
    assert_eq!(parked.state, RowState::Parked);
    assert!(
        parked.wake.as_deref().is_some_and(|w| w.starts_with("at ")),
        "{parked:?}"
    );
    // It comes back by itself, same session, same pane, and the note is its next user message.
    let back = wait_row(&sb, &pane, SECS(60), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    // 2.1.332 also keeps the request that carried it (an `api-request-blob` record): the note
    // is the user record's.
    let is_user = |l: &str| serde_json::from_str::<Value>(l).is_ok_and(|r| r["type"] == "user");
    let line = poll(SECS(60), || {
        std::fs::read_to_string(&transcript).ok().and_then(|t| {
            t.lines()
                .find(|l| l.contains("merge PR 42") && is_user(l))
                .map(str::to_string)
        })
    })
    .expect("the note reaches the transcript as a user message");
    let line = line.as_str();
    assert!(line.contains("[park] This session was parked"), "{line}");
    assert!(line.contains("wake-up time came"), "{line}");
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
    // The waker logs once the unpark (note included) has finished.
    let log = poll(SECS(30), || Some(wake_log(&sb)).filter(|l| !l.is_empty())).unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["outcome"], "woke");
    eprintln!(
        "MEASURE wake latency after the due time (real Claude, unpark included): {} ms",
        log[0]["latency_ms"]
    );
    // One note, one outcome: delivered, so the archive's notes never call it undelivered (the
    // in-pane resume used to record it as "undelivered … unparked by hand" while the waker
    // delivered it).
    let notes = std::fs::read_to_string(sb.park_home.join("archive").join(&sid).join("NOTES.md"))
        .unwrap_or_default();
    assert!(
        !notes.contains("undelivered") && !notes.contains("by hand"),
        "a delivered note is recorded as undelivered:\n{notes}"
    );
    // Nothing is pending any more (and the journal is off): the waker goes away by itself.
    poll(SECS(10), || (!pid_alive(pid)).then_some(())).expect("the waker exits when idle");
}

struct Fake {
    sb: Sandbox,
}

impl Fake {
    fn new() -> Fake {
        let sb = Sandbox::new();
        install_shims(&sb, Some(FAKE));
        Fake { sb }
    }

    fn agent(&self, name: &str) -> (String, String) {
        let dir = self.sb.project_dir(name);
        let pane = self
            .sb
            .new_shell_window("w", name, &dir, &[] as &[(&str, &str)]);
        self.sb.type_line(&pane, "claude");
        self.sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
        self.sb.type_line(&pane, "first prompt");
        self.sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
        let r = wait_row(&self.sb, &pane, SECS(10), |r| r.status == Status::Idle);
        (pane, r.session_id.expect("session id"))
    }

    fn transcript(&self, name: &str, sid: &str) -> std::path::PathBuf {
        claude_transcript(&self.sb.home, &self.sb.work.join(name), sid)
    }
}

#[test]
fn a_command_probe_that_flips_after_three_runs_wakes_the_session() {
    let f = Fake::new();
    let sb = &f.sb;
    let (pane, sid) = f.agent("cmd");
    let counter = sb.work.join("cmd").join("runs");
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; [ $n -ge 3 ]",
        c = counter.display()
    );
    let (c, oc, why) = park_with(
        sb,
        &pane,
        &[
            "--wake-on-cmd",
            &script,
            "--shell",
            "--every",
            "5s",
            "--note",
            "the probe flipped",
        ],
    );
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let w = row(sb, &pane).unwrap().wake.unwrap();
    assert!(w.starts_with("sh `") && w.contains("every 5s"), "{w}");
    let back = wait_row(sb, &pane, SECS(40), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().trim(),
        "3",
        "woke on the third run, not before"
    );
    let t = poll(SECS(20), || {
        std::fs::read_to_string(f.transcript("cmd", &sid))
            .ok()
            .filter(|t| t.contains("the probe flipped"))
    })
    .expect("note delivered");
    assert!(t.contains("held"), "the reason says the probe held");
}

/// A one-route HTTP server: 503 until `ready` is set, then 200 "ready". Returns the port.
fn health_server(ready: Arc<AtomicBool>) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf);
            let (code, body) = if ready.load(Ordering::SeqCst) {
                ("200 OK", "ready")
            } else {
                ("503 Service Unavailable", "starting")
            };
            let _ = write!(
                s,
                "HTTP/1.1 {code}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn a_url_probe_against_a_local_server_wakes_when_the_body_matches() {
    let f = Fake::new();
    let sb = &f.sb;
    let (pane, sid) = f.agent("url");
    let ready = Arc::new(AtomicBool::new(false));
    let port = health_server(ready.clone());
    let url = format!("http://127.0.0.1:{port}/health");
    let (c, oc, why) = park_with(
        sb,
        &pane,
        &[
            "--wake-on-url",
            &url,
            "--when",
            "body contains:ready",
            "--every",
            "5s",
        ],
    );
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    // The first check sees 503: still parked, and ls says what it saw.
    let seen = poll(SECS(15), || {
        row(sb, &pane)
            .and_then(|r| r.wake)
            .filter(|w| w.contains("HTTP 503"))
    })
    .expect("the probe ran and saw 503");
    assert!(seen.contains(&url), "{seen}");
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Parked);
    ready.store(true, Ordering::SeqCst);
    let back = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
}

#[test]
fn a_killed_waker_is_restarted_by_ensure_and_a_missed_time_fires_once() {
    let f = Fake::new();
    let sb = &f.sb;
    let (pane, sid) = f.agent("crash");
    let (c, oc, why) = park_with(sb, &pane, &["--wake-in", "4s"]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let pid = poll(SECS(5), || waker_pid(sb)).expect("a waker runs");
    // The waker dies mid-wait (a crash, an OOM kill, a reboot) and the due time passes.
    kill_and_reap(&[pid], Duration::from_millis(100));
    assert!(wait_gone(pid, SECS(5)));
    std::thread::sleep(SECS(6));
    // (Not `park ls`: it would start a waker itself.)
    assert_eq!(entries(sb).len(), 1, "nothing fires without a waker");
    let o = park(sb, &["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["code"] == "waker-down"),
        "doctor reports the pending wake with no waker: {d}"
    );
    let o = park(sb, &["waker", "--ensure"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let back = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let log = poll(SECS(30), || Some(wake_log(sb)).filter(|l| !l.is_empty())).unwrap();
    std::thread::sleep(SECS(2));
    let log2 = wake_log(sb);
    assert_eq!(log2.len(), 1, "the missed time fires once: {log2:?}");
    // It fired on the restart, well after the due time (which passed while no waker ran).
    assert!(log[0]["latency_ms"].as_i64().unwrap() >= 2000, "{log:?}");
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}

#[test]
fn a_deadline_records_timed_out_and_stays_parked_or_resumes_by_option() {
    let f = Fake::new();
    let sb = &f.sb;
    let (stay, _) = f.agent("stay");
    let (go, go_sid) = f.agent("go");
    let (c, _, why) = park_with(
        sb,
        &stay,
        &[
            "--wake-on-cmd",
            "false",
            "--every",
            "5s",
            "--deadline",
            "6s",
        ],
    );
    assert_eq!(c, 0, "{why:?}");
    let (c, _, why) = park_with(
        sb,
        &go,
        &[
            "--wake-on-cmd",
            "false",
            "--every",
            "5s",
            "--deadline",
            "6s",
            "--on-deadline",
            "resume",
            "--note",
            "gave up waiting",
        ],
    );
    assert_eq!(c, 0, "{why:?}");
    let back = wait_row(sb, &go, SECS(40), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(go_sid.as_str()));
    let t = poll(SECS(20), || {
        std::fs::read_to_string(f.transcript("go", &go_sid))
            .ok()
            .filter(|t| t.contains("gave up waiting"))
    })
    .expect("the timed-out note is delivered");
    assert!(t.contains("timed out"), "the note says it timed out");
    let w = poll(SECS(20), || {
        row(sb, &stay)
            .and_then(|r| r.wake)
            .filter(|w| w.contains("timed out"))
    })
    .expect("ls shows the timed-out wake");
    assert!(w.contains("false"), "{w}");
    assert_eq!(
        row(sb, &stay).unwrap().state,
        RowState::Parked,
        "it stays parked"
    );
    let e = entry_json(sb).unwrap();
    assert!(
        e["wake"]["outcome"].as_str().unwrap().contains("timed out"),
        "{e}"
    );
}

#[test]
fn wake_now_cancel_and_queued_notes() {
    let f = Fake::new();
    let sb = &f.sb;
    let (a, a_sid) = f.agent("now");
    let (b, _) = f.agent("cancel");
    assert_eq!(park_with(sb, &a, &["--wake-in", "2h"]).0, 0);
    assert_eq!(park_with(sb, &b, &["--wake-in", "2h"]).0, 0);
    // One waker per user: a second one sees the lock and leaves at once.
    let first = poll(SECS(5), || waker_pid(sb)).expect("a waker runs");
    let o = park(sb, &["waker"]);
    assert_eq!(code(&o), 0);
    assert!(text(&o).contains("already running"), "{}", text(&o));
    assert_eq!(waker_pid(sb), Some(first));
    let o = park(
        sb,
        &["note", "--wake", &a, "look", "at", "the", "flaky", "test"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = park(sb, &["wake", "cancel", &b]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(row(sb, &b)
        .unwrap()
        .wake
        .is_none_or(|w| w.contains("note only")));
    let o = park(sb, &["wake", "now", &a]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let back = wait_row(sb, &a, SECS(20), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(a_sid.as_str()));
    let t = poll(SECS(20), || {
        std::fs::read_to_string(f.transcript("now", &a_sid))
            .ok()
            .filter(|t| t.contains("flaky test"))
    })
    .expect("the queued note is delivered");
    assert!(t.contains("woken by hand"));
    assert_eq!(
        row(sb, &b).unwrap().state,
        RowState::Parked,
        "a cancelled wake stays parked"
    );
}

/// A note typed while the resumed agent still starts is lost: the pane still shows the last frame
/// of the agent parked there (empty composer included), and the agent's terminal setup discards
/// what was typed meanwhile (the zellij wake flake: Claude at 44 MB, read as idle, note gone).
/// The note waits until the agent's own status file says it is up, and reaches it once.
#[test]
fn a_note_waits_for_a_slow_starting_agent_and_reaches_it_once() {
    let f = Fake::new();
    let sb = &f.sb;
    let dir = sb.project_dir("slow");
    let pane = sb.new_shell_window("w", "slow", &dir, &[("FAKE_AGENT_MODE", "slow-start=3000")]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(20)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let sid = wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle)
        .session_id
        .expect("session id");
    assert_eq!(park_with(sb, &pane, &[]).0, 0);
    let o = park(
        sb,
        &["note", "--wake", &pane, "typed", "while", "it", "starts"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = park(sb, &["unpark", &pane]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // Delivered at the first typing: typed only once the agent read keys.
    assert!(text(&o).contains("note delivered"), "{}", text(&o));
    assert!(!text(&o).contains("typed 2 times"), "{}", text(&o));
    let t = std::fs::read_to_string(f.transcript("slow", &sid)).unwrap();
    assert_eq!(
        t.matches("typed while it starts").count(),
        1,
        "the note is one user message:\n{t}"
    );
}

#[test]
fn bad_wake_flags_are_usage_errors_and_park_nothing() {
    let f = Fake::new();
    let sb = &f.sb;
    let (pane, _) = f.agent("bad");
    for bad in [
        vec!["--wake-in", "15d"],
        vec!["--wake-in", "soon"],
        vec!["--wake-at", "2001-01-01T00:00:00Z"],
        vec!["--wake-on-url", "ftp://example.com/x"],
        vec!["--wake-on-url", "file:///etc/passwd"],
        vec!["--wake-on-url", "http://127.0.0.1:9/", "--when", "exit=0"],
        vec!["--wake-on-cmd", "true", "--every", "1s"],
        vec!["--wake-on-cmd", "true", "--when", "body matches:("],
        vec!["--wake-on-cmd", "'unbalanced"],
        vec!["--every", "5s"],
        vec!["--note", "no condition"],
    ] {
        let mut a = vec!["park", pane.as_str()];
        a.extend(bad.iter().copied());
        let o = park(sb, &a);
        assert_eq!(code(&o), 2, "{bad:?}: {}", text(&o));
        assert!(entries(sb).is_empty(), "{bad:?} parked something");
    }
    assert!(!Path::new(&sb.park_home.join("waker.pid")).exists());
}
