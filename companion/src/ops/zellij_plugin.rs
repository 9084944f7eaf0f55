//! `park zellij install|kdl`: puts the zellij plugin (`plugin-zellij/`, a wasm module) where the
//! printed KDL points, `${XDG_DATA_HOME:-~/.local/share}/park/park.wasm`, for a user without a Rust
//! wasm toolchain. It never edits a zellij config: it prints the KDL to add.
//!
//! Where the wasm comes from, first found wins:
//! 1. `--wasm PATH`;
//! 2. the copy built into this binary: `scripts/install` builds the plugin, then park with
//!    `PARK_EMBED_WASM=<that file>` (`companion/build.rs` embeds it; empty without the variable);
//! 3. beside the binary: `<exe dir>/../share/park/park.wasm`, then `<exe dir>/park.wasm` (a
//!    package that ships the two files), unless that file is the install destination itself.
//!
//! Contract: the bytes are checked to be a wasm module (`\0asm`, version 1) before anything is
//! written; the install is atomic (a temp file beside it, fsync, rename) and idempotent (identical
//! bytes are not rewritten); a refused source leaves an existing install as it was.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The plugin built into this binary (empty unless it was built with `PARK_EMBED_WASM`).
pub const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/park.wasm"));

/// Where a wasm to install came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag(PathBuf),
    Embedded,
    Beside(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag(p) => write!(f, "{}", p.display()),
            Source::Embedded => f.write_str("the copy built into park"),
            Source::Beside(p) => write!(f, "{} (beside park)", p.display()),
        }
    }
}

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    Written,
    Unchanged,
}

/// `${XDG_DATA_HOME:-$HOME/.local/share}/park/park.wasm`, as `scripts/install` uses it (an empty
/// or relative XDG_DATA_HOME is ignored, as the XDG spec says).
pub fn dest(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, String> {
    let data = match env("XDG_DATA_HOME").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d,
        _ => match env("HOME").filter(|h| !h.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local/share"),
            None => return Err("neither XDG_DATA_HOME nor HOME is set".into()),
        },
    };
    Ok(data.join("park").join("park.wasm"))
}

/// `Err(why)` unless `bytes` start like a wasm module: the magic `\0asm` and binary version 1.
pub fn validate(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("not a wasm module (it does not start with \\0asm)".into());
    }
    if bytes[4..8] != [1, 0, 0, 0] {
        return Err(format!(
            "not a wasm module zellij loads (binary version {:?}, not 1)",
            &bytes[4..8]
        ));
    }
    Ok(())
}

/// The candidates beside the binary at `exe`, in the order they are tried.
pub fn beside(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else {
        return vec![];
    };
    vec![
        dir.join("..").join("share").join("park").join("park.wasm"),
        dir.join("park.wasm"),
    ]
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The wasm to install and where it came from; `Err` says what was looked at and how to get one.
/// A source that exists but is not wasm is an error, never skipped for the next one.
pub fn find(
    flag: Option<&Path>,
    embedded: &[u8],
    exe: Option<&Path>,
    dest: &Path,
) -> Result<(Source, Vec<u8>), String> {
    let read = |p: &Path| -> Result<Vec<u8>, String> {
        let b = std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        validate(&b).map_err(|why| format!("{}: {why}", p.display()))?;
        Ok(b)
    };
    if let Some(p) = flag {
        return Ok((Source::Flag(p.to_path_buf()), read(p)?));
    }
    if !embedded.is_empty() {
        validate(embedded).map_err(|why| format!("the plugin built into park: {why}"))?;
        return Ok((Source::Embedded, embedded.to_vec()));
    }
    let tried = exe.map(beside).unwrap_or_default();
    for p in &tried {
        if p.is_file() && !same_file(p, dest) {
            return Ok((Source::Beside(p.clone()), read(p)?));
        }
    }
    let looked = tried
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "this park has no zellij plugin built in and none beside it ({looked}): install park \
         with the repo's scripts/install (it builds the plugin into park), or build it with \
         scripts/build-plugin and run `park zellij install --wasm plugin-zellij/target/park.wasm`"
    ))
}

/// Writes `bytes` to `dest` atomically (`<dest>.park-tmp`, 0644, fsync, rename, fsync of the
/// dir); leaves it alone when it already holds exactly these bytes.
pub fn install(bytes: &[u8], dest: &Path) -> Result<Installed, String> {
    validate(bytes)?;
    if std::fs::read(dest).is_ok_and(|b| b == bytes) {
        return Ok(Installed::Unchanged);
    }
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let dir = dest
        .parent()
        .ok_or_else(|| format!("{} has no parent dir", dest.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".park-tmp");
    let tmp = dir.join(name);
    // A temp file a crash left behind is ours to replace.
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dest)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(dest, e));
    }
    Ok(Installed::Written)
}

/// The KDL to add to `~/.config/zellij/config.kdl` for the plugin at `wasm` (the one source of it:
/// `scripts/install` and `scripts/install-zellij-plugin` print this).
pub fn kdl(wasm: &Path) -> String {
    // A KDL string: `\` and `"` escaped.
    let loc = format!("file:{}", wasm.display())
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        r#"// --- park (add to ~/.config/zellij/config.kdl) ---
plugins {{
    park location="{loc}" {{ mode "strip"; }}
}}
keybinds {{
    shared {{
        // the picker, floating, with the focused pane preselected
        bind "Alt p" {{ LaunchOrFocusPlugin "{loc}" {{ floating true; move_to_focused_tab true; mode "picker"; }}; }}
        // park the focused pane now (handled by the strip)
        bind "Alt P" {{ MessagePlugin "park" {{ name "park:park-focused"; payload "x"; }}; }}
    }}
}}
// and in your layout, a one-line strip on top showing "❄ 3 · 1.1G":
//   pane size=1 borderless=true {{ plugin location="park"; }}
// zjstatus users: park also pipes the summary to zjstatus; in its plugin block add
//   format_left "... {{pipe_park}}"
//   pipe_park_format "{{output}}"
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const WASM: &[u8] = b"\0asm\x01\0\0\0rest";

    #[test]
    fn dest_follows_xdg_data_home_else_home() {
        let env = |xdg: Option<&'static str>| {
            move |k: &str| match k {
                "XDG_DATA_HOME" => xdg.map(OsString::from),
                "HOME" => Some(OsString::from("/h")),
                _ => None,
            }
        };
        assert_eq!(
            dest(env(Some("/x"))).unwrap(),
            Path::new("/x/park/park.wasm")
        );
        for ignored in [None, Some(""), Some("rel")] {
            assert_eq!(
                dest(env(ignored)).unwrap(),
                Path::new("/h/.local/share/park/park.wasm")
            );
        }
        assert!(dest(|_| None).is_err());
    }

    #[test]
    fn only_wasm_modules_pass() {
        assert!(validate(WASM).is_ok());
        assert!(validate(b"\0asm").is_err(), "too short");
        assert!(validate(b"\x7fELF\x01\0\0\0").is_err());
        assert!(
            validate(b"\0asm\x0d\0\x01\0").is_err(),
            "a component, not a module"
        );
    }

    #[test]
    fn flag_then_embedded_then_beside_the_binary() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("pfx/bin");
        let share = d.path().join("pfx/share/park");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&share).unwrap();
        let exe = bin.join("park");
        let dest = d.path().join("data/park/park.wasm");
        let none = find(None, b"", Some(&exe), &dest).unwrap_err();
        assert!(
            none.contains("scripts/install") && none.contains("--wasm"),
            "{none}"
        );
        std::fs::write(bin.join("park.wasm"), WASM).unwrap();
        assert_eq!(
            find(None, b"", Some(&exe), &dest).unwrap().0,
            Source::Beside(bin.join("park.wasm"))
        );
        std::fs::write(share.join("park.wasm"), WASM).unwrap();
        assert_eq!(
            find(None, b"", Some(&exe), &dest).unwrap().0,
            Source::Beside(bin.join("../share/park/park.wasm"))
        );
        assert_eq!(
            find(None, WASM, Some(&exe), &dest).unwrap().0,
            Source::Embedded
        );
        let flag = d.path().join("mine.wasm");
        std::fs::write(&flag, b"not wasm at all").unwrap();
        let e = find(Some(&flag), WASM, Some(&exe), &dest).unwrap_err();
        assert!(
            e.contains("mine.wasm") && e.contains("not a wasm module"),
            "{e}"
        );
        // The install destination itself is not a source (it may be the stale copy).
        let only = find(None, b"", Some(&exe), &share.join("park.wasm")).unwrap();
        assert_eq!(only.0, Source::Beside(bin.join("park.wasm")));
    }

    #[test]
    fn install_is_atomic_idempotent_and_refuses_non_wasm() {
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("a/park/park.wasm");
        assert_eq!(install(WASM, &dest).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&dest).unwrap(), WASM);
        assert_eq!(install(WASM, &dest).unwrap(), Installed::Unchanged);
        assert!(install(b"#!/bin/sh\n", &dest).is_err());
        assert_eq!(std::fs::read(&dest).unwrap(), WASM, "left intact");
        let other = b"\0asm\x01\0\0\0other";
        assert_eq!(install(other, &dest).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&dest).unwrap(), other);
        let names: Vec<_> = std::fs::read_dir(dest.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["park.wasm"], "no temp file left");
    }

    #[test]
    fn kdl_points_every_location_at_the_wasm() {
        let k = kdl(Path::new("/d/park/park.wasm"));
        assert_eq!(k.matches(r#""file:/d/park/park.wasm""#).count(), 2, "{k}");
        assert!(k.contains(r#"mode "strip""#) && k.contains(r#"mode "picker""#));
        assert!(k.contains("pipe_park_format \"{output}\""));
    }
}
