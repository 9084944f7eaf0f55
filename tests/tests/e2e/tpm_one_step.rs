//! One-step install from TPM (issue 23): a user who only adds `set -g @plugin '…/park'` and
//! presses `prefix I` gets a key that builds park's binary, after asking, in a popup.
//!
//! The full path runs REAL TPM (Debian's `tmux-plugin-manager`, installed by `scripts/setup`;
//! `$PARK_TPM` overrides its path) in a private tmux server whose HOME is the sandbox's: the
//! plugin source is a git clone of this work tree (uncommitted changes committed in the clone, so
//! what is tested is what is on disk), TPM clones it from `file://…` into `~/.tmux/plugins/park`,
//! and the keys go through a real client (a nested client in an outer tmux server, see
//! `common::Outer`). The build is the plugin's own `cargo install --locked --path …/companion
//! --root ~/.local`, with `@park-build-args '--debug'` and `CARGO_TARGET_DIR=target/install-check`
//! (the dir `install::cargo_install_path_companion_installs_a_working_park` uses), so the
//! dependencies compile once per checkout. The no-cargo and failed-build paths load the repo's
//! `park.tmux` directly and use a PATH without cargo, or a `cargo` that fails.

use crate::common::*;
use crate::tmux_plugin::{gopt, prefix_binding, set_gopt, snapshot};
use park_e2e::*;
use park_protocol::Status;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// TPM's entry point: `$PARK_TPM`, else Debian's package.
fn tpm() -> PathBuf {
    let p = std::env::var_os("PARK_TPM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/tmux-plugin-manager/tpm"));
    assert!(
        p.is_file(),
        "TPM not found at {} (run scripts/setup: it installs tmux-plugin-manager)",
        p.display()
    );
    p
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "park-test")
        .env("GIT_AUTHOR_EMAIL", "park-test@example.invalid")
        .env("GIT_COMMITTER_NAME", "park-test")
        .env("GIT_COMMITTER_EMAIL", "park-test@example.invalid")
        .stdin(Stdio::null())
        .output()
        .expect("run git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `<parent>/park`: a git clone of this repo with the work tree's uncommitted changes (modified,
/// deleted and new files) committed on top, so TPM clones exactly what is on disk.
fn plugin_source(parent: &Path) -> PathBuf {
    let repo = repo_root();
    let dest = parent.join("park");
    git(
        parent,
        &[
            "clone",
            "-q",
            &repo.to_string_lossy(),
            &dest.to_string_lossy(),
        ],
    );
    let changed = git(
        &repo,
        &["ls-files", "-z", "-m", "-o", "-d", "--exclude-standard"],
    );
    for f in changed.split('\0').filter(|f| !f.is_empty()) {
        let (src, dst) = (repo.join(f), dest.join(f));
        if src.is_file() {
            std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
            harness::util::copy_exe(&src, &dst);
        } else {
            let _ = std::fs::remove_file(&dst);
        }
    }
    git(&dest, &["add", "-A"]);
    git(&dest, &["commit", "-q", "--allow-empty", "-m", "work tree"]);
    dest
}

/// The sandbox's PATH without any dir that holds a `park`, so only the plugin's build can
/// provide one.
fn path_without_park(sb: &Sandbox) -> String {
    let (_, path) = sb
        .base_env()
        .into_iter()
        .find(|(k, _)| k == "PATH")
        .unwrap();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("park").exists())
        .collect();
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The test runner's rustup and cargo homes: the sandbox's HOME has neither, and the rustup
/// proxy `cargo` needs its toolchains (the registry cache comes along, so no download).
fn toolchain_env() -> Vec<(String, String)> {
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let mut env = vec![];
    for (var, dflt) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let p = std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(dflt));
        if p.is_dir() {
            env.push((var.to_string(), p.to_string_lossy().into_owned()));
        }
    }
    env
}

/// Starts the sandbox's tmux server on `conf` (not /dev/null: TPM reads ~/.tmux.conf) with the
/// sandbox environment, `PATH` replaced and `extra` added; its first session is `w`.
fn start_server(sb: &Sandbox, conf: &Path, path: &str, extra: &[(String, String)]) {
    let o = Command::new("tmux")
        .env_clear()
        .envs(sb.base_env())
        .env("PATH", path)
        .envs(extra.iter().map(|(k, v)| (k, v)))
        .args(["-L", sb.label(), "-f", &conf.to_string_lossy()])
        .args(["new-session", "-d", "-s", "w", "-x", "160", "-y", "40"])
        .current_dir(&sb.work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tmux server: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The repo's `park.tmux` (the TPM entry point), run by the sandbox server.
fn load_repo_plugin(sb: &Sandbox) {
    let p = repo_root().join("park.tmux");
    sb.tmux(&["run-shell", &p.to_string_lossy()])
        .unwrap_or_else(|e| panic!("loading the plugin: {e}"));
}

/// Waits until the popup is gone from the nested client's screen.
fn wait_popup_closed(outer: &Outer, title: &str) {
    poll_fast(SECS(10), || (!outer.screen().contains(title)).then_some(()))
        .unwrap_or_else(|| panic!("popup {title:?} still open:\n{}", outer.screen()));
}

/// prefix I (real TPM clones the plugin) → prefix P → y → the plugin's cargo build → the plugin
/// loads itself → prefix P opens park's picker, showing the fake agent's pane.
#[test]
fn tpm_install_then_the_park_key_builds_park_and_opens_the_picker() {
    let t_all = Instant::now();
    let sb = Sandbox::new();
    let tpm = tpm();
    let src = plugin_source(&sb.root);
    // A fake `claude` for the picker to list (no `park` on PATH: install_shims is not used).
    std::os::unix::fs::symlink(FAKE, sb.bin.join("claude")).unwrap();
    let conf = sb.home.join(".tmux.conf");
    std::fs::write(
        &conf,
        format!(
            "set -g status-right '#{{park_status}}|R'\n\
             set -g @plugin 'file://{src}'\n\
             set -g @park-build-args '--debug'\n\
             run '{tpm}'\n",
            src = src.display(),
            tpm = tpm.display()
        ),
    )
    .unwrap();
    let mut extra = toolchain_env();
    let target = repo_root().join("target/install-check");
    extra.push((
        "CARGO_TARGET_DIR".into(),
        target.to_string_lossy().into_owned(),
    ));
    start_server(&sb, &conf, &path_without_park(&sb), &extra);
    let outer = Outer::attach(&sb, "w");
    assert!(
        prefix_binding(&sb, "P").is_none(),
        "nothing bound before TPM installs the plugin"
    );

    // prefix I: TPM clones the plugin into ~/.tmux/plugins/park, reloads ~/.tmux.conf (which runs
    // the plugin) and says so.
    outer.keys(&["C-b", "I"]);
    // The plugin offers the build: the message names the key. tmux draws TPM's last lines
    // ("Done, press ENTER") once the message is gone (8 s, or a key press).
    outer
        .wait(
            "park: binary not installed: press C-b P to build it",
            SECS(60),
        )
        .unwrap_or_else(|e| panic!("no build offer after prefix I: {e}"));
    outer
        .wait("Done, press ENTER to continue.", SECS(20))
        .unwrap_or_else(|e| panic!("TPM did not finish installing: {e}"));
    let clone = sb.home.join(".tmux/plugins/park");
    assert!(
        clone.join("park.tmux").is_file() && clone.join("companion/Cargo.toml").is_file(),
        "TPM cloned the plugin with its source: {}",
        clone.display()
    );
    // q leaves TPM's output (view mode; Enter does only with vi mode-keys).
    outer.keys(&["q"]);
    poll(SECS(5), || {
        (!outer.screen().contains("Done, press ENTER")).then_some(())
    })
    .unwrap_or_else(|| panic!("TPM's output did not close:\n{}", outer.screen()));
    // The key is bound to the offer, nothing was built, no option was rewritten (the placeholder
    // is still there).
    let offer = prefix_binding(&sb, "P").expect("prefix P bound to the build offer");
    assert!(
        offer.contains("build-park.sh") && offer.contains(".tmux/plugins/park/"),
        "{offer}"
    );
    let local_park = sb.home.join(".local/bin/park");
    let log = sb.home.join(".local/state/park/build.log");
    assert!(!local_park.exists() && !log.exists(), "built before asked");
    assert_eq!(gopt(&sb, "status-right"), "#{park_status}|R");

    // prefix P: the popup asks; y builds, cargo's output in the popup.
    outer.keys(&["C-b", "P"]);
    outer
        .wait("Build it now with cargo? [y/N]", SECS(10))
        .unwrap();
    outer.keys(&["y", "Enter"]);
    outer
        .wait("cargo install --locked --path", SECS(10))
        .unwrap();
    let t_build = Instant::now();
    let mut last = String::new();
    let done = poll(SECS(1500), || {
        last = outer.screen();
        (last.contains("Installed park") || last.contains("FAILED")).then(|| last.clone())
    })
    .unwrap_or_else(|| panic!("the build did not finish:\n{last}"));
    eprintln!(
        "build in the popup took {:?} (cargo install --debug, CARGO_TARGET_DIR={}):\n{done}",
        t_build.elapsed(),
        target.display()
    );
    assert!(
        done.contains("Installed park") && done.contains("opens park's picker"),
        "build failed:\n{done}\nlog:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("Installed package"),
        "cargo's output is logged"
    );
    let v = Command::new(&local_park).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("park "));

    // Any key closes the popup; the status line says it worked.
    outer.keys(&["q"]);
    wait_popup_closed(&outer, "─ park: install ─");
    outer.wait("park: installed park ", SECS(5)).unwrap();

    // The plugin loaded itself: prefix P is the picker (run from ~/.local/bin, which is not on the
    // server's PATH), and the status placeholder was replaced.
    let pick = prefix_binding(&sb, "P").expect("prefix P bound");
    assert!(
        pick.contains("pick --pane #{pane_id}")
            && pick.contains(&*local_park.to_string_lossy())
            && !pick.contains("build-park.sh"),
        "{pick}"
    );
    assert_eq!(
        gopt(&sb, "status-right"),
        "#{?@park_status,#{@park_status} ,}|R"
    );

    // prefix P opens park's picker on the current pane: a fake agent in its own window.
    let dir = sb.project_dir("p1");
    let pane = sb.new_shell_window("w", "p1", &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    wait_row(&sb, &pane, SECS(10), |r| r.status == Status::Idle);
    sb.tmux(&["select-window", "-t", &pane]).unwrap();
    let mut opened = Err(String::new());
    for _ in 0..3 {
        outer.keys(&["C-b", "P"]);
        opened = outer.wait(&format!("▶ {pane}"), SECS(10));
        if opened.is_ok() {
            break;
        }
    }
    let screen = opened.unwrap();
    assert!(screen.contains("─ park ─"), "the picker popup:\n{screen}");
    eprintln!("picker after the TPM install:\n{screen}");
    outer.keys(&["q"]);
    wait_popup_closed(&outer, "─ park ─");
    eprintln!("whole test: {:?}", t_all.elapsed());
}

/// No cargo on PATH nor in ~/.cargo/bin: the popup names rustup, the release tarball, and the key
/// to press again, and nothing is built.
#[test]
fn without_cargo_the_popup_says_to_install_rustup_and_builds_nothing() {
    let sb = Sandbox::new();
    let outer = Outer::attach(&sb, "w");
    sb.tmux(&["set-environment", "-g", "PATH", "/usr/bin:/bin"])
        .unwrap();
    assert!(
        !Path::new("/usr/bin/cargo").exists() && !Path::new("/bin/cargo").exists(),
        "this test needs a system without /usr/bin/cargo"
    );
    load_repo_plugin(&sb);
    let offer = prefix_binding(&sb, "P").expect("prefix P offers the build");
    assert!(offer.contains("build-park.sh"), "{offer}");

    outer.keys(&["C-b", "P"]);
    let screen = outer
        .wait("sh.rustup.rs", SECS(10))
        .unwrap_or_else(|e| panic!("no rustup hint: {e}"));
    eprintln!("no-cargo popup:\n{screen}");
    for want in [
        "cargo (Rust's build tool) was not found",
        "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh",
        "then press C-b P again",
        // Without Rust, the static binary of a release tarball (issue 33).
        "park-<version>-x86_64-unknown-linux-musl.tar.gz",
    ] {
        assert!(screen.contains(want), "{want:?} missing:\n{screen}");
    }
    assert!(!screen.contains("[y/N]"), "no build offered:\n{screen}");
    outer.keys(&["Enter"]);
    wait_popup_closed(&outer, "─ park: install ─");
    assert!(!sb.home.join(".local/bin/park").exists());
    assert!(!sb.home.join(".local/state/park/build.log").exists());
    assert!(prefix_binding(&sb, "P").is_some_and(|b| b.contains("build-park.sh")));
}

/// A `cargo` that fails: declining builds nothing; `y` runs it, the popup and the status line
/// say the build failed and where the log is, no option or key changed, and the key offers a
/// retry.
#[test]
fn a_declined_or_failed_build_changes_nothing_and_the_key_retries() {
    let sb = Sandbox::new();
    let outer = Outer::attach(&sb, "w");
    let calls = sb.logs.join("cargo-calls");
    let fake_dir = sb.root.join("fake-cargo");
    std::fs::create_dir_all(&fake_dir).unwrap();
    let cargo = fake_dir.join("cargo");
    harness::util::write_exe(
        &cargo,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\n\
             echo 'error: could not compile `park` (fake cargo)'\nexit 101\n",
            sh_quote(&calls.to_string_lossy())
        ),
    );
    sb.tmux(&[
        "set-environment",
        "-g",
        "PATH",
        &format!("{}:/usr/bin:/bin", fake_dir.display()),
    ])
    .unwrap();
    // The user's own settings, which must survive.
    set_gopt(&sb, "status-right", "#{park_status}|mine");
    set_gopt(&sb, "@park-popup-height", "80%");
    sb.tmux(&[
        "bind-key",
        "-T",
        "prefix",
        "M-p",
        "display-message",
        "user key",
    ])
    .unwrap();
    load_repo_plugin(&sb);
    let before = snapshot(&sb);
    assert!(prefix_binding(&sb, "P").is_some_and(|b| b.contains("build-park.sh")));

    // Declined: the popup closes, cargo never ran.
    outer.keys(&["C-b", "P"]);
    outer.wait("[y/N]", SECS(10)).unwrap();
    outer.keys(&["n", "Enter"]);
    wait_popup_closed(&outer, "─ park: install ─");
    assert!(!calls.exists(), "cargo ran without a y");

    // y: the fake cargo fails.
    outer.keys(&["C-b", "P"]);
    outer.wait("[y/N]", SECS(10)).unwrap();
    outer.keys(&["y", "Enter"]);
    let screen = outer.wait("The build FAILED", SECS(20)).unwrap();
    eprintln!("failed-build popup:\n{screen}");
    let log = sb.home.join(".local/state/park/build.log");
    assert!(
        screen.contains("could not compile `park` (fake cargo)"),
        "{screen}"
    );
    assert!(screen.contains("cargo exited 101"), "{screen}");
    assert!(
        screen.contains(&*log.to_string_lossy()),
        "the log's path:\n{screen}"
    );
    let argv = std::fs::read_to_string(&calls).unwrap();
    let want = format!(
        "install --locked --path {}/companion --root {}/.local\n",
        repo_root().canonicalize().unwrap().display(),
        sb.home.display()
    );
    assert_eq!(argv, want, "the documented default command");
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("(fake cargo)"));
    outer.keys(&["q"]);
    wait_popup_closed(&outer, "─ park: install ─");
    outer.wait("park: build failed (log: ", SECS(5)).unwrap();
    assert!(!sb.home.join(".local/bin/park").exists());
    assert_eq!(snapshot(&sb), before, "no option or key changed");

    // The key offers the build again.
    outer.keys(&["C-b", "P"]);
    outer.wait("[y/N]", SECS(10)).unwrap();
    outer.keys(&["Enter"]);
    wait_popup_closed(&outer, "─ park: install ─");
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), want);
}
