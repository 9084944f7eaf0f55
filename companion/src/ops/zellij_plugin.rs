//! `park zellij install|kdl`: puts the zellij plugin (`plugin-zellij/`, a wasm module) where the
//! printed KDL points, `${XDG_DATA_HOME:-~/.local/share}/park/park.wasm`, for a user without a Rust
//! wasm toolchain. It never edits a zellij config: it prints the KDL to add, and a layout to save.
//!
//! Where the wasm comes from, first found wins:
//! 1. `--wasm PATH`;
//! 2. the copy built into this binary: the committed build (`companion/assets/park.wasm`) in
//!    every build of park, or the file `PARK_EMBED_WASM` names (`companion/build.rs`; none with
//!    `PARK_EMBED_WASM=none`);
//! 3. beside the binary: `<prefix>/share/park/park.wasm` for `<prefix>/bin/park`, then
//!    `<exe dir>/park.wasm` (a package that ships the two files), unless that file is the install
//!    destination itself.
//!
//! Contract: the bytes are checked to be a wasm module (`\0asm`, version 1) before anything is
//! written; the install is atomic (a temp file beside it, fsync, rename) and idempotent (identical
//! bytes are not rewritten); a refused source leaves an existing install as it was.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The plugin built into this binary (empty when it was built with `PARK_EMBED_WASM=none`).
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

/// The candidates beside the binary at `exe`, in the order they are tried: `<prefix>/share/park/
/// park.wasm` for `<prefix>/bin/park`, then `park.wasm` in the binary's own dir.
pub fn beside(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else {
        return vec![];
    };
    let share = dir
        .parent()
        .map(|prefix| prefix.join("share").join("park").join("park.wasm"));
    share.into_iter().chain([dir.join("park.wasm")]).collect()
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
    Err(not_found(&tried))
}

/// The refusal when there is no wasm: every path it names is labelled as looked in and not found,
/// and it says how to get the plugin.
pub fn not_found(tried: &[PathBuf]) -> String {
    let looked = match tried {
        [] => String::new(),
        _ => format!(
            " (looked in {}: not found)",
            tried
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    format!(
        "no zellij plugin to install: this park was built without one (PARK_EMBED_WASM=none) and \
         there is none beside it{looked}. To get one, in a checkout of park's repo: build park \
         again without PARK_EMBED_WASM=none (every build carries the committed plugin), run \
         scripts/install, or run scripts/build-plugin (needs rustup) and then `park zellij \
         install --wasm plugin-zellij/target/park.wasm`"
    )
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

/// The key the printed KDL binds to the picker. Not `Alt p`: zellij 0.45.1 binds it by default
/// (`TogglePaneInGroup`, `zellij setup --dump-config`); `Alt z` and `Alt Z` are bound to nothing.
pub const PICKER_KEY: &str = "Alt z";
/// The key the printed KDL binds to "park the focused pane". Not `Alt P`: zellij reads Alt+Shift+p
/// as `Alt Shift p`, which 0.45.1 binds by default (`ToggleGroupMarking`).
pub const PARK_FOCUSED_KEY: &str = "Alt Z";

/// The first line of each part [`kdl`] prints (the config part, then the layout part) and the
/// line that ends each: a reader (or a test) can cut the output into its two files.
pub const CONFIG_PART: &str = "// ==== park 1/2: add this to ~/.config/zellij/config.kdl ====";
pub const LAYOUT_PART: &str =
    "// ==== park 2/2: save this as ~/.config/zellij/layouts/park.kdl ====";
pub const PART_END: &str = "// ==== end ====";

/// A complete layout: zellij 0.45.1's default one (`zellij setup --dump-layout default`: the
/// tab-bar and status-bar plugins around the panes) as the template of every tab, with park's
/// one-line strip under the tab bar.
pub const LAYOUT: &str = r#"layout {
    default_tab_template {
        pane size=1 borderless=true {
            plugin location="tab-bar"
        }
        pane size=1 borderless=true {
            plugin location="park"
        }
        children
        pane size=1 borderless=true {
            plugin location="status-bar"
        }
    }
}
"#;

/// What `park zellij install|kdl` prints for the plugin at `wasm` (the one source of it:
/// `scripts/install` and `scripts/install-zellij-plugin` print this), in two delimited parts: the
/// KDL to add to `~/.config/zellij/config.kdl` (the plugin alias and the two keys) and a whole
/// layout to save as `~/.config/zellij/layouts/park.kdl`.
pub fn kdl(wasm: &Path) -> String {
    // A KDL string: `\` and `"` escaped.
    let loc = format!("file:{}", wasm.display())
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let (pick, park) = (PICKER_KEY, PARK_FOCUSED_KEY);
    format!(
        r#"{CONFIG_PART}
plugins {{
    park location="{loc}" {{ mode "strip"; }}
}}
keybinds {{
    shared {{
        // the picker, floating, with the focused pane preselected
        bind "{pick}" {{ LaunchOrFocusPlugin "{loc}" {{ floating true; move_to_focused_tab true; mode "picker"; }}; }}
        // park the focused pane now (handled by the strip)
        bind "{park}" {{ MessagePlugin "park" {{ name "park:park-focused"; payload "x"; }}; }}
        // {pick} and {park} are free in zellij 0.45's default keys. Not Alt p / Alt P: zellij binds
        // "Alt p" to TogglePaneInGroup and "Alt Shift p" (the key Alt P) to ToggleGroupMarking,
        // and binding them here would hide those.
    }}
}}
// To open this layout by default, also add:  default_layout "park"
// zjstatus users: park also pipes the summary to zjstatus; in its plugin block add
//   format_left "... {{pipe_park}}"
//   pipe_park_format "{{output}}"
{PART_END}

{LAYOUT_PART}
// zellij's default layout (tab bar, status bar) with park's one-line strip ("❄ 3 · 1.1G") under
// the tab bar, in every tab. Use it with `zellij --layout park`, or `default_layout "park"` in
// config.kdl. In a layout of your own, the strip is this one pane:
//   pane size=1 borderless=true {{ plugin location="park"; }}
{LAYOUT}{PART_END}
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
        assert_eq!(none, not_found(&beside(&exe)));
        std::fs::write(bin.join("park.wasm"), WASM).unwrap();
        assert_eq!(
            find(None, b"", Some(&exe), &dest).unwrap().0,
            Source::Beside(bin.join("park.wasm"))
        );
        std::fs::write(share.join("park.wasm"), WASM).unwrap();
        assert_eq!(
            find(None, b"", Some(&exe), &dest).unwrap().0,
            Source::Beside(d.path().join("pfx/share/park/park.wasm"))
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

    /// Issue 35 item 7: the refusal named `<bin>/../share/park/park.wasm` as if it were there.
    #[test]
    fn the_refusal_labels_every_path_as_looked_in_and_says_how_to_get_the_plugin() {
        let tried = beside(Path::new("/opt/pfx/bin/park"));
        assert_eq!(
            tried,
            [
                Path::new("/opt/pfx/share/park/park.wasm"),
                Path::new("/opt/pfx/bin/park.wasm")
            ]
        );
        let e = not_found(&tried);
        assert!(
            e.contains(
                "(looked in /opt/pfx/share/park/park.wasm and /opt/pfx/bin/park.wasm: not found)"
            ),
            "{e}"
        );
        assert!(!e.contains(".."), "{e}");
        for how in [
            "scripts/install",
            "scripts/build-plugin",
            "`park zellij install --wasm plugin-zellij/target/park.wasm`",
        ] {
            assert!(e.contains(how), "{how}: {e}");
        }
        // Nothing tried (no binary path): no empty parentheses.
        assert!(!not_found(&[]).contains("()"));
        // A binary in / has no prefix to look in.
        assert_eq!(beside(Path::new("/park")), [Path::new("/park.wasm")]);
    }

    /// The text between `start` and the next [`PART_END`] in `k`.
    fn part<'a>(k: &'a str, start: &str) -> &'a str {
        let from = k.find(start).unwrap_or_else(|| panic!("no {start}: {k}")) + start.len();
        let len = k[from..].find(PART_END).expect("part end");
        &k[from..from + len]
    }

    #[test]
    fn kdl_points_every_location_at_the_wasm() {
        let k = kdl(Path::new("/d/park/park.wasm"));
        let config = part(&k, CONFIG_PART);
        assert_eq!(
            config.matches(r#""file:/d/park/park.wasm""#).count(),
            2,
            "{k}"
        );
        assert!(config.contains(r#"mode "strip""#) && config.contains(r#"mode "picker""#));
        assert!(config.contains("pipe_park_format \"{output}\""));
        assert!(k.starts_with(CONFIG_PART) && k.ends_with(&format!("{PART_END}\n")));
    }

    /// Issue 35 item 7: the layout was a comment; it is a whole layout, zellij's default one with
    /// the strip in every tab, in its own part that names the file to save it to.
    #[test]
    fn kdl_prints_a_whole_layout_with_the_strip_in_a_part_of_its_own() {
        let k = kdl(Path::new("/d/park/park.wasm"));
        assert!(LAYOUT_PART.contains("~/.config/zellij/layouts/park.kdl"));
        let layout = part(&k, LAYOUT_PART);
        assert!(layout.contains(LAYOUT), "{layout}");
        assert!(
            layout.contains("zellij --layout park") && layout.contains(r#"default_layout "park""#)
        );
        let body: Vec<&str> = LAYOUT.lines().map(str::trim).collect();
        let at = |line: &str| {
            body.iter()
                .position(|l| *l == line)
                .unwrap_or_else(|| panic!("{line}: {LAYOUT}"))
        };
        assert_eq!(body[0], "layout {");
        assert_eq!(body[1], "default_tab_template {");
        let (tabs, strip, children, status) = (
            at(r#"plugin location="tab-bar""#),
            at(r#"plugin location="park""#),
            at("children"),
            at(r#"plugin location="status-bar""#),
        );
        assert!(
            tabs < strip && strip < children && children < status,
            "{LAYOUT}"
        );
        assert_eq!(LAYOUT.matches("pane size=1 borderless=true {").count(), 3);
        // The config part has no layout in it (config.kdl would not take one).
        assert!(!part(&k, CONFIG_PART)
            .lines()
            .any(|l| l.trim_start().starts_with("layout")));
    }

    /// Issue 35 item 7: `Alt p` hid zellij 0.45.1's default `Alt p` (TogglePaneInGroup) and `Alt P`
    /// its `Alt Shift p` (ToggleGroupMarking). The keys bound are others, and the KDL says why.
    #[test]
    fn kdl_binds_keys_zellij_leaves_free_and_says_why_not_alt_p() {
        let k = kdl(Path::new("/d/park/park.wasm"));
        let config = part(&k, CONFIG_PART);
        let bound: Vec<&str> = config
            .lines()
            .filter_map(|l| l.trim().strip_prefix("bind \""))
            .map(|l| &l[..l.find('"').unwrap()])
            .collect();
        assert_eq!(bound, [PICKER_KEY, PARK_FOCUSED_KEY]);
        // Bound by zellij 0.45.1 by default (`zellij setup --dump-config`), `Alt P` being the key
        // `Alt Shift p`.
        for taken in [
            "Alt f", "Alt n", "Alt i", "Alt o", "Alt h", "Alt l", "Alt j", "Alt k", "Alt p",
            "Alt P",
        ] {
            assert!(!bound.contains(&taken), "{taken}");
        }
        assert!(
            config.contains("TogglePaneInGroup") && config.contains("ToggleGroupMarking"),
            "{config}"
        );
    }
}
