//! Issue 33: the artifacts of `scripts/release` as a user gets them. The tarball is unpacked into
//! an empty folder and its binary, static, runs against a real tmux server and installs the zellij
//! plugin it carries, which real zellij loads; the `.deb` is inspected with `dpkg-deb -I/-c`,
//! extracted into a scratch root (never installed on the machine), and its tmux plugin, run from
//! there, finds the park beside it and opens the picker on `prefix P`.
//!
//! `scripts/test` builds the artifacts once, before the e2e phase, and names them in
//! `PARK_RELEASE_ARTIFACTS` (a file, one path per line, as `scripts/release` prints them);
//! without it the first test here runs `scripts/release --out target/dist-test` itself.

use crate::common::*;
use crate::rebuild::Fake;
use park_e2e::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// (tarball, .deb), built once per test process.
fn artifacts() -> &'static (PathBuf, PathBuf) {
    static A: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    A.get_or_init(|| {
        let listed = match std::env::var_os("PARK_RELEASE_ARTIFACTS") {
            Some(f) => std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("PARK_RELEASE_ARTIFACTS={f:?}: {e}")),
            None => {
                let o = Command::new("bash")
                    .arg(repo_root().join("scripts/release"))
                    .args(["--out", "target/dist-test"])
                    .current_dir(repo_root())
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "scripts/release: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                String::from_utf8(o.stdout).unwrap()
            }
        };
        let paths: Vec<PathBuf> = listed.lines().map(PathBuf::from).collect();
        let pick = |ext: &str| {
            paths
                .iter()
                .find(|p| p.to_string_lossy().ends_with(ext))
                .unwrap_or_else(|| panic!("no {ext} in {listed:?}"))
                .clone()
        };
        (pick(".tar.gz"), pick(".deb"))
    })
}

fn run(cmd: &mut Command) -> Output {
    let o = cmd.stdin(Stdio::null()).output().unwrap();
    eprintln!(
        "$ {cmd:?} -> {}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file under `root`, relative, sorted.
fn files_under(root: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// `bin` (not the park under test) with the sandbox's environment and tmux server.
fn park_with(bin: &Path, sb: &Sandbox, args: &[&str]) -> Output {
    run(Command::new(bin)
        .args(args)
        .env_clear()
        .envs(sb.base_env())
        .env("PARK_TMUX_SOCKET", sb.label()))
}

/// `file` and `ldd` both say `bin` links nothing at run time.
fn assert_static(bin: &Path) {
    let f = stdout(&run(Command::new("file").arg("-b").arg(bin)));
    assert!(
        f.contains("statically linked") || f.contains("static-pie linked"),
        "file: {f}"
    );
    let l = run(Command::new("ldd").arg(bin));
    let said = format!("{}{}", stdout(&l), String::from_utf8_lossy(&l.stderr));
    assert!(
        said.contains("not a dynamic executable") || said.contains("statically linked"),
        "ldd: {said}"
    );
}

#[test]
fn the_tarball_holds_a_static_park_that_runs_against_real_tmux_and_carries_the_zellij_plugin() {
    let (tarball, _) = artifacts();
    let dir = tempfile::tempdir().unwrap();
    let o = run(Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(dir.path()));
    assert!(o.status.success());
    let top: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(top.len(), 1, "one folder at the top");
    let root = top[0].path();
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("park-") && name.ends_with("-x86_64-unknown-linux-musl"),
        "{name}"
    );
    let files = files_under(&root);
    for want in [
        "park",
        "tmux-plugin/park.tmux",
        "tmux-plugin/scripts/helpers.sh",
        "tmux-plugin/scripts/park-pane.sh",
        "man/park.1",
        "completions/park.bash",
        "completions/_park",
        "completions/park.fish",
        "README.md",
        "LICENSE",
    ] {
        assert!(files.iter().any(|f| f == want), "{want} missing: {files:?}");
    }
    let park = root.join("park");
    assert_static(&park);
    let man = std::fs::read_to_string(root.join("man/park.1")).unwrap();
    assert!(man.contains(".TH park"), "a man page");
    assert!(std::fs::read_to_string(root.join("completions/_park"))
        .unwrap()
        .contains("#compdef park"));

    let v = stdout(&run(Command::new(&park).arg("--version")));
    assert!(
        v.starts_with("park ") && v.contains("zellij plugin: embedded"),
        "{v}"
    );

    // Against a real tmux server: a fake agent in a pane is listed with its session id.
    let f = Fake::new();
    let sb = &f.sb;
    let proj = sb.project_dir("rel");
    let pane = sb.new_shell_window("w", "rel", &proj, &[] as &[(&str, &str)]);
    let sid = f.agent(&pane);
    let st = park_with(&park, sb, &["status"]);
    assert_eq!(code(&st), 0);
    let o = park_with(&park, sb, &["ls", "--json"]);
    assert_eq!(code(&o), 0);
    let ls: park_protocol::LsOutput = serde_json::from_slice(&o.stdout).unwrap();
    let row = ls
        .rows
        .iter()
        .find(|r| r.pane == pane)
        .unwrap_or_else(|| panic!("{pane} not listed: {:?}", ls.rows));
    assert_eq!(row.session_id.as_deref(), Some(sid.as_str()));

    // `park zellij install` into a scratch HOME writes the plugin it carries, which real zellij
    // loads, run against this park.
    let home = tempfile::tempdir().unwrap();
    let o = run(Command::new(&park)
        .args(["zellij", "install"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap()));
    assert_eq!(code(&o), 0);
    let wasm = home.path().join(".local/share/park/park.wasm");
    assert!(
        std::fs::read(&wasm).unwrap()
            == std::fs::read(repo_root().join("companion/assets/park.wasm")).unwrap(),
        "the committed plugin"
    );
    crate::e2e_zellij::installed_plugin_loads("rt", &wasm, &park);
}

#[test]
fn the_deb_holds_everything_and_its_tmux_plugin_finds_its_park_and_opens_the_picker() {
    let (_, deb) = artifacts();
    let info = stdout(&run(Command::new("dpkg-deb").arg("-I").arg(deb)));
    for want in [
        "Package: park",
        "Architecture: amd64",
        &format!("Version: {}", env!("CARGO_PKG_VERSION")),
        "Recommends: tmux",
    ] {
        assert!(info.contains(want), "{want} missing:\n{info}");
    }
    let listing = stdout(&run(Command::new("dpkg-deb").arg("-c").arg(deb)));
    for want in [
        "./usr/bin/park",
        "./usr/share/man/man1/park.1.gz",
        "./usr/share/bash-completion/completions/park",
        "./usr/share/zsh/vendor-completions/_park",
        "./usr/share/fish/vendor_completions.d/park.fish",
        "./usr/share/park/tmux-plugin/park.tmux",
        "./usr/share/park/tmux-plugin/scripts/helpers.sh",
        "./usr/share/park/tmux-plugin/scripts/build-park.sh",
        "./usr/share/park/park.wasm",
        "./usr/share/doc/park/copyright",
    ] {
        assert!(
            listing.lines().any(|l| l.ends_with(want)),
            "{want} missing:\n{listing}"
        );
    }
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let o = run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(root));
    assert!(o.status.success());
    let park = root.join("usr/bin/park");
    assert_static(&park);
    assert!(
        std::fs::read(root.join("usr/share/park/park.wasm")).unwrap()
            == std::fs::read(repo_root().join("companion/assets/park.wasm")).unwrap(),
        "the committed plugin"
    );

    // The tmux plugin from the package, loaded without TPM and without @park-bin: it takes the
    // park of its own package, before the one on the server's PATH (the park under test).
    let f = Fake::new();
    let sb = &f.sb;
    let proj = sb.project_dir("deb");
    let pane = sb.new_shell_window("w", "deb", &proj, &[] as &[(&str, &str)]);
    f.agent(&pane);
    let outer = Outer::attach(sb, "w");
    let plugin = root.join("usr/share/park/tmux-plugin/park.tmux");
    sb.tmux(&["run-shell", &plugin.to_string_lossy()])
        .unwrap_or_else(|e| panic!("loading the plugin: {e}"));
    let keys = sb.tmux(&["list-keys", "-T", "prefix", "P"]).unwrap();
    assert!(
        keys.contains(&park.to_string_lossy().into_owned()) && keys.contains(" pick "),
        "prefix P runs the package's park: {keys}"
    );
    sb.tmux(&["select-window", "-t", &pane]).unwrap();
    outer.keys(&["C-b", "P"]);
    let screen = outer
        .wait(&format!("▶ {pane}"), SECS(15))
        .unwrap_or_else(|e| panic!("prefix P did not open the picker on {pane}: {e}"));
    assert!(screen.contains("─ park ─"), "the picker popup:\n{screen}");
    outer.keys(&["q"]);
}
