//! `kernel-lab fleet`: the fleet file and its bad input, the job scripts (run by hand, as a user
//! would outside Slurm), the merge of committed results into the report across GPUs, and (with
//! `cargo make test-fleet`) the whole thing on a real single-node Slurm cluster started here.

use kernel_lab::analysis::store;
use kernel_lab::schema::run::{Record, RunKind};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cli() -> &'static str {
    env!("CARGO_BIN_EXE_kernel-lab")
}

fn lab(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(cli());
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn fleet_file(dir: &Path, tasks: &str) -> PathBuf {
    let path = dir.join("fleet.toml");
    let body = format!("dir = \"{}\"\n[slurm]\ntime = \"00:10:00\"\n{tasks}", dir.join("fleet").display());
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn bad_fleet_files_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    for (tasks, says) in [
        ("", "missing field `task`"),
        ("[[task]]\nrun = \"frobnicate\"\n", "not a command a task runs"),
        ("[[task]]\nrun = \"bench --results-dir x\"\n", "the fleet sets --results-dir"),
        ("[[task]]\nrun = \"sheet\"\n[[task]]\nrun = \"sheet\"\n", "two tasks are named 'sheet'"),
        ("[[task]]\nrun = \"sheet\"\ngpus = 2\n", "unknown field"),
        ("[[task]]\nname = \"a b\"\nrun = \"sheet\"\n", "letters, digits"),
    ] {
        let f = fleet_file(tmp.path(), tasks);
        let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tasks}: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{tasks}: {err}");
        assert!(!tmp.path().join("fleet").join("fleet.sbatch").exists(), "nothing written for a bad file");
    }
    let out = lab(&["fleet", "submit"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = lab(&["fleet", "status", tmp.path().join("nowhere").to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not a fleet folder"), "{}", text(&out));
}

#[test]
fn the_scripts_group_tasks_by_resources_and_run_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = "[[task]]\nname = \"sheet\"\nrun = \"sheet\"\nconstraint = \"h100\"\n\
                 [[task]]\nname = \"h100-bench\"\nrun = \"bench sgemm --quick\"\nconstraint = \"h100\"\ngres = \"gpu:1\"\n\
                 [[task]]\nname = \"a100-bench\"\nrun = \"bench sgemm --quick\"\nconstraint = \"a100\"\ngres = \"gpu:1\"\n";
    let f = fleet_file(tmp.path(), tasks);
    let out = lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    let sbatch: Vec<&str> = printed.lines().filter(|l| l.starts_with("sbatch")).collect();
    assert_eq!(sbatch.len(), 4, "three placements and the merge: {printed}");
    assert!(sbatch[1].contains("--array=1 ") && sbatch[1].contains("--constraint=h100 --gres=gpu:1 --time=00:10:00"), "{printed}");
    assert!(sbatch[3].contains("--dependency=afterany:") && !sbatch[3].contains("gres"), "the merge needs no GPU: {printed}");
    let dir = tmp.path().join("fleet");
    let script = dir.join("fleet.sbatch");
    assert!(Command::new("bash").arg("-n").arg(&script).status().unwrap().success(), "the script parses");
    assert!(std::fs::read_to_string(&script).unwrap().contains("#SBATCH --output="), "plain sbatch");

    // By hand, outside Slurm: the task given by SLURM_ARRAY_TASK_ID, its status recorded.
    let run = |id: &str| Command::new("bash").arg(&script).env("SLURM_ARRAY_TASK_ID", id).env_remove("SLURM_JOB_ID").output().unwrap();
    let out = run("0");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("H200"), "the sheet was printed: {}", text(&out));
    assert!(run("7").status.code() == Some(2), "no task 7");
    let status = lab(&["fleet", "status", dir.to_str().unwrap()], &[]);
    let table = text(&status);
    assert!(status.status.success(), "{table}");
    let row = |name: &str| table.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("{name}: {table}")).to_string();
    assert!(row("sheet").contains("ENDED") && row("sheet").contains("by-hand_0"), "{table}");
    assert!(row("h100-bench").contains("NOT RUN"), "{table}");
}

/// The newest committed bench run of the H200 with a Tensor Core GEMM in it, as the fleet's
/// `bench` task would have stored it: a tuning's file has no bench entries to plot, and a memory
/// family's bench no point on the roofline.
fn committed_run() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvidia-h200-sm_90");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
    files.sort();
    files
        .into_iter()
        .rev()
        .find(|p| {
            store::read_run(p).is_ok_and(|r| {
                r.header.run.kind == RunKind::Bench && r.records.iter().any(|x| matches!(x, Record::Entry(e) if e.family == "fp16"))
            })
        })
        .expect("committed H200 bench runs")
}

#[test]
fn collect_merges_stored_runs_into_the_report_across_gpus() {
    let tmp = tempfile::tempdir().unwrap();
    let f = fleet_file(tmp.path(), "[[task]]\nname = \"sheet\"\nrun = \"sheet\"\n[[task]]\nname = \"h200\"\nrun = \"bench --quick\"\n");
    assert!(lab(&["fleet", "submit", f.to_str().unwrap(), "--dry-run"], &[]).status.success());
    let dir = tmp.path().join("fleet");
    let out = Command::new("bash").arg(dir.join("fleet.sbatch")).env("SLURM_ARRAY_TASK_ID", "0").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let run = committed_run();
    let into = dir.join("results/nvidia-h200-sm_90");
    std::fs::create_dir_all(&into).unwrap();
    std::fs::copy(&run, into.join(run.file_name().unwrap())).unwrap();

    let out = lab(&["fleet", "collect", dir.to_str().unwrap()], &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "task 1 never ran: {said}");
    assert!(said.contains("FAILED or missing: task 1 (h200)") && said.contains("merged 1 run(s) into 1 column(s)"), "{said}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("Across GPUs") && md.contains("NVIDIA H200 sm_90"), "{md}");
    assert!(md.contains("The sheet's GPUs with no results") && md.contains("RTX 4090 bound"), "bounds, labelled");
    assert!(md.contains("](plots/") && dir.join("plots").read_dir().unwrap().count() > 0, "plots beside it");
    assert!(md.contains("](plots/roofline.svg)") && dir.join("plots/roofline.svg").is_file(), "the roofline among them");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("attainable bound, not a measurement"), "the same report as a page");
}

/// A single-node Slurm cluster under a temporary folder: munged, slurmctld and slurmd from
/// Debian's packages, on free ports, stopped by PID when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            // SAFETY: signals a child this test started, by its PID.
            unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while d.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path.split(':').chain(["/usr/sbin", "/sbin", "/usr/bin"]).map(|d| Path::new(d).join(name)).find(|p| p.is_file());
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn start() -> Result<Cluster, String> {
        let [munged, slurmctld, slurmd] = ["munged", "slurmctld", "slurmd"].map(program);
        let (Some(munged), Some(slurmctld), Some(slurmd)) = (munged, slurmctld, slurmd) else {
            return Err(
                "munged, slurmctld or slurmd not found: `cargo make setup` installs Debian's munge, slurmctld, slurmd and slurm-client"
                    .into(),
            );
        };
        let mut cluster = Cluster { dir: tempfile::tempdir().map_err(|e| e.to_string())?, daemons: Vec::new() };
        let p = cluster.dir.path().to_path_buf();
        let key = p.join("munge.key");
        let mut bytes = [0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").map_err(|e| e.to_string())?, &mut bytes)
            .map_err(|e| e.to_string())?;
        std::fs::write(&key, bytes).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o400)).map_err(|e| e.to_string())?;
        let socket = p.join("munge.sock");
        let spawn = |cmd: &mut Command, log: &str| -> Result<Child, String> {
            let log = std::fs::File::create(p.join(log)).map_err(|e| e.to_string())?;
            cmd.stdout(Stdio::null()).stderr(log).spawn().map_err(|e| e.to_string())
        };
        cluster.daemons.push(spawn(
            Command::new(munged)
                .arg("-F")
                .arg("--force")
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--pid-file={}", p.join("munged.pid").display()))
                .arg(format!("--log-file={}", p.join("munged.log").display()))
                .arg(format!("--seed-file={}", p.join("munge.seed").display())),
            "munged.err",
        )?);
        let host = String::from_utf8_lossy(&Command::new("hostname").output().map_err(|e| e.to_string())?.stdout)
            .trim()
            .split('.')
            .next()
            .unwrap_or("")
            .to_string();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let user = String::from_utf8_lossy(&Command::new("id").arg("-un").output().map_err(|e| e.to_string())?.stdout).trim().to_string();
        let d = |name: &str| p.join(name).display().to_string();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(p.join(sub)).map_err(|e| e.to_string())?;
        }
        let conf = format!(
            "ClusterName=kernellab\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={}\nSlurmdPort={}\nSlurmUser={user}\nSlurmdUser={user}\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\nProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nMpiDefault=none\nReturnToService=2\n\
             JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\nMinJobAge=600\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\nPartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display(),
            d("state"),
            d("spool"),
            d("slurmctld.pid"),
            d("slurmd.pid"),
            d("slurmctld.log"),
            d("slurmd.log"),
        );
        std::fs::write(cluster.conf(), conf).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        cluster.daemons.push(spawn(Command::new(slurmctld).arg("-D").arg("-f").arg(cluster.conf()), "slurmctld.err")?);
        std::thread::sleep(Duration::from_millis(500));
        cluster.daemons.push(spawn(Command::new(slurmd).arg("-D").arg("-f").arg(cluster.conf()), "slurmd.err")?);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out =
                Command::new("sinfo").args(["-h", "-o", "%T"]).env("SLURM_CONF", cluster.conf()).output().map_err(|e| e.to_string())?;
            if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
                return Ok(cluster);
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(p.join("slurmctld.log")).unwrap_or_default();
                return Err(format!("the node never became idle: {}", log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Left out of a plain `cargo test` (listed as ignored, with the reason); run by `cargo make
/// test-fleet` and by any `--ignored` or `--include-ignored` run (a GPU machine's `cargo make
/// test`), where a cluster that cannot start is a failure: this test never passes without running.
#[test]
#[ignore = "needs a Slurm cluster, which `cargo make test-fleet` starts"]
fn a_fleet_on_slurm_runs_its_tasks_says_which_failed_and_merges() {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("cannot start the Slurm cluster: {e}"));
    let conf = cluster.conf();
    let env = [("SLURM_CONF", conf.as_path())];
    let tmp = tempfile::tempdir().unwrap();
    // Three tasks that need no GPU, and a bench that fails here for want of one.
    let tasks = "[[task]]\nrun = \"sheet\"\n[[task]]\nrun = \"resources --arch sm_90\"\n[[task]]\nrun = \"list\"\n[[task]]\nrun = \"bench sgemm --quick\"\n";
    let f = fleet_file(tmp.path(), tasks);
    let dir = tmp.path().join("fleet");
    let out = lab(&["fleet", "submit", f.to_str().unwrap()], &env);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("array job ") && said.contains("tasks 0 sheet, 1 resources-sm_90, 2 list, 3 bench-sgemm"), "{said}");
    let deadline = Instant::now() + Duration::from_secs(180);
    let table = loop {
        let out = lab(&["fleet", "status", dir.to_str().unwrap()], &env);
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        if t.contains("merge job") && !t.contains("PENDING") && !t.contains("RUNNING") && dir.join("logs/merge.out").exists() {
            break t;
        }
        assert!(Instant::now() < deadline, "the fleet did not end in 180 s:\n{t}");
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!("{table}");
    let row = |name: &str| table.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("{name}: {table}")).to_string();
    for name in ["sheet", "resources-sm_90", "list"] {
        assert!(row(name).contains("COMPLETED") && row(name).contains("┆ 0 "), "{}", row(name));
    }
    assert!(row("bench-sgemm").contains("FAILED") && row("bench-sgemm").contains("┆ 3 "), "no GPU is exit 3: {}", row("bench-sgemm"));
    assert!(table.contains("merge job") && table.contains("FAILED, exit 1"), "the merge job ran, and said a task failed: {table}");
    let merged = std::fs::read_to_string(dir.join("logs/merge.out")).unwrap();
    assert!(merged.contains("FAILED or missing: task 3 (bench-sgemm)"), "{merged}");
    let collect = lab(&["fleet", "collect", dir.to_str().unwrap()], &env);
    assert_eq!(collect.status.code(), Some(1), "{}", text(&collect));
    let sheet = std::fs::read_to_string(dir.join("logs/task-0.out")).unwrap();
    assert!(sheet.contains("H200") && sheet.contains("ended with exit 0"), "{sheet}");
    drop(cluster);
}
