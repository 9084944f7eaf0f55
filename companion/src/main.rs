//! `park`: park idle AI coding agents in tmux panes and resume the exact session later.
use clap::Parser;

fn main() {
    // clap exits with 2 on usage errors, which is the documented code.
    let cli = park::cli::Cli::parse();
    std::process::exit(park::cli::run(cli));
}
