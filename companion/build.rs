//! Records the git revision for `park --version` (`unknown` outside a git checkout), and embeds
//! the zellij plugin named by `PARK_EMBED_WASM` (a built `park.wasm`; `scripts/install` sets it)
//! as `$OUT_DIR/park.wasm` for `park zellij install` — an empty file without the variable. It
//! never builds the plugin itself.
use std::process::Command;

fn embed_wasm() {
    println!("cargo:rerun-if-env-changed=PARK_EMBED_WASM");
    let out =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("park.wasm");
    let bytes = match std::env::var_os("PARK_EMBED_WASM").filter(|v| !v.is_empty()) {
        Some(src) => {
            let src = std::path::PathBuf::from(src);
            println!("cargo:rerun-if-changed={}", src.display());
            let b = std::fs::read(&src)
                .unwrap_or_else(|e| panic!("PARK_EMBED_WASM={}: {e}", src.display()));
            assert!(
                b.len() >= 8 && b.starts_with(b"\0asm"),
                "PARK_EMBED_WASM={} is not a wasm module",
                src.display()
            );
            b
        }
        None => vec![],
    };
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
