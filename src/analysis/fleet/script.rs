//! The fleet's two job scripts, plain bash with `#SBATCH` lines that a user can read, edit and
//! submit by hand: `fleet.sbatch` runs task `$SLURM_ARRAY_TASK_ID` (set it by hand to run a task
//! outside Slurm), `merge.sbatch` runs `fleet collect`.

use std::path::Path;

use super::{Fleet, Task};
use crate::error::{LabError, Result};

/// A word for bash, single-quoted where it needs to be.
fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn case_arm(t: &Task) -> String {
    let args: Vec<String> = t.args.iter().map(|a| quote(a)).collect();
    format!("{}) name={}; args=({}); stores={} ;;", t.index, quote(&t.name), args.join(" "), u8::from(t.stores))
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
# --partition, --constraint, --gres); by hand: SLURM_ARRAY_TASK_ID=0 bash {dir}/fleet.sbatch
#SBATCH --job-name=kernel-lab-fleet
#SBATCH --output={dir}/logs/task-%a.out
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
echo "kernel-lab fleet: task $id ($name) on $(hostname), GPU: ${{gpu:-none}}: $bin ${{args[*]}}"
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
#SBATCH --output={dir}/logs/merge.out
exec {} fleet collect {}
"#,
        quote(&f.binary.display().to_string()),
        quote(&dir.to_string()),
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
