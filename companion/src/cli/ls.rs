//! `park ls` and `park candidates`: one scan, the `rows` accessors, printed as text or `--json`.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::ExitStatus;
use park::guards::Overrides;
use park::rows::ls::{rows, BACKGROUND_GROUP};
use park_protocol::{human_bytes, LsOutput, RowState, SCHEMA_VERSION};

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

pub fn render_text(out: &LsOutput) -> String {
    let mut t = String::new();
    let mut group = None;
    for r in &out.rows {
        let g = (r.session.clone(), r.window_index, r.window.clone());
        if group.as_ref() != Some(&g) {
            let parkable: u64 = out
                .rows
                .iter()
                .filter(|x| {
                    (x.session.clone(), x.window_index, x.window.clone()) == g
                        && x.state == RowState::Live
                        && x.reason.is_none()
                })
                .map(|x| x.anon_bytes)
                .sum();
            let servers: Vec<&park_protocol::ServerRow> = out
                .servers
                .iter()
                .filter(|x| Some(x.window_index) == r.window_index && x.session == r.session)
                .collect();
            let parkable = parkable
                + servers
                    .iter()
                    .filter(|x| x.state == "running" && x.note.is_none())
                    .map(|x| x.bytes)
                    .sum::<u64>();
            let head = if r.state == RowState::Background {
                BACKGROUND_GROUP.to_string()
            } else if r.session.is_empty() {
                "(no pane)".to_string()
            } else {
                format!(
                    "{}:{} {}",
                    r.session,
                    r.window_index.map(|i| i.to_string()).unwrap_or_default(),
                    r.window
                )
            };
            t.push_str(&format!(
                "{head}{}\n",
                if parkable > 0 {
                    format!("  (parkable {})", human_bytes(parkable))
                } else {
                    String::new()
                }
            ));
            for x in servers {
                t.push_str(&format!(
                    "  ⚙ {:<8} {:<6} {:<8} {:>7}  {}{}\n",
                    short(&x.name, 8),
                    x.pane.as_deref().unwrap_or("-"),
                    x.state,
                    human_bytes(x.bytes),
                    short(&x.command, 60),
                    x.note
                        .as_ref()
                        .map(|n| format!("  ({})", short(n, 60)))
                        .or_else(|| x.orphan.then(|| "  (detached)".into()))
                        .unwrap_or_default()
                ));
            }
            group = Some(g);
        }
        let mem = match r.state {
            RowState::Parked => format!(
                "freed {}",
                r.freed_bytes.map(human_bytes).unwrap_or_else(|| "?".into())
            ),
            _ => format!(
                "{} rss, frees ~{}",
                human_bytes(r.bytes),
                human_bytes(r.anon_bytes)
            ),
        };
        let state = match r.state {
            RowState::Parked => "❄ parked".to_string(),
            RowState::Untargetable => "⚠ untargetable".to_string(),
            RowState::Background => format!("◌ bg {}", r.status.as_str()),
            RowState::Live => r.status.as_str().to_string(),
        };
        // 📌 pinned (the autopilot never parks it); `?` the autopilot suggests parking it.
        let state = match (r.pinned, r.suggested) {
            (true, _) => format!("📌 {state}"),
            (false, true) => format!("{state} ?"),
            _ => state,
        };
        let sid = r
            .session_id
            .as_deref()
            .map(|s| &s[..8.min(s.len())])
            .unwrap_or("-");
        t.push_str(&format!(
            "  {:<5} {:<6} {:<14} {:>5}  {:<20} {:<8} {}  {}\n",
            r.pane,
            r.agent.as_str(),
            state,
            park::support::duration::brief(r.idle_seconds),
            mem,
            sid,
            short(&r.title, 40),
            short(&r.cwd, 50)
        ));
        if let Some(why) = &r.reason {
            t.push_str(&format!("        ↳ {}\n", short(why, 150)));
        }
        if let Some(w) = &r.wake {
            t.push_str(&format!("        ⏰ wakes {}\n", short(w, 150)));
        }
    }
    if out.rows.is_empty() {
        t.push_str("no agents found in tmux panes, nothing parked\n");
    }
    for w in &out.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}

pub fn ls(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = {
        let _t = park::support::profile::span("scan");
        match ctx.scan(true) {
            Ok(s) => s,
            Err(stop) => return report(stop),
        }
    };
    let out = {
        let _t = park::support::profile::span("ls.rows");
        rows(ctx, &s)
    };
    if json {
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        print!("{}", render_text(&out));
    }
    ExitStatus::Success
}

/// `park candidates`: every live, bound session except park's caller, ranked (see `verdict`).
pub fn candidates(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = match ctx.scan(true) {
        Ok(s) => s,
        Err(stop) => return report(stop),
    };
    let mut rows: Vec<park_protocol::Candidate> = s
        .found
        .iter()
        .filter(|f| f.pane.is_some())
        .filter(|f| park::guards::not_self(f, &s.caller).is_ok())
        .map(|f| {
            let last = f.tinfo.as_ref().and_then(|t| t.last_assistant.clone());
            let open = f.tinfo.as_ref().is_some_and(|t| t.turn_open);
            let (verdict, confidence, why) =
                park::guards::verdict::verdict(f.status, open, last.as_deref());
            park_protocol::Candidate {
                pane: f.pane.as_ref().map(|p| p.id.clone()).unwrap_or_default(),
                agent: f.proc.agent,
                session_id: f.ident.session_id.clone(),
                cwd: f.cwd.clone(),
                title: f.title.clone(),
                idle_seconds: f.idle_secs,
                verdict,
                confidence,
                why,
                last_assistant: last.map(|l| park::store::archive::cut(&l, 400)),
                anon_bytes: f.mem.anon,
                refusal: park::guards::check(
                    f,
                    &s.caller,
                    s.pane_error.as_deref(),
                    Overrides::default(),
                )
                .err()
                .map(|r| r.why),
            }
        })
        .collect();
    park::guards::verdict::sort(&mut rows);
    if json {
        let out = park_protocol::CandidatesOutput {
            schema: SCHEMA_VERSION,
            rows,
            warnings: s.warnings.clone(),
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
        return ExitStatus::Success;
    }
    if rows.is_empty() {
        println!("no live agent sessions");
    }
    for r in &rows {
        println!(
            "{:<8} {:<6} idle {:>4}  {:<15} {:>3.0}%  {:>6}  {}",
            r.pane,
            r.agent.as_str(),
            park::support::duration::brief(r.idle_seconds),
            r.verdict.as_str(),
            r.confidence * 100.0,
            human_bytes(r.anon_bytes),
            short(&r.title, 40)
        );
        println!("         {}", r.why);
        if let Some(l) = &r.last_assistant {
            println!(
                "         “{}”",
                short(&l.split_whitespace().collect::<Vec<_>>().join(" "), 100)
            );
        }
        if let Some(why) = &r.refusal {
            println!("         park would refuse: {}", short(why, 120));
        }
    }
    ExitStatus::Success
}
