//! `sightline`: parse the command line and hand off to the CLI or the window.

use clap::Parser;

fn main() {
    let cli = sightline::cli::Cli::parse();
    let gui = cli.command.is_none();
    match sightline::cli::main_with(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("sightline: {e:#}");
            std::process::exit(if gui { 2 } else { 1 });
        }
    }
}
