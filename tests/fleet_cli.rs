//! `kernel-lab fleet submit` as a shell user meets it, no Slurm needed: a task's `run` split as a
//! shell splits it and quoted back in the scripts, every task's command line checked before
//! anything is written, the dry run's sbatch lines pasteable, and a fleet file's relative paths
//! taken from its own folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).current_dir(cwd).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A fleet file `fleet.toml` in `dir` with `head` (dir = ..., [slurm] ...) and `tasks`.
fn fleet_file(dir: &Path, head: &str, tasks: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("fleet.toml");
    std::fs::write(&path, format!("{head}\n{tasks}")).unwrap();
    path
}

fn tasks_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("tasks.json")).unwrap()).unwrap()
}

fn args_of(tasks: &serde_json::Value, i: usize) -> Vec<String> {
    tasks["tasks"][i]["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
}

/// A task's argument with quotes, a blank, a `$` and a backslash in it.
const ODD: &str = r#"it's a "GPU" $HOME \n"#;

#[test]
fn a_tasks_quoted_words_reach_kernel_lab_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("a folder");
    // TOML literal strings: the run lines exactly as a user types them in a shell.
    let tasks = "[[task]]\nrun = 'sheet \"RTX 4090\"'\n\
                 [[task]]\nname = \"odd\"\nrun = '''sheet 'it'\\''s a \"GPU\" $HOME \\n' '''\n";
    let f = fleet_file(&base, "dir = \"out\"", tasks);
    let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], tmp.path());
    assert!(out.status.success(), "{}", text(&out));
    let dir = base.join("out");
    let tasks = tasks_json(&dir);
    assert_eq!(args_of(&tasks, 0), ["sheet", "RTX 4090"]);
    assert_eq!(args_of(&tasks, 1), ["sheet", ODD]);
    assert_eq!(tasks["tasks"][0]["name"], "sheet-RTX-4090", "an unnamed task's name keeps to the characters a name may hold");

    let script = dir.join("fleet.sbatch");
    assert!(Command::new("bash").arg("-n").arg(&script).status().unwrap().success(), "the script parses");
    let run = |id: &str| Command::new("bash").arg(&script).env("SLURM_ARRAY_TASK_ID", id).env_remove("SLURM_JOB_ID").output().unwrap();
    // Split on the blank, `sheet RTX 4090` would be refused by clap (exit 2): it ran, one GPU's row.
    let out = run("0");
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("RTX 4090 ┆ sm_89") && !said.contains("H200"), "the RTX 4090's row alone: {said}");
    // The script's log line is the command as a shell line: it parses back to the same words.
    let logged = said.lines().find(|l| l.contains("kernel-lab fleet: task 0")).unwrap();
    let words = shlex::split(logged.split_once("GPU: none:").unwrap().1).unwrap();
    assert_eq!(words[1..], ["sheet", "RTX 4090"], "{logged}");

    // The odd word arrives whole: the sheet names it in its refusal, and the task's exit is recorded.
    let out = run("1");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains(&format!("no GPU '{ODD}' in the sheet")), "{said}");
    let logged = said.lines().find(|l| l.contains("kernel-lab fleet: task 1")).unwrap();
    assert_eq!(shlex::split(logged.split_once("GPU: none:").unwrap().1).unwrap()[1..], ["sheet", ODD], "{logged}");
    let status = std::fs::read_to_string(dir.join("status/task-1.json")).unwrap();
    assert!(status.contains("\"exit\":2"), "{status}");
}

#[test]
fn every_tasks_command_line_is_checked_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    // Filters and sizes are checked against this build's kernel set; where it cannot be read
    // (sources changed since it was built) submit leaves them to the task's run.
    let list = lab(&["list"], tmp.path());
    assert!(list.status.success(), "the kernel set must be readable for this test: {}", text(&list));
    let ok = "[[task]]\nname = \"first\"\nrun = \"sheet\"\n";
    for (run, says) in [
        ("bench --frob", "unexpected argument '--frob'"),
        ("bench sgemm --size abc", "'abc' is not a positive whole number"),
        ("verify sgemm --size 0", "must be greater than 0"),
        ("tune sgemm sgemm_08 --size 4096x", "--size for sgemm"),
        ("tune nosuch", "nosuch"),
        ("verify nosuch", "no family or variant matches 'nosuch'"),
        ("transfers --size 12Q", "--size"),
        ("multi --max-collective 1X", "--max-collective"),
        ("list --family", "a value is required"),
        ("sheet \\\"RTX 4090", "ends inside a quote"),
        ("sheet --help", "print help"),
        ("bench --quick --timing 3", "unexpected argument"),
        ("worker", "not a command a task runs"),
    ] {
        let base = tmp.path().join("f");
        let f = fleet_file(&base, "dir = \"out\"\n[slurm]\ntime = \"00:10:00\"", &format!("{ok}[[task]]\nrun = \"{run}\"\n"));
        // Not a dry run: were the task not refused, this would go on to write and call sbatch.
        let out = lab(&["fleet", "submit", f.to_str().unwrap()], tmp.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{run}: {}", text(&out));
        assert!(err.contains("fleet task 1") && err.contains(says), "{run}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{run}: one line: {err}");
        assert!(!base.join("out").exists(), "{run}: nothing written");
    }
    // The same from the command line's --run.
    let dir = tmp.path().join("cli");
    let out = lab(&["fleet", "submit", "--dir", dir.to_str().unwrap(), "--run", "sheet", "--run", "bench sgemm --size 1x2"], tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(err.contains("fleet task 1 (bench-sgemm-1x2)") && err.trim().lines().count() == 1, "{err}");
    assert!(!dir.exists(), "nothing written");
    // Good tasks pass the same check: flags, sizes, suites and values each command takes.
    let good = "[[task]]\nrun = \"bench sgemm --size 4096,1024x512x256 --quick\"\n\
                [[task]]\nrun = \"verify --fuzz 3 --seed 7\"\n\
                [[task]]\nrun = \"tune sgemm sgemm_08 --size 4096 --time-budget 60\"\n\
                [[task]]\nrun = \"transfers --size 4K,1G\"\n\
                [[task]]\nrun = \"resources --arch sm_90\"\n";
    let f = fleet_file(&tmp.path().join("good"), "dir = \"out\"", good);
    let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], tmp.path());
    assert!(out.status.success(), "{}", text(&out));

    // Where this program's kernel set cannot be read (the nodes may run another build), the
    // grammar is still checked here; the filter and sizes wait for the run, and a note says so.
    let nowhere = tmp.path().join("no kernels");
    let submit = |run: &str, dir: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kernel-lab"));
        c.args(["fleet", "submit", "--dry-run", "--dir", dir, "--run", run]).current_dir(tmp.path()).env("KERNEL_LAB_KERNELS", &nowhere);
        c.output().unwrap()
    };
    let out = submit("bench --frob", "x");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!tmp.path().join("x").exists());
    let out = submit("bench sgemm --size 4096", "y");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("note: the tasks' filters and sizes are checked when they run"),
        "{}",
        text(&out)
    );
}

#[test]
fn relative_paths_in_a_fleet_file_are_from_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, elsewhere) = (tmp.path().join("fleets"), tmp.path().join("elsewhere"));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let f = fleet_file(&home, "dir = \"out\"\nbinary = \"../dist/kernel-lab\"", "[[task]]\nrun = \"sheet\"\n");
    let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], &elsewhere);
    assert!(out.status.success(), "{}", text(&out));
    assert!(home.join("out/fleet.sbatch").is_file(), "written beside the fleet file");
    assert!(!elsewhere.join("out").exists(), "not under the current folder");
    assert!(text(&out).contains(&format!("(dry run: {} written, nothing submitted)", home.join("out").display())), "{}", text(&out));
    let tasks = tasks_json(&home.join("out"));
    assert_eq!(tasks["binary"].as_str().unwrap(), home.join("../dist/kernel-lab").to_str().unwrap());

    // A fleet file named by a relative path from another folder: still its own folder.
    let out = lab(&["fleet", "submit", "../fleets/fleet.toml", "--dry-run"], &elsewhere);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        tasks_json(&home.join("out"))["dir"].as_str().unwrap(),
        elsewhere.canonicalize().unwrap().join("../fleets/out").to_str().unwrap()
    );

    // --dir on the command line is from the current folder.
    let out = lab(&["fleet", "submit", "--dry-run", "--dir", "here", "--run", "sheet"], &elsewhere);
    assert!(out.status.success(), "{}", text(&out));
    assert!(elsewhere.join("here/fleet.sbatch").is_file() && !home.join("here").exists());
}

#[test]
fn the_dry_runs_sbatch_lines_paste_into_a_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("my fleets");
    let tasks = "[[task]]\nrun = \"sheet\"\n\
                 [[task]]\nrun = 'sheet \"RTX 4090\"'\n\
                 [[task]]\nname = \"nv\"\nrun = \"list\"\nconstraint = \"h100&nvlink\"\nextra = [\"--comment=it's mine\"]\n";
    let f = fleet_file(&base, "dir = \"out dir\"\n[slurm]\ntime = \"00:10:00\"\ngres = \"gpu:1\"", tasks);
    let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], tmp.path());
    assert!(out.status.success(), "{}", text(&out));
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    let dir = base.join("out dir");
    let path = |name: &str| dir.join(name).display().to_string();
    let sbatch: Vec<Vec<String>> =
        printed.lines().filter(|l| l.starts_with("sbatch ")).map(|l| shlex::split(l).unwrap_or_else(|| panic!("{l}"))).collect();
    let want = |w: &[&str], script: &str| -> Vec<String> { w.iter().map(|s| s.to_string()).chain([path(script)]).collect() };
    assert_eq!(sbatch.len(), 3, "{printed}");
    assert_eq!(sbatch[0], want(&["sbatch", "--parsable", "--array=0,1", "--gres=gpu:1", "--time=00:10:00"], "fleet.sbatch"));
    assert_eq!(
        sbatch[1],
        want(
            &["sbatch", "--parsable", "--array=2", "--constraint=h100&nvlink", "--gres=gpu:1", "--time=00:10:00", "--comment=it's mine"],
            "fleet.sbatch"
        )
    );
    assert_eq!(sbatch[2], want(&["sbatch", "--parsable", "--dependency=afterany:$ids", "--time=00:10:00"], "merge.sbatch"));

    // Pasted into bash, with sbatch a function that prints its words and the array jobs' ids set.
    let lines: Vec<&str> = printed.lines().filter(|l| !l.starts_with("(dry run")).collect();
    let pasted = format!("sbatch() {{ printf '<%s>' \"$@\"; echo; }}\nids=11:12\n{}\n", lines.join("\n"));
    let out = Command::new("bash").arg("-c").arg(&pasted).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let ran: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    let angle = |w: Vec<String>| w[1..].iter().map(|s| format!("<{s}>")).collect::<String>();
    assert_eq!(ran[0], angle(sbatch[0].clone()));
    assert_eq!(ran[1], angle(sbatch[1].clone()));
    assert_eq!(ran[2], angle(sbatch[2].iter().map(|w| w.replace("$ids", "11:12")).collect()));

    // The scripts: each task's words quoted in its case arm, the logs' path one #SBATCH word.
    let script = std::fs::read_to_string(dir.join("fleet.sbatch")).unwrap();
    assert!(script.contains("args=(sheet 'RTX 4090')"), "{script}");
    assert!(script.contains(&format!("#SBATCH '--output={}/logs/task-%a.out'", dir.display())), "{script}");
    let merge = std::fs::read_to_string(dir.join("merge.sbatch")).unwrap();
    assert!(merge.contains(&format!("fleet collect '{}'", dir.display())), "{merge}");
    for s in ["fleet.sbatch", "merge.sbatch"] {
        assert!(Command::new("bash").arg("-n").arg(dir.join(s)).status().unwrap().success(), "{s} parses");
    }
}
