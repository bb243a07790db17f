//! A bench taken up again (`bench --resume RUNFILE`): the run file it continues, appended to as a
//! new run's file is (each record flushed and synced as it is measured), so the file ends as one
//! run, as if it had never stopped. What it still has to run is `plan::resume`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::{LabError, Result};
use crate::schema::run::{Phases, Record};

fn err(path: &Path, msg: String) -> LabError {
    LabError::Results { path: path.display().to_string(), msg }
}

/// A run file opened to go on.
pub struct Appender {
    file: std::fs::File,
    pub path: PathBuf,
    started: Instant,
}

impl Appender {
    /// Opens `path` to append to. A killed run may have left its last line half written (the
    /// reader skips it): it is cut off, or the next record would be glued to it.
    pub fn open(path: &Path) -> Result<Appender> {
        let text = std::fs::read(path).map_err(|e| err(path, format!("cannot read: {e}")))?;
        let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let file = OpenOptions::new().append(true).open(path).map_err(|e| err(path, format!("cannot open to append: {e}")))?;
        if whole < text.len() {
            file.set_len(whole as u64).map_err(|e| err(path, format!("cannot cut its torn last line: {e}")))?;
        }
        Ok(Appender { file, path: path.to_path_buf(), started: Instant::now() })
    }

    /// Appends one record, on disk when this returns.
    pub fn append(&mut self, record: &Record) -> Result<()> {
        let text = serde_json::to_string(record).map_err(|e| err(&self.path, e.to_string()))?;
        let path = self.path.clone();
        self.file
            .write_all(format!("{text}\n").as_bytes())
            .and_then(|_| self.file.flush())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| err(&path, format!("cannot write: {e}")))
    }

    /// Ends the run with the resumed part's wall time and where it went.
    pub fn finish(mut self, phases: Vec<(String, f64)>) -> Result<PathBuf> {
        self.append(&Record::End(Phases { wall_s: self.started.elapsed().as_secs_f64(), phases }))?;
        Ok(self.path)
    }
}
