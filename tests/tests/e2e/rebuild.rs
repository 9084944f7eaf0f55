//! Window groups and `park rebuild` in a real tmux server: windows parked as a whole are recorded
//! (layout, pane order, cwds); after the tmux server is killed, `park rebuild` recreates the same
//! windows at the same indices with the same geometry and resumes each session in its own slot.
//! Also: a pane handle that a restarted server reuses is never typed into.
//!
//! The first test uses the REAL Claude Code CLI against the mock model server; the others use the
//! deterministic fake agent (timing, many panes).

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use serde_json::Value;
use std::path::Path;
use std::time::Instant;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// The user's login profile: the panes a rebuilt window opens run login shells, which re-read
/// the system profile (Debian's resets PATH), so PATH is set where a user sets it.
pub(crate) fn login_profile(sb: &Sandbox) {
    let path = sb
        .base_env()
        .into_iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v)
        .unwrap();
    std::fs::write(
        sb.home.join(".bash_profile"),
        format!("export PATH='{path}'\n"),
    )
    .unwrap();
}

/// Splits `target` with an interactive `bash --norc --noprofile` in `cwd` (env + the test prompt)
/// and waits for its prompt. `flags` are extra split-window flags (`-h`, `-l 30%`).
pub(crate) fn split_shell(
    sb: &Sandbox,
    target: &str,
    cwd: &Path,
    env: &[(String, String)],
    flags: &[&str],
) -> String {
    let cwd = cwd.to_string_lossy().into_owned();
    let mut envs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    envs.push(format!("PS1={SHELL_PROMPT}"));
    let mut a: Vec<&str> = vec![
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        target,
        "-c",
        &cwd,
    ];
    a.extend_from_slice(flags);
    for e in &envs {
        a.push("-e");
        a.push(e);
    }
    // tmux gives a pane the PATH of the client that asked for it, over `-e PATH=…`: the command
    // sets it (as `Sandbox::new_shell_window` does).
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| format!("PATH={v}"));
    if let Some(p) = &path {
        a.extend(["env", p.as_str()]);
    }
    a.extend(["bash", "--norc", "--noprofile"]);
    let pane = sb.tmux(&a).unwrap().trim().to_string();
    sb.wait_for(&pane, r"park-test\$", SECS(15)).unwrap();
    pane
}

/// `pane_index geometry cwd` for each pane of `session:window`, in pane order.
pub(crate) fn geometry(sb: &Sandbox, session: &str, window: &str) -> Vec<String> {
    sb.tmux(&[
        "list-panes",
        "-t",
        &format!("={session}:{window}"),
        "-F",
        "#{pane_index} #{pane_left},#{pane_top} #{pane_width}x#{pane_height} #{pane_current_path}",
    ])
    .unwrap()
    .lines()
    .map(str::to_string)
    .collect()
}

pub(crate) fn pane_at(sb: &Sandbox, session: &str, window: &str, index: u32) -> String {
    sb.tmux(&[
        "display-message",
        "-p",
        "-t",
        &format!("={session}:{window}.{index}"),
        "#{pane_id}",
    ])
    .unwrap()
    .trim()
    .to_string()
}

/// Parks `target` (see `action_settled`); the outcome and reason of every result.
pub(crate) fn park_settled(sb: &Sandbox, target: &str) -> Vec<String> {
    let (_, out) = action_settled(sb, &["park", target]);
    out.results
        .iter()
        .map(|r| format!("{} {:?}", r.outcome, r.reason))
        .collect()
}

fn rebuild_json(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let mut a = vec!["rebuild", "--json"];
    a.extend_from_slice(args);
    let o = park_env(sb, &a, env);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("rebuild --json parses ({e}): {}", text(&o)));
    if code(&o) != 0 {
        eprintln!("rebuilt panes:\n{}", screens(sb, &v));
    }
    (code(&o), v)
}

/// Every rebuilt pane's screen, for failure messages.
fn screens(sb: &Sandbox, v: &Value) -> String {
    let mut out = String::new();
    for w in v["windows"].as_array().into_iter().flatten() {
        for s in w["slots"].as_array().into_iter().flatten() {
            if let Some(p) = s["pane"].as_str() {
                out.push_str(&format!(
                    "--- {p}\n{}\n",
                    sb.try_capture(p).unwrap_or_default()
                ));
            }
        }
    }
    out
}

fn slot_outcomes(v: &Value) -> Vec<Vec<String>> {
    v["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            w["slots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["outcome"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

/// A decoy server on the same socket, with enough plain shells that the parked panes' handles
/// (`%N`) exist again, as they do after any tmux restart. The server starts with `env` added to
/// its environment (what the user's login would give every new pane). Returns the decoy panes.
pub(crate) fn decoy_server(sb: &Sandbox, n: usize, env: &[(String, String)]) -> Vec<String> {
    let work = sb.work.to_string_lossy().into_owned();
    let ps1 = format!("PS1={SHELL_PROMPT}");
    let out = sb
        .tmux_command()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .args([
            "new-session",
            "-d",
            "-s",
            "decoy",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            &work,
            "-P",
            "-F",
            "#{pane_id}",
            "-e",
            &ps1,
            "bash",
            "--norc",
            "--noprofile",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut panes = vec![first];
    while panes.len() < n {
        let p = sb
            .tmux(&[
                "new-window",
                "-d",
                "-t",
                "=decoy:",
                "-c",
                &work,
                "-P",
                "-F",
                "#{pane_id}",
                "-e",
                &ps1,
                "bash",
                "--norc",
                "--noprofile",
            ])
            .unwrap()
            .trim()
            .to_string();
        panes.push(p);
    }
    for p in &panes {
        sb.wait_for(p, r"park-test\$", SECS(15)).unwrap();
    }
    panes
}

fn assert_untouched(sb: &Sandbox, decoys: &[String]) {
    for p in decoys {
        let screen = sb.capture(p);
        assert!(
            !screen.contains("unpark") && !screen.contains("claude"),
            "nothing may be typed into a pane that only reuses a parked handle ({p}):\n{screen}"
        );
    }
}

#[test]
fn real_claude_two_parked_windows_come_back_after_the_tmux_server_is_killed() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    login_profile(&sb);
    let env = sb.claude_env(&mock);
    let (a0, a1, b0, b1) = (
        sb.project_dir("api"),
        sb.project_dir("api-tests"),
        sb.project_dir("web-srv"),
        sb.project_dir("web"),
    );
    // Window `api`: Claude left, a shell right (70/30). Window `web`: a shell on top, Claude below.
    let api_claude = sb.new_shell_window("w", "api", &a0, &env);
    let _api_shell = split_shell(&sb, &api_claude, &a1, &env, &["-h", "-l", "30%"]);
    let web_shell = sb.new_shell_window("w", "web", &b0, &env);
    let web_claude = split_shell(&sb, &web_shell, &b1, &env, &["-v", "-l", "60%"]);
    let mut sids = vec![];
    // One Claude start at a time: concurrent starts race on ~/.claude.json.
    for (pane, prompt) in [
        (&api_claude, "rebuild api prompt"),
        (&web_claude, "rebuild web prompt"),
    ] {
        sb.type_line(pane, "claude");
        sb.wait_for(pane, CLAUDE_READY, SECS(60)).unwrap();
        submit_prompt(&sb, pane, prompt, "❯");
        sb.wait_for(pane, "PARKTEST-OK", SECS(60)).unwrap();
        let r = wait_row(&sb, pane, SECS(30), |r| {
            r.status == Status::Idle && r.state == RowState::Live
        });
        sids.push(r.session_id.unwrap());
    }
    let before_api = geometry(&sb, "w", "api");
    let before_web = geometry(&sb, "w", "web");
    let idx = |w: &str| {
        sb.tmux(&[
            "display-message",
            "-p",
            "-t",
            &format!("=w:{w}"),
            "#{window_index}",
        ])
        .unwrap()
        .trim()
        .to_string()
    };
    let (api_idx, web_idx) = (idx("api"), idx("web"));

    // Park each window as a whole: one group per window, recorded before the kill.
    for w in ["w:api", "w:web"] {
        let r = park_settled(&sb, w);
        assert!(r.len() == 1 && r[0].starts_with("parked"), "{w}: {r:?}");
    }
    let groups: Vec<_> = std::fs::read_dir(sb.park_home.join("groups"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(groups.len(), 2, "one group file per parked window");

    // The server dies (a crash, a reboot, `kill-server`), and a new one reuses the pane handles.
    sb.tmux(&["kill-server"]).unwrap();
    poll(SECS(10), || {
        sb.tmux(&["list-sessions"]).is_err().then_some(())
    })
    .expect("the server is gone");
    let decoys = decoy_server(&sb, 6, &env);

    // The plan: both windows, each Claude in its slot, the shells as shells; nothing is made.
    let (c, plan) = rebuild_json(&sb, &["--dry-run"], &[]);
    assert_eq!(c, 0, "{plan}");
    assert_eq!(
        slot_outcomes(&plan),
        vec![
            vec!["would-rebuild".to_string(), "shell".to_string()],
            vec!["shell".to_string(), "would-rebuild".to_string()]
        ],
        "{plan}"
    );
    assert!(
        sb.tmux(&["has-session", "-t", "=w"]).is_err(),
        "a dry run makes nothing"
    );

    // Rebuild: the new shells get the server's environment (the decoy started it with the
    // user's, which points Claude at the mock model server).
    let t0 = Instant::now();
    let (c, out) = rebuild_json(&sb, &[], &[]);
    eprintln!(
        "MEASURE rebuild (real Claude, 2 windows x 2 panes): {:?}",
        t0.elapsed()
    );
    assert_eq!(c, 0, "{out}");
    assert_eq!(
        slot_outcomes(&out),
        vec![
            vec!["unparked".to_string(), "shell".to_string()],
            vec!["shell".to_string(), "unparked".to_string()]
        ],
        "{out}\n{}",
        screens(&sb, &out)
    );
    // Same windows at the same indices, same pane order, geometry and cwds.
    assert_eq!((idx("api"), idx("web")), (api_idx, web_idx));
    assert_eq!(geometry(&sb, "w", "api"), before_api);
    assert_eq!(geometry(&sb, "w", "web"), before_web);
    // Each session back in its slot, one process each.
    for (window, slot, sid) in [("api", 0, &sids[0]), ("web", 1, &sids[1])] {
        let pane = pane_at(&sb, "w", window, slot);
        let r = wait_row(&sb, &pane, SECS(60), |r| r.state == RowState::Live);
        assert_eq!(
            r.session_id.as_deref(),
            Some(sid.as_str()),
            "{window}.{slot}"
        );
        assert_eq!(claude_pids_for(&sb.home, sid).len(), 1);
    }
    assert!(entries(&sb).is_empty(), "nothing is left parked");
    assert_untouched(&sb, &decoys);
    // Nothing is lost any more: a second rebuild has nothing to do.
    let (c, again) = rebuild_json(&sb, &[], &[]);
    assert_eq!(c, 0);
    assert!(again["windows"].as_array().unwrap().is_empty(), "{again}");
}

pub(crate) struct Fake {
    pub(crate) sb: Sandbox,
}

impl Fake {
    pub(crate) fn new() -> Fake {
        let sb = Sandbox::new();
        install_shims(&sb, Some(FAKE));
        login_profile(&sb);
        Fake { sb }
    }

    /// Starts the fake agent at the shell prompt in `pane` and waits for its first turn.
    pub(crate) fn agent(&self, pane: &str) -> String {
        self.sb.type_line(pane, "claude");
        self.sb.wait_for(pane, CLAUDE_READY, SECS(15)).unwrap();
        self.sb.type_line(pane, "first prompt");
        self.sb.wait_for(pane, "PARKTEST-OK", SECS(15)).unwrap();
        wait_row(&self.sb, pane, SECS(10), |r| r.status == Status::Idle)
            .session_id
            .expect("session id")
    }
}

#[test]
fn three_windows_of_two_agents_are_rebuilt_in_their_slots() {
    let f = Fake::new();
    let sb = &f.sb;
    let mut want = vec![];
    for w in 0..3 {
        let name = format!("win{w}");
        let d0 = sb.project_dir(&format!("{name}-a"));
        let d1 = sb.project_dir(&format!("{name}-b"));
        let p0 = sb.new_shell_window("w", &name, &d0, &[] as &[(&str, &str)]);
        let p1 = split_shell(sb, &p0, &d1, &[], &["-h"]);
        let s0 = f.agent(&p0);
        let s1 = f.agent(&p1);
        want.push((name, geometry(sb, "w", &format!("win{w}")), vec![s0, s1]));
    }
    for (name, _, _) in &want {
        let r = park_settled(sb, &format!("w:{name}"));
        assert!(
            r.iter().all(|x| x.starts_with("parked")) && r.len() == 2,
            "{r:?}"
        );
    }
    sb.tmux(&["kill-server"]).unwrap();
    poll(SECS(10), || {
        sb.tmux(&["list-sessions"]).is_err().then_some(())
    })
    .expect("the server is gone");
    // doctor sees what is lost and names the fix.
    let o = park(sb, &["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lost: Vec<&Value> = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "pane-lost")
        .collect();
    assert_eq!(lost.len(), 6, "{d}");
    assert!(lost[0]["fix"].as_str().unwrap().starts_with("park rebuild"));
    let t0 = Instant::now();
    let (c, out) = rebuild_json(sb, &[], &[]);
    let took = t0.elapsed();
    eprintln!("MEASURE rebuild 3 windows x 2 fake-agent panes: {took:?}");
    assert_eq!(c, 0, "{out}");
    assert_eq!(
        slot_outcomes(&out),
        vec![vec!["unparked".to_string(); 2]; 3],
        "{out}"
    );
    for (name, geo, sids) in &want {
        assert_eq!(
            &geometry(sb, "w", name),
            geo,
            "{name}: same panes, order, size and cwds"
        );
        for (i, sid) in sids.iter().enumerate() {
            let pane = pane_at(sb, "w", name, i as u32);
            let r = wait_row(sb, &pane, SECS(20), |r| r.state == RowState::Live);
            assert_eq!(r.session_id.as_deref(), Some(sid.as_str()), "{name}.{i}");
            assert_eq!(claude_pids_for(&sb.home, sid).len(), 1);
        }
    }
}

#[test]
fn re_parking_a_window_keeps_its_group_and_a_partial_window_is_never_duplicated() {
    let f = Fake::new();
    let sb = &f.sb;
    let d0 = sb.project_dir("g-a");
    let d1 = sb.project_dir("g-b");
    let p0 = sb.new_shell_window("w", "grp", &d0, &[] as &[(&str, &str)]);
    let p1 = split_shell(sb, &p0, &d1, &[], &["-h"]);
    let (s0, _s1) = (f.agent(&p0), f.agent(&p1));
    let group_ids = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(sb.park_home.join("groups"))
            .map(|rd| {
                rd.flatten()
                    .map(|d| d.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    assert_eq!(park_settled(sb, "w:grp").len(), 2);
    let first = group_ids();
    assert_eq!(first.len(), 1);
    // Unpark one pane and park the window again: same group id.
    let (c, _) = action(sb, &["unpark", &p0]);
    assert_eq!(c, 0);
    wait_row(sb, &p0, SECS(10), |r| {
        r.state == RowState::Live && r.status == Status::Idle
    });
    let again = park_settled(sb, "w:grp");
    assert!(again.iter().any(|r| r.starts_with("parked")), "{again:?}");
    assert_eq!(group_ids(), first, "re-parking keeps the group");
    // One pane of the parked window is closed: rebuild gives that session a window of its own
    // and leaves the other pane (still parked in place) alone.
    sb.tmux(&["kill-pane", "-t", &p0]).unwrap();
    let (c, plan) = rebuild_json(sb, &["--dry-run"], &[]);
    assert_eq!(c, 0, "{plan}");
    let ws = plan["windows"].as_array().unwrap();
    assert_eq!(ws.len(), 1, "{plan}");
    assert!(
        ws[0]["group"].is_null(),
        "not rebuilt as the whole group: {plan}"
    );
    assert_eq!(ws[0]["slots"][0]["session_id"].as_str(), Some(s0.as_str()));
    let (c, out) = rebuild_json(sb, &[], &[]);
    assert_eq!(c, 0, "{out}");
    assert_eq!(
        slot_outcomes(&out),
        vec![vec!["unparked".to_string()]],
        "{}",
        screens(sb, &out)
    );
    assert_eq!(claude_pids_for(&sb.home, &s0).len(), 1);
    assert!(
        out["windows"][0]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("not free")),
        "the window index was taken by the partial window, and rebuild says so: {out}"
    );
    assert_eq!(
        row(sb, &p1).unwrap().state,
        RowState::Parked,
        "the other pane stays parked"
    );
}

#[test]
fn unpark_never_types_into_a_pane_that_only_reuses_the_parked_handle() {
    let f = Fake::new();
    let sb = &f.sb;
    let d = sb.project_dir("reuse");
    let p = sb.new_shell_window("w", "reuse", &d, &[] as &[(&str, &str)]);
    let sid = f.agent(&p);
    assert!(park_settled(sb, &p)[0].starts_with("parked"));
    sb.tmux(&["kill-server"]).unwrap();
    poll(SECS(10), || {
        sb.tmux(&["list-sessions"]).is_err().then_some(())
    })
    .expect("the server is gone");
    let decoys = decoy_server(sb, 3, &[]);
    assert!(decoys.contains(&p), "the new server reuses {p}: {decoys:?}");
    let (c, out) = action(sb, &["unpark", &sid]);
    assert_eq!(c, 0, "{:?}", out.results);
    let r = poll(SECS(10), || {
        ls(sb)
            .rows
            .into_iter()
            .find(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
    })
    .expect("resumed in a window of its own session");
    assert_eq!(r.session, "w");
    assert!(!decoys.contains(&r.pane), "{r:?}");
    assert_untouched(sb, &decoys);
}

/// `park snapshot --json`, parsed.
pub(crate) fn snapshot(sb: &Sandbox) -> Value {
    let o = park(sb, &["snapshot", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("snapshot --json ({e}): {}", text(&o)))
}

/// The session ids of a `snapshot`/`rebuild` list (`live`, `lost`, `left`), sorted, with `field`
/// of each (`outcome`, `reason`…) when given.
pub(crate) fn sids_of(v: &Value, list: &str) -> Vec<String> {
    let mut out: Vec<String> = v[list]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| x["session_id"].as_str().unwrap_or_default().to_string())
        .collect();
    out.sort();
    out
}

fn lost_outcome(v: &Value, sid: &str) -> (String, String) {
    let l = v["lost"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|x| x["session_id"] == sid)
        .unwrap_or_else(|| panic!("{sid} is not listed as lost: {v}"));
    (
        l["outcome"].as_str().unwrap_or_default().to_string(),
        l["reason"].as_str().unwrap_or_default().to_string(),
    )
}

/// A reboot, as far as the sessions go: the tmux server killed with SIGKILL and every agent
/// process gone with it (their pty closed; a reboot takes the rest).
pub(crate) fn crash(sb: &Sandbox, agent_pids: &[u32]) {
    let server: u32 = sb
        .tmux(&["display-message", "-p", "#{pid}"])
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut all: Vec<u32> = vec![];
    for &p in agent_pids {
        all.push(p);
        all.extend(descendants(p));
    }
    let _ = std::process::Command::new("kill")
        .args(["-9", &server.to_string()])
        .status();
    for p in &all {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert!(
        wait_gone(server, SECS(10)),
        "the tmux server survived SIGKILL"
    );
    for p in &all {
        assert!(wait_gone(*p, SECS(10)), "agent process {p} survived");
    }
    poll(SECS(10), || {
        sb.tmux(&["list-sessions"]).is_err().then_some(())
    })
    .expect("the server is gone");
}

/// The journal's edge cases with the deterministic fake agent: two sessions in one cwd, one that
/// exits normally before the crash (stays gone), one `/clear`ed before it (its new conversation
/// comes back, never the old one), one resumed by hand after it (skipped: one process per
/// transcript); the rest come back in their slots.
#[test]
fn sessions_live_at_a_crash_come_back_in_their_slots_and_only_those() {
    let f = Fake::new();
    let sb = &f.sb;
    let proj = sb.project_dir("proj");
    let p0 = sb.new_shell_window("w", "pair", &proj, &[] as &[(&str, &str)]);
    let p1 = split_shell(sb, &p0, &proj, &[], &["-h"]);
    let a = f.agent(&p0);
    let b = f.agent(&p1);
    let pair_geo = geometry(sb, "w", "pair");
    let p2 = sb.new_shell_window("w", "solo", &sb.project_dir("solo"), &[] as &[(&str, &str)]);
    let c_old = f.agent(&p2);
    let p3 = sb.new_shell_window("w", "gone", &sb.project_dir("gone"), &[] as &[(&str, &str)]);
    let e = f.agent(&p3);
    let snap = snapshot(sb);
    let mut want = vec![a.clone(), b.clone(), c_old.clone(), e.clone()];
    want.sort();
    assert_eq!(sids_of(&snap, "live"), want, "{snap}");
    let j: Value =
        serde_json::from_slice(&std::fs::read(sb.park_home.join("journal.json")).unwrap()).unwrap();
    assert_eq!(j["schema"], 1, "{j}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(sb.park_home.join("journal.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the journal is private");
    }

    // `e` exits normally; `c` is /clear-ed and talks on in a new conversation.
    assert!(
        claude_exits(&sb.home, &e, SECS(10), || sb.type_line(&p3, "/exit")),
        "the agent exits"
    );
    sb.type_line(&p2, "/clear");
    let c = wait_row(sb, &p2, SECS(10), |r| {
        r.session_id.as_deref().is_some_and(|s| s != c_old)
    })
    .session_id
    .unwrap();
    sb.type_line(&p2, "a prompt in the new conversation");
    sb.wait_for(&p2, "(?s)new conversation.*PARKTEST-OK", SECS(15))
        .unwrap();
    wait_row(sb, &p2, SECS(10), |r| r.status == Status::Idle);
    let snap = snapshot(sb);
    let mut want = vec![a.clone(), b.clone(), c.clone()];
    want.sort();
    assert_eq!(sids_of(&snap, "live"), want, "{snap}");
    let mut left = vec![c_old.clone(), e.clone()];
    left.sort();
    assert_eq!(sids_of(&snap, "left"), left, "{snap}");

    let pids: Vec<u32> = [&a, &b, &c]
        .iter()
        .flat_map(|s| claude_pids_for(&sb.home, s))
        .collect();
    assert_eq!(pids.len(), 3);
    crash(sb, &pids);

    // A fresh server on the same socket reuses the pane handles; `a` is resumed there by hand.
    let decoys = decoy_server(sb, 3, &[]);
    sb.type_line(
        &decoys[2],
        &format!("cd {} && claude --resume {a}", proj.display()),
    );
    poll(SECS(15), || {
        (claude_pids_for(&sb.home, &a).len() == 1).then_some(())
    })
    .expect("the hand-resumed session runs");

    // `ls` and `doctor` list what is lost (a, running again, is not) and name the way back.
    let rows = ls(sb).rows;
    let mut lost_rows: Vec<String> = rows
        .iter()
        .filter(|r| r.state == RowState::Lost)
        .filter_map(|r| r.session_id.clone())
        .collect();
    lost_rows.sort();
    let mut want = vec![b.clone(), c.clone()];
    want.sort();
    assert_eq!(lost_rows, want, "{rows:?}");
    let o = park(sb, &["ls"]);
    assert!(
        text(&o).contains("(lost: `park rebuild` brings them back)"),
        "{}",
        text(&o)
    );
    let d: Value = serde_json::from_slice(&park(sb, &["doctor", "--json"]).stdout).unwrap();
    let found: Vec<&Value> = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "lost")
        .collect();
    assert_eq!(found.len(), 2, "{d}");
    assert!(
        found[0]["fix"]
            .as_str()
            .unwrap()
            .starts_with("park rebuild"),
        "{d}"
    );

    // The verbs on parked sessions name a lost session's way back (its slot, by `rebuild`) and
    // start nothing: resurrecting it from the archive would put it in a new window.
    let b_entry = format!("claude-{b}");
    for args in [
        vec!["unpark", b.as_str()],
        vec!["unpark", b_entry.as_str()],
        vec!["wake", "now", c.as_str()],
        vec!["note", "--wake", c.as_str(), "a note"],
    ] {
        let o = park(sb, &args);
        assert_eq!(code(&o), 1, "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("was lost when its multiplexer died")
                && text(&o).contains("`park rebuild` brings it back in its slot"),
            "{args:?}: {}",
            text(&o)
        );
    }
    assert!(
        claude_pids_for(&sb.home, &b).is_empty() && claude_pids_for(&sb.home, &c).is_empty(),
        "nothing was started"
    );
    assert!(entries(sb).is_empty(), "nothing was adopted");

    let (_, plan) = rebuild_json(sb, &["--dry-run"], &[]);
    let mut lost = vec![a.clone(), b.clone(), c.clone()];
    lost.sort();
    assert_eq!(
        sids_of(&plan, "lost"),
        lost,
        "only the live-at-crash sessions: {plan}"
    );
    assert_eq!(lost_outcome(&plan, &b).0, "would-adopt", "{plan}");
    assert_eq!(lost_outcome(&plan, &c).0, "would-adopt", "{plan}");
    let (oc, why) = lost_outcome(&plan, &a);
    assert_eq!(oc, "skipped", "{plan}");
    assert!(why.contains("running again"), "{why}");
    assert!(
        sb.tmux(&["has-session", "-t", "=w"]).is_err(),
        "a dry run makes nothing"
    );
    assert!(entries(sb).is_empty(), "a dry run adopts nothing");

    let (c_rebuild, out) = rebuild_json(sb, &[], &[]);
    assert_ne!(c_rebuild, 0, "one lost session did not come back: {out}");
    assert_eq!(lost_outcome(&out, &b).0, "adopted", "{out}");
    assert_eq!(lost_outcome(&out, &c).0, "adopted", "{out}");
    assert_eq!(lost_outcome(&out, &a).0, "skipped", "{out}");
    // `b` in its slot of the rebuilt pair window (a shell where `a` was), `c` in its own.
    assert_eq!(
        geometry(sb, "w", "pair"),
        pair_geo,
        "same panes, order, size and cwds"
    );
    for (window, slot, sid) in [("pair", 1, &b), ("solo", 0, &c)] {
        let pane = pane_at(sb, "w", window, slot);
        let r = wait_row(sb, &pane, SECS(20), |r| r.state == RowState::Live);
        assert_eq!(
            r.session_id.as_deref(),
            Some(sid.as_str()),
            "{window}.{slot}"
        );
    }
    // One process per transcript; the exited and the cleared conversations stay gone.
    for sid in [&a, &b, &c] {
        assert_eq!(claude_pids_for(&sb.home, sid).len(), 1, "{sid}");
    }
    for sid in [&e, &c_old] {
        assert!(claude_pids_for(&sb.home, sid).is_empty(), "{sid} came back");
    }
    assert!(entries(sb).is_empty(), "nothing is left parked");
    // The hand-resumed one is live again: the next pass drops it from the journal.
    let snap = snapshot(sb);
    assert!(sids_of(&snap, "lost").is_empty(), "{snap}");
}

/// Issue 32's cycle with the real CLIs against the mock: two Claude Code sessions in one cwd (one
/// window, two panes) and a Codex with flags are live; `park snapshot` journals them; the tmux
/// server is killed with SIGKILL and every agent process with it (a reboot); a fresh server comes
/// up on the same socket; `park rebuild` puts each session back in its own slot, with its own id
/// and its flags, one process each.
#[test]
fn real_agents_live_at_a_tmux_crash_come_back_with_their_ids_flags_and_layout() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    Agents::locate();
    let claude = real_agent("claude");
    let codex = real_agent("codex");
    claude.seed(&sb, &mock);
    codex.seed(&sb, &mock);
    install_shims(&sb, None);
    login_profile(&sb);
    let (cl_env, cx_env) = (claude.env(&sb, &mock), codex.env(&sb, &mock));
    let proj = sb.project_dir("proj");
    let p0 = sb.new_shell_window("w", "pair", &proj, &cl_env);
    let p1 = split_shell(&sb, &p0, &proj, &cl_env, &["-v", "-l", "40%"]);
    let cx = sb.new_shell_window("w", "cx", &sb.project_dir("proj-cx"), &cx_env);
    let mut live: Vec<(&str, u32, String, &dyn RealAgent)> = vec![];
    // One start at a time: concurrent Claude starts race on ~/.claude.json.
    for (pane, window, slot, a) in [
        (&p0, "pair", 0, claude.as_ref()),
        (&p1, "pair", 1, claude.as_ref()),
        (&cx, "cx", 0, codex.as_ref()),
    ] {
        let s = a.spec();
        sb.type_line(pane, &format!("{} {}", s.program, s.flags));
        sb.wait_for(pane, s.ready, s.start).unwrap();
        a.first_turns(&sb, pane, &format!("crash prompt {window}.{slot}"));
        let r = wait_row(&sb, pane, s.reply, |r| {
            r.status == Status::Idle && r.state == RowState::Live && r.session_id.is_some()
        });
        live.push((window, slot, r.session_id.unwrap(), a));
    }
    assert_ne!(live[0].2, live[1].2, "two sessions in one cwd");
    let pair_geo = geometry(&sb, "w", "pair");
    let snap = snapshot(&sb);
    let mut sids: Vec<String> = live.iter().map(|l| l.2.clone()).collect();
    sids.sort();
    assert_eq!(sids_of(&snap, "live"), sids, "{snap}");
    let flags = |sid: &str| -> Vec<String> {
        snap["live"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["session_id"] == sid)
            .map(|l| serde_json::from_value(l["flags"].clone()).unwrap())
            .unwrap_or_default()
    };
    assert!(
        flags(&live[2].2).contains(&"workspace-write".to_string()),
        "{snap}"
    );

    let pids: Vec<u32> = ls(&sb)
        .rows
        .iter()
        .filter(|r| r.state == RowState::Live)
        .filter_map(|r| r.pid)
        .collect();
    assert_eq!(pids.len(), 3, "{pids:?}");
    crash(&sb, &pids);
    // The fresh server has the user's environment (what a login shell after a reboot gets).
    let mut env = cl_env.clone();
    env.extend(
        cx_env
            .iter()
            .filter(|(k, _)| !cl_env.iter().any(|(c, _)| c == k))
            .cloned(),
    );
    let decoys = decoy_server(&sb, 4, &env);

    let (c, plan) = rebuild_json(&sb, &["--dry-run"], &[]);
    assert_eq!(c, 0, "{plan}");
    assert_eq!(sids_of(&plan, "lost"), sids, "{plan}");
    let t0 = Instant::now();
    let (c, out) = rebuild_json(&sb, &[], &[]);
    eprintln!(
        "MEASURE rebuild of 3 live-at-crash real sessions (2 Claude, 1 Codex): {:?}",
        t0.elapsed()
    );
    assert_eq!(c, 0, "{out}\n{}", screens(&sb, &out));
    for sid in &sids {
        assert_eq!(lost_outcome(&out, sid).0, "adopted", "{out}");
    }
    assert_eq!(
        geometry(&sb, "w", "pair"),
        pair_geo,
        "same panes, order, size and cwds"
    );
    for (window, slot, sid, a) in &live {
        let pane = pane_at(&sb, "w", window, *slot);
        let r = wait_row(&sb, &pane, a.spec().start, |r| r.state == RowState::Live);
        assert_eq!(
            r.session_id.as_deref(),
            Some(sid.as_str()),
            "{window}.{slot}"
        );
        let argv = a.launch_argv(&sb, r.pid.unwrap());
        assert!(
            a.resumes(&argv, sid),
            "{window}.{slot} resumes {sid}: {argv:?}"
        );
        for (f, v) in a.spec().flag_pairs {
            assert!(
                argv.windows(2).any(|p| p[0] == *f && p[1] == *v)
                    || argv.iter().any(|x| *x == format!("{f}={v}")),
                "{f} {v} replayed: {argv:?}"
            );
        }
    }
    for (_, _, sid, _) in live.iter().take(2) {
        assert_eq!(
            claude_pids_for(&sb.home, sid).len(),
            1,
            "one process for {sid}"
        );
    }
    assert!(entries(&sb).is_empty(), "nothing is left parked");
    assert_untouched(&sb, &decoys);
    let snap = snapshot(&sb);
    assert_eq!(
        sids_of(&snap, "live"),
        sids,
        "journaled again, in their new panes: {snap}"
    );
    assert!(sids_of(&snap, "lost").is_empty(), "{snap}");
}

/// The journal as users get it: nobody runs `park snapshot`. `park daemon --ensure` (what the tmux
/// plugin runs when it loads) keeps it: a new session is journaled within a pass, a `/clear`
/// replaces the old conversation by the new one, and when the server dies the daemon's last pass
/// keeps the sessions as lost and the daemon goes away.
#[test]
fn the_daemon_keeps_the_journal_without_anyone_asking() {
    let f = Fake::new();
    let sb = &f.sb;
    let journal = sb.park_home.join("journal.json");
    let sessions = |lost: bool| -> Vec<String> {
        let Ok(b) = std::fs::read(&journal) else {
            return vec![];
        };
        let v: Value = serde_json::from_slice(&b).unwrap_or_default();
        v["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["lost_at"].is_string() == lost)
            .map(|r| {
                r["entry"]["session_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let p = sb.new_shell_window("w", "d", &sb.project_dir("daemon"), &[] as &[(&str, &str)]);
    let old = f.agent(&p);
    let o = park(sb, &["daemon", "--ensure"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("daemon running"), "{}", text(&o));
    let t0 = Instant::now();
    poll(SECS(60), || {
        (sessions(false) == vec![old.clone()]).then_some(())
    })
    .unwrap_or_else(|| panic!("the daemon never journaled {old}: {:?}", sessions(false)));
    eprintln!(
        "MEASURE journal latency of a running session after daemon start: {:?}",
        t0.elapsed()
    );

    sb.type_line(&p, "/clear");
    let new = wait_row(sb, &p, SECS(10), |r| {
        r.session_id.as_deref().is_some_and(|s| s != old)
    })
    .session_id
    .unwrap();
    let t0 = Instant::now();
    poll(SECS(60), || {
        (sessions(false) == vec![new.clone()]).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the /clear never reached the journal: {:?}",
            sessions(false)
        )
    });
    eprintln!("MEASURE journal latency of a /clear: {:?}", t0.elapsed());

    // An /exit brings the next pass forward: the exited session leaves the journal before the
    // regular pass 10 s after the last one (a crash in those seconds would bring it back).
    let q = sb.new_shell_window("w", "q", &sb.project_dir("exits"), &[] as &[(&str, &str)]);
    let quits = f.agent(&q);
    poll(SECS(60), || sessions(false).contains(&quits).then_some(()))
        .unwrap_or_else(|| panic!("the daemon never journaled {quits}"));
    let written = || std::fs::metadata(&journal).and_then(|m| m.modified()).ok();
    let before = written();
    let last_pass =
        poll(SECS(30), || written().filter(|w| Some(*w) != before)).expect("a regular pass");
    sb.type_line(&q, "/exit");
    let left_at = poll(SECS(30), || {
        (!sessions(false).contains(&quits) && !sessions(true).contains(&quits))
            .then(written)
            .flatten()
    })
    .unwrap_or_else(|| panic!("the /exit never left the journal: {:?}", sessions(false)));
    let after = left_at.duration_since(last_pass).unwrap_or_default();
    eprintln!("MEASURE an /exit left the journal {after:?} after the last regular pass");
    assert!(
        after < SECS(8),
        "the exit waited for the regular pass ({after:?} after the last one)"
    );

    let daemon: u32 = std::fs::read_to_string(sb.park_home.join("waker.pid"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    crash(sb, &claude_pids_for(&sb.home, &new));
    poll(SECS(60), || {
        (sessions(true) == vec![new.clone()]).then_some(())
    })
    .unwrap_or_else(|| panic!("the crash was not journaled as lost: {:?}", sessions(true)));
    assert!(
        wait_gone(daemon, SECS(60)),
        "the daemon stays with no multiplexer to journal"
    );
    // The status (a file read) counts it, for the status line of the next server.
    let st: Value = serde_json::from_slice(&park(sb, &["status", "--json"]).stdout).unwrap();
    assert_eq!(st["lost"], 1, "{st}");
}
