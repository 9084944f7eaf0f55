//! End-to-end tests of the tmux plugin (`park.tmux` at the repo root → `tmux-plugin/park.tmux`)
//! in real tmux.
//!
//! The sandbox's tmux server is the "inner" server the plugin is loaded into. To see what a user
//! sees (status line, window list, pane borders, popups), a NESTED client is attached to it from
//! an "outer" server: `tmux -L <label>-outer new-session "tmux -L <label> attach"`, and the outer
//! pane is captured. The outer server runs with the sandbox's environment and is killed on Drop.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// The plugin entry point TPM runs (the repo root's `park.tmux`).
fn plugin() -> PathBuf {
    park_plugin()
}

fn load_plugin(sb: &Sandbox) {
    let p = plugin();
    sb.tmux(&["run-shell", &p.to_string_lossy()])
        .unwrap_or_else(|e| panic!("loading the plugin: {e}"));
}

pub(crate) fn gopt(sb: &Sandbox, name: &str) -> String {
    sb.tmux(&["show-option", "-gqv", name])
        .unwrap()
        .trim_end_matches('\n')
        .to_string()
}

pub(crate) fn set_gopt(sb: &Sandbox, name: &str, value: &str) {
    sb.tmux(&["set-option", "-g", name, value]).unwrap();
}

/// Every global option (session, window and server scope) and every key binding: what loading the
/// plugin may change.
pub(crate) fn snapshot(sb: &Sandbox) -> String {
    let mut s = String::new();
    for args in [
        &["show-options", "-g"][..],
        &["show-options", "-gw"],
        &["show-options", "-s"],
        &["list-keys"],
    ] {
        s.push_str(&sb.tmux(args).unwrap());
    }
    s
}

pub(crate) fn prefix_binding(sb: &Sandbox, key: &str) -> Option<String> {
    sb.tmux(&["list-keys", "-T", "prefix", key])
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// A wrapper to use as `@park-bin`: appends its argv (one line per call) to `log`, then runs the
/// real park. For `pick` it stays 3 s after park exits, so the popup can be seen even when the
/// picker exits at once (no agent row to show). Lives in a directory whose name has a space and a `#`, so the
/// plugin's quoting (two shells and a format expansion) is exercised.
fn park_wrapper(sb: &Sandbox, log: &Path) -> PathBuf {
    let dir = sb.root.join("plugin bin #1");
    std::fs::create_dir_all(&dir).unwrap();
    let w = dir.join("park wrapper");
    let script = format!(
        "#!/bin/sh\n\
         printf '%s\\n' \"$*\" >> {log}\n\
         if [ \"$1\" = pick ]; then\n\
         \x20 {park} \"$@\"; echo \"rc=$?\" >> {log}; sleep 3; exit 0\n\
         fi\n\
         exec {park} \"$@\"\n",
        log = sh_quote(&log.to_string_lossy()),
        park = sh_quote(&park_bin().to_string_lossy()),
    );
    harness::util::write_exe(&w, &script);
    w
}

/// A shell pane in project `name` running the fake `claude`, one turn done, idle.
fn fake_agent(sb: &Sandbox, session: &str, name: &str) -> (String, String) {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window(session, name, &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let r = wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);
    (pane, r.session_id.expect("session id"))
}

#[test]
fn loading_rewrites_placeholders_seeds_the_status_and_is_idempotent() {
    let sb = Sandbox::new();
    sb.ensure_session("w");
    let bin = park_bin();
    set_gopt(&sb, "@park-bin", &bin.to_string_lossy());
    set_gopt(&sb, "status-right", "#{park_status}| %H:%M");
    set_gopt(&sb, "status-left", "[#S] #{park_status}#{park_status}");
    // No daemon: it would publish the ledger's real status (nothing parked) over the made-up
    // file below, which is what this test reads back. (The journal, on by default, keeps it.)
    let cfg = sb.home.join(".config/park");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), "[journal]\nenabled = false\n").unwrap();
    // A status file as park writes it: the load seeds @park_status from it (no scan).
    std::fs::write(
        sb.park_home.join("status"),
        r#"{"schema":1,"parked":2,"freed_bytes":314572800,"updated":0}"#,
    )
    .unwrap();

    load_plugin(&sb);
    let status_fmt = "#{?@park_status,#{@park_status} ,}";
    assert_eq!(gopt(&sb, "status-right"), format!("{status_fmt}| %H:%M"));
    assert_eq!(
        gopt(&sb, "status-left"),
        format!("[#S] {status_fmt}{status_fmt}")
    );
    let seeded = gopt(&sb, "@park_status");
    assert!(seeded.starts_with("❄ 2 · "), "seeded: {seeded:?}");
    // Formats the user never set get the pills; borders stay off unless asked for.
    let pill = "#{?@park_parked, ❄#{@park_parked},}";
    for o in ["window-status-format", "window-status-current-format"] {
        assert_eq!(
            gopt(&sb, o),
            format!("#I:#W{pill}#{{?window_flags,#{{window_flags}}, }}"),
            "{o}"
        );
    }
    assert!(gopt(&sb, "pane-border-format")
        .ends_with(" #{?@park_pill,#[reverse] #{@park_pill} #[noreverse],}"));
    assert_eq!(gopt(&sb, "pane-border-status"), "off");
    // No default was written into a user option.
    for o in [
        "@park-key",
        "@park-park-key",
        "@park-status-format",
        "@park-auto",
    ] {
        assert_eq!(gopt(&sb, o), "", "{o} must stay unset");
    }
    let p = prefix_binding(&sb, "P").expect("prefix P bound");
    assert!(
        p.contains("display-popup") && p.contains("pick --pane #{pane_id}"),
        "{p}"
    );
    // @park-park-key is unbound by default (tmux's own prefix M-p stays as it was).
    assert!(!prefix_binding(&sb, "M-p")
        .unwrap_or_default()
        .contains("park"));

    let first = snapshot(&sb);
    load_plugin(&sb);
    assert_eq!(snapshot(&sb), first, "a second load must change nothing");
    // A config reload puts the placeholder back: it is replaced again, once.
    set_gopt(&sb, "status-right", "#{park_status}| %H:%M");
    load_plugin(&sb);
    assert_eq!(snapshot(&sb), first);
}

#[test]
fn missing_binary_says_so_or_offers_the_build() {
    let sb = Sandbox::new();
    let outer = Outer::attach(&sb, "w");
    let before = sb.tmux(&["list-keys"]).unwrap();
    set_gopt(&sb, "@park-bin", "/nonexistent/park");
    set_gopt(&sb, "status-right", "#{park_status}");
    load_plugin(&sb);
    outer
        .wait(
            "park: binary not found (set @park-bin or put park on PATH)",
            SECS(3),
        )
        .unwrap();
    assert_eq!(sb.tmux(&["list-keys"]).unwrap(), before, "no key bound");
    assert!(prefix_binding(&sb, "P").is_none());
    assert_eq!(gopt(&sb, "status-right"), "#{park_status}");

    // Unset @park-bin and no park on the server's PATH (nor in ~/.local/bin, ~/.cargo/bin): the
    // plugin sits in park's source tree, so the key offers to build it (tpm_one_step.rs); only
    // that key is bound, and no option is touched.
    sb.tmux(&["set-option", "-gu", "@park-bin"]).unwrap();
    sb.tmux(&["set-environment", "-g", "PATH", "/usr/bin:/bin"])
        .unwrap();
    sb.tmux(&["display-message", "reset"]).unwrap();
    load_plugin(&sb);
    outer
        .wait(
            "park: binary not installed: press C-b P to build it (or set @park-bin)",
            SECS(3),
        )
        .unwrap();
    let offer = prefix_binding(&sb, "P").expect("prefix P offers the build");
    assert!(
        offer.contains("display-popup") && offer.contains("build-park.sh"),
        "{offer}"
    );
    let p_line = |s: &str| {
        s.lines()
            .filter(|l| {
                let w: Vec<&str> = l.split_whitespace().take(4).collect();
                w.get(2..4) != Some(&["prefix", "P"][..])
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(p_line(&sb.tmux(&["list-keys"]).unwrap()), p_line(&before));
    assert_eq!(gopt(&sb, "status-right"), "#{park_status}");
    // Loading again (TPM on a config reload) changes nothing.
    let once = snapshot(&sb);
    load_plugin(&sb);
    assert_eq!(snapshot(&sb), once);
}

#[test]
fn user_settings_are_never_overridden() {
    let sb = Sandbox::new();
    let outer = Outer::attach(&sb, "w");
    set_gopt(&sb, "@park-bin", &park_bin().to_string_lossy());
    set_gopt(&sb, "@park-key", "C-p");
    set_gopt(&sb, "@park-park-key", "M-p");
    set_gopt(&sb, "window-status-format", "#I:#W");
    set_gopt(
        &sb,
        "window-status-current-format",
        "#[bold]#I:#W#{park_window}#[nobold]",
    );
    set_gopt(&sb, "pane-border-format", " #{pane_index} ");
    set_gopt(&sb, "pane-border-status", "bottom");
    set_gopt(&sb, "@park-border", "on");
    set_gopt(&sb, "@resurrect-hook-post-restore-all", "my-restore-script");
    load_plugin(&sb);

    // tmux-resurrect's hooks: the user's is kept, the unset one becomes park's.
    assert_eq!(
        gopt(&sb, "@resurrect-hook-post-restore-all"),
        "my-restore-script"
    );
    assert!(
        gopt(&sb, "@resurrect-hook-post-save-all").ends_with("' resurrect save"),
        "{}",
        gopt(&sb, "@resurrect-hook-post-save-all")
    );
    assert_eq!(gopt(&sb, "@park-key"), "C-p");
    let cp = prefix_binding(&sb, "C-p").expect("the user's key is bound");
    assert!(cp.contains("pick --pane #{pane_id}"), "{cp}");
    assert!(prefix_binding(&sb, "P").is_none(), "the default key is not");
    assert_eq!(gopt(&sb, "window-status-format"), "#I:#W");
    assert_eq!(
        gopt(&sb, "window-status-current-format"),
        "#[bold]#I:#W#{?@park_parked, ❄#{@park_parked},}#[nobold]"
    );
    assert_eq!(gopt(&sb, "pane-border-format"), " #{pane_index} ");
    assert_eq!(gopt(&sb, "pane-border-status"), "bottom");
    let first = snapshot(&sb);
    load_plugin(&sb);
    assert_eq!(snapshot(&sb), first);

    // @park-park-key parks the current pane at once; a refusal is shown in the status line.
    let mp = prefix_binding(&sb, "M-p").expect("park key bound");
    assert!(mp.contains("park-pane.sh") && mp.contains("-b"), "{mp}");
    outer.keys(&["C-b", "M-p"]);
    let shown = outer.wait("park: ", SECS(10)).unwrap();
    let line = shown.lines().last().unwrap_or_default().to_string();
    eprintln!("refusal shown on the status line: {line:?}");
    assert!(line.contains("refused"), "{line}");
}

#[test]
fn pushes_reach_the_status_line_window_list_border_and_the_popup_opens() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let (pane, _sid) = fake_agent(&sb, "w", "p1");
    let log = sb.logs.join("park-argv.log");
    let wrapper = park_wrapper(&sb, &log);
    set_gopt(&sb, "@park-bin", &wrapper.to_string_lossy());
    set_gopt(&sb, "status-right", "#{park_status}|R");
    set_gopt(&sb, "@park-border", "on");
    sb.tmux(&["select-window", "-t", &pane]).unwrap();
    let outer = Outer::attach(&sb, "w");
    load_plugin(&sb);
    assert_eq!(gopt(&sb, "pane-border-status"), "top");
    let argv = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(argv.contains("status --tmux"), "seeded at load: {argv:?}");
    outer.wait("|R", SECS(3)).unwrap();
    assert!(
        !outer.status_line().contains('❄'),
        "{}",
        outer.status_line()
    );

    // Park: the status line shows the count at once (pushed, no polling).
    let o = park(&sb, &["park", &pane]);
    let returned = Instant::now();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let seen = poll_fast(SECS(1), || {
        outer.status_line().contains("❄ 1").then(Instant::now)
    });
    let line = outer.status_line();
    let seen = seen.unwrap_or_else(|| panic!("status line never showed ❄ 1 within 1 s: {line:?}"));
    eprintln!(
        "status line shows the park {} ms after `park park` returned: {line:?}",
        seen.duration_since(returned).as_millis()
    );
    assert!(line.contains(&gopt(&sb, "@park_status")), "{line}");

    // Window list: the ❄ pill, once the companion sets the window option @park_parked.
    let parked_opt = poll_fast(SECS(1), || {
        let v = sb
            .tmux(&["show-options", "-wqv", "-t", &pane, "@park_parked"])
            .unwrap_or_default();
        (!v.trim().is_empty()).then(|| v.trim().to_string())
    });
    match parked_opt {
        Some(n) => {
            let want = format!("1:p1 ❄{n}");
            outer.wait(&want, SECS(1)).unwrap();
            eprintln!("window list shows {want:?}");
        }
        None => eprintln!(
            "NOTE: the companion does not set the window option @park_parked yet; \
             window-list pill not asserted"
        ),
    }

    // Pane border (pane-border-status top via @park-border): the pane's pill.
    let pill = sb
        .tmux(&["show-options", "-pqv", "-t", &pane, "@park_pill"])
        .unwrap()
        .trim()
        .to_string();
    assert!(pill.starts_with("❄ claude"), "{pill:?}");
    let screen = outer.wait(&pill, SECS(1)).unwrap();
    eprintln!("nested client after the park:\n{screen}");

    // prefix P: a popup titled " park " running `<bin> pick --pane <the current pane>`.
    outer.keys(&["C-b", "P"]);
    let want = format!("pick --pane {pane}");
    let got = poll_fast(SECS(5), || {
        let a = std::fs::read_to_string(&log).unwrap_or_default();
        a.contains(&want).then_some(a)
    });
    assert!(
        got.is_some(),
        "wrapper never ran {want:?}: {:?}",
        std::fs::read_to_string(&log)
    );
    let popup = outer.wait("─ park ─", SECS(2)).unwrap();
    eprintln!("popup:\n{popup}");
    let client = sb
        .tmux(&["list-clients", "-F", "#{client_name}"])
        .unwrap()
        .trim()
        .to_string();
    let _ = sb.tmux(&["display-popup", "-C", "-c", &client]);
    poll_fast(SECS(5), || {
        (!outer.screen().contains("─ park ─")).then_some(())
    })
    .expect("popup closed");
    // Closing the popup must not leave the pane in run-shell's view mode (it would eat the
    // resume command park types into the pane).
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(sb.display(&pane, "#{pane_in_mode}").as_deref(), Some("0"));

    // Unpark: the count and the pills disappear.
    let o = park(&sb, &["unpark", &pane]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    wait_row(&sb, &pane, SECS(10), |r| r.state == RowState::Live);
    let gone = poll_fast(SECS(2), || {
        let s = outer.screen();
        (!s.contains('❄')).then_some(s)
    });
    assert!(
        gone.is_some(),
        "❄ still shown after unpark:\n{}",
        outer.screen()
    );
}

#[test]
fn plugin_scripts_are_shellcheck_clean() {
    let root = plugin().parent().unwrap().to_path_buf();
    let have = Command::new("shellcheck")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        eprintln!("shellcheck not installed: skipped");
        return;
    }
    let files = [
        "park.tmux",
        "tmux-plugin/park.tmux",
        "tmux-plugin/scripts/helpers.sh",
        "tmux-plugin/scripts/park-pane.sh",
        "tmux-plugin/scripts/build-park.sh",
        "scripts/bench-tmux",
    ];
    let out = Command::new("shellcheck")
        .current_dir(&root)
        .arg("-x")
        .args(files.iter().filter(|f| root.join(f).is_file()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "shellcheck:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The start of the picker's key help in its list (`view::NORMAL_HELP`), shown at the popup's
/// width while the picker runs.
const PICKER_HELP: &str = "⏎ park/unpark";

/// The popup's top border with its title (`display-popup -T ' park '`): on screen from the moment
/// tmux opens the popup until it takes it down, whatever the picker draws inside.
const POPUP_TOP: &str = "┌─ park ─";

/// The issue's "done when", with the real Claude Code: the plugin is loaded, `prefix P` opens the
/// picker on the current pane, Enter parks it (the popup closes, the status line shows the count
/// at once), `prefix P` + Enter again resumes the same session in the same pane.
#[test]
fn prefix_p_parks_and_unparks_a_real_claude_pane_from_the_popup() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let dir = sb.project_dir("real");
    let pane = sb.new_shell_window("w", "real", &dir, &env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(&sb, &pane, "hello from the popup test", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let sid = wait_row(&sb, &pane, SECS(30), |r| r.status == Status::Idle)
        .session_id
        .unwrap();

    set_gopt(&sb, "@park-bin", &park_bin().to_string_lossy());
    set_gopt(&sb, "status-right", "#{park_status}|R");
    sb.tmux(&["select-window", "-t", &pane]).unwrap();
    let outer = Outer::attach(&sb, "w");
    load_plugin(&sb);
    outer.wait("|R", SECS(5)).unwrap();

    // Park from the popup; a CPU refusal right after the reply keeps the popup open: retry Enter.
    outer.keys(&["C-b", "P"]);
    outer.wait(POPUP_TOP, SECS(10)).unwrap();
    outer.wait(&format!("▶ {pane}"), SECS(10)).unwrap();
    // The "closed" wait below looks for this and POPUP_TOP: they must be on screen now, or it
    // would pass at once (it did when the help's wording changed).
    outer.wait(PICKER_HELP, SECS(5)).unwrap();
    let t0 = Instant::now();
    let parked = poll_fast(SECS(40), || {
        if row(&sb, &pane).is_some_and(|r| r.state == RowState::Parked) {
            return Some(());
        }
        if !outer.screen().contains("freezing") {
            outer.keys(&["Enter"]);
        }
        std::thread::sleep(Duration::from_millis(700));
        None
    });
    assert!(
        parked.is_some(),
        "not parked from the popup:\n{}",
        outer.screen()
    );
    outer.wait("❄ 1", SECS(5)).unwrap();
    eprintln!("parked from the popup after {:?}", t0.elapsed());
    assert!(
        outer.status_line().contains("❄ 1"),
        "status line: {}",
        outer.status_line()
    );
    // The row reads parked (and the count shows) as soon as park records the entry, while the
    // picker still waits for `park park` to return; only then does it quit, and tmux takes the
    // popup down once the picker's process is gone (its box stays, blank, in between). Keys typed
    // before that go to the popup: to the picker, where the pane's park is still in flight
    // (`C-b P` is not the prefix there, and Enter is refused: that pane's toggle is in flight), or
    // to a picker that is exiting; either way they are lost.
    poll_fast(SECS(20), || {
        let s = outer.screen();
        (!s.contains(PICKER_HELP) && !s.contains(POPUP_TOP)).then_some(())
    })
    .unwrap_or_else(|| panic!("the popup did not close on success:\n{}", outer.screen()));

    // Unpark from the popup: the popup is closed, so `C-b P` reaches the prefix table.
    outer.keys(&["C-b", "P"]);
    outer.wait(&format!("▶ {pane}"), SECS(10)).unwrap();
    outer.keys(&["Enter"]);
    let back = poll_fast(SECS(40), || {
        row(&sb, &pane).filter(|r| r.state == RowState::Live)
    });
    let back = back.unwrap_or_else(|| panic!("not resumed from the popup:\n{}", outer.screen()));
    assert_eq!(
        back.session_id.as_deref(),
        Some(sid.as_str()),
        "the same session, in the same pane"
    );
    poll_fast(SECS(10), || {
        (!outer.status_line().contains('❄')).then_some(())
    })
    .unwrap_or_else(|| panic!("count not cleared: {}", outer.status_line()));
    drop(outer);
    drop(mock);
}

/// Changing `@park-key` and reloading moves the binding: the old key is released.
#[test]
fn changing_the_key_and_reloading_moves_the_binding() {
    let sb = Sandbox::new();
    install_shims(&sb, None);
    sb.ensure_session("w");
    set_gopt(&sb, "@park-bin", &park_bin().to_string_lossy());
    load_plugin(&sb);
    assert!(prefix_binding(&sb, "P").is_some_and(|b| b.contains("pick")));
    set_gopt(&sb, "@park-key", "C-p");
    load_plugin(&sb);
    assert!(prefix_binding(&sb, "C-p").is_some_and(|b| b.contains("pick")));
    assert!(
        !prefix_binding(&sb, "P").is_some_and(|b| b.contains("pick")),
        "old key released"
    );
}
