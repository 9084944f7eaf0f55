//! Read-only access to OpenCode's SQLite store (`opencode.db`, WAL mode; 1.18.33's schema:
//! tables `session`, `message`, `part` with the payload as JSON in `data`).
//!
//! Contract: the database is opened read-only through SQLite itself (never copied, never
//! written; a WAL database reads consistently while OpenCode writes), with a short busy timeout;
//! every function returns `Err(why)` for a missing or unreadable database, never panics, and a
//! session id only ever reaches SQL as a bound parameter. An export reads the session, its
//! messages and their parts inside one read transaction, so it is one consistent snapshot.

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One `session` row (times in milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    /// Set for a sub-agent's session (a task the main session started).
    pub parent_id: Option<String>,
    pub directory: String,
    pub title: String,
    pub time_created: i64,
    pub time_updated: i64,
}

/// One read-only connection to a database: a scan's checks of one process share it.
pub struct Db {
    c: Connection,
    path: PathBuf,
}

fn open(db: &Path) -> Result<Connection, String> {
    if !db.is_file() {
        return Err(format!("OpenCode database {} not found", db.display()));
    }
    let c = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("{}: {e}", db.display()))?;
    c.busy_timeout(std::time::Duration::from_secs(2))
        .map_err(|e| format!("{}: {e}", db.display()))?;
    Ok(c)
}

const SESSION_COLS: &str = "id, parent_id, directory, title, time_created, time_updated";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        directory: r.get(2)?,
        title: r.get(3)?,
        time_created: r.get(4)?,
        time_updated: r.get(5)?,
    })
}

impl Db {
    /// Opens `path` read-only (`Err`: missing or unreadable).
    pub fn open(path: &Path) -> Result<Db, String> {
        Ok(Db {
            c: open(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The session `id`, if the database holds it.
    pub fn session(&self, id: &str) -> Result<Option<SessionRow>, String> {
        let (c, db) = (&self.c, &self.path);
        c.query_row(
            &format!("SELECT {SESSION_COLS} FROM session WHERE id = ?1"),
            [id],
            row,
        )
        .optional()
        .map_err(|e| format!("{}: {e}", db.display()))
    }

    /// Main (not sub-agent) sessions of `directory` created at or after `after_ms`, but `except`.
    pub fn created_since(
        &self,
        directory: &str,
        after_ms: i64,
        except: &str,
    ) -> Result<Vec<String>, String> {
        let c = &self.c;
        let mut st = c
            .prepare(
                "SELECT id FROM session WHERE directory = ?1 AND time_created >= ?2 AND id <> ?3 AND parent_id IS NULL",
            )
            .map_err(|e| e.to_string())?;
        let ids = st
            .query_map(rusqlite::params![directory, after_ms, except], |r| {
                r.get::<_, String>(0)
            })
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .collect();
        Ok(ids)
    }

    /// Every main session in the database: `(id, directory)`.
    pub fn all(&self) -> Result<Vec<(String, String)>, String> {
        let c = &self.c;
        let mut st = c
            .prepare(
                "SELECT id, directory FROM session WHERE parent_id IS NULL ORDER BY time_created",
            )
            .map_err(|e| e.to_string())?;
        let v = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .collect();
        Ok(v)
    }

    fn parse_data(s: &str) -> Value {
        serde_json::from_str(s).unwrap_or_else(|_| json!({"unreadable": s}))
    }

    /// Titles of the main sessions other than `except` (the pane-title check's ambiguity test).
    pub fn titled(&self, except: &str) -> Result<Vec<String>, String> {
        let c = &self.c;
        let mut st = c
            .prepare("SELECT title FROM session WHERE parent_id IS NULL AND id <> ?1")
            .map_err(|e| e.to_string())?;
        let v = st
            .query_map([except], |r| r.get::<_, String>(0))
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .collect();
        Ok(v)
    }

    /// The session as park's transcript JSONL (see `transcript`): a `session` line, then one
    /// `message` line per message in creation order, with its parts. `window`: only the first
    /// message and the latest `n` (what a scan needs), else all.
    pub fn export(&self, id: &str, window: Option<usize>) -> Result<Vec<u8>, String> {
        let db = &self.path;
        let tx = self.c.unchecked_transaction().map_err(|e| e.to_string())?;
        let s = tx
            .query_row(
                &format!("SELECT {SESSION_COLS} FROM session WHERE id = ?1"),
                [id],
                row,
            )
            .optional()
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("OpenCode session {id} is not in {}", db.display()))?;
        let mut out = Vec::new();
        let head = json!({"type": "session", "info": {
            "id": s.id, "parentID": s.parent_id, "directory": s.directory, "title": s.title,
            "time": {"created": s.time_created, "updated": s.time_updated}}});
        out.extend_from_slice(head.to_string().as_bytes());
        out.push(b'\n');
        let ids: Vec<String> = {
            let mut st = tx
                .prepare("SELECT id FROM message WHERE session_id = ?1 ORDER BY time_created, id")
                .map_err(|e| e.to_string())?;
            let v = st
                .query_map([id], |r| r.get::<_, String>(0))
                .map_err(|e| e.to_string())?
                .filter_map(Result::ok)
                .collect();
            v
        };
        let chosen: Vec<&String> = match window {
            Some(n) if ids.len() > n + 1 => ids[..1].iter().chain(&ids[ids.len() - n..]).collect(),
            _ => ids.iter().collect(),
        };
        let mut msg = tx
            .prepare("SELECT data FROM message WHERE id = ?1")
            .map_err(|e| e.to_string())?;
        let mut prt = tx
            .prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")
            .map_err(|e| e.to_string())?;
        for mid in chosen {
            let data: String = msg
                .query_row([mid], |r| r.get(0))
                .map_err(|e| e.to_string())?;
            let mut info = Self::parse_data(&data);
            if let Some(o) = info.as_object_mut() {
                o.insert("id".into(), json!(mid));
                o.insert("sessionID".into(), json!(id));
            }
            let parts: Vec<Value> = prt
                .query_map([mid], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(|e| e.to_string())?
                .filter_map(Result::ok)
                .map(|(pid, d)| {
                    let mut v = Self::parse_data(&d);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("id".into(), json!(pid));
                    }
                    v
                })
                .collect();
            let line = json!({"type": "message", "info": info, "parts": parts});
            out.extend_from_slice(line.to_string().as_bytes());
            out.push(b'\n');
        }
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A database with OpenCode 1.18.33's three tables (the columns park reads).
    pub(crate) fn fixture(db: &Path) -> Connection {
        let c = Connection::open(db).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
               slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
               time_created integer NOT NULL, time_updated integer NOT NULL);
             CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
               time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
             CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
               time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
        )
        .unwrap();
        c
    }

    pub(crate) fn add_session(
        c: &Connection,
        id: &str,
        parent: Option<&str>,
        dir: &str,
        title: &str,
        created: i64,
    ) {
        c.execute(
            "INSERT INTO session VALUES (?1, 'global', ?2, 'slug', ?3, ?4, '1.18.33', ?5, ?5)",
            rusqlite::params![id, parent, dir, title, created],
        )
        .unwrap();
    }

    pub(crate) fn add_message(
        c: &Connection,
        sid: &str,
        mid: &str,
        t: i64,
        data: &str,
        parts: &[&str],
    ) {
        c.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![mid, sid, t, data],
        )
        .unwrap();
        for (i, p) in parts.iter().enumerate() {
            c.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![format!("prt_{mid}_{i}"), mid, sid, t, p],
            )
            .unwrap();
        }
    }

    #[test]
    fn reads_sessions_and_exports_one_in_order_while_another_connection_writes() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("opencode.db");
        let c = fixture(&db);
        add_session(&c, "ses_a", None, "/w/p", "First", 1000);
        add_session(&c, "ses_sub", Some("ses_a"), "/w/p", "Sub", 3000);
        add_session(&c, "ses_b", None, "/w/p", "Second", 5000);
        add_message(
            &c,
            "ses_a",
            "msg_1",
            1100,
            r#"{"role":"user","time":{"created":1100}}"#,
            &[r#"{"type":"text","text":"hi"}"#],
        );
        add_message(
            &c,
            "ses_a",
            "msg_2",
            1200,
            r#"{"role":"assistant","time":{"created":1200,"completed":1300},"finish":"stop"}"#,
            &[r#"{"type":"text","text":"hello"}"#],
        );
        let o = Db::open(&db).unwrap();
        assert_eq!(o.session("ses_a").unwrap().unwrap().title, "First");
        assert_eq!(o.session("ses_x").unwrap(), None);
        assert_eq!(
            o.created_since("/w/p", 2000, "ses_a").unwrap(),
            vec!["ses_b"]
        );
        assert!(o.created_since("/w/p", 6000, "ses_a").unwrap().is_empty());
        assert_eq!(
            o.all().unwrap().len(),
            2,
            "sub-agent sessions are not listed"
        );
        let out = String::from_utf8(o.export("ses_a", None).unwrap()).unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["info"]["id"], "ses_a");
        assert_eq!(lines[1]["parts"][0]["text"], "hi");
        assert_eq!(lines[2]["info"]["finish"], "stop");
        assert_eq!(lines[2]["info"]["sessionID"], "ses_a");
        // Hostile ids are data, never SQL.
        assert!(o.export("x' OR '1'='1", None).is_err());
        assert_eq!(o.titled("ses_a").unwrap(), vec!["Second"]);
        for i in 3..10 {
            add_message(
                &c,
                "ses_a",
                &format!("msg_{i}"),
                1200 + i,
                r#"{"role":"user"}"#,
                &[],
            );
        }
        let w = String::from_utf8(o.export("ses_a", Some(2)).unwrap()).unwrap();
        let ids: Vec<String> = w
            .lines()
            .skip(1)
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["info"]["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            ids,
            ["msg_1", "msg_8", "msg_9"],
            "the first message and the latest two"
        );
        assert!(Db::open(&d.path().join("missing.db")).is_err());
    }
}
