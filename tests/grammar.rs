//! One grammar across the commands, checked on the CLI's own command tree (`kernel-lab grammar`,
//! clap's description of every command and argument): `--format` wherever data is printed and
//! never `--markdown`; `--results-dir` wherever results are read or written, never `--results`
//! or a positional path; `--gpus` always indices, a count spelled `--gpu-count`; budgets that say
//! their unit; help text on every argument.

use serde_json::Value;

/// Every command that is not hidden, by its path ("fleet submit"), with its arguments.
fn commands() -> Vec<(String, Vec<Value>)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab")).arg("grammar").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let root: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut all = Vec::new();
    fn walk(c: &Value, path: &str, all: &mut Vec<(String, Vec<Value>)>) {
        if c["hidden"] == true {
            return;
        }
        let args: Vec<Value> =
            c["args"].as_array().unwrap().iter().filter(|a| !matches!(a["id"].as_str(), Some("help" | "version"))).cloned().collect();
        all.push((path.trim().to_string(), args));
        for s in c["commands"].as_array().unwrap() {
            walk(s, &format!("{path} {}", s["name"].as_str().unwrap()), all);
        }
    }
    walk(&root, "", &mut all);
    all
}

fn arg<'a>(args: &'a [Value], long: &str) -> Option<&'a Value> {
    args.iter().find(|a| a["long"] == long)
}

#[test]
fn every_argument_has_help() {
    let all = commands();
    assert!(all.len() > 15, "{} commands", all.len());
    for (cmd, args) in &all {
        for a in args {
            let help = a["help"].as_str().unwrap_or("");
            assert!(help.trim().len() > 5, "`{cmd}` {}: no help", a["id"]);
        }
    }
}

#[test]
fn data_is_printed_in_one_format_flag() {
    let data = ["devices", "list", "verify", "bench", "compare", "history", "report", "advise", "resources", "sheet", "multi", "transfers"];
    let known = ["table", "markdown", "csv", "json", "html"];
    for (cmd, args) in commands() {
        assert!(arg(&args, "markdown").is_none(), "`{cmd}` has --markdown: use --format markdown");
        if let Some(f) = arg(&args, "format") {
            let values: Vec<&str> = f["values"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            assert!(values.contains(&"table") && values.contains(&"markdown"), "`{cmd}` --format: {values:?}");
            assert!(values.iter().all(|v| known.contains(v)), "`{cmd}` --format: {values:?}");
        } else {
            assert!(!data.contains(&cmd.as_str()), "`{cmd}` prints data but has no --format");
        }
    }
    let formats =
        |c: &str| commands().into_iter().find(|(n, _)| n == c).map(|(_, a)| arg(&a, "format").unwrap()["values"].clone()).unwrap();
    for c in ["report", "list", "history", "bench"] {
        assert!(
            formats(c).as_array().unwrap().iter().any(|v| v == "csv") && formats(c).as_array().unwrap().iter().any(|v| v == "json"),
            "{c}"
        );
    }
}

#[test]
fn results_are_always_found_with_results_dir() {
    let reads_or_writes = ["bench", "compare", "history", "report", "advise", "resources", "tune", "transfers", "multi"];
    for (cmd, args) in commands() {
        assert!(arg(&args, "results").is_none(), "`{cmd}` has --results: use --results-dir");
        for a in args.iter().filter(|a| a["positional"] == true) {
            let id = a["id"].as_str().unwrap();
            assert!(!["paths", "path", "base", "new", "results", "files"].contains(&id), "`{cmd}` takes results as positional {id}");
        }
        if reads_or_writes.contains(&cmd.as_str()) {
            assert!(arg(&args, "results-dir").is_some(), "`{cmd}` reads or writes results without --results-dir");
        }
    }
}

#[test]
fn gpus_are_indices_and_a_count_is_gpu_count() {
    let mut seen = 0;
    for (cmd, args) in commands() {
        assert!(arg(&args, "gpu").is_none(), "`{cmd}` has --gpu: which GPUs is --gpus");
        if let Some(g) = arg(&args, "gpus") {
            seen += 1;
            let names = g["value_names"].as_array().unwrap();
            assert!(names.iter().all(|n| n == "INDEX" || n == "INDICES"), "`{cmd}` --gpus takes {names:?}");
        }
        for a in &args {
            let help = a["help"].as_str().unwrap_or("").to_lowercase();
            if a["long"] == "gpus" {
                assert!(help.contains("index") || help.contains("indices"), "`{cmd}` --gpus: {help}");
            }
        }
    }
    assert!(seen >= 5, "bench, verify, tune, transfers, profile, multi take --gpus");
    let advise = commands().into_iter().find(|(n, _)| n == "advise").unwrap().1;
    assert!(arg(&advise, "gpu-count").is_some());
}

#[test]
fn budgets_say_their_unit() {
    for (cmd, args) in commands() {
        assert!(arg(&args, "budget").is_none(), "`{cmd}` has --budget: say its unit");
        assert!(arg(&args, "power").is_none(), "`{cmd}` has --power: say its unit");
    }
    let all = commands();
    let get = |c: &str, long: &str| {
        let args = &all.iter().find(|(n, _)| n == c).unwrap().1;
        arg(args, long).unwrap_or_else(|| panic!("{c} --{long}"))["value_names"].clone()
    };
    assert_eq!(get("tune", "time-budget"), serde_json::json!(["SECONDS"]));
    assert_eq!(get("advise", "usd"), serde_json::json!(["USD"]));
    assert_eq!(get("advise", "watts"), serde_json::json!(["W"]));
}
