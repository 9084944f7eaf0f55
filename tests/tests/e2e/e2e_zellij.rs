//! End-to-end in REAL zellij 0.45.1 (its client in a private tmux pane) with the REAL Claude Code
//! CLI against the mock model server: a Claude pane in zellij is listed with a `terminal_N@session`
//! handle, parked (tree gone, pane kept, ❄ title, `park unpark .` prefilled), and unparked twice —
//! once from the CLI outside zellij, once by pressing Enter on the prefilled line inside the pane —
//! each time the same session id comes back in the same pane.

use crate::common::*;
use park_e2e::*;
use park_protocol::{ActionOutput, LsOutput, Row, RowState, Status};
use std::time::{Duration, Instant};

pub(crate) struct Z {
    pub(crate) sb: Sandbox,
    pub(crate) _mock: MockServer,
    pub(crate) zj: Zellij,
}

fn zenv(z: &Zellij) -> Vec<(String, String)> {
    z.park_env()
}

pub(crate) fn zpark(sb: &Sandbox, z: &Zellij, args: &[&str]) -> std::process::Output {
    let env = zenv(z);
    let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    park_env(sb, args, &refs)
}

pub(crate) fn zls(sb: &Sandbox, z: &Zellij) -> LsOutput {
    let o = zpark(sb, z, &["ls", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("ls --json parses")
}

pub(crate) fn zrow(sb: &Sandbox, z: &Zellij, pane: &str) -> Option<Row> {
    zls(sb, z).rows.into_iter().find(|r| r.pane == pane)
}

pub(crate) fn zwait_row(sb: &Sandbox, z: &Zellij, pane: &str, pred: impl Fn(&Row) -> bool) -> Row {
    let mut last = None;
    poll(SECS(40), || {
        let r = zrow(sb, z, pane);
        last = r.clone();
        r.filter(|r| pred(r))
    })
    .unwrap_or_else(|| panic!("row {pane} never matched; last {last:?}"))
}

pub(crate) fn zaction(sb: &Sandbox, z: &Zellij, args: &[&str]) -> (i32, ActionOutput) {
    let mut a = args.to_vec();
    a.push("--json");
    let o = zpark(sb, z, &a);
    let parsed =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{a:?}: {e}: {}", text(&o)));
    (code(&o), parsed)
}

/// `park doctor --json` must need attention (exit 1) and report `code`: that finding.
fn doctor_finding(sb: &Sandbox, z: &Zellij, code_: &str) -> serde_json::Value {
    let o = zpark(sb, z, &["doctor", "--json"]);
    assert_eq!(code(&o), 1, "doctor needs attention: {}", text(&o));
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code_)
        .cloned()
        .unwrap_or_else(|| panic!("no {code_} finding: {rep:#}"))
}

/// Parks, retrying while the refusal is one Claude gives for a moment after a reply
/// ([`SETTLING`]).
pub(crate) fn park_when_quiet(sb: &Sandbox, z: &Zellij, pane: &str) -> park_protocol::ActionResult {
    let deadline = Instant::now() + SECS(30);
    loop {
        let (_, out) = zaction(sb, z, &["park", pane]);
        let r = out.results.into_iter().next().unwrap();
        let settling = r
            .reason
            .as_deref()
            .is_some_and(|w| SETTLING.iter().any(|s| w.contains(s)));
        if !settling || Instant::now() > deadline {
            return r;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A sandbox with Claude seeded against the mock server and zellij session `name` running
/// `layout(sandbox)` (which may prepare files first) with `config` appended to config.kdl.
pub(crate) fn world_with(name: &str, layout: impl FnOnce(&Sandbox) -> String, config: &str) -> Z {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let layout = layout(&sb);
    let zj = Zellij::start(&sb, name, &env, &layout, config);
    Z {
        sb,
        _mock: mock,
        zj,
    }
}

fn start() -> (Z, String) {
    let z = world_with("zp", |_| "pane".into(), "");
    let id =
        z.zj.terminals()
            .into_iter()
            .next()
            .expect("a terminal pane");
    (z, id)
}

/// `claude` typed at the pane's prompt in project `api`, one turn answered, the row idle.
fn run_claude(z: &Z, id: &str) -> String {
    run_claude_in(z, id, "api")
}

fn run_claude_in(z: &Z, id: &str, project: &str) -> String {
    let dir = z.sb.project_dir(project);
    z.zj.wait_for(id, r"park-test\$", SECS(15)).unwrap();
    z.zj.type_line(
        id,
        &format!(
            "cd {} && claude --dangerously-skip-permissions",
            dir.display()
        ),
    );
    chat(z, id)
}

/// The Claude starting in pane `id` gets one turn answered; its row idle; the session id.
pub(crate) fn chat(z: &Z, id: &str) -> String {
    z.zj.wait_for(id, CLAUDE_READY, SECS(60)).unwrap();
    for _ in 0..3 {
        z.zj.type_text(id, "hello from zellij");
        if z.zj.wait_for(id, "❯.hello from zellij", SECS(5)).is_ok() {
            break;
        }
        z.zj.cli(&["action", "write", "--pane-id", id, "21"])
            .unwrap();
    }
    z.zj.press_enter(id);
    z.zj.wait_for(id, "PARKTEST-OK", SECS(60)).unwrap();
    let h = z.zj.handle(id);
    let r = zwait_row(&z.sb, &z.zj, &h, |r| {
        r.state == RowState::Live && r.status == Status::Idle
    });
    assert_eq!(r.mux, "zellij");
    assert_eq!(r.session, z.zj.session);
    r.session_id.expect("exact session id")
}

#[test]
fn real_claude_in_zellij_parks_and_resumes_in_the_same_pane() {
    let (z, id) = start();
    let (sb, zj) = (&z.sb, &z.zj);
    let h = zj.handle(&id);
    let sid = run_claude(&z, &id);
    let live = zrow(sb, zj, &h).unwrap();
    let pid = live.pid.unwrap();
    assert_eq!(
        env_of(pid, "ZELLIJ_PANE_ID").as_deref(),
        Some(id.trim_start_matches("terminal_"))
    );
    let tree: Vec<u32> = std::iter::once(pid).chain(descendants(pid)).collect();

    // The autopilot sees what the client sees: this pane is in the client's focused tab.
    let o = zpark(sb, zj, &["auto", "status", "--json"]);
    let rep: park_protocol::auto::AutoReport = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("auto status --json ({e}): {}", text(&o)));
    let me = rep
        .agents
        .iter()
        .find(|a| a.pane == h)
        .expect("the agent in the report");
    assert_eq!(me.reason, "visible in an attached client", "{rep:#?}");

    // A whole tab's dry run counts what it would free (issue 35 item 9: it said `agents 0B`).
    // Claude settles after its reply (2.1.332 for longer): a CPU refusal frees nothing, so the
    // dry run is asked again while that is the only refusal.
    let tab = format!("{}:0", zj.session);
    let deadline = Instant::now() + SECS(30);
    let said = loop {
        let said = text(&zpark(sb, zj, &["park", &tab, "--dry-run"]));
        if !said.contains("% CPU") || Instant::now() > deadline {
            break said;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        said.contains("would free: agents") && !said.contains("agents 0B"),
        "{said}"
    );

    // Park from outside zellij.
    let t0 = Instant::now();
    let r = park_when_quiet(sb, zj, &h);
    let took = t0.elapsed();
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    eprintln!("zellij park took {took:?}, freed {:?}", r.freed_bytes);
    for p in &tree {
        assert!(
            wait_gone(*p, SECS(5)),
            "pid {p} of the agent's tree survived"
        );
    }
    assert!(zj.terminals().contains(&id), "the pane stays");
    let title = poll(SECS(5), || zj.title(&id).filter(|t| t.starts_with('❄'))).unwrap_or_default();
    assert!(title.starts_with('❄'), "❄ title: {title:?}");
    let screen = zj.wait_for(&id, r"park unpark \.\s*$", SECS(10)).unwrap();
    // Issue 35 item 10: the dead agent's last frame and its exit text are cleared, as in tmux:
    // the pane shows the prompt and the prefill, not Claude's box and `claude --resume <id>`.
    assert!(
        !screen.contains("Resume this session with") && !screen.contains("Claude Code v"),
        "{screen}"
    );
    let parked = zrow(sb, zj, &h).unwrap();
    assert_eq!(parked.state, RowState::Parked);
    // Inside the session, `terminal_N` (as `zellij action list-panes` prints it) names the pane
    // of this session (issue 35 item 6).
    zj.cli(&["action", "write", "--pane-id", &id, "21"])
        .unwrap();
    zj.type_line(&id, &format!("park unpark {id} --dry-run"));
    zj.wait_for(
        &id,
        &format!(r"{}: would-unpark", regex::escape(&h)),
        SECS(15),
    )
    .unwrap();
    // A set keeps it as `terminal_N@<session>`: a set is used from other panes and sessions.
    zj.cli(&["action", "write", "--pane-id", &id, "21"])
        .unwrap();
    zj.type_line(&id, &format!("park set add here {id}"));
    let sets = poll(SECS(15), || {
        std::fs::read_to_string(sb.park_home.join("sets.json"))
            .ok()
            .filter(|s| s.contains("here"))
    })
    .expect("set add wrote the set");
    assert!(sets.contains(&format!("\"{h}\"")), "{sets}");
    let status = std::fs::read_to_string(sb.park_home.join("status")).unwrap();
    assert!(status.contains("\"parked\":1"), "{status}");

    // Unpark from the CLI, outside zellij.
    let t0 = Instant::now();
    let (c, out) = zaction(sb, zj, &["unpark", &h]);
    eprintln!("zellij unpark took {:?}", t0.elapsed());
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results[0].reason
    );
    let back = zwait_row(sb, zj, &h, |r| r.state == RowState::Live);
    assert_eq!(
        back.session_id.as_deref(),
        Some(sid.as_str()),
        "same session, same pane"
    );
    let new_pid = back.pid.unwrap();
    let argv = String::from_utf8(std::fs::read(format!("/proc/{new_pid}/cmdline")).unwrap())
        .unwrap()
        .replace('\0', " ");
    assert!(
        argv.contains(&format!("--resume {sid}"))
            && argv.contains("--dangerously-skip-permissions"),
        "{argv}"
    );
    assert_eq!(
        env_of(new_pid, "ZELLIJ_PANE_ID").as_deref(),
        Some(id.trim_start_matches("terminal_"))
    );
    assert!(
        entries(sb).is_empty(),
        "the entry is gone once the resume is verified"
    );
    let t = poll(SECS(5), || zj.title(&id).filter(|t| !t.starts_with('❄')));
    assert!(
        t.is_some(),
        "the ❄ title is cleared on unpark: {:?}",
        zj.title(&id)
    );

    // Park again, then resume by pressing Enter on the prefilled `park unpark .` in the pane.
    zj.wait_for(&id, CLAUDE_READY, SECS(30)).unwrap();
    let r = park_when_quiet(sb, zj, &h);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.wait_for(&id, r"park unpark \.\s*$", SECS(10)).unwrap();
    zj.press_enter(&id);
    let again = zwait_row(sb, zj, &h, |r| r.state == RowState::Live);
    assert_eq!(again.session_id.as_deref(), Some(sid.as_str()));
    poll(SECS(10), || entries(sb).is_empty().then_some(()))
        .expect("entry removed after in-pane resume");
    assert_eq!(
        claude_pids_for(&sb.home, &sid).len(),
        1,
        "exactly one process on the transcript"
    );
}

#[test]
fn zellij_targets_are_validated_and_a_missing_pane_is_refused() {
    let (z, id) = start();
    let (sb, zj) = (&z.sb, &z.zj);
    // A shell pane without an agent: listed as nothing, parking it is refused (exit 1).
    let (c, out) = zaction(sb, zj, &["park", &zj.handle(&id)]);
    assert_eq!(c, 1, "{out:?}");
    assert_eq!(out.results[0].outcome.as_str(), "refused");
    // A handle of a session that does not exist.
    let (c, out) = zaction(sb, zj, &["park", "terminal_9@nosuch"]);
    assert_eq!((c, out.results[0].outcome.as_str()), (1, "refused"));
    // A hostile handle is a usage error before anything runs.
    let o = zpark(sb, zj, &["park", "terminal_1@x\n;rm -rf /", "--json"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    // ls lists nothing for the session but does not fail.
    let ls = zls(sb, zj);
    assert!(ls.rows.iter().all(|r| r.mux != "zellij"), "{:?}", ls.rows);
}

/// The plugin built by `scripts/build-plugin` (scripts/test runs it first), or `$PARK_ZELLIJ_WASM`.
pub(crate) fn plugin_wasm() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("PARK_ZELLIJ_WASM") {
        return p.into();
    }
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-zellij/target/park.wasm");
    assert!(
        p.is_file(),
        "{} missing: run scripts/build-plugin",
        p.display()
    );
    p.canonicalize().unwrap()
}

/// A zellij session `name` with Claude seeded against the mock, the park plugin built for the
/// tests (permissions granted through zellij's cache, as a user's `y` would), the strip alias in
/// config.kdl and the key bindings `binds(wasm, park_bin)` returns, running `layout`.
fn plugin_world(name: &str, layout: &str, binds: impl FnOnce(&str, &str) -> String) -> Z {
    plugin_world_with(name, layout, binds, "")
}

/// [`plugin_world`] with more lines for config.kdl (`extra`).
fn plugin_world_with(
    name: &str,
    layout: &str,
    binds: impl FnOnce(&str, &str) -> String,
    extra: &str,
) -> Z {
    plugin_world_from(name, layout, binds, extra, &plugin_wasm(), None)
}

/// [`plugin_world_with`] with the plugin `wasm` run against `park` (default: the sandbox's park
/// under test): an installed copy, as a user's zellij loads it.
fn plugin_world_from(
    name: &str,
    layout: &str,
    binds: impl FnOnce(&str, &str) -> String,
    extra: &str,
    wasm: &std::path::Path,
    park: Option<&std::path::Path>,
) -> Z {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let w = wasm.display().to_string();
    let park_bin = park
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| sb.bin.join("park"))
        .display()
        .to_string();
    std::fs::create_dir_all(sb.home.join(".cache/zellij")).unwrap();
    // The permission cache is zellij's non-interactive grant (keyed by the wasm's absolute path).
    std::fs::write(
        sb.home.join(".cache/zellij/permissions.kdl"),
        format!("\"{w}\" {{\n    ReadApplicationState\n    ChangeApplicationState\n    RunCommands\n    ReadCliPipes\n}}\n"),
    )
    .unwrap();
    let config = format!(
        r#"plugins {{
    park location="file:{w}" {{ mode "strip"; park_bin "{park_bin}"; }}
}}
keybinds {{
    shared {{
        {}
    }}
}}
{extra}"#,
        binds(&w, &park_bin)
    );
    let env = sb.claude_env(&mock);
    let zj = Zellij::start(&sb, name, &env, layout, &config);
    Z {
        sb,
        _mock: mock,
        zj,
    }
}

/// The zellij plugin at `wasm` (as `park zellij install` put it) loads in real zellij as the
/// strip, run against `park`, and draws the count `park` reports; the picker opens on its key.
pub(crate) fn installed_plugin_loads(name: &str, wasm: &std::path::Path, park: &std::path::Path) {
    let z = plugin_world_from(
        name,
        "pane size=1 borderless=true { plugin location=\"park\"; }\npane",
        |w, park_bin| {
            format!(
                r#"bind "Alt p" {{ LaunchOrFocusPlugin "file:{w}" {{ floating true; move_to_focused_tab true; mode "picker"; park_bin "{park_bin}"; }}; }}"#
            )
        },
        "",
        wasm,
        Some(park),
    );
    let (sb, zj) = (&z.sb, &z.zj);
    sb.wait_for(&zj.client, "❄ 0", SECS(30))
        .unwrap_or_else(|e| panic!("the strip from {} did not draw: {e}", wasm.display()));
    sb.send_keys(&zj.client, &["M-p"]);
    sb.wait_for(&zj.client, PICKER_HELP, SECS(15))
        .unwrap_or_else(|e| panic!("the picker from {} did not open: {e}", wasm.display()));
}

/// The picker's footer: on screen exactly while the picker is open.
const PICKER_HELP: &str = "⏎ park/unpark";

#[test]
fn plugin_keys_open_the_picker_on_the_focused_pane_and_toggle_it() {
    let z = plugin_world(
        "zk",
        "pane size=1 borderless=true { plugin location=\"park\"; }\npane",
        |w, park_bin| {
            format!(
                r#"bind "Alt p" {{ LaunchOrFocusPlugin "file:{w}" {{ floating true; move_to_focused_tab true; mode "picker"; park_bin "{park_bin}"; }}; }}
        bind "Alt P" {{ MessagePlugin "park" {{ name "park:park-focused"; payload "x"; }}; }}"#
            )
        },
    );
    let id = z.zj.terminals().into_iter().next().unwrap();
    let h = z.zj.handle(&id);
    let sid = run_claude(&z, &id);
    let (sb, zj) = (&z.sb, &z.zj);
    // The strip renders the (empty) count.
    sb.wait_for(&zj.client, "❄ 0", SECS(15)).unwrap();

    let t0 = Instant::now();
    sb.send_keys(&zj.client, &["M-p"]);
    let screen = sb
        .wait_for(&zj.client, &format!("▶ {}", regex::escape(&h)), SECS(15))
        .unwrap();
    eprintln!(
        "Alt p → picker rows with the focused pane preselected: {:?}",
        t0.elapsed()
    );
    // Agents of tests running beside this one may be counted too; the row and its group are ours.
    assert!(
        screen.contains("zk:0 Tab #1") && screen.contains("running"),
        "{screen}"
    );
    eprintln!("picker screen:\n{screen}");

    let pid = zrow(sb, zj, &h).unwrap().pid.unwrap();
    let sel = format!("▶ {}", regex::escape(&h));
    assert!(screen.contains(PICKER_HELP), "{screen}");
    // Enter parks the preselected row; like the tmux popup, the picker closes once that row is
    // done. A refusal (Claude's CPU still settling) keeps it open with the reason: press again.
    let parked = poll(SECS(40), || {
        sb.wait_for(&zj.client, &sel, SECS(5)).ok()?;
        sb.send_keys(&zj.client, &["Enter"]);
        wait_gone(pid, SECS(4)).then_some(())
    });
    assert!(parked.is_some(), "{}", sb.capture(&zj.client));
    sb.wait_for(&zj.client, "❄ 1 · ", SECS(15))
        .expect("the strip shows the count");
    assert_eq!(zrow(sb, zj, &h).unwrap().state, RowState::Parked);
    let title = poll(SECS(5), || zj.title(&id).filter(|t| t.starts_with('❄')));
    assert!(title.is_some(), "❄ title");

    // Alt p again: the parked row is preselected; Enter unparks it into the same pane.
    // Pacing only (the prefill itself is asserted by real_claude_in_zellij_parks_and_resumes…):
    // it waits for the shell's prompt through zellij's CLI, a pane list and a screen dump per look,
    // which under a loaded CI run has taken more than 10 s. The unpark below does not need it.
    if let Err(e) = sb.wait_for(&zj.client, r"park unpark \.", SECS(30)) {
        eprintln!("no prefill yet (continuing): {e}");
    }
    sb.send_keys(&zj.client, &["M-p"]);
    sb.wait_for(&zj.client, &format!("{sel}.*❄ parked"), SECS(15))
        .unwrap();
    sb.send_keys(&zj.client, &["Enter"]);
    let back = zwait_row(sb, zj, &h, |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    sb.wait_for(&zj.client, "❄ 0", SECS(15))
        .expect("the strip clears");
    assert_eq!(
        claude_pids_for(&sb.home, &sid).len(),
        1,
        "one process on the transcript"
    );

    // Like the tmux popup, the picker closes once the pane it opened on is done: it must not
    // stay over the pane (holding the focus, so Alt P below would find no terminal focused).
    let closed = poll(SECS(20), || {
        let screen = sb.capture(&zj.client);
        (!screen.contains(PICKER_HELP)).then_some(())
    });
    assert!(
        closed.is_some(),
        "the picker stayed open after unparking its pane:\n{}",
        sb.capture(&zj.client)
    );

    // Alt P parks the focused pane directly (through the strip), no picker.
    zj.wait_for(&id, CLAUDE_READY, SECS(30)).unwrap();
    let pid = back.pid.unwrap();
    let mut first = None;
    let parked = poll(SECS(40), || {
        sb.send_keys(&zj.client, &["M-P"]);
        let gone = wait_gone(pid, SECS(4));
        first.get_or_insert_with(|| sb.capture(&zj.client));
        gone.then_some(())
    });
    assert!(
        parked.is_some(),
        "Alt P did not park: {}\nafter the first Alt P:\n{}",
        sb.capture(&zj.client),
        first.unwrap_or_default()
    );
    sb.wait_for(&zj.client, "❄ 1 · |parked terminal_0@zk", SECS(15))
        .unwrap();
    assert_eq!(zrow(sb, zj, &h).unwrap().state, RowState::Parked);

    // Every status park pushed above carried its release, the plugin's own: the strip showed the
    // counts. A status from another release makes the strip say what to run.
    let stale = r#"{"schema":1,"parked":1,"freed_bytes":1,"updated":1,"version":"9.9.9"}"#;
    let _ = zj.cli(&["pipe", "--name", "park:status", "--", stale]);
    sb.wait_for(
        &zj.client,
        r"park 9\.9\.9 ≠ plugin .*: run park zellij install",
        SECS(15),
    )
    .expect("the strip names both versions");

    // zjstatus: each status push also pipes `zjstatus::pipe::pipe_park::<text>` to the session.
    // No zjstatus here, so a `timeout` first on park's PATH records the command lines park starts
    // (both pipes go through it) and runs the real one.
    let real_timeout = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("timeout"))
        .find(|p| p.is_file())
        .expect("timeout on PATH");
    let shims = sb.tmp.join("timeout-shim");
    std::fs::create_dir_all(&shims).unwrap();
    let log = sb.tmp.join("timeout.log");
    let shim = shims.join("timeout");
    harness::util::write_exe(
        &shim,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real_timeout.display()
        ),
    );
    let base = sb.base_env();
    let path = base.iter().find(|(k, _)| k == "PATH").unwrap().1.clone();
    let mut env = zenv(zj);
    env.push(("PATH".into(), format!("{}:{path}", shims.display())));
    let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let o = park_env(sb, &["forget", &h], &refs);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lines = poll(SECS(5), || {
        let l = std::fs::read_to_string(&log).unwrap_or_default();
        l.contains("pipe --name zjstatus").then_some(l)
    })
    .expect("park piped to zjstatus");
    assert!(
        lines.lines().any(
            |l| l.ends_with("--session zk pipe --name zjstatus -- zjstatus::pipe::pipe_park::")
        ),
        "nothing parked: the empty text, to session zk: {lines}"
    );
    assert!(
        lines.contains("--session zk pipe --name park:status -- {"),
        "{lines}"
    );
    // The real push (this release) puts the count back in place of the complaint.
    sb.wait_for(&zj.client, "❄ 0", SECS(15))
        .expect("the strip shows the count again");
}

/// Issue 35 item 8: a pane unparked from the picker (not the pane the picker was opened on, so it
/// stays open) showed `● unknown` with a blank title until `r`: its follow-up rescans stopped as
/// soon as the row was back, still starting. The picker here rescans in the background only
/// hourly, so nothing but the follow-ups can settle the row.
#[test]
fn a_row_unparked_from_the_picker_settles_without_a_manual_rescan() {
    let z = plugin_world(
        "zu",
        "pane size=1 borderless=true { plugin location=\"park\"; }\npane\npane focus=true",
        |w, park_bin| {
            format!(
                r#"bind "Alt p" {{ LaunchOrFocusPlugin "file:{w}" {{ floating true; move_to_focused_tab true; mode "picker"; park_bin "{park_bin}"; rescan_secs "3600"; }}; }}"#
            )
        },
    );
    let ids = z.zj.terminals();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let a = ids[0].clone();
    let sid = run_claude(&z, &a);
    let (sb, zj) = (&z.sb, &z.zj);
    let h = zj.handle(&a);
    let r = park_when_quiet(sb, zj, &h);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    sb.wait_for(&zj.client, "❄ 1 · ", SECS(15)).unwrap();
    // The picker opens on the focused shell pane (no row): the cursor is on the parked row.
    sb.send_keys(&zj.client, &["M-p"]);
    let sel = format!("▶ {}.*❄ parked", regex::escape(&h));
    sb.wait_for(&zj.client, &sel, SECS(15)).unwrap();
    sb.send_keys(&zj.client, &["Enter"]);
    let back = zwait_row(sb, zj, &h, |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    // The row settles in the open picker by itself: idle, with its title.
    let row = format!(r"{}\s+claude\s+idle", regex::escape(&h));
    let screen = sb
        .wait_for(&zj.client, &row, SECS(60))
        .unwrap_or_else(|e| panic!("the unparked row never settled: {e}"));
    let line = screen.lines().find(|l| l.contains(&h)).unwrap();
    assert!(!line.contains("unknown"), "{line}");
    assert!(
        line.trim_end_matches(['│', ' ']).len() > line.find("idle").unwrap() + 10,
        "a title after the state: {line:?}"
    );
}

/// The entry id park records for a Claude session.
fn entries_before_id(sid: &str) -> String {
    format!("claude-{sid}")
}

/// zellij's own resurrection renumbers panes `0..n-1` in layout order: with a pane closed before
/// the parked one, the parked pane's old id belongs to another tab's shell afterwards. park finds
/// the slot by its mark (`❄ <title> · <tag>` in the recorded tab and cwd), never by the stale id:
/// doctor says it moved, `rebuild --dry-run` plans the re-point, and `park unpark <session id>`
/// resumes the real Claude session in its own pane while the pane that took the old id is never
/// typed into.
#[test]
fn a_resurrected_zellij_session_resumes_in_the_parked_pane_not_the_one_that_took_its_id() {
    let z = world_with(
        "zr",
        |_| {
            r#"tab name="work" { pane split_direction="vertical" { pane; pane; pane; }; }
tab name="other" { pane; }"#
                .into()
        },
        "session_serialization true\nserialization_interval 1",
    );
    let terms = z.zj.terminals();
    assert_eq!(terms.len(), 4, "{terms:?}");
    // Claude in the third pane of tab `work`; the other tab's pane will take its id.
    let parked_id = terms[2].clone();
    let sid = run_claude(&z, &parked_id);
    let (sb, mut zj) = (&z.sb, z.zj);
    let old = zj.handle(&parked_id);
    let r = park_when_quiet(sb, &zj, &old);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    let mark = poll(SECS(5), || {
        zj.title(&parked_id).filter(|t| t.starts_with('❄'))
    })
    .expect("the ❄ mark on the parked pane");
    // The mark carries the entry's own tag: `❄ <title> · <5 chars>`.
    assert!(
        mark.rsplit_once(" · ")
            .is_some_and(|(_, tag)| tag.len() == 5),
        "{mark:?}"
    );
    // Close the first pane, then let zellij save the layout, then crash its server.
    zj.cli(&["action", "close-pane", "--pane-id", &terms[0]])
        .unwrap();
    // A save that shows the close: one with the mark but all three panes (taken before zellij
    // serialized the close) resurrects the closed pane, and nothing is renumbered.
    zj.saved_layout_when(sb, SECS(20), |l| {
        l.contains(&mark) && layout_tab_panes(l, "work") == 2
    })
    .unwrap_or_else(|| panic!("zellij never saved the layout:\n{}", zj.saved_layout(sb)));
    zj.kill_server();
    zj.resurrect(sb);

    // Renumbered: the mark is on terminal_1 now, and terminal_2 is tab `other`'s shell.
    let panes = zj.panes();
    let title_of = |n: u64| {
        panes
            .iter()
            .find(|p| p["is_plugin"] == false && p["id"] == n)
            .map(|p| {
                (
                    p["title"].as_str().unwrap_or("").to_string(),
                    p["tab_name"].clone(),
                )
            })
    };
    assert_eq!(title_of(1).map(|t| t.0), Some(mark.clone()), "{panes:#?}");
    assert_eq!(
        title_of(2).map(|t| t.1),
        Some(serde_json::json!("other")),
        "the old id is another tab's pane now"
    );
    let moved = zj.handle("terminal_1");
    zj.wait_for("terminal_1", r"park-test\$", SECS(15)).unwrap();
    zj.wait_for("terminal_2", r"park-test\$", SECS(15)).unwrap();

    // doctor: the entry's pane moved (info), nothing unmatched.
    let o = zpark(sb, &zj, &["doctor", "--json"]);
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("doctor --json ({e}): {}", text(&o)));
    let codes: Vec<&str> = rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"pane-moved"), "{rep:#}");
    assert!(!codes.contains(&"pane-unmatched"), "{rep:#}");
    // rebuild --dry-run: one re-point, from the stale id to the marked pane.
    let o = zpark(sb, &zj, &["rebuild", "--dry-run", "--json"]);
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("rebuild --json ({e}): {}", text(&o)));
    let rel = plan["relocated"].as_array().expect("relocated");
    assert_eq!(rel.len(), 1, "{plan:#}");
    assert_eq!(rel[0]["from"], serde_json::json!(old));
    assert_eq!(rel[0]["pane"], serde_json::json!(moved));
    assert_eq!(rel[0]["outcome"], serde_json::json!("would-rebuild"));

    // `park unpark .` typed in the pane that took the old id names nothing parked there.
    zj.type_line("terminal_2", "park unpark .");
    zj.wait_for(
        "terminal_2",
        "no parked session and no running agent in this pane",
        SECS(15),
    )
    .unwrap();
    // The old handle says where the entry is now (issue 35 item 5), dry run or not.
    for dry in [true, false] {
        let mut args = vec!["unpark", old.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let (c, out) = zaction(sb, &zj, &args);
        let why = out.results[0].reason.clone().unwrap_or_default();
        assert_eq!(
            (c, out.results[0].outcome.as_str()),
            (1, "refused"),
            "{why}"
        );
        assert!(
            why.contains(&format!("is in {moved} now")) && why.contains("park unpark"),
            "{why}"
        );
    }
    assert!(
        claude_pids_for(&sb.home, &sid).is_empty(),
        "nothing resumed"
    );
    // The repro: `park unpark <session id>` resumes it in its own pane.
    let (c, out) = zaction(sb, &zj, &["unpark", &sid]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results[0].reason
    );
    let back = zwait_row(sb, &zj, &moved, |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let pid = back.pid.unwrap();
    assert_eq!(env_of(pid, "ZELLIJ_PANE_ID").as_deref(), Some("1"));
    assert_eq!(
        claude_pids_for(&sb.home, &sid).len(),
        1,
        "exactly one process on the transcript"
    );
    let other = zj.dump("terminal_2");
    assert!(
        !other.contains(&format!("unpark {}", entries_before_id(&sid)))
            && !other.contains("--resume"),
        "the pane that took the old id was typed into:\n{other}"
    );
    assert!(entries(sb).is_empty(), "the entry is gone once resumed");
    // Issue 35 item 2: the mark goes with the unpark, in a resurrected session too (its name
    // came from the saved layout, which undoing a rename does not touch).
    let unmarked = poll(SECS(5), || {
        zj.title("terminal_1").filter(|t| !t.starts_with('❄'))
    });
    assert!(
        unmarked.is_some(),
        "the ❄ mark outlived the unpark: {:?}",
        zj.title("terminal_1")
    );
}

/// `zellij run --cwd <dir> -- claude …`: the new pane's id.
fn run_owned_claude(z: &Z, project: &str) -> String {
    let dir = z.sb.project_dir(project);
    let before = z.zj.terminals();
    let out =
        z.zj.cli(&[
            "run",
            "--cwd",
            &dir.to_string_lossy(),
            "--",
            "claude",
            "--dangerously-skip-permissions",
        ])
        .unwrap();
    // zellij can lose a CLI reply (ZELLIJ-TMUX §0): `run` is not retried, the new pane is read
    // from the listing instead.
    let id = match out.trim() {
        "" => poll(SECS(5), || {
            z.zj.terminals().into_iter().find(|t| !before.contains(t))
        })
        .expect("zellij run opened a pane"),
        id => id.to_string(),
    };
    assert!(id.starts_with("terminal_"), "{out:?}");
    id
}

/// The pane's process or its foreground job is `park hold …`.
fn runs_hold(zj: &Zellij, id: &str) -> bool {
    let Some(root) = zj.pane_pid(id) else {
        return false;
    };
    std::iter::once(root)
        .chain(descendants(root))
        .filter_map(|p| std::fs::read(format!("/proc/{p}/cmdline")).ok())
        .any(|c| c.split(|b| *b == 0).nth(1) == Some(&b"hold"[..]))
}

/// A Claude that is its pane's own command (`zellij run -- claude`): park leaves park's placeholder
/// in the same pane (zellij has no respawn: the held pane is dropped to a shell with ESC and the
/// shell runs `park hold`), and unpark presses its Enter: Claude resumes in that pane. A second
/// one is parked, the server killed and the session resurrected: its placeholder comes back held
/// ("Waiting to run") under a new id with the entry's mark, and `park unpark <session id>` turns it
/// into a shell and resumes there — never running what it held, never typing into the pane that
/// took its old id.
#[test]
fn a_pane_owned_claude_in_zellij_keeps_its_pane_through_park_and_a_resurrection() {
    let z = world_with(
        "zo",
        |_| {
            r#"tab name="work" { pane; }
tab name="other" { pane; }"#
                .into()
        },
        "session_serialization true\nserialization_interval 1",
    );

    // A: park leaves the placeholder in the same pane; unpark presses its Enter.
    let a = run_owned_claude(&z, "api");
    let sid_a = chat(&z, &a);
    let (sb, zj) = (&z.sb, &z.zj);
    let ha = zj.handle(&a);
    let r = park_when_quiet(sb, zj, &ha);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.wait_for(&a, "Press Enter to resume it here", SECS(15))
        .unwrap();
    assert!(runs_hold(zj, &a), "park hold runs in {a}");
    assert_eq!(zj.terminals().len(), 3, "no pane added or lost");
    let (c, o) = zaction(sb, zj, &["unpark", &sid_a]);
    assert_eq!(
        (c, o.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        o.results[0].reason
    );
    let back = zwait_row(sb, zj, &ha, |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid_a.as_str()));
    assert_eq!(
        env_of(back.pid.unwrap(), "ZELLIJ_PANE_ID").as_deref(),
        Some(a.trim_start_matches("terminal_"))
    );
    assert_eq!(zj.terminals().len(), 3, "resumed in place, no new pane");

    // B: parked, then the server crashes and zellij resurrects the session.
    let b = run_owned_claude(&z, "web");
    let sid_b = chat(&z, &b);
    let (sb, mut zj) = (&z.sb, z.zj);
    let hb = zj.handle(&b);
    let r = park_when_quiet(sb, &zj, &hb);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.wait_for(&b, "Press Enter to resume it here", SECS(15))
        .unwrap();
    let mark = poll(SECS(5), || zj.title(&b).filter(|t| t.starts_with('❄'))).expect("the ❄ mark");
    zj.saved_layout_when(sb, SECS(20), |l| {
        l.contains(&mark) && l.contains("\"hold\"")
    })
    .unwrap_or_else(|| {
        panic!(
            "zellij never saved the placeholder:\n{}",
            zj.saved_layout(sb)
        )
    });
    zj.kill_server();
    zj.resurrect(sb);
    let panes = zj.panes();
    let slot = panes
        .iter()
        .find(|p| p["is_plugin"] == false && p["title"] == serde_json::json!(mark))
        .unwrap_or_else(|| panic!("no pane carries {mark:?}: {panes:#?}"));
    assert_eq!(slot["is_held"], serde_json::json!(true), "{slot:#}");
    let new_b = format!("terminal_{}", slot["id"]);
    assert_ne!(new_b, b, "zellij renumbered the pane");
    zj.wait_for(&new_b, "Waiting to run", SECS(10)).unwrap();

    // The plan: re-point the entry at its held, renumbered pane (resuming it goes through the
    // same `resume_in` as a rebuilt tmux window's, proven by `rebuild::real_claude_two_…`).
    let o = zpark(sb, &zj, &["rebuild", "--dry-run", "--json"]);
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("rebuild --json ({e}): {}", text(&o)));
    let rel = rep["relocated"].as_array().expect("relocated");
    assert_eq!(rel.len(), 1, "{rep:#}");
    assert_eq!(
        rel[0]["pane"],
        serde_json::json!(zj.handle(&new_b)),
        "{rep:#}"
    );
    // `park rebuild --no-resume` re-points it and turns the held pane into a shell with the way
    // back typed (ESC, never Enter: Enter would run the saved command; issue 35 item 3); the
    // session itself stays parked.
    let o = zpark(sb, &zj, &["rebuild", "--no-resume"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    zj.wait_for(&new_b, r"park unpark \.\s*$", SECS(10))
        .unwrap();
    assert!(
        claude_pids_for(&sb.home, &sid_b).is_empty(),
        "nothing resumed"
    );
    assert_eq!(entries(sb).len(), 1, "still parked");

    // Re-pointed, it resumes in place by its id (the prefill is ours: cleared, not appended to).
    let (c, out) = zaction(sb, &zj, &["unpark", &sid_b]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results[0].reason
    );
    let nh = zj.handle(&new_b);
    let again = zwait_row(sb, &zj, &nh, |r| r.state == RowState::Live);
    assert_eq!(again.session_id.as_deref(), Some(sid_b.as_str()));
    let argv =
        String::from_utf8(std::fs::read(format!("/proc/{}/cmdline", again.pid.unwrap())).unwrap())
            .unwrap()
            .replace('\0', " ");
    assert!(argv.contains(&format!("--resume {sid_b}")), "{argv}");
    assert_eq!(
        claude_pids_for(&sb.home, &sid_b).len(),
        1,
        "exactly one process on the transcript"
    );
    if let Some(n) = zj.terminals().into_iter().find(|t| *t == b) {
        let other = zj.dump(&n);
        assert!(
            !other.contains("unpark"),
            "the pane that took the old id was typed into:\n{other}"
        );
    }
    assert!(entries(sb).is_empty());
}

/// Issue 35 item 3, with nothing typed: a parked `zellij run` pane comes back from a crash held
/// ("Waiting to run"), where Enter would start a fresh Claude in the parked slot. The strip, loaded
/// with the resurrected session, runs `park rebuild --no-resume --session <s>` by itself: the
/// held pane becomes a shell with the way back typed, once, though both tabs' strips ran it; the
/// entry points at its renumbered pane; no agent starts.
#[test]
fn the_strip_turns_a_resurrected_held_parked_pane_into_its_prompt_by_itself() {
    let strip = r#"pane size=1 borderless=true { plugin location="park"; }"#;
    strip_revives_a_held_parked_pane(
        "zr",
        &format!(
            "tab name=\"work\" focus=true {{ {strip}; pane; }}\ntab name=\"other\" {{ {strip}; pane; }}"
        ),
        true,
    );
}

/// The same with one tab: the `zellij run` pane keeps its id through the resurrection, so the
/// entry's recorded pane still is its slot — and still held, Enter there a fresh agent. It is
/// revived all the same (it was skipped as "already in its slot").
#[test]
fn a_resurrected_held_parked_pane_that_kept_its_id_gets_its_prompt_back_too() {
    let strip = r#"pane size=1 borderless=true { plugin location="park"; }"#;
    strip_revives_a_held_parked_pane(
        "zk",
        &format!("tab name=\"work\" focus=true {{ {strip}; pane; }}"),
        false,
    );
}

/// A pane-owned Claude parked, the session killed and resurrected with the placeholder held; the
/// strips alone must turn it into a prompt with the way back typed once. `renumbered`: whether
/// the layout makes zellij give the pane another id (asserted, so each case tests its path).
fn strip_revives_a_held_parked_pane(name: &str, layout: &str, renumbered: bool) {
    let z = plugin_world_with(
        name,
        layout,
        |_, _| String::new(),
        "session_serialization true\nserialization_interval 1",
    );
    let b = run_owned_claude(&z, "web");
    let sid = chat(&z, &b);
    let (sb, mut zj) = (&z.sb, z.zj);
    let r = park_when_quiet(sb, &zj, &zj.handle(&b));
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.wait_for(&b, "Press Enter to resume it here", SECS(15))
        .unwrap();
    let mark = poll(SECS(5), || zj.title(&b).filter(|t| t.starts_with('❄'))).expect("the ❄ mark");
    zj.saved_layout_when(sb, SECS(20), |l| {
        l.contains(&mark) && l.contains("\"hold\"")
    })
    .unwrap_or_else(|| {
        panic!(
            "zellij never saved the placeholder:\n{}",
            zj.saved_layout(sb)
        )
    });
    zj.kill_server();
    zj.resurrect(sb);
    let slot = poll(SECS(10), || {
        zj.panes()
            .into_iter()
            .find(|p| p["is_plugin"] == false && p["title"] == serde_json::json!(mark))
    })
    .unwrap_or_else(|| panic!("no pane carries {mark:?}: {:#?}", zj.panes()));
    let new_b = format!("terminal_{}", slot["id"]);
    assert_eq!(new_b != b, renumbered, "{b} came back as {new_b}");
    // No park command from here on: the strips do it.
    let screen = zj
        .wait_for(&new_b, r"park unpark \.\s*$", SECS(30))
        .unwrap_or_else(|e| panic!("the held pane never got its prompt back: {e}"));
    assert!(!screen.contains("Waiting to run"), "{screen}");
    let last = screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(
        last.matches("park unpark").count(),
        1,
        "typed once, not once per strip: {last:?}"
    );
    assert!(
        claude_pids_for(&sb.home, &sid).is_empty(),
        "nothing resumed"
    );
    let row = zls(sb, &zj)
        .rows
        .into_iter()
        .find(|r| r.session_id.as_deref() == Some(sid.as_str()))
        .expect("the parked row");
    assert_eq!(row.state, RowState::Parked);
    assert_eq!(
        row.pane,
        zj.handle(&new_b),
        "re-pointed at its renumbered pane"
    );
    assert_eq!(entries(sb).len(), 1, "still parked, once");
    // Enter on the typed line resumes it there, and the pane's ❄ name (its saved layout's, in a
    // resurrected session) goes with the park (issue 35 item 2: it stayed).
    zj.cli(&["action", "write", "--pane-id", &new_b, "13"])
        .unwrap();
    poll(SECS(60), || {
        zls(sb, &zj)
            .rows
            .into_iter()
            .find(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
    })
    .expect("resumed by Enter on the typed line");
    let title = poll(SECS(10), || {
        zj.title(&new_b).filter(|t| !t.starts_with('❄'))
    });
    assert!(
        title.is_some(),
        "the mark outlived the unpark: {:?}",
        zj.title(&new_b)
    );
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}

/// Dev servers in a zellij tab, with the same rules as a tmux window: parking the whole tab
/// (`<session>:<tab>`) stops Claude and the `vite` server tree its neighbour pane runs, leaves vim
/// alone, records the server in the tab's group; `park unpark <session>:<tab> --with-servers`
/// resumes Claude and types the server back at its pane's prompt.
#[test]
fn parking_a_zellij_tab_stops_its_dev_server_and_with_servers_brings_it_back() {
    use crate::servers::{free_port, pids_running, write_exec, ESBUILD, VITE};
    let z = world_with(
        "zs",
        |sb| {
            let dir = sb.project_dir("api");
            write_exec(&dir.join("node_modules/.bin/vite"), VITE);
            write_exec(&dir.join("node_modules/esbuild/bin/esbuild"), ESBUILD);
            std::fs::write(dir.join("vite.config.ts"), "export default {}\n").unwrap();
            let d = dir.to_string_lossy();
            format!(
                r#"tab name="work" {{ pane split_direction="vertical" {{ pane size="60%" cwd="{d}"; pane split_direction="horizontal" {{ pane cwd="{d}"; pane cwd="{d}"; }}; }}; }}"#
            )
        },
        "",
    );
    let terms = z.zj.terminals();
    assert_eq!(terms.len(), 3, "{terms:?}");
    let sid = run_claude(&z, &terms[0]);
    let (sb, zj) = (&z.sb, &z.zj);
    let (server, editor) = (&terms[1], &terms[2]);
    let port = free_port();
    zj.type_line(
        server,
        &format!("PORT={port} node_modules/.bin/vite --port {port}"),
    );
    zj.wait_for(server, &format!("VITE ready on {port}"), SECS(20))
        .unwrap();
    zj.type_line(editor, "vim -n vite.config.ts");
    zj.wait_for(editor, "export default", SECS(10)).unwrap();
    let vite = pids_running(sb, "node_modules/.bin/vite");
    let esbuild = pids_running(sb, "esbuild --service");
    let vim = pids_running(sb, "vim -n vite.config.ts");
    assert_eq!((vite.len(), esbuild.len(), vim.len()), (1, 1, 1));
    let l = zls(sb, zj);
    assert!(
        l.servers
            .iter()
            .any(|x| x.name == "vite" && x.state == "running" && x.session == "zs"),
        "{:?}",
        l.servers
    );
    assert_eq!(l.servers.len(), 1, "vim is not a server: {:?}", l.servers);

    // Park the whole tab.
    let deadline = Instant::now() + SECS(30);
    let out = loop {
        let (c, out) = zaction(sb, zj, &["park", "zs:work"]);
        let cpu = out
            .results
            .iter()
            .any(|r| r.reason.as_deref().is_some_and(|w| w.contains("% CPU")));
        if !cpu || Instant::now() > deadline {
            assert_eq!(c, 0, "{out:?}");
            break out;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let count = |o: &str| {
        out.results
            .iter()
            .filter(|r| r.outcome.as_str() == o)
            .count()
    };
    assert_eq!((count("parked"), count("stopped")), (1, 1), "{out:?}");
    for p in vite.iter().chain(&esbuild) {
        assert!(wait_gone(*p, SECS(5)), "pid {p} survived the tab park");
    }
    assert!(pid_alive(vim[0]), "vim is left alone");
    assert!(claude_pids_for(&sb.home, &sid).is_empty());
    let rec = zls(sb, zj);
    assert!(
        rec.servers
            .iter()
            .any(|x| x.name == "vite" && x.state == "stopped"),
        "{:?}",
        rec.servers
    );
    zj.wait_for(server, r"park-test\$\s*$", SECS(10)).unwrap();

    // Unpark the tab with its servers.
    let (c, out) = zaction(sb, zj, &["unpark", "zs:work", "--with-servers"]);
    let has = |o: &str, w: &str| {
        out.results
            .iter()
            .any(|r| r.outcome.as_str() == o && r.reason.as_deref().unwrap_or("").contains(w))
    };
    assert!(
        out.results.iter().any(|r| r.outcome.as_str() == "unparked"),
        "{out:?}"
    );
    assert!(has("restarted", "vite"), "{out:?}");
    assert_eq!(c, 0, "{out:?}");
    // The pane still shows the first vite's `VITE ready` line (a park does not clear it), so the
    // sign of the restart is the port: nothing listened on it since the park killed that vite.
    poll(SECS(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    })
    .unwrap_or_else(|| panic!("vite never listened again:\n{}", zj.dump(server)));
    let h = zj.handle(&terms[0]);
    let back = zwait_row(sb, zj, &h, |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let vites = poll(SECS(10), || {
        Some(pids_running(sb, "node_modules/.bin/vite")).filter(|v| v.len() == 1)
    });
    assert!(
        vites.is_some(),
        "one dev server: {:?}",
        pids_running(sb, "node_modules/.bin/vite")
    );
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}

/// Issue 35 item 1: `Alt P` reaches the strip of every tab. zellij sends pane and tab updates only
/// to the plugins of the active tab, so each background strip kept the focused pane of when its
/// tab was last active, and parked it too (seen: a Codex in another tab, once a pinned one). Two
/// tabs with a strip each and a real Claude each: `Alt P` in tab one parks tab one's Claude only.
#[test]
fn alt_shift_p_parks_only_the_pane_the_client_is_on_not_every_tabs_focused_one() {
    let strip = r#"pane size=1 borderless=true { plugin location="park"; }"#;
    let z = plugin_world(
        "zt",
        &format!("tab name=\"one\" focus=true {{ {strip}; pane; }}\ntab name=\"two\" {{ {strip}; pane; }}"),
        |_, _| r#"bind "Alt P" { MessagePlugin "park" { name "park:park-focused"; payload "x"; }; }"#.to_string(),
    );
    let ids = z.zj.terminals();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let (one, two) = (ids[0].clone(), ids[1].clone());
    run_claude_in(&z, &one, "one");
    run_claude_in(&z, &two, "two");
    let (sb, zj) = (&z.sb, &z.zj);
    let (h1, h2) = (zj.handle(&one), zj.handle(&two));
    let pid2 = zrow(sb, zj, &h2).unwrap().pid.unwrap();
    // Visit tab two (its strip learns its focused pane), then come back to tab one. Each switch
    // is done when the client is on that tab (park's view of what the client sees: both strips
    // read `❄ 0` whichever tab is shown).
    let shown = |h: &str| {
        poll(SECS(15), || {
            let o = zpark(sb, zj, &["auto", "status", "--json"]);
            let rep: park_protocol::auto::AutoReport = serde_json::from_slice(&o.stdout).ok()?;
            rep.agents
                .iter()
                .any(|a| a.pane == h && a.reason == "visible in an attached client")
                .then_some(())
        })
        .unwrap_or_else(|| panic!("the client never showed {h}"))
    };
    zj.cli(&["action", "go-to-tab-name", "two"]).unwrap();
    shown(&h2);
    zj.cli(&["action", "go-to-tab-name", "one"]).unwrap();
    shown(&h1);
    let pid1 = zrow(sb, zj, &h1).unwrap().pid.unwrap();
    // A refusal (Claude's CPU still settling) leaves the pane running: press again.
    let parked = poll(SECS(40), || {
        sb.send_keys(&zj.client, &["M-P"]);
        wait_gone(pid1, SECS(4)).then_some(())
    });
    assert!(parked.is_some(), "{}", sb.capture(&zj.client));
    sb.wait_for(&zj.client, "❄ 1 · ", SECS(15))
        .expect("the strip shows the count");
    // Every strip that would act does so at once; give them the time a park takes, twice.
    std::thread::sleep(SECS(6));
    assert!(
        std::path::Path::new(&format!("/proc/{pid2}")).exists(),
        "tab two's Claude was parked by its own strip"
    );
    let r2 = zrow(sb, zj, &h2).unwrap();
    assert_eq!(r2.state, RowState::Live, "{r2:?}");
    assert_eq!(entries(sb).len(), 1, "exactly one park");
}

/// Issue 35 item 4: with the zellij session dead, `ls` said "tmux is not reachable", `rebuild`
/// talked about a tmux server and skipped everything for tmux's sake, `unpark` gave the tmux
/// error, and `doctor` said ok (exit 0). Each now names the zellij session, says it is not
/// running and how to bring it back.
#[test]
fn a_dead_zellij_session_is_named_with_the_way_back_not_a_tmux_error() {
    let (z, id) = start();
    let (sb, zj) = (&z.sb, &z.zj);
    let sid = run_claude(&z, &id);
    let h = zj.handle(&id);
    let r = park_when_quiet(sb, zj, &h);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.kill_server();
    let attach = format!("zellij attach {}", zj.session);

    let l = zls(sb, zj);
    let r = l
        .rows
        .iter()
        .find(|r| r.session_id.as_deref() == Some(sid.as_str()))
        .expect("the parked row");
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.contains("is not running") && why.contains(&attach),
        "{why}"
    );
    assert!(l.warnings[0].contains(&attach), "{:?}", l.warnings);

    let f = doctor_finding(sb, zj, "session-down");
    assert!(f["fix"].as_str().unwrap().contains(&attach), "{f}");

    let o = zpark(sb, zj, &["rebuild", "--json"]);
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("rebuild --json ({e}): {}", text(&o)));
    assert_eq!(
        plan["server"],
        serde_json::json!(""),
        "no tmux server for zellij entries: {plan:#}"
    );
    let sk = plan["skipped"].as_array().unwrap();
    assert!(
        sk.iter()
            .any(|s| s["reason"].as_str().unwrap().contains(&attach)),
        "{plan:#}"
    );
    let t = text(&zpark(sb, zj, &["rebuild"]));
    assert!(!t.contains("tmux"), "{t}");

    let (c, out) = zaction(sb, zj, &["unpark", &sid]);
    let why = out.results[0].reason.clone().unwrap_or_default();
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (1, "refused"),
        "{why}"
    );
    assert!(why.contains(&attach) && !why.contains("tmux"), "{why}");
    assert_eq!(entries(sb).len(), 1, "the entry is kept");
}

/// Issue 35 item 3: a fresh agent in a parked slot (Enter at a resurrected held pane's "Waiting
/// to run", or `claude` typed at the parked pane's prompt) left `doctor` saying ok and `unpark`
/// refusing with no way forward. doctor names it (`slot-taken`); unpark names it and the way
/// forward, and that way works: park the fresh one too, then the parked one resumes in a new pane.
#[test]
fn a_fresh_agent_in_a_parked_slot_is_named_and_the_way_forward_works() {
    let (z, id) = start();
    let (sb, zj) = (&z.sb, &z.zj);
    let sid = run_claude(&z, &id);
    let h = zj.handle(&id);
    let r = park_when_quiet(sb, zj, &h);
    assert_eq!(r.outcome.as_str(), "parked", "{:?}", r.reason);
    zj.wait_for(&id, r"park unpark \.\s*$", SECS(10)).unwrap();
    // A fresh Claude in the parked slot (the prefill cleared first, as a user would).
    zj.cli(&["action", "write", "--pane-id", &id, "21"])
        .unwrap();
    let fresh = chat(&z, &{
        zj.type_line(&id, "claude --dangerously-skip-permissions");
        id.clone()
    });
    assert_ne!(fresh, sid);

    let f = doctor_finding(sb, zj, "slot-taken");
    assert!(f["message"].as_str().unwrap().contains(&fresh), "{f}");

    // Refused, dry run or not (a dry run promised a resume the real one refused), naming the
    // fresh one and both ways forward.
    for dry in [true, false] {
        let mut args = vec!["unpark", sid.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let (c, out) = zaction(sb, zj, &args);
        let why = out.results[0].reason.clone().unwrap_or_default();
        assert_eq!(
            (c, out.results[0].outcome.as_str()),
            (1, "refused"),
            "dry run {dry}: {why}"
        );
        assert!(
            why.contains(&fresh)
                && why.contains(" --new-pane` resumes it in a new pane of tab")
                && why.contains(&format!("park park {h}")),
            "{why}"
        );
    }
    // The client looks at another tab now: the new pane still opens in the slot's own tab.
    let tab = zls(sb, zj).rows[0].window.clone();
    zj.cli(&["action", "new-tab", "--name", "elsewhere"])
        .unwrap();
    let (c, out) = zaction(sb, zj, &["unpark", &sid, "--new-pane"]);
    let why = out.results[0].reason.clone().unwrap_or_default();
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{why}"
    );
    assert!(why.contains("runs another agent"), "{why}");
    let back = poll(SECS(60), || {
        zls(sb, zj)
            .rows
            .into_iter()
            .find(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
    })
    .expect("the parked session runs again");
    assert_ne!(back.pane, h, "in a new pane, not the fresh one's slot");
    assert_eq!(back.window, tab, "in the slot's tab, not the focused one");
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
    assert_eq!(
        claude_pids_for(&sb.home, &fresh).len(),
        1,
        "the fresh one runs on"
    );
    assert!(entries(sb).is_empty(), "nothing parked");
    assert!(
        poll(SECS(5), || zj.title(&id).filter(|t| !t.starts_with('❄'))).is_some(),
        "the slot's mark is gone: {:?}",
        zj.title(&id)
    );
}

/// The journal in zellij (issue 32): a live Claude is journaled with the zellij server that runs
/// its session; one that exits while the server lives leaves the journal; one that dies with a
/// SIGKILLed server is lost until zellij resurrects the session, then `park rebuild` resumes it
/// in the pane at its place in its tab.
#[test]
fn the_journal_tells_an_exit_from_a_zellij_crash_and_rebuild_resumes_it_in_its_pane() {
    let z = world_with(
        "zj-journal",
        |_| "pane\npane".into(),
        "session_serialization true\nserialization_interval 1",
    );
    let terms = z.zj.terminals();
    let exits = run_claude_in(&z, &terms[0], "exits");
    let crashes = run_claude_in(&z, &terms[1], "crashes");
    let (sb, mut zj) = (&z.sb, z.zj);
    let snap = |sb: &Sandbox, zj: &Zellij| -> serde_json::Value {
        let o = zpark(sb, zj, &["snapshot", "--json"]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let sids = |v: &serde_json::Value, list: &str| -> Vec<String> {
        let mut x: Vec<String> = v[list]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| l["session_id"].as_str().unwrap_or_default().to_string())
            .collect();
        x.sort();
        x
    };
    let v = snap(sb, &zj);
    let mut both = vec![exits.clone(), crashes.clone()];
    both.sort();
    assert_eq!(sids(&v, "live"), both, "{v}");
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.park_home.join("journal.json")).unwrap()).unwrap();
    let server = zj.server_pid().expect("the zellij server") as u64;
    for r in j["sessions"].as_array().unwrap() {
        assert_eq!(
            r["server_process"][0], server,
            "journaled with its zellij server: {r}"
        );
    }

    assert!(
        claude_exits(&sb.home, &exits, SECS(30), || zj
            .type_line(&terms[0], "/exit")),
        "claude exits"
    );
    let v = snap(sb, &zj);
    assert_eq!(sids(&v, "left"), vec![exits.clone()], "{v}");
    assert_eq!(sids(&v, "kept"), Vec::<String>::new(), "{v}");
    assert_eq!(sids(&v, "live"), vec![crashes.clone()], "{v}");

    crash_with(sb, &zj, &crashes);
    let v = snap(sb, &zj);
    assert_eq!(sids(&v, "lost"), vec![crashes.clone()], "{v}");
    let o = zpark(sb, &zj, &["rebuild", "--dry-run", "--json"]);
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let lost = plan["lost"].as_array().expect("lost");
    assert_eq!(lost.len(), 1, "{plan}");
    assert_eq!(lost[0]["outcome"], "skipped", "{plan}");
    assert!(
        lost[0]["reason"]
            .as_str()
            .unwrap()
            .contains("zellij attach"),
        "{plan}"
    );

    // zellij resurrects the session (its panes renumbered; the agent's pane held, "Waiting to
    // run" it fresh); rebuild puts the session back in the pane at its place in the tab (ESC
    // first, never Enter), and it is journaled live again.
    zj.resurrect_held(sb);
    let o = zpark(sb, &zj, &["rebuild", "--json"]);
    let out: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("rebuild --json ({e}): {}", text(&o)));
    assert_eq!(code(&o), 0, "{out:#}");
    let lost = out["lost"].as_array().expect("lost");
    assert_eq!(lost.len(), 1, "{out:#}");
    assert_eq!(lost[0]["outcome"], "unparked", "{out:#}");
    let second = zj
        .last_tiled_terminal()
        .expect("the second pane of the tab");
    let h = zj.handle(&second);
    let r = zwait_row(sb, &zj, &h, |r| {
        r.state == RowState::Live && r.session_id.is_some()
    });
    assert_eq!(
        r.session_id.as_deref(),
        Some(crashes.as_str()),
        "back in its place"
    );
    assert_eq!(claude_pids_for(&sb.home, &crashes).len(), 1);
    assert!(
        claude_pids_for(&sb.home, &exits).is_empty(),
        "the exited one stays gone"
    );
    let v = snap(sb, &zj);
    assert_eq!(sids(&v, "live"), vec![crashes.clone()], "{v}");
}

/// `[journal] restore = "auto"` in zellij (issue 32 §1, §4): after a crash, attaching is all it
/// takes. The strip of the resurrected session runs `park rebuild --on-attach` once it loads,
/// which resumes the lost session in the pane at its place in its tab (the held pane revived
/// with ESC, never Enter): nobody runs park.
#[test]
fn with_restore_auto_attaching_to_a_crashed_zellij_session_brings_its_agent_back() {
    let strip = r#"pane size=1 borderless=true { plugin location="park"; }"#;
    let z = plugin_world_with(
        "zj-auto",
        &format!("{strip}\npane\npane"),
        |_, _| String::new(),
        "session_serialization true\nserialization_interval 1",
    );
    std::fs::write(
        z.sb.park_home.join("config.toml"),
        "[journal]\nrestore = \"auto\"\n",
    )
    .unwrap();
    let terms = z.zj.terminals();
    assert_eq!(terms.len(), 2, "{terms:?}");
    let sid = run_claude_in(&z, &terms[1], "auto");
    let (sb, mut zj) = (&z.sb, z.zj);
    let o = zpark(sb, &zj, &["snapshot", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["live"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["session_id"] == serde_json::json!(sid)),
        "journaled: {v}"
    );
    // zellij has saved the pane running the agent (it comes back held).
    poll(SECS(20), || {
        zj.saved_layout(sb).contains("claude").then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "zellij never saved the agent's pane:\n{}",
            zj.saved_layout(sb)
        )
    });
    crash_with(sb, &zj, &sid);

    // No park command from here on until the session runs again.
    zj.resurrect_held(sb);
    poll(SECS(60), || {
        (claude_pids_for(&sb.home, &sid).len() == 1).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the strip did not bring the session back; client:\n{}",
            sb.capture(&zj.client)
        )
    });
    let second = zj
        .last_tiled_terminal()
        .expect("the second terminal pane of the tab");
    let r = zwait_row(sb, &zj, &zj.handle(&second), |r| {
        r.state == RowState::Live && r.session_id.is_some()
    });
    assert_eq!(
        r.session_id.as_deref(),
        Some(sid.as_str()),
        "back in its place"
    );
    std::thread::sleep(SECS(2));
    assert_eq!(
        claude_pids_for(&sb.home, &sid).len(),
        1,
        "one process on the transcript (the strips of a session act once)"
    );
    let left = poll(SECS(10), || entries(sb).is_empty().then_some(()));
    assert!(left.is_some(), "nothing is left parked: {:?}", entries(sb));
}

/// zellij 0.45.1 kills a server whose first client has not connected yet when any client
/// disconnects from it, and every zellij CLI call probes every socket of the socket dir
/// (GUARDS.md, zellij-starting). A server started alone (`zellij --server <socket>`, no client)
/// stays in that state; park, asked to list everything, must leave it alone until it is 2 s old.
/// Without the wait, park's first call killed it within a few hundred milliseconds.
#[test]
fn park_leaves_a_starting_zellij_server_alone_for_its_first_two_seconds() {
    let sb = Sandbox::new();
    let sock = sb.root.join("zsock");
    let contract = sock.join("contract_version_1");
    std::fs::create_dir_all(&contract).unwrap();
    let socket = contract.join("starting");
    let bin = zellij_bin();
    let mut server = std::process::Command::new(&bin)
        .arg("--server")
        .arg(&socket)
        .env_clear()
        .envs(sb.base_env())
        .env("ZELLIJ_SOCKET_DIR", &sock)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("zellij --server");
    let born = poll(SECS(10), || {
        std::fs::metadata(&socket).ok()?.modified().ok()
    })
    .expect("the server binds its socket");
    let pid = poll(SECS(10), || server_pid_of(&socket)).expect("the server's pid");
    let env: Vec<(String, String)> = vec![
        (
            "ZELLIJ_SOCKET_DIR".into(),
            sock.to_string_lossy().into_owned(),
        ),
        ("PARK_ZELLIJ_BIN".into(), bin.to_string_lossy().into_owned()),
    ];
    let mut cmd = park_cmd(&sb, &[]);
    cmd.args(["ls", "--json"]).envs(env);
    let lister = std::thread::spawn(move || cmd.output().expect("park ls"));
    let died = poll(SECS(20), || {
        (!std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            }))
        .then(std::time::SystemTime::now)
    });
    let out = lister.join().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    // zellij's bug itself (when a release fixes it, the server lives and this wait can go).
    let died = died.unwrap_or_else(|| {
        panic!(
            "the clientless server outlived park's calls: has zellij stopped dying on a probe? {}",
            text(&out)
        )
    });
    let lived = died.duration_since(born).unwrap_or_default();
    assert!(
        lived >= Duration::from_millis(1_900),
        "park called zellij {lived:?} after the server started (it must wait 2 s): {}",
        text(&out)
    );
}

/// A crash: the zellij server and the agent of session `sid` SIGKILLed, both waited out.
fn crash_with(sb: &Sandbox, zj: &Zellij, sid: &str) {
    let pids = claude_pids_for(&sb.home, sid);
    zj.kill_server();
    for p in pids {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
        assert!(wait_gone(p, SECS(10)));
    }
}
