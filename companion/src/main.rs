//! `park`: park idle AI coding agents in tmux panes and resume the exact session later.
use clap::Parser;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let cli = match park::cli::fast_status(&args) {
        Some(cmd) => park::cli::Cli { cmd },
        // clap exits with 2 on usage errors, which is the documented code.
        None => park::cli::Cli::parse(),
    };
    std::process::exit(park::cli::run(cli).code());
}
