//! `park hold`: the placeholder a parked pane runs. It shows what is parked there and resumes it on
//! Enter; when the entry goes (resumed elsewhere, forgotten) it becomes the user's shell, so the
//! pane stays useful.

use park::ctx::Ctx;
use park::exit::ExitStatus;
use park::ops::unpark;
use std::io::Write;

/// The placeholder: show what is parked here and resume on Enter; if the entry disappears (resumed
/// elsewhere, forgotten), become the user's shell so the pane stays useful.
pub fn hold(ctx: &Ctx, eid: &str, now: bool) -> ExitStatus {
    use std::os::unix::process::CommandExt;
    let mut first = true;
    loop {
        let e = match ctx.ledger.load(eid) {
            Ok(Some(e)) => e,
            _ => {
                let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
                println!("\r\nnothing parked here any more; starting {shell}");
                let err = std::process::Command::new(&shell).exec();
                eprintln!("park: cannot start {shell}: {err}");
                std::thread::sleep(std::time::Duration::from_secs(3600));
                continue;
            }
        };
        if !(now && first) {
            print!("\x1b[?1049l\x1b[?25h\x1b[0m\x1b[H\x1b[2J");
            println!("❄ parked: {} session {}\r", e.agent.as_str(), e.session_id);
            println!("  {}\r", e.place.title);
            println!("  in {}\r", e.cwd);
            if let Some(err) = &e.last_error {
                println!("  last attempt: {err}\r");
            }
            println!("\r\n  Press Enter to resume it here.\r");
            let _ = std::io::stdout().flush();
            if !wait_enter_or_gone(ctx, eid) {
                continue;
            }
        }
        first = false;
        let r = unpark::exec_in_pane(ctx, eid, eid);
        println!("\r\n{}: {}\r", r.outcome, r.reason.unwrap_or_default());
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Waits for a line on stdin, checking every second that the entry still exists.
fn wait_enter_or_gone(ctx: &Ctx, eid: &str) -> bool {
    use std::os::fd::AsRawFd;
    let fd = std::io::stdin().as_raw_fd();
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        if n > 0 {
            let mut line = String::new();
            return match std::io::stdin().read_line(&mut line) {
                Ok(0) => {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    false
                }
                Ok(_) => true,
                Err(_) => false,
            };
        }
        if !matches!(ctx.ledger.load(eid), Ok(Some(_))) {
            return false;
        }
    }
}
