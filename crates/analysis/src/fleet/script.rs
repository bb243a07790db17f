//! The fleet's two job scripts, plain bash with `#SBATCH` lines that a user can read, edit and
//! submit by hand: `fleet.sbatch` runs task `$SLURM_ARRAY_TASK_ID` (set it by hand to run a task
//! outside Slurm), `merge.sbatch` runs `fleet collect`.

use std::path::Path;

use super::{Fleet, Task};
use crate::error::{LabError, Result};

/// A word for a POSIX shell, single-quoted where it needs to be (a `'` inside as `'\''`). The
/// characters left bare are those no shell gives a meaning to where the scripts put words (after
/// the command's name, inside `( )`); `=`, `,` and `%` among them keep `--array=0,1` and
/// `task-%a` readable, where shlex's quoting would quote them.
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Words as one line a user can paste into a shell: each quoted where it needs to be.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The `#SBATCH --output=` word for a log: sbatch reads quotes on `#SBATCH` lines, so a folder
/// with a blank in its name stays one word (a backslash in it would not: sbatch takes it as an
/// escape even inside quotes).
fn output(f: &Fleet, log: &str) -> String {
    quote(&format!("--output={}", f.dir.join("logs").join(log).display()))
}

fn case_arm(t: &Task) -> String {
    format!("{}) name={}; args=({}); stores={} ;;", t.index, quote(&t.name), join(&t.args), u8::from(t.stores))
}

/// The array job's script: every task, chosen by the array index.
pub fn task_script(f: &Fleet) -> String {
    let dir = f.dir.display();
    let last = f.tasks.len() - 1;
    let arms: Vec<String> = f.tasks.iter().map(|t| format!("    {}", case_arm(t))).collect();
    format!(
        r#"#!/usr/bin/env bash
# kernel-lab fleet: task $SLURM_ARRAY_TASK_ID of the fleet in {dir}.
# `kernel-lab fleet submit` submits it as an array job (sbatch --array=..., with each task's
# --partition, --constraint, --gres); by hand: SLURM_ARRAY_TASK_ID=0 bash {script_q}
#SBATCH --job-name=kernel-lab-fleet
#SBATCH {output}
set -uo pipefail
dir={dir_q}
bin={bin_q}
id=${{SLURM_ARRAY_TASK_ID:?set SLURM_ARRAY_TASK_ID to a task of this fleet, 0 to {last}}}
case "$id" in
{arms}
    *) echo "kernel-lab fleet: no task $id in this fleet (0 to {last})" >&2; exit 2 ;;
esac
# A task's results go to a folder of its own first, then each finished file is renamed into
# results/: on one filesystem a rename is atomic, so no reader sees half a file.
scratch="$dir/partial/task-$id-${{SLURM_JOB_ID:-by-hand}}-$$"
mkdir -p "$scratch" "$dir/results" "$dir/status" "$dir/logs"
[ "$stores" = 1 ] && args+=(--results-dir "$scratch")
# The GPU the task was given (the first of CUDA_VISIBLE_DEVICES, as Slurm's --gres sets it).
gpu=$(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader ${{CUDA_VISIBLE_DEVICES:+-i "${{CUDA_VISIBLE_DEVICES%%,*}}"}} 2>/dev/null |
    head -n 1 | tr -d '"\\')
start=$(date -u +%FT%TZ)
# The command as a shell line (%q quotes each word), so it can be pasted to run the task again.
echo "kernel-lab fleet: task $id ($name) on $(hostname), GPU: ${{gpu:-none}}:$(printf ' %q' "$bin" "${{args[@]}}")"
"$bin" "${{args[@]}}"
rc=$?
stored=0
while IFS= read -r f; do
    mkdir -p "$dir/results/$(dirname "$f")" && mv "$scratch/$f" "$dir/results/$f" && stored=$((stored + 1))
done < <(cd "$scratch" && find . -name '*.jsonl')
rm -rf "$scratch" && rmdir "$dir/partial" 2>/dev/null
printf '{{"task":%s,"name":"%s","job":"%s","host":"%s","gpu":"%s","start":"%s","end":"%s","exit":%s,"stored":%s}}\n' \
    "$id" "$name" "${{SLURM_ARRAY_JOB_ID:-by-hand}}_$id" "$(hostname)" "$gpu" "$start" "$(date -u +%FT%TZ)" "$rc" "$stored" \
    > "$dir/status/task-$id.json.tmp" && mv "$dir/status/task-$id.json.tmp" "$dir/status/task-$id.json"
echo "kernel-lab fleet: task $id ended with exit $rc, $stored results file(s) stored"
exit $rc
"#,
        dir_q = quote(&dir.to_string()),
        script_q = quote(&f.dir.join("fleet.sbatch").display().to_string()),
        output = output(f, "task-%a.out"),
        bin_q = quote(&f.binary.display().to_string()),
        arms = arms.join("\n"),
    )
}

/// The merge job's script: `fleet collect`, after every task has ended however it ended.
pub fn merge_script(f: &Fleet) -> String {
    let dir = f.dir.display();
    format!(
        r#"#!/usr/bin/env bash
# kernel-lab fleet: merge what the tasks stored and render the report across GPUs. `fleet submit`
# runs it after the array job (--dependency=afterany), however its tasks ended.
#SBATCH --job-name=kernel-lab-fleet-merge
#SBATCH {output}
exec {} fleet collect {}
"#,
        quote(&f.binary.display().to_string()),
        quote(&dir.to_string()),
        output = output(f, "merge.out"),
    )
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| LabError::Results { path: path.display().to_string(), msg: e.to_string() })
}

/// The fleet's folder with its scripts and its task list, ready for sbatch.
pub fn write_folder(f: &Fleet) -> Result<()> {
    for sub in ["logs", "status", "results"] {
        let d = f.dir.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| LabError::Results { path: d.display().to_string(), msg: e.to_string() })?;
    }
    write(&f.dir.join("fleet.sbatch"), &task_script(f))?;
    write(&f.dir.join("merge.sbatch"), &merge_script(f))?;
    let json = serde_json::to_string_pretty(f).expect("a fleet serializes");
    write(&f.dir.join("tasks.json"), &json)
}
