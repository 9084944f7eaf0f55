//! Issue 34 items 3 and 6 with the real `park` binary in a throwaway HOME (no tmux, no agent):
//! `park doctor` names a corrupt `pins.json` and `sets.json` (exit 1), and a typo'd config table
//! is a usage error for `park config` (exit 2) and a finding naming the file and line for
//! `park doctor` (exit 1).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    park_home: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, park_home) = (root.join("home"), root.join("park"));
        for d in [&home, &park_home] {
            std::fs::create_dir_all(d).unwrap();
        }
        // As park makes it: doctor flags a PARK_HOME others can read.
        std::fs::set_permissions(
            &park_home,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        World {
            _dir: dir,
            home,
            park_home,
        }
    }

    fn park(&self, args: &[&str]) -> (i32, String) {
        let o: Output = Command::new(env!("CARGO_BIN_EXE_park"))
            .env_clear()
            .env("HOME", &self.home)
            .env("PARK_HOME", &self.park_home)
            .env("PATH", "/usr/bin:/bin")
            // A tmux server that does not exist: park must never reach a real one from a test.
            .env(
                "PARK_TMUX_SOCKET",
                format!("park-cli-checks-none-{}", std::process::id()),
            )
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        eprintln!("$ park {} -> {}\n{text}", args.join(" "), o.status);
        (o.status.code().unwrap_or(-1), text)
    }
}

/// Issue 34 item 6: doctor said ok while `pins.json` or `sets.json` was corrupt, although the
/// autopilot then treats every session as pinned and every `@set` fails.
#[test]
fn doctor_names_a_corrupt_pins_file_and_a_corrupt_sets_file() {
    let w = World::new();
    let (c, out) = w.park(&["doctor"]);
    assert_eq!(c, 0, "a fresh home is fine: {out}");
    for file in ["pins.json", "sets.json"] {
        let p = w.park_home.join(file);
        std::fs::write(&p, b"{not json").unwrap();
        let (c, out) = w.park(&["doctor"]);
        assert_eq!(c, 1, "{file}: {out}");
        assert!(out.contains(&p.display().to_string()), "{file}: {out}");
        std::fs::remove_file(&p).unwrap();
    }
    let (c, out) = w.park(&["doctor"]);
    assert_eq!(c, 0, "{out}");
}

/// Issue 34 item 3: `[atuo]` (a typo'd table) was ignored: `park config` said mode off, doctor
/// said ok. `park config` refuses it as a usage error; doctor names the file and the line.
#[test]
fn a_typoed_config_table_is_a_usage_error_and_a_doctor_finding() {
    let w = World::new();
    let (c, out) = w.park(&["doctor"]);
    assert_eq!(c, 0, "a fresh home is fine: {out}");
    let cfg = w.park_home.join("config.toml");
    std::fs::write(&cfg, "# mine\n[atuo]\nmode = \"park\"\n").unwrap();
    let (c, out) = w.park(&["config"]);
    assert_eq!(c, 2, "{out}");
    assert!(
        out.contains("line 2") && out.contains("[atuo]") && out.contains("[auto]"),
        "{out}"
    );
    let (c, out) = w.park(&["doctor"]);
    assert_eq!(c, 1, "{out}");
    assert!(
        out.contains(&cfg.display().to_string())
            && out.contains("line 2")
            && out.contains("[atuo]"),
        "{out}"
    );
}
