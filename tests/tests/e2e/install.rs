//! `scripts/install` in a throwaway HOME: puts park, the tmux plugin, the zellij wasm, completions
//! and the man page in place; a second run changes nothing; `--uninstall` removes exactly what it
//! wrote and nothing else.

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
    std::fs::write(&wasm, b"\0asm").unwrap();
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

/// `cargo install --path companion` works from the repo (debug profile, its own target dir so it
/// does not wait on the lock of the `cargo test` running this), and the installed binary runs.
#[test]
fn cargo_install_path_companion_installs_a_working_park() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = tempfile::tempdir().unwrap();
    let o = Command::new("cargo")
        .args([
            "install",
            "--path",
            "companion",
            "--debug",
            "--locked",
            "--root",
        ])
        .arg(root.path())
        .env("CARGO_TARGET_DIR", repo.join("target/install-check"))
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo install failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let park = root.path().join("bin/park");
    let v = Command::new(&park).arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&v.stdout).into_owned();
    assert!(v.starts_with("park "), "{v}");
    let h = Command::new(&park).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&h.stdout).contains("unpark"));
}
