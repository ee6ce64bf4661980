//! Scriptorium's automation, run as `cargo xtask <command>`.
//!
//! * `tidy` — the architecture and hygiene rules ([`tidy`]); also a `#[test]`.
//! * `ci` — the one gate: fmt check, clippy `-D warnings`, every test (tidy
//!   included), the fuzz corpus replay, benches as tests, and a fuzz smoke.
//! * `fuzz [--seconds N] [TARGET…]` — runs cargo-fuzz targets on stable Rust.
//! * `bench` — runs the criterion benches and records the figures in
//!   `benches/record/` with the machine noted.
//! * `eval locomo --data FILE [--json]` — retrieval recall on LoCoMo
//!   ([`eval`]).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod eval;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The fuzz targets, one per file in `fuzz/fuzz_targets/`.
const FUZZ_TARGETS: &[&str] =
    &["archive_parse", "forged_label", "frame_truncation", "index_open", "tokenize", "topic_parse"];

/// Seconds each fuzz target runs in the CI smoke.
const CI_FUZZ_SECONDS: u64 = 20;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(what: &str, cmd: &mut Command) -> Result<()> {
    eprintln!("\n== {what}: {cmd:?}");
    let status = cmd.status().with_context(|| format!("cannot start {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

fn fuzz(seconds: u64, targets: &[String]) -> Result<()> {
    let have = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have {
        bail!("cargo-fuzz is not installed; run `cargo install cargo-fuzz --locked`");
    }
    let targets: Vec<String> = if targets.is_empty() {
        FUZZ_TARGETS.iter().map(|s| s.to_string()).collect()
    } else {
        targets.to_vec()
    };
    let fuzz_dir = root().join("fuzz");
    for t in &targets {
        if !FUZZ_TARGETS.contains(&t.as_str()) {
            bail!("unknown fuzz target {t:?}; known: {FUZZ_TARGETS:?}");
        }
        // New inputs go to a scratch folder; the committed seeds stay as they are.
        let scratch = std::env::temp_dir().join(format!("scriptorium-fuzz-{}-{t}", std::process::id()));
        std::fs::create_dir_all(&scratch)?;
        let mut cmd = Command::new("cargo");
        cmd.current_dir(&fuzz_dir)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", t])
            .arg(&scratch)
            .arg(fuzz_dir.join("corpus").join(t))
            .arg("--")
            .arg(format!("-max_total_time={seconds}"));
        let result = run(&format!("fuzz {t} for {seconds}s"), &mut cmd);
        let _ = std::fs::remove_dir_all(&scratch);
        result?;
    }
    Ok(())
}

fn ci() -> Result<()> {
    run("rustfmt", cargo().args(["fmt", "--all", "--check"]))?;
    run(
        "clippy",
        cargo().args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]),
    )?;
    run("tests (tidy and fuzz corpus replay included)", cargo().args(["test", "--workspace", "--locked"]))?;
    // The commit bench times the binary too, from beside it.
    run("the binary for the benches", cargo().args(BUILD_CLI).arg("scriptorium"))?;
    run("benches as tests", cargo().args(["bench", "--workspace", "--locked", "--", "--test"]))?;
    fuzz(CI_FUZZ_SECONDS, &[])?;
    eprintln!("\n== ci passed");
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".to_owned());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, {} {}, {rustc}", std::env::consts::OS, std::env::consts::ARCH)
}

/// Builds the `scriptorium` binary with the bench profile's settings, where
/// the benches look for it (`target/release/`).
const BUILD_CLI: [&str; 6] = ["build", "--release", "--locked", "-p", "scriptorium", "--bin"];

fn bench(filter: &[String]) -> Result<()> {
    run("the binary for the benches", cargo().args(BUILD_CLI).arg("scriptorium"))?;
    let out = cargo()
        .args(["bench", "-p", "scriptorium-benches", "--locked", "--"])
        .args(filter)
        .output()
        .context("cannot run cargo bench")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    if !out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        bail!("cargo bench failed");
    }
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let dir = root().join("benches/record");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{secs}.txt"));
    std::fs::write(&path, format!("machine: {}\nunix time: {secs}\n\n{stdout}", machine()))?;
    eprintln!("recorded in {}", path.display());
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("tidy") => {
            let problems = tidy::check(&root())?;
            if !problems.is_empty() {
                for p in &problems {
                    eprintln!("tidy: {p}");
                }
                bail!("{} tidy problem(s)", problems.len());
            }
            eprintln!("tidy: ok");
            Ok(())
        }
        Some("ci") => ci(),
        Some("fuzz") => {
            let mut seconds = 60;
            let mut targets = Vec::new();
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                if a == "--seconds" {
                    seconds = it
                        .next()
                        .context("--seconds needs a value")?
                        .parse()
                        .context("--seconds takes an integer")?;
                } else {
                    targets.push(a.clone());
                }
            }
            fuzz(seconds, &targets)
        }
        Some("bench") => bench(&args[1..]),
        Some("eval") if args.get(1).map(String::as_str) == Some("locomo") => {
            eval::locomo(&eval::Options::parse(&args[2..])?)
        }
        _ => {
            eprintln!("usage: cargo xtask <tidy | ci | fuzz [--seconds N] [TARGET…] | bench [FILTER] | eval locomo --data FILE [--json]>");
            std::process::exit(2);
        }
    }
}
