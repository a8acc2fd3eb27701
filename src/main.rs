//! `sightline`: parse the command line and hand off to the CLI or the window.

use clap::Parser;

fn main() {
    let cli = sightline::cli::Cli::parse();
    let gui = cli.command.is_none();
    // `bench` measures the memory a load leaves, as the window holds it.
    if !gui && !matches!(cli.command, Some(sightline::cli::Command::Bench(_))) {
        keep_freed_memory();
    }
    match sightline::cli::main_with(cli) {
        Ok(code) => std::process::exit(code),
        // `sightline summary … | head`: the reader left; that is not an error worth a word.
        Err(e) if closed_pipe(&e) => std::process::exit(0),
        Err(e) => {
            eprintln!("sightline: {e:#}");
            std::process::exit(if gui { 2 } else { 1 });
        }
    }
}

/// The error is stdout's reader having gone (a pipe closed early).
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<csv::Error>()
                .is_some_and(|c| matches!(c.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe))
    })
}

/// Loading builds columns of millions of rows and reorders them (a new column for each old one):
/// glibc's malloc would hand every large block back to the kernel when freed and take fresh,
/// zeroed pages for the next, a page fault per 4 KiB. Keeping freed blocks in the heap lets the
/// next column reuse them (`summary` on the 500k-event export: system time 0.115 -> 0.095 s).
/// Only for the commands that end soon after: the window (and `bench`) give memory back.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of malloc's thresholds, before any thread is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
