//! End to end: the interactive picker (`park pick`) in a pane of a real private tmux server,
//! driven with send-keys and read with capture-pane, against two fake agents installed as `claude`.
//!
//! Contract: the picker runs in a shell pane of another session (`ctl`), as a user would start it;
//! every toggle is checked both on the picker's screen and through `park ls --json`. The pane's raw
//! output is also logged (`pipe-pane`) so a progress text that is on screen only briefly
//! (`freezing…`) can still be asserted.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::path::PathBuf;
use std::time::Instant;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// A shell pane running `claude` (the fake) with one turn done, idle; returns the pane id.
fn agent_in_shell(sb: &Sandbox, name: &str) -> String {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window("w", name, &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    wait_row(sb, &pane, SECS(10), |r| {
        r.status == Status::Idle && r.reason.is_none()
    });
    pane
}

/// The shell pane the picker runs in, with its raw output logged to the returned file.
fn control_pane(sb: &Sandbox) -> (String, PathBuf) {
    let dir = sb.project_dir("ctl");
    let pane = sb.new_shell_window("ctl", "pick", &dir, &[] as &[(&str, &str)]);
    let log = sb.logs.join("picker.out");
    sb.tmux(&[
        "pipe-pane",
        "-o",
        "-t",
        &pane,
        &format!("cat >> {}", sh_quote(&log.to_string_lossy())),
    ])
    .unwrap();
    (pane, log)
}

/// The pane's output so far with escape sequences removed.
fn log_text(log: &PathBuf) -> String {
    let raw = String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).into_owned();
    regex::Regex::new(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-B]|[=>78])")
        .unwrap()
        .replace_all(&raw, "")
        .into_owned()
}

fn cursor_on(pane: &str) -> String {
    format!(r"▶ {pane}\s")
}

/// Waits for the shell prompt to come back after the picker exits.
fn wait_prompt_back(sb: &Sandbox, ctl: &str) {
    sb.wait_for(ctl, r"(?m)^park-test\$ \s*$", SECS(10))
        .unwrap_or_else(|e| panic!("the picker did not exit: {e}"));
}

#[test]
fn pick_parks_the_popup_pane_resumes_it_filters_and_quits() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let p1 = agent_in_shell(&sb, "alpha");
    let p2 = agent_in_shell(&sb, "beta");
    let (ctl, log) = control_pane(&sb);

    // Opened for p1 (as the popup does): the cursor starts on p1's row.
    sb.type_text(&ctl, &format!("park pick --pane {p1}"));
    let t0 = Instant::now();
    sb.press_enter(&ctl);
    let screen = sb
        .wait_for(&ctl, &cursor_on(&p1), SECS(15))
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "picker: first frame with rows {:?} after Enter (2 agents, 100 ms polling)",
        t0.elapsed()
    );
    assert!(screen.contains(&p2), "both agents are listed:\n{screen}");
    assert!(screen.contains("w:1 alpha"), "group header:\n{screen}");
    assert!(screen.contains("parkable"), "per-window totals:\n{screen}");

    // Enter parks it on a worker; toggling the pane the picker was opened for closes it.
    sb.press_enter(&ctl);
    wait_prompt_back(&sb, &ctl);
    assert!(
        log_text(&log).contains("freezing…"),
        "the row showed its progress while park ran"
    );
    let r = row(&sb, &p1).expect("p1 row");
    assert_eq!(r.state, RowState::Parked, "{r:?}");
    assert_eq!(row(&sb, &p2).unwrap().state, RowState::Live);

    // A picker without --pane: the cursor starts on the first row; move to p1 (❄) and resume it.
    sb.type_line(&ctl, "park pick");
    let screen = sb.wait_for(&ctl, "❄ parked", SECS(15)).unwrap();
    assert!(
        screen.contains("freed "),
        "parked rows show what they freed:\n{screen}"
    );
    sb.wait_for(&ctl, &cursor_on(&p1), SECS(2)).unwrap();
    sb.send_keys(&ctl, &["j"]);
    sb.wait_for(&ctl, &cursor_on(&p2), SECS(5)).unwrap();
    sb.send_keys(&ctl, &["Up"]);
    sb.wait_for(&ctl, &cursor_on(&p1), SECS(5)).unwrap();
    sb.press_enter(&ctl);
    let back = wait_row(&sb, &p1, SECS(20), |r| r.state == RowState::Live);
    assert!(back.session_id.is_some());
    assert!(
        log_text(&log).contains("resuming…"),
        "the row showed its progress while unpark ran"
    );
    // The picker stays open (no --pane), reports the result and shows the row live again.
    let screen = sb
        .wait_for(&ctl, &format!("{p1}: unparked"), SECS(10))
        .unwrap();
    assert!(sb.pane_alive(&ctl));
    sb.wait_for(
        &ctl,
        &format!(r"{} +claude +(idle|● \w+)", regex::escape(&p1)),
        SECS(15),
    )
    .unwrap_or_else(|e| panic!("p1 live again in the picker: {e}\nbefore:\n{screen}"));

    // `/` filters by text (cwd here); Enter keeps the filter.
    sb.send_keys(&ctl, &["/"]);
    sb.type_text(&ctl, "beta");
    let screen = sb.wait_for(&ctl, "/beta", SECS(5)).unwrap();
    let list: String = screen.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert!(list.contains(&p2), "{screen}");
    assert!(
        !list.contains(&format!("{p1} ")),
        "the filter hides p1:\n{screen}"
    );
    sb.press_enter(&ctl);
    sb.wait_for(&ctl, "filter: beta", SECS(5)).unwrap();
    sb.wait_for(&ctl, &cursor_on(&p2), SECS(2)).unwrap();

    // `f` brings p2's window to the front of its session and keeps the picker open.
    assert_eq!(sb.display(&p2, "#{window_active}").as_deref(), Some("0"));
    sb.send_keys(&ctl, &["f"]);
    sb.wait_for(&ctl, &format!("{}: focused", regex::escape(&p2)), SECS(5))
        .unwrap();
    assert_eq!(
        sb.display(&p2, "#{window_active}#{pane_active}").as_deref(),
        Some("11")
    );

    // q quits.
    sb.send_keys(&ctl, &["q"]);
    wait_prompt_back(&sb, &ctl);
    assert_eq!(row(&sb, &p2).unwrap().state, RowState::Live);
}

#[test]
fn pick_refuses_a_busy_row_and_shows_why() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let p1 = agent_in_shell(&sb, "alpha");
    // Unsent text in the composer: park would refuse (draft).
    sb.type_text(&p1, "half a thought");
    wait_row(&sb, &p1, SECS(10), |r| r.status == Status::Draft);
    let (ctl, _log) = control_pane(&sb);
    sb.type_line(&ctl, &format!("park pick --pane {p1}"));
    sb.wait_for(&ctl, &cursor_on(&p1), SECS(15)).unwrap();
    sb.wait_for(&ctl, "● draft", SECS(2)).unwrap();
    sb.press_enter(&ctl);
    // The reason goes to the footer; nothing was run, the picker stays open.
    sb.wait_for(
        &ctl,
        &format!("{}: draft, not parked", regex::escape(&p1)),
        SECS(5),
    )
    .unwrap();
    assert_eq!(row(&sb, &p1).unwrap().state, RowState::Live);
    sb.send_keys(&ctl, &["Escape"]);
    wait_prompt_back(&sb, &ctl);
}

/// Time to the first frame with rows, with 50 fake agents (no turn each); run with `--ignored`.
#[test]
#[ignore]
fn pick_first_frame_with_50_agents() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let mut panes = vec![];
    for i in 0..50 {
        let dir = sb.project_dir(&format!("p{i}"));
        let pane = sb.new_window(
            &format!("s{}", i / 10),
            &format!("w{i}"),
            &dir,
            &[] as &[(&str, &str)],
            "claude",
        );
        panes.push(pane);
    }
    for p in &panes {
        sb.wait_for(p, CLAUDE_READY, SECS(30)).unwrap();
    }
    let n = ls(&sb).rows.len();
    let (ctl, _log) = control_pane(&sb);
    sb.type_text(&ctl, "park pick");
    let t0 = Instant::now();
    sb.press_enter(&ctl);
    sb.wait_for(&ctl, &cursor_on(&panes[0]), SECS(60)).unwrap();
    eprintln!(
        "picker: first frame with rows {:?} after Enter ({n} rows, 100 ms polling)",
        t0.elapsed()
    );
    let t1 = Instant::now();
    let _ = ls(&sb);
    eprintln!("park ls --json alone: {:?}", t1.elapsed());
    sb.send_keys(&ctl, &["q"]);
    wait_prompt_back(&sb, &ctl);
}

/// `w` in the picker parks every agent of the current row's window (after a `y`), as in zellij.
#[test]
fn pick_w_parks_every_agent_of_the_window() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let p1 = agent_in_shell(&sb, "alpha");
    let dir = sb.project_dir("alpha2");
    let p2 = crate::servers::split(&sb, &p1, &dir, &[]);
    sb.type_line(&p2, "claude");
    sb.wait_for(&p2, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&p2, "first prompt");
    sb.wait_for(&p2, "PARKTEST-OK", SECS(15)).unwrap();
    wait_row(&sb, &p2, SECS(10), |r| {
        r.status == Status::Idle && r.reason.is_none()
    });
    let other = agent_in_shell(&sb, "beta");
    let (ctl, _log) = control_pane(&sb);
    sb.type_line(&ctl, &format!("park pick --pane {p1}"));
    sb.wait_for(&ctl, &cursor_on(&p1), SECS(15)).unwrap();
    sb.send_keys(&ctl, &["w"]);
    sb.wait_for(&ctl, r"\? \[y/N\]", SECS(5)).unwrap();
    sb.send_keys(&ctl, &["y"]);
    for p in [&p1, &p2] {
        wait_row(&sb, p, SECS(30), |r| r.state == RowState::Parked);
    }
    assert_eq!(
        row(&sb, &other).unwrap().state,
        RowState::Live,
        "another window's agent is not touched"
    );
}
