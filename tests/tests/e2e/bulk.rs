//! Bulk parks and unparks (`--idle`, `--all`) against fake agents in a real tmux server: the
//! selection, the typed-yes rule, the guard chain inside a wave, results in target order, and
//! resumes of one wave started at least a second apart.

use crate::common::*;
use park_e2e::*;
use park_protocol::Status;
use std::path::PathBuf;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// A shell window `name` running the fake `claude` with one turn done; returns (pane, session id,
/// transcript).
fn agent(sb: &Sandbox, name: &str, env: &[(&str, &str)]) -> (String, String, PathBuf) {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window("w", name, &dir, env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    submit_prompt(sb, &pane, "first prompt", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let r = wait_row(sb, &pane, SECS(10), |r| r.session_id.is_some());
    let sid = r.session_id.unwrap();
    let t = claude_transcript(&sb.home, &std::fs::canonicalize(&dir).unwrap(), &sid);
    assert!(t.exists(), "{}", t.display());
    (pane, sid, t)
}

/// Moves every record of a transcript `hours` into the past (same length, so only the time moves).
fn backdate(transcript: &PathBuf, hours: i64) {
    let re = regex::Regex::new(r#""timestamp":"([^"]+)""#).unwrap();
    let text = std::fs::read_to_string(transcript).unwrap();
    let o = std::process::Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("{hours} hours ago"),
            "+%Y-%m-%dT%H:%M:%S.000Z",
        ])
        .output()
        .unwrap();
    let stamp = String::from_utf8(o.stdout).unwrap().trim().to_string();
    let out = re.replace_all(&text, format!(r#""timestamp":"{stamp}""#).as_str());
    std::fs::write(transcript, out.as_bytes()).unwrap();
}

fn panes_of(out: &park_protocol::ActionOutput) -> Vec<String> {
    out.results
        .iter()
        .map(|r| r.pane.clone().unwrap_or_default())
        .collect()
}

#[test]
fn idle_selects_only_old_enough_panes_guards_hold_inside_a_wave_and_unpark_starts_are_spaced() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let mut old = vec![];
    for i in 0..5 {
        let (p, sid, t) = agent(&sb, &format!("old{i}"), &[]);
        backdate(&t, 2);
        old.push((p, sid));
    }
    // Old enough, but burning a core: the wave's shared CPU sample must still refuse it.
    let (hot, _, t) = agent(&sb, "hot", &[("FAKE_AGENT_CPU", "1")]);
    backdate(&t, 2);
    // Idle only seconds, and one with no turn at all (no measurable idle time).
    let (fresh, _, _) = agent(&sb, "fresh", &[]);
    let blank_dir = sb.project_dir("blank");
    let blank = sb.new_shell_window("w", "blank", &blank_dir, &[] as &[(&str, &str)]);
    sb.type_line(&blank, "claude");
    sb.wait_for(&blank, CLAUDE_READY, SECS(15)).unwrap();
    for p in old.iter().map(|x| &x.0).chain([&hot, &fresh]) {
        wait_row(&sb, p, SECS(10), |r| r.status == Status::Idle);
    }
    let old_panes: Vec<String> = old.iter().map(|x| x.0.clone()).collect();

    // No terminal and no --yes: nothing is parked.
    let o = park(&sb, &["park", "--idle", "1h"]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("needs --yes"), "{}", text(&o));
    assert!(entries(&sb).is_empty());
    let o = park(&sb, &["park", "--all"]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(entries(&sb).is_empty());
    // Usage errors, before anything is looked at.
    for bad in [
        &["park", "--all", &old_panes[0]][..],
        &["park", "--idle", "1h", "--kill-anyway", "--yes"],
        &["park", "--idle", "soon", "--yes"],
    ] {
        let o = park(&sb, bad);
        assert_eq!(code(&o), 2, "{bad:?}: {}", text(&o));
    }
    assert!(entries(&sb).is_empty());

    // The plan: exactly the old ones and the hot one, in the order the plan lists them.
    let (c, plan) = action(&sb, &["park", "--idle", "1h", "--dry-run"]);
    assert_eq!(c, 1, "the dry run already refuses the hot pane: {plan:?}");
    let mut planned = panes_of(&plan);
    let mut want: Vec<String> = old_panes.iter().cloned().chain([hot.clone()]).collect();
    let in_order = planned.clone();
    planned.sort();
    want.sort();
    assert_eq!(planned, want, "{plan:?}");
    assert!(entries(&sb).is_empty(), "a dry run parks nothing");

    let (c, out) = action(&sb, &["park", "--idle", "1h", "--yes"]);
    assert_eq!(c, 1, "the hot pane is refused: {out:?}");
    assert_eq!(panes_of(&out), in_order, "results in the plan's order");
    for r in &out.results {
        if r.pane.as_deref() == Some(hot.as_str()) {
            assert_eq!(r.outcome.as_str(), "refused");
            assert!(r.reason.as_deref().unwrap_or("").contains("CPU"), "{r:?}");
        } else {
            assert_eq!(r.outcome.as_str(), "parked", "{r:?}");
        }
    }
    assert_eq!(entries(&sb).len(), old.len());
    for (_, sid) in &old {
        assert!(agent_pids(&sb, sid).is_empty(), "{sid} still runs");
    }

    // Unpark all: every session back once, the agents' starts at least ~a second apart (the
    // resumes are sent a second apart; allow for a slow shell under the later one).
    let (c, out) = action(&sb, &["unpark", "--all", "--yes"]);
    assert_eq!(c, 0, "{out:?}");
    assert!(
        out.results.iter().all(|r| r.outcome.as_str() == "unparked"),
        "{out:?}"
    );
    assert!(entries(&sb).is_empty());
    let mut starts = vec![];
    for (p, sid) in &old {
        let r = wait_row(&sb, p, SECS(10), |r| r.session_id.as_deref() == Some(sid));
        let pids = claude_pids_for(&sb.home, sid);
        assert_eq!(pids.len(), 1, "{sid}: {pids:?}");
        assert_eq!(r.pid, Some(pids[0]));
        starts.push(park_e2e::harness::procs::start_ticks(pids[0]).unwrap());
    }
    starts.sort();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]) as f64 / hz)
        .collect();
    assert!(
        gaps.iter().all(|g| *g >= 0.5),
        "agents started too close together: {gaps:?} s"
    );
}

#[test]
fn named_targets_come_back_in_the_order_given() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let panes: Vec<String> = (0..4)
        .map(|i| agent(&sb, &format!("n{i}"), &[]).0)
        .collect();
    for p in &panes {
        wait_row(&sb, p, SECS(10), |r| r.status == Status::Idle);
    }
    let order = [&panes[2], &panes[0], &panes[3], &panes[1]];
    let args: Vec<&str> = std::iter::once("park")
        .chain(order.iter().map(|s| s.as_str()))
        .collect();
    let (c, out) = action_settled(&sb, &args);
    assert_eq!(c, 0, "{out:?}");
    assert_eq!(
        panes_of(&out),
        order.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    );
    let args: Vec<&str> = std::iter::once("unpark")
        .chain(order.iter().rev().map(|s| s.as_str()))
        .collect();
    let (c, out) = action(&sb, &args);
    assert_eq!(c, 0, "{out:?}");
    assert_eq!(
        panes_of(&out),
        order
            .iter()
            .rev()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    );
    // A named set parks and unparks as one.
    let o = park(&sb, &["set", "add", "pair", &panes[1], &panes[3]]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&park(&sb, &["set", "ls"])).contains(&format!("@pair: {} {}", panes[1], panes[3])));
    let (c, out) = action_settled(&sb, &["park", "@pair"]);
    assert_eq!(c, 0, "{out:?}");
    assert_eq!(panes_of(&out), vec![panes[1].clone(), panes[3].clone()]);
    assert_eq!(entries(&sb).len(), 2);
    let (c, out) = action(&sb, &["unpark", "@pair"]);
    assert_eq!(c, 0, "{out:?}");
    assert!(
        out.results.iter().all(|r| r.outcome.as_str() == "unparked"),
        "{out:?}"
    );
    assert!(entries(&sb).is_empty());
    let o = park(&sb, &["park", "@nope"]);
    assert_eq!(code(&o), 2, "an unknown set is a usage error: {}", text(&o));
    let o = park(&sb, &["set", "add", "bad", "%1;rm -rf /"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    // Issue 34 item 13: a pane that does not exist is refused (the README says sets are
    // validated when added); a session that does not exist yet is kept, with a note.
    let o = park(&sb, &["set", "add", "bad", "%99"]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("%99: no such pane"), "{}", text(&o));
    assert!(
        !text(&park(&sb, &["set", "ls"])).contains("@bad"),
        "nothing was added"
    );
    let o = park(&sb, &["set", "add", "later", "nosuch:0", &panes[1]]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("note: nosuch:0 names nothing now"),
        "{}",
        text(&o)
    );
    let o = park(&sb, &["set", "add", "here", "."]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    let o = park(&sb, &["park", "--all", "--yes"]);
    assert!(
        !text(&o).contains('\r'),
        "no progress line without a terminal: {:?}",
        text(&o)
    );
}
