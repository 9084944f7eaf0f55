//! `park zellij install [--wasm PATH]` and `park zellij kdl`: the KDL on stdout, what was done on
//! stderr (so `park zellij install > park.kdl` keeps only the KDL). Exit 1 when there is no wasm to
//! install or it is not one (the existing install is left as it was).

use crate::cli::args::ZellijOp;
use crate::cli::term::report;
use park::exit::{ExitStatus, Stop};
use park::ops::zellij_plugin as zp;

pub fn run(op: ZellijOp) -> ExitStatus {
    let dest = match zp::dest(|k| std::env::var_os(k)) {
        Ok(d) => d,
        Err(e) => return report(Stop::refused(e).of("zellij")),
    };
    if let ZellijOp::Install { wasm } = op {
        let exe = std::env::current_exe().ok();
        let done = zp::find(wasm.as_deref(), zp::EMBEDDED, exe.as_deref(), &dest).and_then(
            |(source, bytes)| zp::install(&bytes, &dest).map(|how| (source, how, bytes.len())),
        );
        match done {
            Ok((source, how, n)) => eprintln!(
                "{} {} ({n} bytes, from {source})",
                match how {
                    zp::Installed::Written => "installed",
                    zp::Installed::Unchanged => "up to date:",
                },
                dest.display()
            ),
            Err(e) => return report(Stop::refused(e).of("zellij install")),
        }
    } else if !dest.is_file() {
        // The KDL names the install path: say when nothing is there yet.
        eprintln!(
            "note: {} is not installed yet: run `park zellij install`",
            dest.display()
        );
    }
    print!("{}", zp::kdl(&dest));
    ExitStatus::Success
}
