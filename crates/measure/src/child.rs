//! A child process whose output is read while it runs: one thread drains each pipe into a
//! channel, so a child that writes more than a pipe buffer never blocks, and the parent waits
//! for the next line with a deadline, which is how a hung kernel is caught (only ending its
//! process stops a kernel that spins).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

/// One line of the child's output.
#[derive(Debug)]
pub enum Line {
    Out(String),
    Err(String),
}

pub struct Child {
    process: std::process::Child,
    lines: Receiver<Line>,
}

/// What waiting for a line found.
pub enum Next {
    Line(Line),
    /// Both pipes closed: the child is gone (or about to be).
    Closed,
    TimedOut,
}

impl Child {
    /// Starts `cmd` with its stdout and stderr piped, writes `input` to its stdin and closes it.
    pub fn spawn(mut cmd: Command, input: &str) -> std::io::Result<Child> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: prctl is async-signal-safe, as code between fork and exec must be. A child
            // whose parent is killed is killed too, so no orphan keeps the GPU busy.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                })
            };
        }
        let mut process = cmd.spawn()?;
        let (tx, lines) = mpsc::channel();
        if let Some(out) = process.stdout.take() {
            let tx = tx.clone();
            std::thread::spawn(move || BufReader::new(out).lines().map_while(Result::ok).try_for_each(|l| tx.send(Line::Out(l))));
        }
        if let Some(err) = process.stderr.take() {
            let tx = tx.clone();
            std::thread::spawn(move || BufReader::new(err).lines().map_while(Result::ok).try_for_each(|l| tx.send(Line::Err(l))));
        }
        if let Some(mut stdin) = process.stdin.take() {
            stdin.write_all(input.as_bytes())?;
        }
        Ok(Child { process, lines })
    }

    /// The next line, waiting until `deadline` at most.
    pub fn next(&self, deadline: Instant) -> Next {
        match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => Next::Line(line),
            Err(RecvTimeoutError::Timeout) => Next::TimedOut,
            Err(RecvTimeoutError::Disconnected) => Next::Closed,
        }
    }

    /// Ends the child (a hung kernel ends with its process) and reaps it.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        let _ = self.process.kill();
        self.process.wait().ok()
    }

    /// Waits for the child to exit.
    pub fn wait(&mut self) -> Option<ExitStatus> {
        self.process.wait().ok()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(None) = self.process.try_wait() {
            self.kill();
        }
    }
}
