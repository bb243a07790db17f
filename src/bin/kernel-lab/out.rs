//! The CLI's one writer for standard output, so every command meets the exit contract on I/O
//! faults without a check at each call site: `outln!` and `out!` write through `write`, whose
//! error the command returns with `?`.
//!
//! - A closed pipe (`kernel-lab report | head`): the reader has what it wanted. The write returns
//!   `Closed`, the command unwinds through its `?`s (a run being recorded keeps what it wrote),
//!   and `main` ends with exit 0 and says nothing, as `cat` does. Rust ignores SIGPIPE, so the
//!   fault arrives here as EPIPE rather than killing the process.
//! - Any other fault (`> /dev/full`, a full disk, a closed descriptor): one line naming standard
//!   output and the system's reason, exit 2, like any file the lab cannot write.
//!
//! Each call is flushed at once: a fault surfaces at the call that caused it, not at exit, where
//! it could no longer be reported; the cost is a system call per call, which the tables' few
//! hundred lines do not notice.

use std::fmt;
use std::io::{ErrorKind, Write};

use kernel_lab::LabError;

/// Standard output was closed by its reader: not an error, the end of the output.
#[derive(Debug)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed by its reader")
    }
}

impl std::error::Error for Closed {}

/// Writes `text` to standard output and flushes it.
pub fn write(text: fmt::Arguments) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(text).and_then(|()| out.flush()).map_err(|e| match e.kind() {
        ErrorKind::BrokenPipe => anyhow::Error::new(Closed),
        _ => anyhow::Error::new(LabError::Results { path: "standard output".into(), msg: format!("cannot write: {e}") }),
    })
}

/// `println!` through `out::write`: returns the fault with `?` from the function it is in.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `print!` through `out::write`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))?
    };
}
