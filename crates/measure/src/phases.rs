//! Where a run's wall time goes, from the runner's events as they arrive.

use super::runner::Event;

/// Where a run's wall time goes, from its events as they arrive: starting workers, preparing
/// inputs and references, and per subject its check, its timing and its re-check (from the
/// entry's own clock), and what is left over (loading kernels, writing results, the progress bar).
#[derive(Debug, Default)]
pub struct Phases {
    mark: Option<std::time::Instant>,
    preparing: bool,
    pub worker_start_s: f64,
    pub prepare_s: f64,
    pub verify_s: f64,
    pub timing_s: f64,
    pub recheck_s: f64,
    pub other_s: f64,
}

impl Phases {
    fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let s = self.mark.map_or(0.0, |m| now.duration_since(m).as_secs_f64());
        self.mark = Some(now);
        s
    }

    /// A worker was started.
    pub fn spawned(&mut self) {
        self.mark = Some(std::time::Instant::now());
        self.preparing = false;
    }

    /// The first event of a worker ends its start.
    pub fn started(&mut self) {
        self.worker_start_s += self.lap();
    }

    pub fn on(&mut self, event: &Event) {
        let s = self.lap();
        match event {
            Event::Preparing { .. } => {
                self.other_s += s;
                self.preparing = true;
            }
            Event::Start { .. } if self.preparing => {
                self.prepare_s += s;
                self.preparing = false;
            }
            Event::Start { .. } => self.other_s += s,
            Event::Entry { entry, .. } => {
                let w = entry.wall.unwrap_or_default();
                self.verify_s += w.verify_s;
                self.timing_s += w.timing_s;
                self.recheck_s += w.recheck_s;
                self.other_s += (s - w.verify_s - w.timing_s - w.recheck_s).max(0.0);
            }
        }
    }

    /// The phases as (name, seconds), for the run's end record and the bench's last lines.
    pub fn list(&self) -> Vec<(String, f64)> {
        [
            ("worker start", self.worker_start_s),
            ("inputs and references", self.prepare_s),
            ("verification", self.verify_s),
            ("timing", self.timing_s),
            ("re-check", self.recheck_s),
            ("other", self.other_s),
        ]
        .into_iter()
        .map(|(n, s)| (n.to_string(), s))
        .collect()
    }
}
