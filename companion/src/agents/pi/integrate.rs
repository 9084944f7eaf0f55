//! `park integrate pi`: an extension in pi's global extensions folder
//! (`$PI_CODING_AGENT_DIR/extensions/park.js`, else `~/.pi/agent/extensions/park.js`) that tells
//! park which session each interactive pi process runs. pi loads it inside the process
//! (`process.pid` is pi's own; measured on 1.6.0) and hands it its lifecycle events:
//! `session_start` (at startup, and again after `/new`, `/resume`, `/fork`, `/clone`, `/reload`,
//! with the new session), `agent_start` / `agent_settled` (a run begins / pi will not continue by
//! itself), `ui_prompt_start` / `ui_prompt_end` (an extension's dialog waits for the user) and
//! `model_select`. On each, the extension runs `<park> hook pi` with
//! `{session_id, session_file, cwd, status, argv, event}` on stdin, one at a time in event order;
//! `park hook pi` writes `$PARK_HOME/integrations/pi/<pid>.json` for its pi parent, with that
//! process's start time (a record of a recycled pid never matches).
//!
//! `argv` is `process.argv.slice(2)`, the launch arguments as pi itself still has them: pi
//! overwrites its `/proc/<pid>/cmdline` with `process.title = "pi"`, so nothing outside the process
//! can read them; the record is where the whitelisted launch flags come from.
//!
//! Contract:
//! * install writes exactly that one file (replaced atomically) and only over a file that is
//!   park's (its first line); remove deletes exactly it; a file of the same name that is not
//!   park's is never touched, and the error says so.
//! * the extension never fails pi: every step is in `try`, nothing is awaited by pi, a missing
//!   park binary is ignored; it records nothing outside pi's TUI (`ctx.mode` `print`, `json`,
//!   `rpc`), which runs in no pane.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::Platform;
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The extension file's first line, by which park knows the file is its own.
const FIRST_LINE: &str =
    "// park integration for pi (`park integrate pi`; `park integrate --remove pi` removes it)";

/// How many launch arguments a record keeps, and how long each may be.
const MAX_ARGS: usize = 64;
const MAX_ARG_LEN: usize = 4096;

/// One `integrations/pi/<pid>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub pid: u32,
    pub start_ticks: u64,
    /// The session the process is on.
    pub session_id: String,
    /// Its file, as pi names it (`None`: not saved, `--no-session`).
    pub session_file: Option<String>,
    pub cwd: Option<String>,
    /// `busy`, `idle` or `waiting` (an extension's dialog).
    pub status: String,
    /// The process's launch arguments (after the program), as pi has them.
    #[serde(default)]
    pub argv: Vec<String>,
    pub event: String,
}

pub fn records_dir(home: &Path) -> PathBuf {
    home.join("integrations").join("pi")
}

pub fn read_record(home: &Path, pid: u32) -> Option<Record> {
    crate::agents::records::read(&records_dir(home), pid).filter(|r: &Record| r.pid == pid)
}

/// The extension file for `env`.
pub fn extension_file(env: &[(String, String)]) -> Option<PathBuf> {
    super::SPEC
        .config
        .dir(env)
        .map(|d| d.join("extensions").join("park.js"))
}

/// The extension's source for `park_exe`.
pub fn extension_source(park_exe: &Path) -> String {
    let exe = serde_json::to_string(&park_exe.to_string_lossy()).unwrap_or_default();
    format!(
        r#"{FIRST_LINE}
// It tells park which session this pi process is on and whether it is busy, so that `park`
// can free its memory and resume exactly this session later. It never blocks pi.
import {{ spawn }} from "node:child_process";

const PARK = {exe};

// One queue for every instance of this extension in the process (pi loads it anew for each
// session it switches to): records reach park in event order.
const queue = (globalThis.__parkQueue ??= {{ chain: Promise.resolve(), sent: "" }});

export default function (pi) {{
  let status = "idle";
  const tell = (event, ctx) => {{
    try {{
      if (!ctx || (ctx.mode ?? (ctx.hasUI ? "tui" : "")) !== "tui") return;
      const sm = ctx.sessionManager;
      const rec = {{
        session_id: sm.getSessionId() ?? null,
        session_file: sm.getSessionFile() ?? null,
        cwd: sm.getCwd() ?? null,
        status,
        argv: process.argv.slice(2),
      }};
      const key = JSON.stringify(rec);
      if (key === queue.sent) return;
      queue.sent = key;
      const line = JSON.stringify({{ ...rec, event }});
      queue.chain = queue.chain.then(
        () =>
          new Promise((done) => {{
            try {{
              const p = spawn(PARK, ["hook", "pi"], {{ stdio: ["pipe", "ignore", "ignore"] }});
              p.on("error", () => done());
              p.on("close", () => done());
              p.stdin.on("error", () => {{}});
              p.stdin.end(line);
            }} catch {{
              done();
            }}
          }}),
      );
    }} catch {{}}
  }};
  pi.on("session_start", (_e, ctx) => {{
    status = "idle";
    tell("session_start", ctx);
  }});
  pi.on("agent_start", (_e, ctx) => {{
    status = "busy";
    tell("agent_start", ctx);
  }});
  pi.on("agent_settled", (_e, ctx) => {{
    status = "idle";
    tell("agent_settled", ctx);
  }});
  pi.on("ui_prompt_start", (_e, ctx) => {{
    status = "waiting";
    tell("ui_prompt_start", ctx);
  }});
  pi.on("ui_prompt_end", (_e, ctx) => {{
    try {{
      status = ctx.isIdle() ? "idle" : "busy";
    }} catch {{
      status = "busy";
    }}
    tell("ui_prompt_end", ctx);
  }});
}}
"#
    )
}

/// The park binary an extension file runs, if the file is park's.
fn extension_exe(text: &str) -> Option<PathBuf> {
    if text.lines().next() != Some(FIRST_LINE) {
        return None;
    }
    let line = text.lines().find(|l| l.starts_with("const PARK = "))?;
    let lit = line.strip_prefix("const PARK = ")?.strip_suffix(';')?;
    serde_json::from_str::<String>(lit).ok().map(PathBuf::from)
}

/// The state of an extension file's text (pure; `exists` tells whether a park binary is there).
pub fn state_of(text: Option<&str>, exists: impl Fn(&Path) -> bool) -> IntegrationState {
    let Some(text) = text else {
        return IntegrationState::Missing;
    };
    match extension_exe(text) {
        Some(exe) if exists(&exe) => IntegrationState::Installed,
        Some(exe) => IntegrationState::Broken(format!(
            "the extension runs {}, which is not there any more: run `park integrate pi` again",
            exe.display()
        )),
        None => IntegrationState::Unreadable(
            "an extension named park.js that park did not write is in the way; not touching it"
                .into(),
        ),
    }
}

fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// What `park hook pi` reads on stdin.
#[derive(Debug, Deserialize)]
struct Input {
    session_id: Option<String>,
    session_file: Option<String>,
    cwd: Option<String>,
    status: Option<String>,
    #[serde(default)]
    argv: Vec<String>,
    event: Option<String>,
}

/// The process that ran the hook: the nearest ancestor of `from` that is pi.
fn pi_ancestor(platform: &dyn Platform, from: u32) -> Option<crate::adapters::platform::ProcInfo> {
    let mut pid = from;
    for _ in 0..4 {
        let p = platform.process(pid)?;
        if program_of(&p.argv).is_some_and(|(n, i)| super::SPEC.is_program(&n, &p.argv[i])) {
            return Some(p);
        }
        pid = p.ppid;
    }
    None
}

/// The record `park hook pi` writes for process `pid` (started at `start_ticks`) from the
/// extension's `input` (pure: every field checked).
pub fn record_of(input: &[u8], pid: u32, start_ticks: u64) -> Result<Record, String> {
    let inp: Input = serde_json::from_slice(input).map_err(|e| format!("hook input: {e}"))?;
    let session_id = inp
        .session_id
        .as_deref()
        .and_then(valid_session_id)
        .ok_or("hook input holds no valid session id")?;
    let status = match inp.status.as_deref() {
        Some(s @ ("busy" | "idle" | "waiting")) => s.to_string(),
        _ => return Err("hook input holds no valid status".into()),
    };
    if inp.argv.len() > MAX_ARGS || inp.argv.iter().any(|a| a.len() > MAX_ARG_LEN) {
        return Err("hook input: launch arguments too long".into());
    }
    Ok(Record {
        pid,
        start_ticks,
        session_id,
        session_file: inp.session_file.filter(|p| p.starts_with('/')),
        cwd: inp.cwd.filter(|p| p.starts_with('/')),
        status,
        argv: inp.argv,
        event: inp.event.unwrap_or_default(),
    })
}

/// The extension integration of pi.
pub struct Extension;

impl Integration for Extension {
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf> {
        extension_file(env)
    }
    fn state(&self, env: &[(String, String)]) -> IntegrationState {
        let Some(path) = extension_file(env) else {
            return IntegrationState::Unreadable(
                "neither PI_CODING_AGENT_DIR nor HOME is set".into(),
            );
        };
        match read_text(&path) {
            Ok(t) => state_of(t.as_deref(), |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = extension_file(env).ok_or("neither PI_CODING_AGENT_DIR nor HOME is set")?;
        let want = extension_source(park_exe);
        match read_text(&path)? {
            Some(t) if t == want => return Ok(format!("already in {}", path.display())),
            Some(t) if extension_exe(&t).is_none() => {
                return Err(format!(
                    "{} exists and is not park's; not touching it",
                    path.display()
                ))
            }
            _ => {}
        }
        let dir = path.parent().ok_or("extension file has no directory")?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        crate::support::fs::write_atomic(&path, want.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(format!(
            "wrote the extension {} (it runs `{} hook pi`); restart running pi processes to load it",
            path.display(),
            park_exe.display(),
        ))
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = extension_file(env).ok_or("neither PI_CODING_AGENT_DIR nor HOME is set")?;
        match read_text(&path)? {
            None => Ok(format!("nothing to remove: no {}", path.display())),
            Some(t) if extension_exe(&t).is_none() => {
                Err(format!("{} is not park's; not touching it", path.display()))
            }
            Some(_) => {
                std::fs::remove_file(&path)
                    .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                Ok(format!("removed park's extension {}", path.display()))
            }
        }
    }
    fn record(&self, input: &[u8], home: &Path, platform: &dyn Platform) -> Result<(), String> {
        let me = platform
            .process(std::process::id())
            .ok_or("own process unreadable")?;
        let p = pi_ancestor(platform, me.ppid).ok_or("no pi process above this hook")?;
        let rec = record_of(input, p.pid, p.start_ticks)?;
        let bytes = serde_json::to_vec(&rec).map_err(|e| e.to_string())?;
        let dir = records_dir(home);
        crate::agents::records::write(&dir, rec.pid, &bytes, |pid| {
            read_record(home, pid).is_none_or(|r| {
                platform
                    .process(pid)
                    .is_none_or(|q| q.start_ticks != r.start_ticks)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_its_park_and_only_parks_own_file_is_ever_replaced_or_removed() {
        let exe = Path::new("/opt/it's \"park\"/park");
        let src = extension_source(exe);
        assert_eq!(extension_exe(&src).as_deref(), Some(exe));
        assert_eq!(state_of(Some(&src), |_| true), IntegrationState::Installed);
        assert!(matches!(
            state_of(Some(&src), |_| false),
            IntegrationState::Broken(_)
        ));
        assert_eq!(state_of(None, |_| true), IntegrationState::Missing);
        assert!(matches!(
            state_of(Some("export default function () {}\n"), |_| true),
            IntegrationState::Unreadable(_)
        ));

        let d = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_string(), d.path().to_string_lossy().into_owned())];
        let path = extension_file(&env).unwrap();
        assert_eq!(path, d.path().join(".pi/agent/extensions/park.js"));
        assert!(Extension.install(&env, exe).unwrap().contains("wrote"));
        assert!(Extension.install(&env, exe).unwrap().contains("already"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), src);
        Extension.remove(&env).unwrap();
        assert!(!path.exists());
        // Someone else's park.js is never overwritten or removed.
        std::fs::write(&path, "export default function () {}\n").unwrap();
        assert!(Extension.install(&env, exe).is_err());
        assert!(Extension.remove(&env).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "export default function () {}\n"
        );
    }

    #[test]
    fn pi_coding_agent_dir_moves_the_extension() {
        let env = vec![
            ("HOME".to_string(), "/h".to_string()),
            (
                "PI_CODING_AGENT_DIR".to_string(),
                "/elsewhere/pi".to_string(),
            ),
        ];
        assert_eq!(
            extension_file(&env),
            Some(PathBuf::from("/elsewhere/pi/extensions/park.js"))
        );
    }

    #[test]
    fn a_record_holds_only_checked_fields() {
        let sid = "01a24cd4-0e3c-713e-9a66-5bcd17f42c45";
        let ok = format!(
            r#"{{"session_id":"{sid}","session_file":"/h/.pi/agent/sessions/--p--/x_{sid}.jsonl","cwd":"/p","status":"busy","argv":["--model","m"],"event":"agent_start"}}"#
        );
        let r = record_of(ok.as_bytes(), 7, 99).unwrap();
        assert_eq!((r.pid, r.start_ticks), (7, 99));
        assert_eq!(r.session_id, sid);
        assert_eq!(r.status, "busy");
        assert_eq!(r.argv, vec!["--model", "m"]);
        for bad in [
            r#"{"session_id":"../../etc","status":"idle"}"#.to_string(),
            format!(r#"{{"session_id":"{sid}","status":"sleeping"}}"#),
            format!(r#"{{"session_id":"{sid}"}}"#),
            "not json".to_string(),
        ] {
            assert!(record_of(bad.as_bytes(), 7, 99).is_err(), "{bad}");
        }
        let rel = format!(
            r#"{{"session_id":"{sid}","session_file":"rel/x.jsonl","cwd":"rel","status":"idle"}}"#
        );
        let r = record_of(rel.as_bytes(), 7, 99).unwrap();
        assert_eq!(
            (r.session_file, r.cwd),
            (None, None),
            "relative paths dropped"
        );
    }
}
