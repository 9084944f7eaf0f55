//! Records the git revision for `park --version` (`unknown` outside a git checkout), and embeds
//! the zellij plugin as `$OUT_DIR/park.wasm` for `park zellij install`:
//! - by default the committed build, `assets/park.wasm` (written by `scripts/build-plugin
//!   --commit`, kept fresh by `scripts/build-plugin --check`), so every build of park carries the
//!   plugin, `cargo install` included, with no wasm toolchain;
//! - `PARK_EMBED_WASM=<file>`: that built `park.wasm` instead;
//! - `PARK_EMBED_WASM=none`: no plugin (an empty file).
//!
//! `PARK_PLUGIN` (for `park --version`) says which, with the wasm's sha256. It never builds the
//! plugin itself.
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

fn hex12(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The committed build's bytes and its sources digest (from `assets/park.wasm.inputs`).
fn committed(dir: &Path) -> (Vec<u8>, String) {
    let wasm = dir.join("assets/park.wasm");
    let inputs = dir.join("assets/park.wasm.inputs");
    println!("cargo:rerun-if-changed={}", wasm.display());
    println!("cargo:rerun-if-changed={}", inputs.display());
    let b = std::fs::read(&wasm).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the committed zellij plugin; `scripts/build-plugin --commit` writes it, \
             PARK_EMBED_WASM=none builds park without it)",
            wasm.display()
        )
    });
    let sources = std::fs::read_to_string(&inputs)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("sources sha256:")
                    .map(|h| h.chars().take(12).collect())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    (b, sources)
}

fn embed_wasm() {
    println!("cargo:rerun-if-env-changed=PARK_EMBED_WASM");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("park.wasm");
    let (bytes, said) = match std::env::var("PARK_EMBED_WASM")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(v) if v == "none" => (vec![], "none (built with PARK_EMBED_WASM=none)".to_string()),
        Some(src) => {
            let src = PathBuf::from(src);
            println!("cargo:rerun-if-changed={}", src.display());
            let b = std::fs::read(&src)
                .unwrap_or_else(|e| panic!("PARK_EMBED_WASM={}: {e}", src.display()));
            let said = format!(
                "embedded, sha256 {} (from PARK_EMBED_WASM={})",
                hex12(&b),
                src.display()
            );
            (b, said)
        }
        None => {
            let (b, sources) = committed(&dir);
            let said = format!(
                "embedded, sha256 {} (the committed build of sources {sources})",
                hex12(&b)
            );
            (b, said)
        }
    };
    assert!(
        bytes.is_empty() || (bytes.len() >= 8 && bytes.starts_with(b"\0asm")),
        "the zellij plugin to embed is not a wasm module ({said})"
    );
    println!("cargo:rustc-env=PARK_PLUGIN={said}");
    // Rewritten only when it changes, so an unchanged plugin does not relink park.
    if std::fs::read(&out).ok().as_deref() != Some(&bytes[..]) {
        std::fs::write(&out, &bytes).expect("write OUT_DIR/park.wasm");
    }
}

fn main() {
    embed_wasm();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!(
        "cargo:rustc-env=PARK_GIT_REV={rev}{}",
        if dirty { "-dirty" } else { "" }
    );
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{r}");
        }
    }
}
