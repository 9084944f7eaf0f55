//! `park`: park idle AI coding agents in tmux panes and resume the exact session later.
//!
//! The command line (`cli/`: clap, dispatch, terminal prompts, printing, the picker) is compiled
//! only into this binary; everything it runs is the `park` library.
use clap::Parser;

mod cli;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let cli = match cli::fast_status(&args) {
        Some(cmd) => cli::Cli { cmd },
        // clap exits with 2 on usage errors, which is the documented code.
        None => cli::Cli::parse(),
    };
    std::process::exit(cli::run(cli).code());
}
