//! `park integrate opencode`: a plugin in OpenCode's global config
//! (`$XDG_CONFIG_HOME/opencode/plugin/park.js`, else `~/.config/opencode/plugin/park.js`) that
//! tells park which session each OpenCode process runs. OpenCode loads it inside the process
//! (`process.pid` is the TUI's; measured on 1.18.33) and hands it every bus event: a main
//! session's `session.created` and each user `message.updated` name the session the process is
//! on, `session.status` says busy or idle, `permission.asked`/`permission.replied` a permission
//! prompt; sub-agent sessions (`info.parentID`) are told apart. When the session or its state
//! changes, the plugin runs `<park> hook opencode` with `{session_id, status, event}` on stdin,
//! one at a time in event order; `park hook opencode` writes
//! `$PARK_HOME/integrations/opencode/<pid>.json` for its OpenCode parent, with its start time.
//! A fork that only renames OpenCode (Kilo) gets the same plugin under its own names
//! (`~/.config/kilo/plugin/park.js`, `park hook kilo`, `integrations/kilo/`).
//!
//! Contract:
//! * install writes exactly that one file (replaced atomically) and only over a file that is
//!   park's (its first line); remove deletes exactly it; a file of the same name that is not
//!   park's is never touched, and the error says so.
//! * the plugin never fails OpenCode: every step is in `try`, a missing park binary is ignored.
//! * switching sessions in the TUI (`/sessions`) without a prompt fires no event: the record then
//!   names the previous session, which is why identity also checks the pane's title.

use super::super::{Integration, IntegrationState};
use super::Flavor;
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::Platform;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The plugin file's first line, by which park knows the file is its own.
fn first_line(f: &Flavor) -> String {
    let a = f.spec.agent.as_str();
    format!(
        "// park integration for {} (`park integrate {a}`; `park integrate --remove {a}` removes it)",
        f.spec.name
    )
}

/// One `integrations/opencode/<pid>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub pid: u32,
    pub start_ticks: u64,
    /// The main session the process is on (`None` once it was deleted).
    pub session_id: Option<String>,
    /// `busy`, `idle` or `waiting` (a permission prompt).
    pub status: String,
    pub event: String,
}

pub fn records_dir(home: &Path, f: &Flavor) -> PathBuf {
    home.join("integrations").join(f.spec.agent.as_str())
}

pub fn read_record(dir: &Path, pid: u32) -> Option<Record> {
    crate::agents::records::read(dir, pid).filter(|r: &Record| r.pid == pid)
}

/// The plugin file for `env`.
pub fn plugin_file(f: &Flavor, env: &[(String, String)]) -> Option<PathBuf> {
    f.config_home(env).map(|d| d.join("plugin").join("park.js"))
}

/// The plugin's source for `park_exe`.
pub fn plugin_source(f: &Flavor, park_exe: &Path) -> String {
    let exe = serde_json::to_string(&park_exe.to_string_lossy()).unwrap_or_default();
    let first = first_line(f);
    let agent = f.spec.agent.as_str();
    let name = f.spec.name;
    format!(
        r#"{first}
// It tells park which session this {name} process is on and whether it is busy, so that
// `park` can free its memory and resume exactly this session later. It never blocks {name}.
import {{ spawn }} from "node:child_process";

const PARK = {exe};

export const ParkIntegration = async () => {{
  const subagents = new Set();
  let current = null;
  let status = "idle";
  let sent = "";
  let chain = Promise.resolve();
  const tell = (event) => {{
    const key = `${{current}}|${{status}}`;
    if (key === sent) return;
    sent = key;
    const line = JSON.stringify({{ session_id: current, status, event }});
    chain = chain.then(
      () =>
        new Promise((done) => {{
          try {{
            const p = spawn(PARK, ["hook", "{agent}"], {{ stdio: ["pipe", "ignore", "ignore"] }});
            p.on("error", () => done());
            p.on("close", () => done());
            p.stdin.on("error", () => {{}});
            p.stdin.end(line);
          }} catch {{
            done();
          }}
        }}),
    );
  }};
  return {{
    event: async ({{ event }}) => {{
      try {{
        const p = event.properties || {{}};
        switch (event.type) {{
          case "session.created": {{
            const info = p.info || {{}};
            if (info.parentID) {{
              subagents.add(info.id);
              return;
            }}
            current = info.id;
            status = "idle";
            tell(event.type);
            return;
          }}
          case "message.updated": {{
            const info = p.info || {{}};
            if (info.role !== "user" || subagents.has(info.sessionID)) return;
            if (info.sessionID && info.sessionID !== current) {{
              current = info.sessionID;
              tell(event.type);
            }}
            return;
          }}
          case "session.status": {{
            if (p.sessionID !== current) return;
            const t = p.status && p.status.type;
            if (status === "waiting" && t !== "idle") return;
            status = t === "idle" ? "idle" : "busy";
            tell(event.type);
            return;
          }}
          case "permission.asked": {{
            if (p.sessionID !== current && !subagents.has(p.sessionID)) return;
            status = "waiting";
            tell(event.type);
            return;
          }}
          case "permission.replied": {{
            if (status !== "waiting") return;
            status = "busy";
            tell(event.type);
            return;
          }}
          case "session.deleted": {{
            const info = p.info || {{}};
            if (info.id !== current) return;
            current = null;
            status = "idle";
            tell(event.type);
            return;
          }}
        }}
      }} catch {{}}
    }},
  }};
}};
"#
    )
}

/// The park binary a plugin file runs, if the file is park's.
fn plugin_exe(f: &Flavor, text: &str) -> Option<PathBuf> {
    if text.lines().next() != Some(first_line(f).as_str()) {
        return None;
    }
    let line = text.lines().find(|l| l.starts_with("const PARK = "))?;
    let lit = line.strip_prefix("const PARK = ")?.strip_suffix(';')?;
    serde_json::from_str::<String>(lit).ok().map(PathBuf::from)
}

/// The state of a plugin file's text (pure; `exists` tells whether a park binary is there).
pub fn state_of(
    f: &Flavor,
    text: Option<&str>,
    exists: impl Fn(&Path) -> bool,
) -> IntegrationState {
    let Some(text) = text else {
        return IntegrationState::Missing;
    };
    match plugin_exe(f, text) {
        Some(exe) if exists(&exe) => IntegrationState::Installed,
        Some(exe) => IntegrationState::Broken(format!(
            "the plugin runs {}, which is not there any more: run `park integrate {}` again",
            exe.display(),
            f.spec.agent.as_str()
        )),
        None => IntegrationState::Unreadable(
            "a plugin named park.js that park did not write is in the way; not touching it".into(),
        ),
    }
}

fn read_plugin(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// What `park hook opencode` reads on stdin.
#[derive(Debug, Deserialize)]
struct Input {
    session_id: Option<String>,
    status: Option<String>,
    event: Option<String>,
}

/// The process that ran the hook: the nearest ancestor of `from` that runs `f`'s program.
fn ancestor(
    f: &Flavor,
    platform: &dyn Platform,
    from: u32,
) -> Option<crate::adapters::platform::ProcInfo> {
    let mut pid = from;
    for _ in 0..4 {
        let p = platform.process(pid)?;
        if program_of(&p.argv).is_some_and(|(n, i)| f.spec.is_program(&n, &p.argv[i])) {
            return Some(p);
        }
        pid = p.ppid;
    }
    None
}

/// The plugin integration of OpenCode or a fork.
pub struct Plugin(pub &'static Flavor);

impl Integration for Plugin {
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf> {
        plugin_file(self.0, env)
    }
    fn state(&self, env: &[(String, String)]) -> IntegrationState {
        let Some(path) = plugin_file(self.0, env) else {
            return IntegrationState::Unreadable("neither XDG_CONFIG_HOME nor HOME is set".into());
        };
        match read_plugin(&path) {
            Ok(t) => state_of(self.0, t.as_deref(), |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = plugin_file(self.0, env).ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
        let want = plugin_source(self.0, park_exe);
        match read_plugin(&path)? {
            Some(t) if t == want => return Ok(format!("already in {}", path.display())),
            Some(t) if plugin_exe(self.0, &t).is_none() => {
                return Err(format!(
                    "{} exists and is not park's; not touching it",
                    path.display()
                ))
            }
            _ => {}
        }
        let dir = path.parent().ok_or("plugin file has no directory")?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        crate::support::fs::write_atomic(&path, want.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(format!(
            "wrote the plugin {} (it runs `{} hook {}`); restart running {} processes to load it",
            path.display(),
            park_exe.display(),
            self.0.spec.agent.as_str(),
            self.0.spec.name
        ))
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = plugin_file(self.0, env).ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
        match read_plugin(&path)? {
            None => Ok(format!("nothing to remove: no {}", path.display())),
            Some(t) if plugin_exe(self.0, &t).is_none() => {
                Err(format!("{} is not park's; not touching it", path.display()))
            }
            Some(_) => {
                std::fs::remove_file(&path)
                    .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                Ok(format!("removed park's plugin {}", path.display()))
            }
        }
    }
    fn record(&self, input: &[u8], home: &Path, platform: &dyn Platform) -> Result<(), String> {
        let inp: Input = serde_json::from_slice(input).map_err(|e| format!("hook input: {e}"))?;
        let session_id = match inp.session_id {
            Some(s) => Some(super::valid_id(&s).ok_or("hook input holds no valid session id")?),
            None => None,
        };
        let status = match inp.status.as_deref() {
            Some(s @ ("busy" | "idle" | "waiting")) => s.to_string(),
            _ => return Err("hook input holds no valid status".into()),
        };
        let me = platform
            .process(std::process::id())
            .ok_or("own process unreadable")?;
        let o = ancestor(self.0, platform, me.ppid)
            .ok_or_else(|| format!("no {} process above this hook", self.0.spec.name))?;
        let rec = Record {
            pid: o.pid,
            start_ticks: o.start_ticks,
            session_id,
            status,
            event: inp.event.unwrap_or_default(),
        };
        let bytes = serde_json::to_vec(&rec).map_err(|e| e.to_string())?;
        let dir = records_dir(home, self.0);
        crate::agents::records::write(&dir, rec.pid, &bytes, |pid| {
            read_record(&dir, pid).is_none_or(|r| {
                platform
                    .process(pid)
                    .is_none_or(|p| p.start_ticks != r.start_ticks)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_its_park_and_only_parks_own_file_is_ever_replaced_or_removed() {
        let exe = Path::new("/opt/it's \"park\"/park");
        let f = &super::super::OPENCODE_FLAVOR;
        let src = plugin_source(f, exe);
        assert_eq!(plugin_exe(f, &src).as_deref(), Some(exe));
        assert_eq!(
            state_of(f, Some(&src), |_| true),
            IntegrationState::Installed
        );
        assert!(matches!(
            state_of(f, Some(&src), |_| false),
            IntegrationState::Broken(_)
        ));
        assert_eq!(state_of(f, None, |_| true), IntegrationState::Missing);
        assert!(matches!(
            state_of(f, Some("export const Mine = 1;\n"), |_| true),
            IntegrationState::Unreadable(_)
        ));

        let d = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_string(), d.path().to_string_lossy().into_owned())];
        let path = plugin_file(f, &env).unwrap();
        assert_eq!(path, d.path().join(".config/opencode/plugin/park.js"));
        let said = Plugin(f).install(&env, exe).unwrap();
        assert!(said.contains("wrote"), "{said}");
        assert!(Plugin(f).install(&env, exe).unwrap().contains("already"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), src);
        Plugin(f).remove(&env).unwrap();
        assert!(!path.exists());
        // Someone else's park.js is never overwritten or removed.
        std::fs::write(&path, "export const Mine = 1;\n").unwrap();
        assert!(Plugin(f).install(&env, exe).is_err());
        assert!(Plugin(f).remove(&env).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "export const Mine = 1;\n"
        );
    }
}
