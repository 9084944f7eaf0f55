//! Races: concurrent `park` / `unpark` / `park` on one pane, and concurrent unparks of two ledger
//! entries that name the same session, with randomised start offsets, against the fake agent in a
//! real tmux server (the fake agent keeps each round fast and deterministic; the real agents'
//! crash behaviour is `e2e_faults`).
//!
//! After every round, sampled while it runs and once it settles: never two processes on the
//! session (live status files, read from the system), never a session both gone and unrecorded,
//! never an entry left beside a running session (an orphan), at most one resume reported.
//! The per-pane and per-session locks are shown held across a whole transaction (a park paused
//! after its archive step makes every other park/unpark of that pane refuse).
//!
//! Rounds: `PARK_RACE_ROUNDS` per pane (default 30) × 4 panes, plus 12 same-session rounds.

use crate::common::*;
use park_e2e::*;
use park_protocol::RowState;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

fn start_agent(sb: &Sandbox, name: &str) -> (String, String) {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window("w", name, &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let r = wait_row(sb, &pane, SECS(10), |r| r.session_id.is_some());
    (pane, r.session_id.unwrap())
}

fn entries_for(sb: &Sandbox, sid: &str) -> Vec<serde_json::Value> {
    entries(sb)
        .into_iter()
        .filter_map(|p| serde_json::from_slice::<serde_json::Value>(&std::fs::read(p).ok()?).ok())
        .filter(|v| v.get("session_id").and_then(|s| s.as_str()) == Some(sid))
        .collect()
}

/// Runs `ops` concurrently (each after its own offset) while sampling the live count; returns
/// the outcomes and the largest live count seen.
fn race(sb: &Sandbox, sid: &str, ops: &[(&str, String, u64)]) -> (Vec<String>, usize) {
    let max_live = AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let outs = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let n = claude_pids_for(&sb.home, sid).len();
                max_live.fetch_max(n, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(15));
            }
        });
        let hs: Vec<_> = ops
            .iter()
            .map(|(verb, target, delay)| {
                let (verb, target, delay) = (verb.to_string(), target.clone(), *delay);
                s.spawn(move || {
                    std::thread::sleep(Duration::from_millis(delay));
                    let mut args = vec![verb.as_str(), target.as_str(), "--json"];
                    if verb == "park" {
                        args.push("--force");
                    }
                    let o = park_cmd(sb, &[]).args(&args).output().unwrap();
                    let v: Option<park_protocol::ActionOutput> =
                        serde_json::from_slice(&o.stdout).ok();
                    let oc = v
                        .and_then(|v| v.results.into_iter().next())
                        .map(|r| format!("{} {}", r.outcome, r.reason.unwrap_or_default()))
                        .unwrap_or_else(|| format!("no json: {}", text(&o)));
                    format!("{verb}: {oc}")
                })
            })
            .collect();
        let outs: Vec<String> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        // Hand-offs finish in the pane after the sender returns: keep sampling through that.
        let settled = poll(SECS(20), || {
            let live = claude_pids_for(&sb.home, sid).len();
            let es = entries_for(sb, sid);
            let quiet = es
                .iter()
                .all(|e| e.get("state").and_then(|s| s.as_str()) == Some("parked"));
            ((live == 1 && es.is_empty()) || (live == 0 && es.len() == 1 && quiet)).then_some(())
        });
        std::thread::sleep(Duration::from_millis(300));
        done.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        assert!(
            settled.is_some(),
            "never settled: live {:?}, entries {:?}, outcomes {outs:?}",
            claude_pids_for(&sb.home, sid),
            entries_for(sb, sid)
        );
        outs
    });
    (outs, max_live.load(Ordering::Relaxed))
}

/// Checks one settled round; returns whether the session ended parked.
fn check_round(sb: &Sandbox, sid: &str, ctx: &str, outs: &[String], max_live: usize) -> bool {
    assert!(
        max_live <= 1,
        "{ctx}: two processes on one session: {outs:?}"
    );
    let unparked = outs
        .iter()
        .filter(|o| o.starts_with("unpark: unparked"))
        .count();
    assert!(unparked <= 1, "{ctx}: double resume: {outs:?}");
    let live = claude_pids_for(&sb.home, sid).len();
    let es = entries_for(sb, sid);
    assert!(es.len() <= 1, "{ctx}: two entries: {es:?}");
    assert!(live == 1 || es.len() == 1, "{ctx}: SESSION LOST: {outs:?}");
    assert!(
        live != 1 || es.is_empty(),
        "{ctx}: orphaned entry beside a live session: {es:?}"
    );
    live == 0
}

#[test]
fn concurrent_park_unpark_park_on_one_pane() {
    let rounds: usize = std::env::var("PARK_RACE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let agents: Vec<(String, String)> =
        (0..4).map(|i| start_agent(&sb, &format!("r{i}"))).collect();
    let total = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (i, (pane, sid)) in agents.iter().enumerate() {
            let (sb, total) = (&sb, &total);
            s.spawn(move || {
                let mut rng = Rng::new("PARK_RACE_SEED", i as u64);
                for round in 0..rounds {
                    let ops: Vec<(&str, String, u64)> = ["park", "unpark", "park"]
                        .iter()
                        .map(|v| (*v, pane.clone(), rng.below(400)))
                        .collect();
                    let ctx = format!(
                        "{pane} round {round} {:?}",
                        ops.iter().map(|o| (o.0, o.2)).collect::<Vec<_>>()
                    );
                    let (outs, max_live) = race(sb, sid, &ops);
                    let parked = check_round(sb, sid, &ctx, &outs, max_live);
                    eprintln!("{ctx}: parked={parked} {outs:?}");
                    total.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let n = total.load(Ordering::Relaxed);
    eprintln!("races: {n} park/unpark/park interleavings, invariant held in each");
    assert_eq!(n, rounds * 4);
    // The panes still work: each one ends live or parked, and a final unpark brings all back.
    for (pane, sid) in &agents {
        if !entries_for(&sb, sid).is_empty() {
            let (c, out) = action(&sb, &["unpark", pane]);
            assert_eq!(c, 0, "{out:?}");
        }
        let r = wait_row(&sb, pane, SECS(20), |r| r.state == RowState::Live);
        assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
    }
}

#[test]
fn two_entries_naming_one_session_resume_it_once() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let (pane, sid) = start_agent(&sb, "dup");
    let mut rng = Rng::new("PARK_RACE_SEED", 99);
    for round in 0..12 {
        let (c, out) = action(&sb, &["park", &pane, "--force"]);
        assert_eq!(c, 0, "{out:?}");
        let main = entries(&sb).into_iter().next().unwrap();
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&main).unwrap()).unwrap();
        let id = v["id"].as_str().unwrap().to_string();
        let bak = format!("{id}.bak");
        v["id"] = serde_json::Value::String(bak.clone());
        let copy = main.with_file_name(format!("{bak}.json"));
        std::fs::write(&copy, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        // doctor sees the duplicate before anything happens.
        let d = park(&sb, &["doctor", "--json"]);
        assert_eq!(code(&d), 1);
        assert!(text(&d).contains("\"duplicate\""), "{}", text(&d));
        let ops = [
            ("unpark", id.clone(), rng.below(300)),
            ("unpark", bak.clone(), rng.below(300)),
        ];
        let ctx = format!(
            "same-session round {round} {:?}",
            ops.iter().map(|o| o.2).collect::<Vec<_>>()
        );
        let max_live = AtomicUsize::new(0);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let outs = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    max_live.fetch_max(claude_pids_for(&sb.home, &sid).len(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(15));
                }
            });
            let hs: Vec<_> = ops
                .iter()
                .map(|(verb, t, d)| {
                    let (sb, verb, t, d) = (&sb, *verb, t.clone(), *d);
                    s.spawn(move || {
                        std::thread::sleep(Duration::from_millis(d));
                        let o = park_cmd(sb, &[])
                            .args([verb, &t, "--json"])
                            .output()
                            .unwrap();
                        String::from_utf8_lossy(&o.stdout).into_owned()
                    })
                })
                .collect();
            let outs: Vec<String> = hs.into_iter().map(|h| h.join().unwrap()).collect();
            poll(SECS(20), || {
                (claude_pids_for(&sb.home, &sid).len() == 1).then_some(())
            });
            std::thread::sleep(Duration::from_millis(500));
            stop.store(true, Ordering::Relaxed);
            sampler.join().unwrap();
            outs
        });
        let resumed = outs
            .iter()
            .filter(|o| o.contains("\"outcome\":\"unparked\""))
            .count();
        eprintln!("{ctx}: {outs:?}");
        assert!(
            max_live.load(Ordering::Relaxed) <= 1,
            "{ctx}: two processes: {outs:?}"
        );
        // At most one resume is reported (seen once in ~50 rounds: the winner's in-pane step is
        // reported "failed" by a refusal while the session does run: safe, and noted).
        assert!(resumed <= 1, "{ctx}: double resume reported: {outs:?}");
        assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1, "{ctx}");
        // The spare entry, if its unpark lost the race before seeing the session run, is cleared
        // by one more unpark (already-running); never left claiming "parked".
        for t in [&id, &bak] {
            if entries(&sb)
                .iter()
                .any(|p| p.file_stem().is_some_and(|s| s == t.as_str()))
            {
                let (_, out) = action(&sb, &["unpark", t]);
                assert_eq!(
                    out.results[0].outcome.as_str(),
                    "already-running",
                    "{ctx}: {out:?}"
                );
            }
        }
        assert!(entries(&sb).is_empty(), "{ctx}: orphaned entries");
        wait_row(&sb, &pane, SECS(10), |r| {
            r.state == RowState::Live && r.status == park_protocol::Status::Idle
        });
    }
}

/// A park paused between its archive and its kill still holds the pane and session locks: every
/// other park or unpark of that pane meanwhile is refused, never interleaved.
#[test]
fn the_locks_are_held_across_the_whole_transaction() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let (pane, _sid) = start_agent(&sb, "lk");
    let slow = park_cmd(&sb, &[("PARK_FAULT_PAUSE", "after-archive:2500")])
        .args(["park", &pane, "--json", "--force"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    poll(SECS(5), || (!entries(&sb).is_empty()).then_some(())).expect("claimed");
    let (c, out) = action(&sb, &["park", &pane, "--force"]);
    assert_eq!(c, 1);
    let why = out.results[0].reason.clone().unwrap_or_default();
    assert!(
        why.contains("is working on this right now")
            || why.contains("entry for this session already exists"),
        "{why}"
    );
    let (c, out) = action(&sb, &["unpark", &pane]);
    assert_eq!(c, 1, "{out:?}");
    let o = slow.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"parked\""),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The lock died with its owner: the next transaction goes through.
    let (c, out) = action(&sb, &["unpark", &pane]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{out:?}"
    );
}
