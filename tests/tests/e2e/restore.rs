//! `[journal] restore` in real tmux: after a crash, the first client that attaches to the fresh
//! server is asked (`ask`: tmux's own y/n prompt) or gets its lost sessions back (`auto`) through
//! the client-attached hook park's plugin appends; `off`, the default, does nothing. Either way
//! the sessions live at the crash resume in their slots and a parked one stays parked.
//!
//! The deterministic fake agent plays the agents (the real CLIs' crash cycle is in `rebuild`).

use crate::common::*;
use crate::rebuild::{
    crash, decoy_server, geometry, park_settled, sids_of, snapshot, split_shell, Fake,
};
use park_e2e::*;
use park_protocol::RowState;

fn restore(sb: &Sandbox, how: &str) {
    let dir = sb.home.join(".config/park");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[journal]\nrestore = \"{how}\"\n"),
    )
    .unwrap();
}

/// What was there before the crash.
struct Before {
    /// The two sessions live in window `pair` (slot 0, slot 1).
    live: Vec<String>,
    /// The session parked in window `kept`.
    parked: String,
    pair_geometry: Vec<String>,
}

/// Two live agents in one window and a parked one in another; the journal holds the live ones;
/// then the server dies with its agents (a reboot), and a fresh server comes up on the same
/// socket with park's plugin loaded (what the user's tmux.conf does).
fn crash_and_boot(f: &Fake) -> Before {
    let sb = &f.sb;
    let proj = sb.project_dir("proj");
    let p0 = sb.new_shell_window("w", "pair", &proj, &[] as &[(&str, &str)]);
    let p1 = split_shell(sb, &p0, &proj, &[], &["-h"]);
    let a = f.agent(&p0);
    let b = f.agent(&p1);
    let p2 = sb.new_shell_window("w", "kept", &sb.project_dir("kept"), &[] as &[(&str, &str)]);
    let c = f.agent(&p2);
    let r = park_settled(sb, &p2);
    assert!(r[0].starts_with("parked"), "{r:?}");
    let pair_geometry = geometry(sb, "w", "pair");
    let snap = snapshot(sb);
    let mut live = vec![a.clone(), b.clone()];
    live.sort();
    assert_eq!(sids_of(&snap, "live"), live, "{snap}");
    let pids: Vec<u32> = [&a, &b]
        .iter()
        .flat_map(|s| claude_pids_for(&sb.home, s))
        .collect();
    assert_eq!(pids.len(), 2);
    crash(sb, &pids);
    decoy_server(sb, 1, &[]);
    load_park_plugin(sb);

    Before {
        live: vec![a, b],
        parked: c,
        pair_geometry,
    }
}

/// Every live-at-crash session runs again in its slot, one process each; the parked one is still
/// parked, in a recreated pane of its window.
fn assert_as_before(sb: &Sandbox, before: &Before) {
    // `list-panes -t` fails while a window is missing (display-message would answer with the
    // current pane instead): the rebuild may still be building it.
    let pane_in = |window: &str, slot: usize| -> Option<String> {
        let out = sb
            .tmux(&[
                "list-panes",
                "-t",
                &format!("=w:{window}"),
                "-F",
                "#{pane_id}",
            ])
            .ok()?;
        out.lines().nth(slot).map(str::to_string)
    };
    for (slot, sid) in before.live.iter().enumerate() {
        // The rebuild runs in the background: a row is live from the resumed argv, a moment
        // before the agent writes its sessions/<pid>.json, so both are waited for.
        let r = poll(SECS(60), || {
            row(sb, &pane_in("pair", slot)?).filter(|r| {
                r.state == RowState::Live
                    && r.session_id.is_some()
                    && !claude_pids_for(&sb.home, sid).is_empty()
            })
        })
        .unwrap_or_else(|| panic!("pair.{slot} never ran {sid} again"));
        assert_eq!(r.session_id.as_deref(), Some(sid.as_str()), "pair.{slot}");
        assert_eq!(
            claude_pids_for(&sb.home, sid).len(),
            1,
            "one process: {sid}"
        );
    }
    assert_eq!(
        geometry(sb, "w", "pair"),
        before.pair_geometry,
        "same panes, order, size and cwds"
    );
    let r = poll(SECS(60), || {
        row(sb, &pane_in("kept", 0)?).filter(|r| r.state != RowState::Lost)
    })
    .expect("the parked session's window is rebuilt");
    assert_eq!(
        r.state,
        RowState::Parked,
        "a parked session stays parked: {r:?}"
    );
    assert_eq!(r.session_id.as_deref(), Some(before.parked.as_str()));
    assert!(claude_pids_for(&sb.home, &before.parked).is_empty());
}

fn on_attach(sb: &Sandbox, client: Option<&str>) -> String {
    let mut args = vec!["rebuild", "--on-attach"];
    if let Some(c) = client {
        args.extend(["--client", c]);
    }
    let o = park(sb, &args);
    assert_eq!(code(&o), 0, "{}", text(&o));
    text(&o)
}

/// `ask`: nothing happens before the person answers; a no leaves them lost and is not asked
/// again for the same sessions; a yes (tmux's confirm-before, answered with `y`) brings them back
/// as before.
#[test]
fn ask_puts_a_yes_no_prompt_on_the_attached_client_and_a_yes_brings_them_back() {
    let f = Fake::new();
    let sb = &f.sb;
    let before = crash_and_boot(&f);
    // `off`, the default: an attach changes nothing.
    assert!(
        on_attach(sb, None).contains("[journal] restore is off"),
        "off by default"
    );
    restore(sb, "ask");
    // The question covers the status line as the client attaches.
    let question = "Bring them back? (y/n)";
    let outer = Outer::attach_until(sb, "decoy", question);
    outer.tmux(&["send-keys", "-t", "outer", "n"]).unwrap();
    // The no is taken once the prompt is gone (else the question asked again below could be
    // this one, still showing).
    poll_fast(SECS(10), || {
        (!outer.screen().contains(question)).then_some(())
    })
    .unwrap_or_else(|| panic!("the n never answered:\n{}", outer.screen()));
    let client = sb
        .tmux(&["list-clients", "-F", "#{client_name}"])
        .unwrap()
        .trim()
        .to_string();
    assert!(
        on_attach(sb, Some(&client)).contains("already asked about these sessions"),
        "a second attach does not ask again"
    );
    let o = park(sb, &["ls", "--json"]);
    let lost = ls(sb)
        .rows
        .iter()
        .filter(|r| r.state == RowState::Lost)
        .count();
    assert_eq!(lost, 2, "a no restores nothing: {}", text(&o));

    // Asked again (the set forgotten), and answered yes.
    std::fs::remove_file(sb.park_home.join("restore.asked")).unwrap();
    assert!(on_attach(sb, Some(&client)).starts_with("asked:"));
    outer
        .wait(question, SECS(30))
        .unwrap_or_else(|e| panic!("not asked again: {e}"));
    outer.tmux(&["send-keys", "-t", "outer", "y"]).unwrap();
    assert_as_before(sb, &before);
}

/// `auto`: the attach alone brings them back, and the client is told.
#[test]
fn auto_brings_the_lost_sessions_back_when_a_client_attaches() {
    let f = Fake::new();
    let sb = &f.sb;
    restore(sb, "auto");
    let before = crash_and_boot(&f);
    let outer = Outer::attach(sb, "decoy");
    assert_as_before(sb, &before);
    assert!(
        sids_of(&snapshot(sb), "lost").is_empty(),
        "nothing is lost any more"
    );
    drop(outer);
}

/// Issue 32: a rebuild of sessions live at a crash, killed at each of its steps (its own fault
/// points, then the unpark's: the sender's, in the pane, the verifier's), and run again: every
/// session runs again exactly once, in its slot, and nothing is left parked or lost.
#[test]
fn a_rebuild_killed_at_any_step_loses_and_doubles_nothing_when_run_again() {
    // (point, reached in the rebuild itself: else in a process it starts, the one-shot file)
    let points = [
        ("after-adopt", true),
        ("after-window", true),
        ("after-repoint", true),
        ("before-resume-sent", true),
        ("after-resume-sent", true),
        ("before-exec", false),
        ("after-verify", false),
        ("before-teardown", false),
    ];
    let mut report = vec![];
    for (point, own) in points {
        let f = Fake::new();
        let sb = &f.sb;
        let proj = sb.project_dir("proj");
        let p0 = sb.new_shell_window("w", "pair", &proj, &[] as &[(&str, &str)]);
        let p1 = split_shell(sb, &p0, &proj, &[], &["-h"]);
        let sids = [f.agent(&p0), f.agent(&p1)];
        let snap = snapshot(sb);
        assert_eq!(sids_of(&snap, "live").len(), 2, "{snap}");
        let pids: Vec<u32> = sids
            .iter()
            .flat_map(|s| claude_pids_for(&sb.home, s))
            .collect();
        crash(sb, &pids);
        decoy_server(sb, 1, &[]);

        let first = if own {
            park_env(sb, &["rebuild", "--json"], &[("PARK_FAULT", point)])
        } else {
            std::fs::write(sb.park_home.join("test-fault"), point).unwrap();
            park(sb, &["rebuild", "--json"])
        };
        if own {
            assert_eq!(code(&first), 99, "{point}: {}", text(&first));
        }
        // Whatever the first one left (a pane mid-resume included), the second finishes it.
        let second = park(sb, &["rebuild", "--json"]);
        // Running already counts as back: the second rebuild succeeds whichever step stopped
        // the first.
        assert_eq!(code(&second), 0, "{point}: {}", text(&second));
        for sid in &sids {
            let n = poll(SECS(30), || {
                let n = claude_pids_for(&sb.home, sid).len();
                (n >= 1).then_some(n)
            })
            .unwrap_or(0);
            // Settled: a second process would show by now.
            std::thread::sleep(std::time::Duration::from_millis(500));
            let after = claude_pids_for(&sb.home, sid).len();
            assert!(
                n == 1 && after == 1,
                "{point}: {sid} runs {after} times\nfirst: {}\nsecond: {}",
                text(&first),
                text(&second)
            );
        }
        let rows = ls(sb).rows;
        let stuck: Vec<_> = rows
            .iter()
            .filter(|r| matches!(r.state, RowState::Parked | RowState::Lost))
            .map(|r| format!("{:?} {:?}: {:?}", r.state, r.session_id, r.reason))
            .collect();
        assert!(
            stuck.is_empty(),
            "{point}: left behind {stuck:?}\nsecond: {}",
            text(&second)
        );
        let windows = sb
            .tmux(&["list-windows", "-t", "=w", "-F", "#{window_name}"])
            .unwrap();
        let windows: Vec<&str> = windows.lines().collect();
        // Killed between building the window and re-pointing its entries, the first rebuild
        // leaves that window flagged, with bare shells: the second closes it and builds it
        // again. Every step leaves one window.
        assert_eq!(windows, vec!["pair"], "{point}\nsecond: {}", text(&second));
        report.push(format!("{point}: windows {windows:?}"));
    }
    eprintln!("MEASURE rebuild faults: {report:?}");
}

/// Issue 32's "pull the plug" drill with the real CLIs (for us, not CI: ~5 minutes and ten agents'
/// memory; `cargo test -p park-e2e --test e2e -- --ignored restore::ten_real`): ten agents live in
/// five windows of two panes (`PARK_DRILL_AGENTS`, comma-separated, default below), journaled by
/// the daemon as users get it; the tmux server and every agent process are SIGKILLed (a reboot);
/// a fresh server comes up on the same socket with the user's environment and park's plugin,
/// and one `park rebuild` brings every conversation back in its slot, one pane each.
#[test]
#[ignore = "a drill for the note: ten real agents, minutes"]
fn ten_real_agents_pull_the_plug_and_one_rebuild_brings_every_conversation_back() {
    let names: Vec<String> = std::env::var("PARK_DRILL_AGENTS")
        .unwrap_or_else(|_| {
            "claude,claude,codex,codex,claude,gemini,qwen,opencode,pi,claude".to_string()
        })
        .split(',')
        .map(str::to_string)
        .collect();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    Agents::locate();
    let agents: Vec<Box<dyn RealAgent>> = names.iter().map(|n| real_agent(n)).collect();
    let mut seeded: Vec<&str> = vec![];
    let mut env: Vec<(String, String)> = vec![];
    for a in &agents {
        if !seeded.contains(&a.spec().name) {
            a.seed(&sb, &mock);
            seeded.push(a.spec().name);
            for kv in a.env(&sb, &mock) {
                match env.iter_mut().find(|(k, _)| *k == kv.0) {
                    // A user's PATH has every agent on it (and pi's newer node before the rest).
                    Some((k, v)) if k == "PATH" => {
                        let mut dirs: Vec<&str> = kv.1.split(':').collect();
                        dirs.extend(v.split(':').filter(|d| !kv.1.split(':').any(|x| x == *d)));
                        *v = dirs.join(":");
                    }
                    Some(_) => {}
                    None => env.push(kv),
                }
            }
        }
    }
    install_shims(&sb, None);
    for a in &agents {
        if a.spec().integrate && seeded.contains(&a.spec().name) {
            let o = park(&sb, &["integrate", a.spec().name]);
            assert_eq!(code(&o), 0, "{}", text(&o));
            seeded.retain(|n| *n != a.spec().name);
        }
    }
    // The user's login profile puts every agent on PATH (rebuilt panes run login shells).
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    std::fs::write(
        sb.home.join(".bash_profile"),
        format!("export PATH='{}'\n", path.expect("a PATH")),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let mut live: Vec<(String, usize, String)> = vec![];
    for (i, a) in agents.iter().enumerate() {
        let (window, slot) = (format!("w{}", i / 2), i % 2);
        let dir = sb.project_dir(&format!("{window}-{slot}-{}", a.spec().name));
        let aenv = a.env(&sb, &mock);
        let pane = if slot == 0 {
            sb.new_shell_window("w", &window, &dir, &aenv)
        } else {
            let first = crate::rebuild::pane_at(&sb, "w", &window, 0);
            split_shell(&sb, &first, &dir, &aenv, &["-h"])
        };
        let s = a.spec();
        sb.type_line(&pane, &format!("{} {}", s.program, s.flags));
        sb.wait_for(&pane, s.ready, s.start)
            .unwrap_or_else(|e| panic!("{} in {window}.{slot}: {e}", s.name));
        a.first_turns(&sb, &pane, &format!("drill prompt {window}.{slot}"));
        let r = wait_row(&sb, &pane, s.reply, |r| {
            r.state == RowState::Live && r.session_id.is_some()
        });
        live.push((window, slot, r.session_id.unwrap()));
    }
    eprintln!(
        "MEASURE drill: {} agents started in {:?}",
        live.len(),
        t0.elapsed()
    );
    // As users get it: the daemon the plugin starts keeps the journal.
    let o = park(&sb, &["daemon", "--ensure"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let mut want: Vec<String> = live.iter().map(|l| l.2.clone()).collect();
    want.sort();
    let t0 = std::time::Instant::now();
    poll(SECS(60), || {
        let j: serde_json::Value =
            serde_json::from_slice(&std::fs::read(sb.park_home.join("journal.json")).ok()?).ok()?;
        let mut got: Vec<String> = j["sessions"]
            .as_array()?
            .iter()
            .filter_map(|r| r["entry"]["session_id"].as_str().map(str::to_string))
            .collect();
        got.sort();
        (got == want).then_some(())
    })
    .expect("the daemon journals all ten");
    eprintln!(
        "MEASURE drill: journaled by the daemon in {:?}",
        t0.elapsed()
    );
    let pids: Vec<u32> = ls(&sb)
        .rows
        .iter()
        .filter(|r| r.state == RowState::Live)
        .filter_map(|r| r.pid)
        .collect();
    crash(&sb, &pids);
    decoy_server(&sb, 1, &env);
    load_park_plugin(&sb);
    let t0 = std::time::Instant::now();
    let o = park(&sb, &["rebuild"]);
    eprintln!(
        "MEASURE drill: park rebuild of {} sessions took {:?}, exit {}\n{}",
        live.len(),
        t0.elapsed(),
        code(&o),
        text(&o)
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    for (i, (window, slot, sid)) in live.iter().enumerate() {
        let pane = crate::rebuild::pane_at(&sb, "w", window, *slot as u32);
        let r = wait_row(&sb, &pane, agents[i].spec().start, |r| {
            r.state == RowState::Live && r.session_id.is_some()
        });
        assert_eq!(
            r.session_id.as_deref(),
            Some(sid.as_str()),
            "{window}.{slot}"
        );
        let panes = ls(&sb)
            .rows
            .iter()
            .filter(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
            .count();
        assert_eq!(panes, 1, "{sid} runs in one pane");
    }
    assert!(entries(&sb).is_empty(), "nothing left parked");
    eprintln!("MEASURE drill: every conversation back in its slot");
}
