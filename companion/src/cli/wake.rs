//! The wake-up surface: the `--wake-…` flags of `park park`, `park wake now|cancel`, `park note
//! --wake`, `park waker [--ensure]`, and typing the wake note into a resumed agent.
//!
//! Contract: flags are validated into a [`Wake`] before anything is parked (a bad time, duration,
//! matcher, command or URL is a usage error, exit 2). The note is typed only into the pane running
//! the resumed session, only once that agent reads as idle with an empty composer, as one line
//! followed by Enter; a note that cannot be delivered is appended to the session's archived notes
//! and the result says so, so it is never lost.

use crate::cli::term::report;
use jiff::Timestamp;
use park::ctx::Ctx;
use park::exit::{ExitStatus, Stop};
use park::model::probe;
use park::model::wake::{self, OnDeadline, Wake};
use park_protocol::Outcome;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct WakeFlags {
    /// Wake at a time: RFC 3339, `YYYY-MM-DD HH:MM` (local), or `HH:MM` (today, else tomorrow).
    #[arg(long, value_name = "TIME", conflicts_with_all = ["wake_in", "wake_on_cmd", "wake_on_url"])]
    pub wake_at: Option<String>,
    /// Wake after a delay (30s, 5m, 2h, 3d; at most 14 days).
    #[arg(long, value_name = "DUR", conflicts_with_all = ["wake_on_cmd", "wake_on_url"])]
    pub wake_in: Option<String>,
    /// Wake when this command matches (`--when`; default exit 0). Run without a shell unless --shell.
    #[arg(long, value_name = "CMD", conflicts_with = "wake_on_url")]
    pub wake_on_cmd: Option<String>,
    /// Wake when this http(s) URL matches (`--when`; default a 2xx status).
    #[arg(long, value_name = "URL")]
    pub wake_on_url: Option<String>,
    /// Wake 1 minute after the usage limit on the agent's screen resets (Claude Code, Codex); refused when no limit screen shows.
    #[arg(long, conflicts_with_all = ["wake_at", "wake_in", "wake_on_cmd", "wake_on_url"])]
    pub wake_on_limit_reset: bool,
    /// Run --wake-on-cmd through `sh -c`.
    #[arg(long)]
    pub shell: bool,
    /// How often to run the probe (at least 5s; default 30s).
    #[arg(long, value_name = "DUR")]
    pub every: Option<String>,
    /// Give up waiting after this long, or at this time.
    #[arg(long, value_name = "DUR|TIME")]
    pub deadline: Option<String>,
    /// At the deadline: `stay` parked (default, records "timed out") or `resume` with a note saying so.
    #[arg(long, value_name = "stay|resume", default_value = "stay")]
    pub on_deadline: String,
    /// What counts as a match: exit=N, status=N, status=LO..HI, 'body contains:TEXT', 'body matches:RE' (repeatable; all must hold).
    #[arg(long, value_name = "MATCHER")]
    pub when: Vec<String>,
    /// A note typed into the agent (after a `[park]` line saying why it woke) once it is resumed and idle. Repeatable.
    #[arg(long, value_name = "TEXT")]
    pub note: Vec<String>,
}

impl WakeFlags {
    fn any(&self) -> bool {
        self.wake_at.is_some()
            || self.wake_in.is_some()
            || self.wake_on_cmd.is_some()
            || self.wake_on_url.is_some()
    }
}

/// The wake the flags ask for (None: no wake flags), validated.
pub fn build(f: &WakeFlags, now: Timestamp) -> Result<Option<Wake>, String> {
    let probe_only = f.every.is_some() || f.deadline.is_some() || !f.when.is_empty() || f.shell;
    if f.wake_on_limit_reset {
        if probe_only {
            return Err(
                "--every/--deadline/--when/--shell do not apply to --wake-on-limit-reset".into(),
            );
        }
        // The time comes from each agent's screen at park time (`park_batch`).
        return Ok(None);
    }
    if !f.any() {
        if probe_only {
            return Err(
                "--every/--deadline/--when/--shell need --wake-on-cmd or --wake-on-url".into(),
            );
        }
        if !f.note.is_empty() {
            return Err(
                "--note needs a --wake-… condition (or use `park note --wake <target> TEXT`)"
                    .into(),
            );
        }
        return Ok(None);
    }
    let mut w = Wake::new(now);
    w.notes = f.note.clone();
    if let Some(a) = &f.wake_at {
        w.at = Some(wake::parse_at(a, now)?.to_string());
    }
    if let Some(d) = &f.wake_in {
        w.at = Some(wake::parse_in(d, now)?.to_string());
    }
    if w.at.is_some() && probe_only {
        return Err(
            "--every/--deadline/--when/--shell apply to --wake-on-cmd/--wake-on-url, not to a time"
                .into(),
        );
    }
    let p = match (&f.wake_on_cmd, &f.wake_on_url) {
        (Some(c), None) => Some(probe::parse_cmd(c, f.shell)?),
        (None, Some(u)) => {
            if f.shell {
                return Err("--shell applies to --wake-on-cmd".into());
            }
            Some(probe::parse_url(u)?)
        }
        _ => None,
    };
    if let Some(p) = p {
        let ms = f
            .when
            .iter()
            .map(|m| probe::parse_matcher(m))
            .collect::<Result<Vec<_>, _>>()?;
        probe::validate_matchers(&p, &ms)?;
        w.every_secs = match &f.every {
            Some(e) => wake::parse_every(e)?,
            None => wake::DEFAULT_EVERY.as_secs(),
        };
        if let Some(d) = &f.deadline {
            w.deadline = Some(wake::parse_deadline(d, now)?.to_string());
        }
        w.when = ms;
        w.probe = Some(p);
    }
    w.on_deadline = match f.on_deadline.as_str() {
        "stay" => OnDeadline::Stay,
        "resume" => OnDeadline::Resume,
        o => return Err(format!("--on-deadline {o:?}: expected stay or resume")),
    };
    Ok(Some(w))
}

/// Starts the waker if something is pending; a failure is a warning, never an error of the
/// command that asked.
pub fn ensure_quietly(ctx: &Ctx) {
    if let Err(e) = park::ops::waker::ensure(ctx, false) {
        eprintln!("park: warning: {e}");
    }
}

/// The parked entries `targets` name (each target must name at least one).
fn parked_targets(
    ctx: &Ctx,
    targets: &[String],
) -> Result<Vec<(String, park::model::entry::Entry)>, (ExitStatus, String)> {
    let parsed = park::ops::park_batch::parse_targets(targets)
        .map_err(|stop| (crate::cli::term::report(stop), String::new()))?;
    let all: Vec<_> = parsed.iter().map(|(_, p)| p.clone()).collect();
    let entries = park::ops::unpark::placed_for(ctx, &all, ctx.ledger.all().0);
    let here = park::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let found = park::ops::forget::live_for(ctx, &all);
    let mut out = vec![];
    for (t, p) in parsed {
        let hits = match park::guards::target::resolve_parked(&p, &found, &entries, here.as_deref())
        {
            Ok(h) => h,
            // A session lost with its multiplexer has no entry until `park rebuild` adopts it.
            Err(park::guards::target::Miss::Nothing(why)) => {
                let lost = ctx
                    .scan(false)
                    .ok()
                    .and_then(|s| park::ops::journal::lost_named(ctx, &s, &p));
                return Err((ExitStatus::Refused, format!("{t}: {}", lost.unwrap_or(why))));
            }
            Err(why) => return Err((ExitStatus::Refused, format!("{t}: {why}"))),
        };
        for e in hits {
            if !out
                .iter()
                .any(|(_, x): &(String, park::model::entry::Entry)| x.id == e.id)
            {
                out.push((t.clone(), e.clone()));
            }
        }
    }
    Ok(out)
}

/// Changes an entry's wake (see [`park::ops::park::edit_parked`]).
fn edit_wake(
    ctx: &Ctx,
    eid: &str,
    f: impl FnOnce(&mut Option<Wake>),
) -> Result<park::model::entry::Entry, String> {
    park::ops::park::edit_parked(ctx, eid, |e| {
        f(&mut e.wake);
        Ok(())
    })
}

/// `park note --wake <target> TEXT`: queue a note for the session's next resume.
pub fn note_wake(ctx: &Ctx, raw: &str, text: &[String]) -> ExitStatus {
    let text = text.join(" ");
    if text.trim().is_empty() {
        return report(Stop::usage("give the note's text").of("note --wake"));
    }
    let hits = match parked_targets(ctx, &[raw.to_string()]) {
        Ok(h) => h,
        Err((c, why)) => {
            if !why.is_empty() {
                eprintln!("park note --wake: {why} (a wake note needs a parked session)");
            }
            return c;
        }
    };
    if hits.len() > 1 {
        eprintln!(
            "park note --wake: {raw} names {} parked sessions; name one",
            hits.len()
        );
        return ExitStatus::Refused;
    }
    let (_, e) = &hits[0];
    match edit_wake(ctx, &e.id, |w| {
        w.get_or_insert_with(|| Wake::new(Timestamp::now()))
            .notes
            .push(text.trim().to_string())
    }) {
        Ok(e) => {
            println!(
                "{}: note queued; it is typed into the agent when it is resumed ({})",
                e.id,
                e.wake
                    .as_ref()
                    .map(|w| w.describe(Timestamp::now()))
                    .unwrap_or_default()
            );
            ExitStatus::Success
        }
        Err(why) => {
            eprintln!("park note --wake: {}: {why}", e.id);
            ExitStatus::Refused
        }
    }
}

/// `park wake now|cancel <target>…`.
pub fn wake_cmd(ctx: &Ctx, action: &str, targets: &[String], json: bool) -> ExitStatus {
    let hits = match parked_targets(ctx, targets) {
        Ok(h) => h,
        Err((c, why)) => {
            if !why.is_empty() {
                eprintln!("park wake: {why}");
            }
            return c;
        }
    };
    let mut results = vec![];
    for (t, e) in hits {
        let r = if action == "cancel" {
            match edit_wake(ctx, &e.id, |w| {
                // The condition goes; queued notes stay for the next resume.
                if let Some(x) = w.as_mut() {
                    x.at = None;
                    x.probe = None;
                    x.deadline = None;
                }
            }) {
                Ok(_) => park_protocol::ActionResult {
                    target: t.clone(),
                    pane: Some(e.place.pane.clone()),
                    session_id: Some(e.session_id.clone()),
                    outcome: Outcome::Cancelled,
                    reason: Some("the wake-up is cancelled; the session stays parked".into()),
                    freed_bytes: e.freed_bytes,
                },
                Err(why) => park_protocol::ActionResult::new(&t, Outcome::Refused, Some(why)),
            }
        } else {
            let (ok, why) =
                park::ops::waker::fire(ctx, &e, "it was woken by hand (park wake now)", None, None);
            park_protocol::ActionResult {
                target: t.clone(),
                pane: Some(e.place.pane.clone()),
                session_id: Some(e.session_id.clone()),
                outcome: if ok {
                    Outcome::Unparked
                } else {
                    Outcome::Failed
                },
                reason: Some(why).filter(|w| !w.is_empty()),
                freed_bytes: e.freed_bytes,
            }
        };
        results.push(r);
    }
    crate::cli::term::print_results(&results, json)
}
