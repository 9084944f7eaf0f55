//! `scripts/install` in a throwaway HOME: puts park, the tmux plugin, the zellij wasm, completions
//! and the man page in place; a second run changes nothing; `--uninstall` removes exactly what it
//! wrote and nothing else. `park zellij install|kdl`: the wasm written from --wasm, built in (the
//! committed one, in every build) or beside the binary, checked, atomic and idempotent.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn files_under(root: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out
}

fn install(home: &Path, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install");
    let o = Command::new("bash")
        .arg(script)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "install {args:?}: {text}");
    text
}

#[test]
fn install_is_idempotent_and_uninstall_removes_exactly_what_it_wrote() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // Something of the user's that must survive.
    std::fs::create_dir_all(h.join(".local/share/park")).unwrap();
    std::fs::write(h.join(".local/share/mine.txt"), "keep").unwrap();
    let wasm = h.join("fake.wasm");
    std::fs::write(&wasm, b"\0asm\x01\0\0\0").unwrap();
    let bin = park_bin();
    let args = [
        "--bin",
        bin.to_str().unwrap(),
        "--wasm",
        wasm.to_str().unwrap(),
    ];
    let said = install(h, &args);
    assert!(
        said.contains("run-shell") && said.contains("park.wasm"),
        "{said}"
    );
    let after = files_under(h);
    for f in [
        ".local/bin/park",
        ".local/share/park/park.wasm",
        ".local/share/park/tmux-plugin/park.tmux",
        ".local/share/park/tmux-plugin/scripts/helpers.sh",
        ".local/share/bash-completion/completions/park",
        ".local/share/zsh/site-functions/_park",
        ".config/fish/completions/park.fish",
        ".local/share/man/man1/park.1",
        ".local/share/park/install-manifest",
    ] {
        assert!(after.contains(Path::new(f)), "{f} missing: {after:?}");
    }
    let v = Command::new(h.join(".local/bin/park"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("park "));
    // Idempotent: the same files, no temp left behind.
    install(h, &args);
    assert_eq!(files_under(h), after);
    assert!(!after
        .iter()
        .any(|p| p.to_string_lossy().contains("park-tmp")));
    // Uninstall: only the user's file and the inputs remain.
    install(h, &["--uninstall"]);
    let left = files_under(h);
    let want: BTreeSet<PathBuf> = [
        PathBuf::from(".local/share/mine.txt"),
        PathBuf::from("fake.wasm"),
    ]
    .into_iter()
    .collect();
    assert_eq!(left, want);
    // Uninstalling again is a no-op.
    assert!(install(h, &["--uninstall"]).contains("not installed"));
}

/// Runs `park zellij ARGS` (the binary `park`) with a throwaway HOME and XDG_DATA_HOME.
fn zellij(park: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(park)
        .arg("zellij")
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("PARK_HOME", home.join("park-home"))
        .env("PATH", std::env::var("PATH").unwrap())
        .output()
        .unwrap()
}

fn said(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `park zellij install --wasm F` writes exactly F's bytes to $XDG_DATA_HOME/park/park.wasm,
/// prints KDL that names that path, a second run is a no-op, a non-wasm file is refused (exit 1,
/// says why) and leaves the install as it was; `park zellij kdl` prints the same KDL.
#[test]
fn park_zellij_install_writes_the_wasm_idempotently_and_refuses_non_wasm() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let park = park_bin();
    let wasm = h.join("plugin.wasm");
    let bytes: Vec<u8> = b"\0asm\x01\0\0\0"
        .iter()
        .copied()
        .chain((0..5000u32).map(|i| (i % 251) as u8))
        .collect();
    std::fs::write(&wasm, &bytes).unwrap();
    let dest = h.join("data/park/park.wasm");

    let o = zellij(&park, h, &["install", "--wasm", wasm.to_str().unwrap()]);
    assert!(o.status.success(), "{}", said(&o));
    assert_eq!(
        std::fs::read(&dest).unwrap(),
        bytes,
        "identical to the source"
    );
    let kdl = String::from_utf8_lossy(&o.stdout).into_owned();
    let loc = format!("location=\"file:{}\"", dest.display());
    assert!(kdl.contains(&loc), "{kdl}");
    assert!(kdl.contains("LaunchOrFocusPlugin") && kdl.contains("pipe_park_format"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("installed"));
    let mtime = std::fs::metadata(&dest).unwrap().modified().unwrap();

    // Idempotent: same bytes, not rewritten, nothing else appears.
    let o = zellij(&park, h, &["install", "--wasm", wasm.to_str().unwrap()]);
    assert!(o.status.success(), "{}", said(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("up to date"),
        "{}",
        said(&o)
    );
    assert_eq!(std::fs::metadata(&dest).unwrap().modified().unwrap(), mtime);
    let files: Vec<_> = std::fs::read_dir(h.join("data/park"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["park.wasm"]);

    // Not wasm: refused with the reason, exit 1, the install intact.
    let bad = h.join("notes.txt");
    std::fs::write(&bad, "hello\n").unwrap();
    let o = zellij(&park, h, &["install", "--wasm", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("notes.txt") && err.contains("not a wasm module"),
        "{err}"
    );
    assert_eq!(std::fs::read(&dest).unwrap(), bytes, "left intact");

    // `park zellij kdl` prints it again.
    let o = zellij(&park, h, &["kdl"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), kdl);
}

/// The park under test carries the committed plugin (issue 33: every build does): without
/// --wasm it installs that one even with another beside it, and `--wasm` comes before both.
#[test]
fn park_zellij_install_takes_the_built_in_plugin_before_one_beside_it_and_the_flag_first() {
    let park = park_bin();
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::create_dir_all(r.join("pfx/bin")).unwrap();
    let exe = r.join("pfx/bin/park");
    park_e2e::harness::util::copy_exe(&park, &exe);
    let h = r.join("home");
    std::fs::create_dir_all(&h).unwrap();
    let installed = h.join("data/park/park.wasm");
    let committed = std::fs::read(repo_root().join("companion/assets/park.wasm")).unwrap();
    std::fs::create_dir_all(r.join("pfx/share/park")).unwrap();
    std::fs::write(
        r.join("pfx/share/park/park.wasm"),
        b"\0asm\x01\0\0\0shipped",
    )
    .unwrap();
    let o = zellij(&exe, &h, &["install"]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stderr).contains("built into park"),
        "the built-in plugin comes before one beside park: {}",
        said(&o)
    );
    assert!(
        std::fs::read(&installed).unwrap() == committed,
        "the committed companion/assets/park.wasm"
    );
    let flag = r.join("flag.wasm");
    let given = b"\0asm\x01\0\0\0given";
    std::fs::write(&flag, given).unwrap();
    let o = zellij(&exe, &h, &["install", "--wasm", flag.to_str().unwrap()]);
    assert!(o.status.success(), "{}", said(&o));
    assert_eq!(std::fs::read(&installed).unwrap(), given, "--wasm first");
}

/// `cargo install --path companion --debug --locked --root <root>` from the repo, with
/// `PARK_EMBED_WASM` set to `embed` (unset: the default build), in its own target dir so it does
/// not wait on the lock of the `cargo test` running this. The installed binary.
fn cargo_install(root: &Path, embed: Option<&str>) -> PathBuf {
    let mut c = Command::new("cargo");
    c.args([
        "install",
        "--path",
        "companion",
        "--debug",
        "--locked",
        "--root",
    ])
    .arg(root)
    .env("CARGO_TARGET_DIR", repo_root().join("target/install-check"))
    .env_remove("PARK_EMBED_WASM")
    .current_dir(repo_root());
    if let Some(e) = embed {
        c.env("PARK_EMBED_WASM", e);
    }
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "cargo install ({embed:?}) failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    root.join("bin/park")
}

/// Issue 33: `cargo install --path companion` as any user or distribution recipe runs it (no
/// wasm target, no PARK_EMBED_WASM) gives a park that carries the committed zellij plugin: `park
/// zellij install` in a HOME with nothing else writes exactly that wasm, and real zellij loads it
/// (the strip draws, the picker opens) run against the installed park. Built with
/// `PARK_EMBED_WASM=none`, the wasm beside the binary is taken; with none there, the refusal says
/// how to get one and writes nothing.
#[test]
fn cargo_install_path_companion_carries_the_zellij_plugin_real_zellij_loads() {
    let root = tempfile::tempdir().unwrap();
    let park = cargo_install(root.path(), None);
    let v = Command::new(&park).arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&v.stdout).into_owned();
    assert!(
        v.starts_with("park ") && v.contains("zellij plugin: embedded"),
        "{v}"
    );
    let h = Command::new(&park).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&h.stdout).contains("unpark"));
    let home = tempfile::tempdir().unwrap();
    let o = zellij(&park, home.path(), &["install"]);
    assert!(o.status.success(), "{}", said(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("built into park"));
    let wasm = home.path().join("data/park/park.wasm");
    assert!(
        std::fs::read(&wasm).unwrap()
            == std::fs::read(repo_root().join("companion/assets/park.wasm")).unwrap(),
        "the committed plugin"
    );
    crate::e2e_zellij::installed_plugin_loads("ci", &wasm, &park);

    // Without a plugin built in: beside the binary, else a refusal that says how.
    let bare = tempfile::tempdir().unwrap();
    let r = bare.path();
    let built = cargo_install(&r.join("pfx"), Some("none"));
    let v = Command::new(&built).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("zellij plugin: none"),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
    let h = r.join("home");
    std::fs::create_dir_all(&h).unwrap();
    let installed = h.join("data/park/park.wasm");
    let o = zellij(&built, &h, &["install"]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no zellij plugin")
            && err.contains("--wasm plugin-zellij/target/park.wasm")
            && err.contains("scripts/build-plugin")
            && err.contains("scripts/install"),
        "{err}"
    );
    // Issue 35 item 7: the paths it names are the ones it looked in, said to be missing, without
    // a `bin/..` that reads like a real file.
    let looked = format!(
        "(looked in {} and {}: not found)",
        r.join("pfx/share/park/park.wasm").display(),
        built.with_file_name("park.wasm").display()
    );
    assert!(err.contains(&looked) && !err.contains("/../"), "{err}");
    assert!(!installed.exists());
    let shipped = b"\0asm\x01\0\0\0shipped";
    std::fs::create_dir_all(r.join("pfx/share/park")).unwrap();
    std::fs::write(r.join("pfx/share/park/park.wasm"), shipped).unwrap();
    let o = zellij(&built, &h, &["install"]);
    assert!(o.status.success(), "{}", said(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("beside park"));
    assert_eq!(std::fs::read(&installed).unwrap(), shipped);
}

/// `zellij setup --check` (zellij 0.45.1, `park_e2e::zellij_bin`) in `home`, whose
/// `.config/zellij` holds `config` as config.kdl and `layout` as layouts/park.kdl: it parses both
/// (the layout because config.kdl names it as `default_layout`). Its output, and whether it passed.
fn zellij_check(home: &Path, config: &str, layout: &str) -> (bool, String) {
    let dir = home.join(".config/zellij");
    std::fs::create_dir_all(dir.join("layouts")).unwrap();
    std::fs::write(dir.join("config.kdl"), config).unwrap();
    std::fs::write(dir.join("layouts/park.kdl"), layout).unwrap();
    let o = Command::new(park_e2e::zellij_bin())
        .args(["setup", "--check"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap())
        .current_dir(home)
        .output()
        .unwrap();
    (o.status.success(), said(&o))
}

/// Issue 35 item 7: `park zellij kdl` prints two parts a new user saves as they are, and real
/// zellij 0.45.1 takes them: the config part as ~/.config/zellij/config.kdl (its plugin alias and
/// keybindings; with `default_layout "park"` added, as its comment says) and the layout part, a
/// whole layout, as ~/.config/zellij/layouts/park.kdl. `zellij setup --check` parses both; the
/// same check fails on that layout with an unknown node in it (so it does read the layout).
#[test]
fn park_zellij_kdl_prints_a_config_and_a_layout_real_zellij_takes() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let o = zellij(&park_bin(), h, &["kdl"]);
    assert!(o.status.success(), "{}", said(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let part = |head: &str| -> String {
        let start = out
            .lines()
            .position(|l| l.starts_with("// ==== park") && l.contains(head))
            .unwrap_or_else(|| panic!("no part {head}: {out}"));
        let lines: Vec<&str> = out.lines().skip(start + 1).collect();
        let end = lines
            .iter()
            .position(|l| *l == "// ==== end ====")
            .unwrap_or_else(|| panic!("part {head} has no end: {out}"));
        lines[..end].join("\n") + "\n"
    };
    let config = part("add this to ~/.config/zellij/config.kdl");
    let layout = part("save this as ~/.config/zellij/layouts/park.kdl");
    assert!(config.contains(r#"default_layout "park""#), "{config}");
    assert!(
        layout.contains("default_tab_template")
            && layout.contains(r#"plugin location="park""#)
            && layout.contains("children"),
        "{layout}"
    );
    let config = format!("{config}default_layout \"park\"\n");
    let (ok, text) = zellij_check(h, &config, &layout);
    assert!(
        ok,
        "zellij setup --check refused it:\n{text}\n{config}\n{layout}"
    );
    assert!(text.contains("[CONFIG FILE]: Well defined."), "{text}");

    let broken = layout.replacen("children", "children\n        not_a_layout_node", 1);
    let (ok, text) = zellij_check(h, &config, &broken);
    assert!(!ok && text.contains("not_a_layout_node"), "{text}");
}

/// The quoted keys of every `bind "…" "…" { … }` line of `kdl` that is not a comment.
fn bound_keys(kdl: &str) -> Vec<String> {
    kdl.lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("bind "))
        .flat_map(|l| {
            let keys = &l[..l.find('{').unwrap_or(l.len())];
            keys.split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A key as zellij reads it: `Alt Shift p` is the key `Alt P` (Alt+Shift+p sends it);
/// modifiers in one order.
fn key_id(k: &str) -> String {
    let mut words: Vec<&str> = k.split_whitespace().collect();
    let Some(last) = words.pop() else {
        return String::new();
    };
    let mut last = last.to_string();
    if let Some(i) = words.iter().position(|w| *w == "Shift") {
        if last.len() == 1 && last.chars().all(|c| c.is_ascii_lowercase()) {
            words.remove(i);
            last = last.to_ascii_uppercase();
        }
    }
    words.sort_unstable();
    words.push(&last);
    words.join(" ")
}

/// Issue 35 item 7c: the keys `park zellij kdl` binds are free in real zellij 0.45.1's default
/// keybindings (`zellij setup --dump-config`, every mode), read from zellij itself rather than a
/// list written down once. The check does see zellij's own keys: `Alt p` and `Alt P` (`Alt Shift
/// p`), the keys park first bound, are taken there.
#[test]
fn the_printed_kdl_binds_keys_real_zellijs_default_config_leaves_free() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let o = zellij(&park_bin(), h, &["kdl"]);
    assert!(o.status.success(), "{}", said(&o));
    let ours = bound_keys(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(ours.len(), 2, "the picker key and park-focused: {ours:?}");
    let d = Command::new(park_e2e::zellij_bin())
        .args(["setup", "--dump-config"])
        .env_clear()
        .env("HOME", h)
        .env("PATH", std::env::var("PATH").unwrap())
        .current_dir(h)
        .output()
        .unwrap();
    assert!(d.status.success(), "{}", said(&d));
    let dump = String::from_utf8_lossy(&d.stdout);
    let taken: BTreeSet<String> = bound_keys(&dump).iter().map(|k| key_id(k)).collect();
    for k in ["Alt p", "Alt P", "Alt n"] {
        assert!(taken.contains(&key_id(k)), "{k} not seen in:\n{dump}");
    }
    for k in &ours {
        assert!(
            !taken.contains(&key_id(k)),
            "park's KDL binds {k}, which zellij 0.45.1 binds by default"
        );
    }
}

/// Issue 33: the committed plugin is never stale. `scripts/build-plugin --check` (CI runs it)
/// passes on the repo as committed, and fails naming the cause when a source of the plugin or of
/// the protocol changed without a rebuild, when the committed wasm is not the one its record
/// names, and when a build of the same sources with the same toolchain differs from it.
#[test]
fn build_plugin_check_fails_when_the_sources_changed_and_the_wasm_was_not_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let copy = |rel: &str| {
        let (from, to) = (repo_root().join(rel), t.join(rel));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let o = Command::new("cp")
            .arg("-R")
            .arg(&from)
            .arg(&to)
            .output()
            .unwrap();
        assert!(o.status.success(), "cp {rel}");
    };
    for rel in [
        "Cargo.toml",
        "scripts/build-plugin",
        "plugin-zellij/Cargo.toml",
        "plugin-zellij/Cargo.lock",
        "plugin-zellij/src",
        "protocol/Cargo.toml",
        "protocol/src",
        "companion/assets",
    ] {
        copy(rel);
    }
    let check = || {
        let o = Command::new("bash")
            .arg(t.join("scripts/build-plugin"))
            .arg("--check")
            .output()
            .unwrap();
        (o.status.code(), said(&o))
    };
    let (c, out) = check();
    assert_eq!(c, Some(0), "as committed: {out}");
    assert!(out.contains("sources match"), "{out}");

    let edit = |rel: &str, f: &dyn Fn(&mut Vec<u8>)| {
        let p = t.join(rel);
        let mut b = std::fs::read(&p).unwrap();
        f(&mut b);
        std::fs::write(&p, b).unwrap();
    };
    for rel in ["plugin-zellij/src/main.rs", "protocol/src/lib.rs"] {
        let before = std::fs::read(t.join(rel)).unwrap();
        edit(rel, &|b| b.extend_from_slice(b"\n// changed\n"));
        let (c, out) = check();
        assert_eq!(c, Some(1), "{rel} changed: {out}");
        assert!(
            out.contains("sources changed") && out.contains("--commit"),
            "{out}"
        );
        std::fs::write(t.join(rel), before).unwrap();
        assert_eq!(check().0, Some(0), "{rel} restored");
    }

    // A fresh build of these sources (its .sources names them) that differs: not reproducible.
    let built = t.join("plugin-zellij/target/park.wasm");
    std::fs::create_dir_all(built.parent().unwrap()).unwrap();
    let record = std::fs::read_to_string(t.join("companion/assets/park.wasm.inputs")).unwrap();
    let sources = record
        .lines()
        .find_map(|l| l.strip_prefix("sources "))
        .unwrap();
    std::fs::write(built.with_extension("wasm.sources"), format!("{sources}\n")).unwrap();
    std::fs::write(&built, b"\0asm\x01\0\0\0other").unwrap();
    let (c, out) = check();
    if record.contains(&format!("toolchain {}", rustc_version())) {
        assert_eq!(c, Some(1), "{out}");
        assert!(out.contains("not reproducible"), "{out}");
    } else {
        assert_eq!(c, Some(0), "another toolchain: not compared: {out}");
        assert!(out.contains("not compared byte for byte"), "{out}");
    }
    std::fs::copy(t.join("companion/assets/park.wasm"), &built).unwrap();
    assert_eq!(check().0, Some(0), "the same bytes");

    edit("companion/assets/park.wasm", &|b| b.push(0));
    let (c, out) = check();
    assert_eq!(c, Some(1), "{out}");
    assert!(out.contains("not the build its record names"), "{out}");
}

fn rustc_version() -> String {
    let o = Command::new("rustc")
        .arg("-V")
        .current_dir(repo_root().join("plugin-zellij"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}
