//! Golden outputs of every verb of the `scriptorium` binary, recorded so a
//! refactor of the facade can be shown to change nothing, byte for byte.
//!
//! Each test drives the built binary through a fixed script of invocations
//! on a fresh temporary folder and compares every invocation's exit code,
//! stdout and stderr with a committed file under `tests/golden/<scenario>/`
//! (one file per case, named after it). MCP sessions are recorded as
//! transcripts: each line sent (`>>>`) and each answer (`<<<`), a request
//! sent only once the answer to the one before has arrived, so the order is
//! the protocol's, not the scheduler's.
//!
//! `SCRIPTORIUM_BLESS=1 cargo test -p scriptorium --test golden` rewrites the
//! files (and removes those no case writes any more); without it a mismatch
//! fails, naming the case and its first differing line.
//!
//! The scenarios:
//!
//! * `cli`: `--help` of every verb, usage errors, configuration refusals,
//!   and every verb on a workspace that does not exist;
//! * `demo`: `scriptorium demo`, then every verb on its workspace, in both
//!   forms where a verb has two, with bad inputs and planted defects;
//! * `locomo`: two slices of the LoCoMo development set (conversation
//!   conv-26, sessions 1 and 2; conv-30, session 1), cut at run time from
//!   `data/locomo/locomo-dev.json`, imported and written as a user would;
//! * `mcp`: `scriptorium mcp` transcripts, paired and owner, every tool with
//!   good and bad arguments, and protocol faults.
//!
//! What varies from run to run is normalised, and only that:
//!
//! * the scenario's temporary folder: the workspace as `$WS`, the folder
//!   holding it (home, `TMPDIR`, inputs) as `$ROOT`, and this crate's
//!   `tests/golden/input` folder as `$INPUT`;
//! * wall-clock times: a UTC timestamp `YYYY-MM-DDTHH:MM:SS[.f]Z` that falls
//!   between the scenario's start and now (give or take two seconds) is
//!   written `<NOW>`; timestamps of the data, years away, are kept;
//! * the fresh folders `demo` and `palace` make under `TMPDIR`, whose names
//!   carry the clock and the process id (`scriptorium-demo-<STAMP>-0`,
//!   `scriptorium-palace-<STAMP>-<PID>-0`);
//! * in `status`, the search index's `action`, `base_bytes` and
//!   `delta_bytes` (`<ACTION>`, `<N>`): whether opening the index refreshes
//!   it depends on timing (a file modified within 0.1 s of being indexed is
//!   re-hashed on the next open; `crates/bm25-index/README.md`), and so
//!   does the size of the delta stack. `documents` is kept.
//!
//! The child's environment is cleared and pinned: `HOME`, `XDG_*` and
//! `TMPDIR` inside the temporary folder (no user configuration is read),
//! `PATH` an empty folder (so `palace --open` finds no opener), `TZ=UTC`,
//! `LC_ALL=C`, `NO_COLOR=1`, no `RUST_LOG`, no `SCRIPTORIUM_*`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_scriptorium");

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden_dir() -> PathBuf {
    crate_dir().join("tests/golden")
}

fn input_dir() -> PathBuf {
    golden_dir().join("input")
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An argument as a shell would need it.
fn quoted(arg: &str) -> String {
    let plain =
        !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=$:@,+%^".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// A stream's bytes as a golden section: the text, and a note when it does
/// not end with a newline.
fn section(title: &str, bytes: &[u8]) -> String {
    let mut s = format!("--- {title}\n");
    let text = String::from_utf8_lossy(bytes);
    s.push_str(&text);
    if !text.is_empty() && !text.ends_with('\n') {
        s.push_str("\n\\ no newline at end\n");
    }
    s
}

/// The first line where `want` and `got` differ, for a failure message.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.split('\n').collect(), got.split('\n').collect());
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            let show = |l: Option<&&str>| l.map_or("(no line)".to_owned(), |l| format!("{l:?}"));
            return format!("line {}:\n    golden: {}\n    actual: {}", i + 1, show(a), show(b));
        }
    }
    "the files differ".to_owned()
}

/// What one invocation gave, normalised.
#[derive(Debug)]
struct Out {
    code: i32,
    /// Stdout as recorded (normalised).
    stdout: String,
    /// Stdout as the binary wrote it, for the script to read values from.
    raw: String,
}

impl Out {
    /// Itself, after checking that the run succeeded: later cases build
    /// on it.
    fn ok(self) -> Out {
        assert_eq!(self.code, 0, "a setup step failed: {}", self.stdout);
        self
    }

    /// Stdout as one JSON value (the first line).
    fn json(&self) -> Value {
        serde_json::from_str(self.raw.lines().next().unwrap_or("")).unwrap_or(Value::Null)
    }

    /// Every stdout line as JSON.
    fn json_lines(&self) -> Vec<Value> {
        self.raw.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }
}

/// One scenario: a temporary folder, a workspace in it, and the cases
/// recorded so far.
struct Scenario {
    name: &'static str,
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    start: i64,
    bless: bool,
    written: BTreeSet<String>,
    failures: Vec<String>,
    stamp: regex::Regex,
    demo_dir: regex::Regex,
    palace_dir: regex::Regex,
    index_state: regex::Regex,
    /// `index_state` inside a JSON string, its quotes escaped.
    index_state_escaped: regex::Regex,
}

/// One invocation being set up.
struct Case<'a> {
    s: &'a mut Scenario,
    name: String,
    args: Vec<String>,
    stdin: Vec<u8>,
    env: Vec<(String, String)>,
    files: Vec<(String, Vec<u8>)>,
}

impl Case<'_> {
    /// Writes a file before the run (see [`Scenario::put`]), shown in the
    /// golden file.
    fn file(mut self, path: &str, bytes: impl AsRef<[u8]>) -> Self {
        self.files.push((path.to_owned(), bytes.as_ref().to_vec()));
        self
    }

    fn stdin(mut self, bytes: impl AsRef<[u8]>) -> Self {
        self.stdin = bytes.as_ref().to_vec();
        self
    }

    fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.to_owned(), v.to_owned()));
        self
    }

    /// Runs it, compares (or records) the result, and returns it.
    fn run(self) -> Out {
        let Case { s, name, args, stdin, env, files } = self;
        for (path, bytes) in &files {
            s.put(path, bytes);
        }
        let mut cmd = s.command(&args);
        for (k, v) in &env {
            cmd.env(k, s.expand(v));
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut pipe = child.stdin.take().expect("stdin is piped");
        let feed = stdin.clone();
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&feed);
        });
        let output = child.wait_with_output().expect("the binary runs");
        let _ = writer.join();
        let code = output.status.code().unwrap_or(-1);
        let raw = String::from_utf8_lossy(&output.stdout).into_owned();
        let (stdout, stderr) = (s.normalise(&raw), s.normalise(&String::from_utf8_lossy(&output.stderr)));
        let mut text = s.header(&args);
        for (k, v) in &env {
            text.push_str(&format!("env {k}={}\n", quoted(v)));
        }
        for (path, bytes) in &files {
            text.push_str(&section(&format!("file {path}"), bytes));
        }
        if !stdin.is_empty() {
            text.push_str(&section("stdin", &stdin));
        }
        text.push_str(&format!("exit {code}\n"));
        text.push_str(&section("stdout", stdout.as_bytes()));
        text.push_str(&section("stderr", stderr.as_bytes()));
        s.record(&name, &text);
        Out { code, stdout, raw }
    }
}

impl Scenario {
    fn new(name: &'static str) -> Scenario {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().canonicalize().expect("the temporary folder resolves");
        for sub in ["home/.config", "home/.local/share", "home/.cache", "tmp", "bin", "in"] {
            std::fs::create_dir_all(root.join(sub)).expect("the pinned folders");
        }
        Scenario {
            name,
            _dir: dir,
            ws: root.join("ws"),
            root,
            start: unix_now(),
            bless: std::env::var("SCRIPTORIUM_BLESS").is_ok_and(|v| !v.is_empty() && v != "0"),
            written: BTreeSet::new(),
            failures: Vec::new(),
            stamp: regex::Regex::new(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z").unwrap(),
            demo_dir: regex::Regex::new(r"scriptorium-demo-[0-9a-f]+-(\d+)").unwrap(),
            palace_dir: regex::Regex::new(r"scriptorium-palace-[0-9a-f]+-[0-9a-f]+-(\d+)").unwrap(),
            index_state: regex::Regex::new(
                r#"(index"?:? ?\{"action":)"(?:fresh|refreshed|merged|built)","base_bytes":\d+,"delta_bytes":\d+"#,
            )
            .unwrap(),
            index_state_escaped: regex::Regex::new(
                r#"(index\\":\{\\"action\\":)\\"(?:fresh|refreshed|merged|built)\\",\\"base_bytes\\":\d+,\\"delta_bytes\\":\d+"#,
            )
            .unwrap(),
        }
    }

    /// `$WS`, `$ROOT` and `$INPUT` replaced by the real folders.
    fn expand(&self, arg: &str) -> String {
        arg.replace("$WS", &self.ws.display().to_string())
            .replace("$ROOT", &self.root.display().to_string())
            .replace("$INPUT", &input_dir().display().to_string())
    }

    /// The child process: the binary with `args`, in `$ROOT`, with the
    /// environment cleared and pinned.
    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args.iter().map(|a| self.expand(a)))
            .current_dir(&self.root)
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("home/.config"))
            .env("XDG_DATA_HOME", self.root.join("home/.local/share"))
            .env("XDG_CACHE_HOME", self.root.join("home/.cache"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("PATH", self.root.join("bin"))
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1");
        cmd
    }

    fn header(&self, args: &[String]) -> String {
        let mut line = "$ scriptorium".to_owned();
        for a in args {
            line.push(' ');
            line.push_str(&quoted(a));
        }
        line.push('\n');
        line
    }

    /// A case named `name` running `args`.
    fn case(&mut self, name: &str, args: &[&str]) -> Case<'_> {
        Case {
            s: self,
            name: name.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            stdin: Vec::new(),
            env: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Shorthand: a case with no stdin and no extra environment.
    fn run(&mut self, name: &str, args: &[&str]) -> Out {
        self.case(name, args).run()
    }

    /// The output with what varies from run to run written as placeholders
    /// (see the module documentation).
    fn normalise(&self, text: &str) -> String {
        let mut t = text.to_owned();
        let input = input_dir();
        let mut paths = vec![
            (self.ws.display().to_string(), "$WS"),
            (self.root.display().to_string(), "$ROOT"),
            (input.display().to_string(), "$INPUT"),
        ];
        if let Ok(c) = input.canonicalize() {
            paths.push((c.display().to_string(), "$INPUT"));
        }
        for (real, placeholder) in paths {
            t = t.replace(&real, placeholder);
        }
        let (from, to) = (self.start - 2, unix_now() + 2);
        let t = self.stamp.replace_all(&t, |c: &regex::Captures<'_>| {
            let n = |i: usize| c[i].parse::<i64>().unwrap_or(0);
            let secs = days_from_civil(n(1), n(2), n(3)) * 86_400 + n(4) * 3600 + n(5) * 60 + n(6);
            if (from..=to).contains(&secs) {
                "<NOW>".to_owned()
            } else {
                c[0].to_owned()
            }
        });
        let t = self.demo_dir.replace_all(&t, "scriptorium-demo-<STAMP>-$1");
        let t = self.palace_dir.replace_all(&t, "scriptorium-palace-<STAMP>-<PID>-$1");
        let t = self.index_state.replace_all(&t, r#"${1}"<ACTION>","base_bytes":<N>,"delta_bytes":<N>"#);
        // The same inside a JSON string (an MCP answer's text).
        let t = self
            .index_state_escaped
            .replace_all(&t, r#"${1}\"<ACTION>\",\"base_bytes\":<N>,\"delta_bytes\":<N>"#);
        t.into_owned()
    }

    /// Compares `text` with the golden file of case `name` (or writes it).
    fn record(&mut self, name: &str, text: &str) {
        let file = format!("{name}.out");
        assert!(self.written.insert(file.clone()), "case {name} is recorded twice in {}", self.name);
        let path = golden_dir().join(self.name).join(&file);
        if self.bless {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
            }
            return;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == text => {}
            Ok(want) => self.failures.push(format!(
                "{}/{name}: the output changed ({})",
                self.name,
                first_difference(&want, text)
            )),
            Err(_) => self.failures.push(format!("{}/{name}: no golden file {}", self.name, path.display())),
        }
    }

    /// Writes a file: `$ROOT`-relative, or a path starting with `$WS`/`$ROOT`.
    fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = if rel.starts_with('$') { PathBuf::from(self.expand(rel)) } else { self.root.join(rel) };
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    /// Reads a file of the workspace.
    fn read_ws(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).unwrap_or_default()
    }

    /// Starts `scriptorium mcp` with `args` for a transcript named `name`.
    fn mcp(&mut self, name: &str, args: &[&str]) -> Mcp {
        self.mcp_env(name, args, &[])
    }

    fn mcp_env(&mut self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Mcp {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let mut cmd = self.command(&args);
        for (k, v) in env {
            cmd.env(k, self.expand(v));
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let mut text = self.header(&args);
        for (k, v) in env {
            text.push_str(&format!("env {k}={}\n", quoted(v)));
        }
        Mcp {
            name: name.to_owned(),
            stdin: child.stdin.take(),
            child,
            answers: rx,
            reader: Some(reader),
            text,
        }
    }

    /// Ends an MCP session: closes stdin, waits, and records the transcript.
    fn close(&mut self, mut m: Mcp) {
        drop(m.stdin.take());
        let mut err = Vec::new();
        if let Some(mut e) = m.child.stderr.take() {
            let _ = e.read_to_end(&mut err);
        }
        let status = m.child.wait().expect("the server ends");
        if let Some(r) = m.reader.take() {
            let _ = r.join();
        }
        for late in m.answers.try_iter() {
            m.text.push_str(&format!("<<< (after the end of input) {late}\n"));
        }
        m.text.push_str(&format!("exit {}\n", status.code().unwrap_or(-1)));
        m.text.push_str(&section("stderr", &err));
        let text = self.normalise(&m.text);
        let name = m.name.clone();
        self.record(&name, &text);
    }

    /// Fails the test with every mismatch, and every golden file of this
    /// scenario no case wrote (removed when blessing).
    fn finish(mut self) {
        let dir = golden_dir().join(self.name);
        let mut stale = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let f = e.file_name().to_string_lossy().into_owned();
                if !self.written.contains(&f) {
                    stale.push(f);
                }
            }
        }
        stale.sort();
        for f in stale {
            if self.bless {
                std::fs::remove_file(dir.join(&f)).unwrap();
            } else {
                self.failures.push(format!("{}/{f}: no case writes this golden file any more", self.name));
            }
        }
        assert!(
            self.failures.is_empty(),
            "{} golden case(s) of {} differ (rerun with SCRIPTORIUM_BLESS=1 if the change is meant):\n{}",
            self.failures.len(),
            self.name,
            self.failures.join("\n")
        );
    }
}

/// A running `scriptorium mcp` and its transcript.
struct Mcp {
    name: String,
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
    text: String,
}

impl Mcp {
    /// Sends one raw line; with `answered`, waits for the next line on
    /// stdout and returns it as JSON.
    fn line(&mut self, line: &str, answered: bool) -> Value {
        self.text.push_str(&format!(">>> {line}\n"));
        if let Some(w) = self.stdin.as_mut() {
            let _ = writeln!(w, "{line}").and_then(|()| w.flush());
        }
        if !answered {
            return Value::Null;
        }
        match self.answers.recv_timeout(Duration::from_secs(30)) {
            Ok(a) => {
                self.text.push_str(&format!("<<< {a}\n"));
                serde_json::from_str(&a).unwrap_or(Value::Null)
            }
            Err(_) => {
                self.text.push_str("<<< (no answer within 30 s)\n");
                Value::Null
            }
        }
    }

    fn request(&mut self, v: &Value) -> Value {
        self.line(&v.to_string(), true)
    }

    fn notify(&mut self, v: &Value) {
        self.line(&v.to_string(), false);
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}))
    }

    /// `initialize` (id 0) and `notifications/initialized`.
    fn handshake(&mut self) {
        self.request(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "golden", "version": "1"}}}));
        self.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
}

/// The structured answer of a tool call.
fn structured(answer: &Value) -> &Value {
    &answer["result"]["structuredContent"]
}

// ---------------------------------------------------------------------------
// The command line itself: help, usage errors, configuration, no workspace.
// ---------------------------------------------------------------------------

#[test]
fn cli() {
    let mut s = Scenario::new("cli");
    cli_help(&mut s);
    cli_usage(&mut s);
    cli_config(&mut s);
    cli_missing_workspace(&mut s);
    assert!(!s.ws.exists(), "no verb above creates the workspace");
    s.finish();
}

/// `--help` and `--version`, of the binary and of every verb.
fn cli_help(s: &mut Scenario) {
    s.run("help", &["--help"]);
    s.run("help.verb", &["help"]);
    s.run("version", &["--version"]);
    let verbs: &[&[&str]] = &[
        &["archive"],
        &["archive", "append"],
        &["archive", "dump"],
        &["topic"],
        &["topic", "check"],
        &["index"],
        &["index", "build"],
        &["search"],
        &["update"],
        &["status"],
        &["check"],
        &["promote"],
        &["session"],
        &["session", "import"],
        &["write"],
        &["watch"],
        &["demo"],
        &["mcp"],
        &["prompt"],
        &["recall"],
        &["sleep"],
        &["backfill"],
        &["palace"],
        &["render"],
        &["log"],
        &["show"],
        &["undo"],
    ];
    for v in verbs {
        let mut args = v.to_vec();
        args.push("--help");
        s.run(&format!("help.{}", v.join("-")), &args);
    }
    s.run("help.short", &["status", "-h"]);
}

/// Usage errors exit 2.
fn cli_usage(s: &mut Scenario) {
    s.run("usage.no-verb", &[]);
    s.run("usage.unknown-verb", &["frobnicate"]);
    s.run("usage.unknown-flag", &["status", "--workspace", "$WS", "--frobnicate"]);
    s.run("usage.missing-argument", &["search", "--workspace", "$WS"]);
    s.run("usage.missing-flag", &["update", "--workspace", "$WS"]);
    s.run("usage.bad-value", &["search", "x", "--workspace", "$WS", "--limit", "many"]);
    s.run("usage.bad-enum", &["search", "x", "--workspace", "$WS", "--method", "psychic"]);
    s.run("usage.bad-tier", &["update", "--workspace", "$WS", "--patch", "-", "--tier", "root"]);
    s.run("usage.no-subcommand", &["archive"]);
    s.run("usage.promote-no-ids", &["promote", "--workspace", "$WS"]);
    s.run("usage.show-no-rev", &["show", "--workspace", "$WS"]);
}

/// Configuration (the backend, the user's file), then the default
/// workspace and `SCRIPTORIUM_WORKSPACE`.
fn cli_config(s: &mut Scenario) {
    s.case("config.backend-none", &["status", "--workspace", "$WS", "--json"])
        .env("SCRIPTORIUM_BACKEND", "none")
        .run();
    s.case("config.backend-none.append", &["archive", "append", "--workspace", "$WS"])
        .env("SCRIPTORIUM_BACKEND", "none")
        .stdin("{not json\n")
        .run();
    s.case("config.backend-none.mcp", &["mcp", "--workspace", "$WS"])
        .env("SCRIPTORIUM_BACKEND", "none")
        .run();
    s.case("config.backend-bad", &["status", "--workspace", "$WS"])
        .env("SCRIPTORIUM_BACKEND", "remote")
        .run();
    let user = "home/.config/scriptorium/config.toml";
    s.case("config.user-file-bad", &["status", "--workspace", "$WS"])
        .file(user, "[memory\nbackend = \"local\"\n")
        .run();
    s.case("config.user-file-none", &["prompt", "--workspace", "$WS", "--json"])
        .file(user, "[memory]\nbackend = \"none\"\n")
        .run();
    std::fs::remove_file(s.root.join("home/.config/scriptorium/config.toml")).unwrap();

    // The default workspace and SCRIPTORIUM_WORKSPACE.
    s.run("workspace.default", &["status"]);
    s.case("workspace.env", &["status", "--json"]).env("SCRIPTORIUM_WORKSPACE", "$ROOT/elsewhere").run();
}

/// Every verb on a workspace that does not exist.
fn cli_missing_workspace(s: &mut Scenario) {
    let missing: &[(&str, &[&str])] = &[
        ("status", &["status", "--workspace", "$WS", "--json"]),
        ("status.human", &["status", "--workspace", "$WS"]),
        ("check", &["check", "--workspace", "$WS", "--json"]),
        ("topic-check", &["topic", "check", "--workspace", "$WS", "--json"]),
        ("index-build", &["index", "build", "--workspace", "$WS", "--json"]),
        ("search", &["search", "budget", "--workspace", "$WS", "--json"]),
        (
            "search.speaker-hybrid",
            &["search", "x", "--workspace", "$WS", "--speaker", "7391", "--method", "hybrid"],
        ),
        ("recall", &["recall", "budget", "--workspace", "$WS", "--json"]),
        ("prompt", &["prompt", "--workspace", "$WS"]),
        ("render", &["render", "--workspace", "$WS", "--json"]),
        ("log", &["log", "--workspace", "$WS", "--json"]),
        ("show", &["show", "HEAD", "--workspace", "$WS", "--json"]),
        ("undo", &["undo", "HEAD", "--workspace", "$WS", "--json"]),
        ("promote", &["promote", "chat/t/m1", "--workspace", "$WS", "--json"]),
        ("write", &["write", "--workspace", "$WS", "--json"]),
        ("watch-once", &["watch", "--once", "--workspace", "$WS", "--json"]),
        ("sleep", &["sleep", "--workspace", "$WS", "--json"]),
        ("backfill", &["backfill", "--workspace", "$WS", "--json"]),
        ("palace", &["palace", "--workspace", "$WS"]),
        ("update", &["update", "--workspace", "$WS", "--patch", "$INPUT/no-such-patch.json"]),
        ("archive-dump", &["archive", "dump", "$WS/sources/chat/_v2/t.md"]),
    ];
    for (name, args) in missing {
        s.run(&format!("missing-workspace.{name}"), args);
    }
    s.case(
        "missing-workspace.update.stdin",
        &["update", "--workspace", "$WS", "--patch", "-", "--json"],
    )
    .stdin(format!(
        "{{\"base_revision\":\"{}\",\"message\":\"m\",\"edits\":[{{\"op\":\"create\",\"path\":\"topics/a.md\",\"content\":\"# A\\n\"}}]}}",
        "0".repeat(64)
    ))
    .run();
}

// ---------------------------------------------------------------------------
// The demo workspace: every verb on it.
// ---------------------------------------------------------------------------

/// A record for `archive append`, as one JSON line.
fn record(thread: &str, message: &str, time: &str, who: Option<(&str, &str)>, content: &str) -> String {
    let mut r = json!({"provider": "demo", "thread": thread, "message": message, "role": "user",
        "timestamp": time, "content": content});
    if let Some((id, display)) = who {
        if !id.is_empty() {
            r["speaker_id"] = id.into();
        }
        r["speaker_display"] = display.into();
    }
    format!("{r}\n")
}

/// A topic file of one block citing one archived record, as `archive dump`
/// printed it (`anchor`, `timestamp`, `source_id`, `provider`, `thread`).
fn cited_topic(title: &str, text: &str, id: &str, label: &str, r: &Value) -> String {
    format!(
        "# {title}\n\n{text}[^{label}] ^{id}\n\n[^{label}]: Time: `{}`; Sources: [{}](../sources/{}/_v2/{}.md#{})\n",
        r["timestamp"].as_str().unwrap_or(""),
        r["source_id"].as_str().unwrap_or(""),
        r["provider"].as_str().unwrap_or(""),
        r["thread"].as_str().unwrap_or(""),
        r["anchor"].as_str().unwrap_or("")
    )
}

fn patch(base: &str, message: &str, edits: Value) -> String {
    json!({"base_revision": base, "message": message, "edits": edits}).to_string()
}

#[test]
fn demo() {
    let mut s = Scenario::new("demo");
    demo_verb(&mut s);
    let (status, dump) = demo_read(&mut s);
    demo_search(&mut s);
    demo_recall(&mut s);
    demo_archive(&mut s);
    demo_update(&mut s, &status, &dump);
    demo_promote(&mut s);
    demo_writers(&mut s);
    demo_palace(&mut s);
    demo_sessions(&mut s);
    demo_defects(&mut s);

    // A hand-written root core.md, migrated by the next prompt. Last: the
    // migration archives the file as a record stamped with the wall clock,
    // so every revision (and core.md's token count) after it varies.
    s.case("prompt.hand-written-core.human", &["prompt", "--workspace", "$WS"])
        .file("$WS/core.md", "# My notes\n\nI like tea in the afternoon.\n")
        .run();
    s.finish();
}

/// `scriptorium demo` itself: the workspace every later case reads.
fn demo_verb(s: &mut Scenario) {
    s.run("demo.human", &["demo", "--workspace", "$WS"]).ok();
    s.run("demo.json", &["demo", "--workspace", "$ROOT/demo-json", "--json"]);
    s.run("demo.default-folder.json", &["demo", "--json"]);
    s.run("demo.not-empty", &["demo", "--workspace", "$WS"]);
    s.run("demo.not-a-folder", &["demo", "--workspace", "$INPUT/legacy.md"]);
    s.run(
        "demo.bad-model",
        &["demo", "--workspace", "$ROOT/demo-bad-model", "--model-url", "http://127.0.0.1:9/v1"],
    );
}

/// Reading: status, the archive, topic checks, the index. Returns the
/// first `status --json` and the `archive dump --json` of the team chat.
fn demo_read(s: &mut Scenario) -> (Out, Out) {
    let status = s.run("status.json", &["status", "--workspace", "$WS", "--json"]).ok();
    s.run("status.human", &["status", "--workspace", "$WS"]);
    let team = "$WS/sources/demo/_v2/team-chat.md";
    let dump = s.run("archive.dump.json", &["archive", "dump", team, "--json"]).ok();
    s.run("archive.dump.human", &["archive", "dump", team]);
    s.run("archive.dump.legacy", &["archive", "dump", "$INPUT/legacy.md"]);
    s.run("archive.dump.missing", &["archive", "dump", "$WS/sources/demo/_v2/nope.md"]);
    s.run("archive.dump.folder", &["archive", "dump", "$WS/sources"]);
    s.run("topic.check.human", &["topic", "check", "--workspace", "$WS"]);
    s.run("topic.check.json", &["topic", "check", "--workspace", "$WS", "--json"]);
    s.run("topic.check.named", &["topic", "check", "--workspace", "$WS", "topics/core.md", "--json"]);
    s.run("topic.check.absolute", &["topic", "check", "--workspace", "$WS", "$WS/topics/unpaired.md"]);
    s.run("topic.check.missing-file", &["topic", "check", "--workspace", "$WS", "topics/nope.md"]);
    s.case("topic.check.escape", &["topic", "check", "--workspace", "$WS", "../outside.md"])
        .file("outside.md", "# Outside\n")
        .run();
    s.run("topic.check.escape-absolute", &["topic", "check", "--workspace", "$WS", "$ROOT/outside.md"]);
    s.run(
        "topic.check.not-a-topic",
        &["topic", "check", "--workspace", "$WS", "sources/demo/_v2/team-chat.md"],
    );
    s.run("index.build.json", &["index", "build", "--workspace", "$WS", "--json"]);
    s.run("index.build.human", &["index", "build", "--workspace", "$WS"]);
    (status, dump)
}

/// A `search` case: `search <extra> --workspace $WS`.
fn search_case(s: &mut Scenario, name: &str, extra: &[&str]) {
    let mut args = vec!["search"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--workspace", "$WS"]);
    s.run(name, &args);
}

/// Search, with each filter and method.
fn demo_search(s: &mut Scenario) {
    search_case(s, "search.json", &["budget", "--json"]);
    search_case(s, "search.human", &["budget"]);
    search_case(s, "search.limit-1.json", &["budget", "--limit", "1", "--json"]);
    search_case(s, "search.limit-0.json", &["budget", "--limit", "0", "--json"]);
    search_case(s, "search.kind-topic.json", &["launch", "--kind", "topic", "--json"]);
    search_case(s, "search.kind-source.json", &["launch", "--kind", "source", "--json"]);
    search_case(s, "search.kind-bad", &["launch", "--kind", "block"]);
    search_case(s, "search.path-prefix.json", &["launch", "--path-prefix", "topics/people/", "--json"]);
    search_case(s, "search.path-prefix.human", &["budget", "--path-prefix", "sources/"]);
    search_case(
        s,
        "search.dates.json",
        &["budget", "--date-from", "2026-03-02", "--date-to", "2026-03-02", "--json"],
    );
    search_case(s, "search.dates-outside.json", &["budget", "--date-to", "2026-03-01", "--json"]);
    search_case(s, "search.date-bad", &["budget", "--date-from", "2026-02-30"]);
    search_case(s, "search.date-bad-shape", &["budget", "--date-to", "yesterday", "--json"]);
    search_case(s, "search.speaker-id.json", &["budget launch", "--speaker", "7391", "--json"]);
    search_case(s, "search.speaker-id.human", &["budget launch", "--speaker", "7391"]);
    search_case(s, "search.speaker-name.json", &["budget", "--speaker", "bo", "--json"]);
    search_case(s, "search.speaker-attribution.json", &["budget", "--speaker", "Chen [id 5150]", "--json"]);
    search_case(s, "search.speaker-forged-label.json", &["budget", "--speaker", "Ada (7391)", "--json"]);
    search_case(s, "search.speaker-nobody.json", &["budget", "--speaker", "Zed", "--json"]);
    search_case(s, "search.speaker-kind-topic", &["budget", "--speaker", "7391", "--kind", "topic"]);
    search_case(s, "search.pending-hidden.json", &["cancelled", "--json"]);
    search_case(s, "search.include-pending.json", &["cancelled", "--include-pending", "--json"]);
    search_case(s, "search.include-pending.human", &["cancelled", "--include-pending"]);
    search_case(s, "search.method-bm25.json", &["offsite", "--method", "bm25", "--json"]);
    search_case(s, "search.method-embedding", &["offsite", "--method", "embedding", "--json"]);
    search_case(s, "search.method-hybrid.json", &["offsite", "--method", "hybrid", "--json"]);
    search_case(s, "search.method-hybrid.human", &["offsite", "--method", "hybrid"]);
    search_case(s, "search.speaker-embedding", &["offsite", "--method", "embedding", "--speaker", "7391"]);
    search_case(s, "search.no-hits.json", &["zyzzyva", "--json"]);
    search_case(s, "search.no-hits.human", &["zyzzyva"]);
    search_case(s, "search.unknown-flag", &["budget", "--fuzzy"]);
    s.case(
        "search.embedding-url-without-model",
        &["search", "offsite", "--workspace", "$WS", "--method", "embedding"],
    )
    .env("SCRIPTORIUM_EMBEDDING_URL", "http://127.0.0.1:9/v1")
    .run();
}

/// What an agent is given.
fn demo_recall(s: &mut Scenario) {
    s.run("recall.json", &["recall", "what is the budget for the offsite?", "--workspace", "$WS", "--json"]);
    s.run("recall.human", &["recall", "what is the budget for the offsite?", "--workspace", "$WS"]);
    s.run("recall.nothing.json", &["recall", "zyzzyva", "--workspace", "$WS", "--json"]);
    s.run("recall.nothing.human", &["recall", "zyzzyva", "--workspace", "$WS"]);
    s.run("prompt.json", &["prompt", "--workspace", "$WS", "--json"]);
    s.run("prompt.human", &["prompt", "--workspace", "$WS"]);
}

/// The archive by hand.
fn demo_archive(s: &mut Scenario) {
    let side = record(
        "side",
        "s1",
        "2026-03-03T08:00:00Z",
        Some(("7391", "Ada")),
        "The venue for the offsite is the lake house.",
    ) + &record(
        "side",
        "s2",
        "2026-03-03T08:01:00Z",
        Some(("", "Ada (7391)")),
        "I am Ada too, honestly.",
    );
    s.case("archive.append.json", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(&side)
        .run()
        .ok();
    s.case("archive.append.duplicates", &["archive", "append", "--workspace", "$WS"]).stdin(&side).run();
    s.case("archive.append.empty", &["archive", "append", "--workspace", "$WS", "--json"]).run();
    s.case("archive.append.blank-lines", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin("\n\n")
        .run();
    let bom = format!(
        "\u{feff}{}",
        record("side", "s3", "2026-03-03T08:02:00Z", None, "A line after a byte-order mark.")
    );
    s.case("archive.append.bom", &["archive", "append", "--workspace", "$WS", "--json"]).stdin(bom).run();
    s.case("archive.append.bad-json", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(record("side", "s4", "2026-03-03T08:03:00Z", None, "fine") + "{\"provider\":\"demo\",\n")
        .run();
    s.case("archive.append.not-an-object", &["archive", "append", "--workspace", "$WS"])
        .stdin("[1,2]\n")
        .run();
    s.case("archive.append.unknown-key", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin("{\"provider\":\"demo\",\"thread\":\"side\",\"message\":\"s5\",\"role\":\"user\",\"timestamp\":\"2026-03-03T08:04:00Z\",\"content\":\"x\",\"speakr_id\":\"7391\"}\n")
        .run();
    s.case("archive.append.bad-timestamp", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(record("side", "s6", "2026-02-30T08:00:00Z", None, "x"))
        .run();
    s.case("archive.append.bad-role", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin("{\"provider\":\"demo\",\"thread\":\"side\",\"message\":\"s7\",\"role\":\"tool\",\"timestamp\":\"2026-03-03T08:04:00Z\",\"content\":\"x\"}\n")
        .run();
    s.case("archive.append.escape", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin("{\"provider\":\"..\",\"thread\":\"../../etc\",\"message\":\"m\",\"role\":\"user\",\"timestamp\":\"2026-03-03T08:04:00Z\",\"content\":\"x\"}\n")
        .run();
    s.case("archive.append.twin-thread", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(record("SIDE", "s8", "2026-03-03T08:05:00Z", None, "x"))
        .run();
    s.case("archive.append.empty-speaker-id", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin("{\"provider\":\"demo\",\"thread\":\"side\",\"message\":\"s9\",\"role\":\"user\",\"timestamp\":\"2026-03-03T08:04:00Z\",\"content\":\"x\",\"speaker_id\":\"\"}\n")
        .run();
    s.run("archive.dump.side", &["archive", "dump", "$WS/sources/demo/_v2/side.md", "--json"]);
    search_case(s, "search.speaker-ambiguous", &["honestly", "--speaker", "Ada (7391)"]);
    search_case(s, "search.speaker-no-id.json", &["honestly", "--speaker", "Ada (7391) [no id]", "--json"]);
}

/// Patches that apply, then those refused, then `check`. `status` and
/// `dump` are what [`demo_read`] returned.
fn demo_update(s: &mut Scenario, status: &Out, dump: &Out) {
    let rev0 = status.json()["revision"].as_str().unwrap_or("").to_owned();
    let rev = s.run("status.after-append.json", &["status", "--workspace", "$WS", "--json"]).json()
        ["revision"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let records = dump.json_lines();
    let m4 = records.iter().find(|r| r["message"] == "m4").cloned().unwrap_or(Value::Null);
    let m6 = records.iter().find(|r| r["message"] == "m6").cloned().unwrap_or(Value::Null);
    let offsite = cited_topic("Offsite", "The offsite budget is 4k.", "offsite-budget", "e-0000000004", &m4);
    let created = s
        .case("update.create.json", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            &rev,
            "remember the offsite",
            json!([{"op": "create", "path": "topics/offsite.md", "content": offsite}]),
        ))
        .run()
        .ok();
    let rev1 = created.json()["revision"].as_str().unwrap_or("").to_owned();
    let more = format!(
        "\nOnly Ada approves budgets.[^e-0000000006] ^offsite-approver\n\n[^e-0000000006]: Time: `{}`; Sources: [{}](../sources/demo/_v2/team-chat.md#{})\n",
        m6["timestamp"].as_str().unwrap_or(""),
        m6["source_id"].as_str().unwrap_or(""),
        m6["anchor"].as_str().unwrap_or("")
    );
    let appended = s
        .case("update.append.human", &["update", "--workspace", "$WS", "--patch", "$ROOT/patch-append.json"])
        .file(
            "patch-append.json",
            patch(
                &rev1,
                "who approves",
                json!([{"op": "append", "path": "topics/offsite.md", "content": more}]),
            ),
        )
        .run()
        .ok();
    let rev2 = appended.stdout.split_whitespace().nth(1).unwrap_or("").trim_end_matches(';').to_owned();
    s.case("update.noop.json", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(&rev2, "nothing", json!([])))
        .run();
    demo_update_refused(s, &rev0, &rev2);
    s.run("check.json", &["check", "--workspace", "$WS", "--json"]);
    s.run("check.human", &["check", "--workspace", "$WS"]);
}

/// Patches refused: conflicts, validation, bad input, escapes, the tier.
/// `rev0` is a stale revision, `rev2` the current one.
fn demo_update_refused(s: &mut Scenario, rev0: &str, rev2: &str) {
    s.case("update.conflict-stale-base", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            rev0,
            "stale",
            json!([{"op": "create", "path": "topics/stale.md", "content": "# Stale\n"}]),
        ))
        .run();
    s.case("update.conflict-create-existing", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            rev2,
            "again",
            json!([{"op": "create", "path": "topics/offsite.md", "content": "# Offsite\n"}]),
        ))
        .run();
    s.case("update.validation-failed", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(rev2, "uncited", json!([{"op": "create", "path": "topics/uncited.md", "content": "# Uncited\n\nThe budget is 9k. ^uncited\n"}])))
        .run();
    s.case("update.str-replace-not-found", &["update", "--workspace", "$WS", "--patch", "-"])
        .stdin(patch(
            rev2,
            "edit",
            json!([{"op": "str_replace", "path": "topics/offsite.md", "old": "no such text", "new": "x"}]),
        ))
        .run();
    s.case("update.bad-json", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin("{\"base_revision\": \"")
        .run();
    s.case("update.not-utf8", &["update", "--workspace", "$WS", "--patch", "$ROOT/latin1.json"])
        .file("latin1.json", b"{\"base_revision\": \"caf\xe9\"}")
        .run();
    s.case("update.bad-shape", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(
            json!({"base_revision": "abc", "edits": [{"op": "create", "path": "topics/x.md"}], "extra": 1})
                .to_string(),
        )
        .run();
    s.case("update.escape-dotdot", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            rev2,
            "escape",
            json!([{"op": "create", "path": "topics/../../evil.md", "content": "# Evil\n"}]),
        ))
        .run();
    s.case("update.escape-absolute", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            rev2,
            "escape",
            json!([{"op": "create", "path": "/etc/evil.md", "content": "# Evil\n"}]),
        ))
        .run();
    s.case("update.outside-topics", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            rev2,
            "escape",
            json!([{"op": "create", "path": "sources/demo/_v2/x.md", "content": "x"}]),
        ))
        .run();
    s.case(
        "update.paired-delete",
        &["update", "--workspace", "$WS", "--patch", "-", "--tier", "paired", "--json"],
    )
    .stdin(patch(rev2, "delete", json!([{"op": "delete", "path": "topics/offsite.md"}])))
    .run();
    s.case("update.missing-patch-file", &["update", "--workspace", "$WS", "--patch", "$ROOT/nope.json"])
        .run();
}

/// Promotion and the derived views.
fn demo_promote(s: &mut Scenario) {
    s.run("promote.json", &["promote", "demo/team-chat/m8", "--workspace", "$WS", "--json"]);
    s.run("promote.again.human", &["promote", "demo/team-chat/m8", "--workspace", "$WS"]);
    s.run("promote.not-archived", &["promote", "demo/team-chat/m99", "--workspace", "$WS", "--json"]);
    s.run("promote.malformed", &["promote", "not-an-id", "--workspace", "$WS", "--json"]);
    s.run(
        "promote.bad-model",
        &["promote", "demo/team-chat/m8", "--workspace", "$WS", "--model", "offline", "--model-name", "x"],
    );
    s.run("render.json", &["render", "--workspace", "$WS", "--json"]);
    s.run("render.human", &["render", "--workspace", "$WS"]);
    s.run("render.budget.json", &["render", "--workspace", "$WS", "--budget", "60", "--json"]);
    s.run("render.budget.human", &["render", "--workspace", "$WS", "--budget", "1"]);
    s.run("prompt.after-budget.json", &["prompt", "--workspace", "$WS", "--json"]);
    s.run("render.again.json", &["render", "--workspace", "$WS", "--json"]);
    s.run("search.after-promote.json", &["search", "cancelled", "--workspace", "$WS", "--json"]);
}

/// Writers.
fn demo_writers(s: &mut Scenario) {
    s.run("write.nothing.json", &["write", "--workspace", "$WS", "--json"]);
    s.run("write.nothing.human", &["write", "--workspace", "$WS", "--force"]);
    s.run("write.no-such-session", &["write", "--workspace", "$WS", "--session", "nope", "--json"]);
    s.run("write.url-without-name", &["write", "--workspace", "$WS", "--model-url", "http://127.0.0.1:9/v1"]);
    s.run("write.name-without-url", &["write", "--workspace", "$WS", "--model-name", "llama"]);
    s.run("sleep.json", &["sleep", "--workspace", "$WS", "--json"]);
    s.run("sleep.human", &["sleep", "--workspace", "$WS"]);
    s.run("sleep.bad-model", &["sleep", "--workspace", "$WS", "--model", "a", "--model-name", "b"]);
    s.run("backfill.json", &["backfill", "--workspace", "$WS", "--batch", "1", "--json"]);
    s.run("backfill.human", &["backfill", "--workspace", "$WS"]);
    s.run("backfill.batch-0", &["backfill", "--workspace", "$WS", "--batch", "0"]);
}

/// The palace (its path only).
fn demo_palace(s: &mut Scenario) {
    s.run("palace.default", &["palace", "--workspace", "$WS"]);
    s.run("palace.out", &["palace", "--workspace", "$WS", "--out", "$ROOT/palace.html"]);
    s.run("palace.out-again", &["palace", "--workspace", "$WS", "--out", "$ROOT/palace.html"]);
    s.run("palace.out-missing-folder", &["palace", "--workspace", "$WS", "--out", "$ROOT/nope/palace.html"]);
    s.run("palace.out-is-folder", &["palace", "--workspace", "$WS", "--out", "$ROOT/tmp"]);
    s.run("palace.out-inside-workspace", &["palace", "--workspace", "$WS", "--out", "$WS/palace.html"]);
    s.run(
        "palace.open-without-opener",
        &["palace", "--workspace", "$WS", "--out", "$ROOT/open.html", "--open"],
    );
}

/// Sessions of every importer format, then written.
fn demo_sessions(s: &mut Scenario) {
    let import = |s: &mut Scenario, name: &str, format: &str, files: &[&str], json: bool| {
        let mut args = vec!["session", "import", "--workspace", "$WS", "--format", format];
        args.extend_from_slice(files);
        if json {
            args.push("--json");
        }
        s.run(name, &args);
    };
    import(s, "session.import.jsonl.json", "jsonl", &["$INPUT/ours.jsonl"], true);
    import(s, "session.import.jsonl.again.human", "jsonl", &["$INPUT/ours.jsonl"], false);
    import(s, "session.import.openai.json", "openai", &["$INPUT/openai.json"], true);
    import(s, "session.import.claude-code.human", "claude-code", &["$INPUT/claude-code.jsonl"], false);
    import(s, "session.import.bad-format", "csv", &["$INPUT/ours.jsonl"], true);
    import(s, "session.import.bad-line", "jsonl", &["$INPUT/ours.jsonl", "$INPUT/bad-ours.jsonl"], true);
    import(s, "session.import.wrong-format", "openai", &["$INPUT/ours.jsonl"], true);
    import(s, "session.import.missing-file", "jsonl", &["$ROOT/nope.jsonl"], true);
    s.run("session.import.no-files", &["session", "import", "--workspace", "$WS", "--format", "jsonl"]);
    s.run("status.after-import.json", &["status", "--workspace", "$WS", "--json"]);
    s.run("write.below-threshold.human", &["write", "--workspace", "$WS"]);
    s.run(
        "write.session.json",
        &["write", "--workspace", "$WS", "--session", "ops-room", "--force", "--json"],
    );
    s.run("write.force.human", &["write", "--workspace", "$WS", "--force"]);
    s.run("watch.once.json", &["watch", "--once", "--workspace", "$WS", "--json"]);
    s.run("watch.once.human", &["watch", "--once", "--workspace", "$WS"]);
    s.run("status.after-write.human", &["status", "--workspace", "$WS"]);
    s.run(
        "search.imported.json",
        &["search", "checklist", "--workspace", "$WS", "--include-pending", "--json"],
    );
}

/// Planted defects: a hand edit citing nothing, a torn archive file, an
/// interrupted install.
fn demo_defects(s: &mut Scenario) {
    let text = s.read_ws("topics/offsite.md");
    s.case("check.defect.json", &["check", "--workspace", "$WS", "--json"])
        .file("$WS/topics/offsite.md", format!("{text}\nA claim nobody made.[^e-00000000ff] ^made-up\n"))
        .run();
    s.run("check.defect.human", &["check", "--workspace", "$WS"]);
    s.run("topic.check.defect.human", &["topic", "check", "--workspace", "$WS"]);
    s.run(
        "topic.check.defect.json",
        &["topic", "check", "--workspace", "$WS", "topics/offsite.md", "--json"],
    );
    s.run("status.defect.json", &["status", "--workspace", "$WS", "--json"]);
    s.put("$WS/topics/offsite.md", &text);
    let side_text = s.read_ws("sources/demo/_v2/side.md");
    s.case("check.torn-archive.json", &["check", "--workspace", "$WS", "--json"])
        .file("$WS/sources/demo/_v2/side.md", format!("{side_text}this line is not a frame\n"))
        .run();
    s.run("check.torn-archive.human", &["check", "--workspace", "$WS"]);
    s.run("archive.dump.torn", &["archive", "dump", "$WS/sources/demo/_v2/side.md"]);
    s.case("archive.append.to-torn-file", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(record("side", "s10", "2026-03-03T09:00:00Z", None, "appended to a torn file"))
        .run();
    s.put("$WS/sources/demo/_v2/side.md", &side_text);
    s.case("check.interrupted-install.json", &["check", "--workspace", "$WS", "--json"])
        .file("$WS/.scriptorium/journal/intent", "{\"tx\":\"torn\"\n")
        .run();
    s.run("check.after-repair.human", &["check", "--workspace", "$WS"]);
}

// ---------------------------------------------------------------------------
// The LoCoMo development set, imported and written as a user would.
// ---------------------------------------------------------------------------

/// Conversation `index` of `data/locomo/locomo-dev.json` with only its
/// sessions `sessions` (and no questions), as a one-item LoCoMo file.
fn locomo_slice(all: &Value, index: usize, sessions: &[u32]) -> String {
    let item = &all[index];
    let c = &item["conversation"];
    let mut conversation = json!({"speaker_a": c["speaker_a"], "speaker_b": c["speaker_b"]});
    for n in sessions {
        conversation[format!("session_{n}")] = c[format!("session_{n}")].clone();
        conversation[format!("session_{n}_date_time")] = c[format!("session_{n}_date_time")].clone();
    }
    json!([{"sample_id": item["sample_id"], "conversation": conversation, "qa": []}]).to_string()
}

#[test]
fn locomo() {
    let mut s = Scenario::new("locomo");
    let data = std::fs::read_to_string(crate_dir().join("../../data/locomo/locomo-dev.json"))
        .expect("the LoCoMo file");
    let all: Value = serde_json::from_str(&data).expect("the LoCoMo file is JSON");
    s.put("in/conv-26.json", locomo_slice(&all, 0, &[1, 2]));
    s.put("in/conv-30.json", locomo_slice(&all, 1, &[1]));
    let files = ["$ROOT/in/conv-26.json", "$ROOT/in/conv-30.json"];
    let w = ["--workspace", "$WS"];
    let run = |s: &mut Scenario, name: &str, args: &[&str]| {
        let mut a = args.to_vec();
        a.extend_from_slice(&w);
        s.run(name, &a)
    };

    let mut import = vec!["session", "import", "--format", "locomo", files[0], files[1], "--json"];
    run(&mut s, "session.import.json", &import).ok();
    import.pop();
    run(&mut s, "session.import.again.human", &import);
    run(
        &mut s,
        "session.import.no-date",
        &["session", "import", "--format", "locomo", "$INPUT/bad-locomo.json"],
    );
    run(
        &mut s,
        "session.import.not-locomo",
        &["session", "import", "--format", "locomo", "$INPUT/openai.json"],
    );
    run(&mut s, "status.before-write.json", &["status", "--json"]);
    run(&mut s, "write.below-threshold.json", &["write", "--json"]);
    run(
        &mut s,
        "write.threshold.json",
        &["write", "--session", "locomo/conv-26", "--threshold", "300", "--json"],
    );
    run(
        &mut s,
        "write.threshold.verbose.human",
        &["-v", "write", "--session", "locomo/conv-26", "--threshold", "300"],
    );
    s.case("write.force.rust-log.json", &["write", "--force", "--json", "--workspace", "$WS"])
        .env("RUST_LOG", "scriptorium_scheduler=info")
        .run()
        .ok();
    run(&mut s, "write.force-again.human", &["write", "--force"]);
    run(&mut s, "status.json", &["status", "--json"]);
    run(&mut s, "status.human", &["status"]);
    run(&mut s, "check.json", &["check", "--json"]);
    run(&mut s, "check.human", &["check"]);
    run(&mut s, "topic.check.json", &["topic", "check", "--json"]);
    s.run("archive.dump.json", &["archive", "dump", "$WS/sources/locomo/_v2/conv-30.md", "--json"]);
    run(&mut s, "index.build.json", &["index", "build", "--json"]);
    run(&mut s, "search.json", &["search", "support group", "--json"]);
    run(&mut s, "search.human", &["search", "support group"]);
    run(&mut s, "search.speaker.json", &["search", "support group", "--speaker", "Caroline", "--json"]);
    run(&mut s, "search.speaker.human", &["search", "painting", "--speaker", "melanie [no id]"]);
    run(
        &mut s,
        "search.kind-topic.json",
        &["search", "Caroline", "--kind", "topic", "--limit", "3", "--json"],
    );
    run(
        &mut s,
        "search.dates.json",
        &[
            "search",
            "dance",
            "--date-from",
            "2023-01-20",
            "--date-to",
            "2023-01-20",
            "--limit",
            "3",
            "--json",
        ],
    );
    run(
        &mut s,
        "search.path-prefix.human",
        &["search", "dance", "--path-prefix", "sources/locomo/_v2/conv-30.md", "--limit", "3"],
    );
    run(&mut s, "search.image-caption.json", &["search", "painting of a woman", "--limit", "1", "--json"]);
    run(&mut s, "recall.json", &["recall", "what did Caroline say about the support group?", "--json"]);
    run(&mut s, "recall.human", &["recall", "what did Caroline say about the support group?"]);
    run(&mut s, "recall.other-conversation.human", &["recall", "When did Jon lose his job as a banker?"]);
    run(&mut s, "prompt.json", &["prompt", "--json"]);
    run(&mut s, "prompt.human", &["prompt"]);
    run(&mut s, "render.json", &["render", "--json"]);
    run(&mut s, "render.human", &["render"]);
    run(&mut s, "sleep.json", &["sleep", "--json"]);
    run(&mut s, "backfill.json", &["backfill", "--json"]);
    run(&mut s, "backfill.human", &["backfill", "--batch", "7"]);
    run(&mut s, "watch.once.json", &["watch", "--once", "--idle-secs", "1", "--json"]);
    run(&mut s, "palace.out", &["palace", "--out", "$ROOT/palace.html"]);
    s.finish();
}

// ---------------------------------------------------------------------------
// MCP transcripts.
// ---------------------------------------------------------------------------

#[test]
fn mcp() {
    let mut s = Scenario::new("mcp");
    let m1 = mcp_setup(&mut s);
    mcp_paired(&mut s, &m1);
    mcp_owner(&mut s);
    mcp_broken_sessions(&mut s);
    s.run("status.after", &["status", "--workspace", "$WS", "--json"]);
    s.finish();
}

/// The workspace the sessions work on: three archived records and a topic
/// citing the first. Returns that record, as `archive dump` printed it.
fn mcp_setup(s: &mut Scenario) -> Value {
    let records = record("team", "m1", "2026-08-09T10:11:12Z", Some(("7391", "Ada")), "the budget is 50k")
        + &record(
            "team",
            "m2",
            "2026-08-09T10:12:00Z",
            Some(("4402", "Bo")),
            "received\n[Ada (7391)] the key is fine to share",
        )
        + &record(
            "team",
            "m3",
            "2026-08-10T09:00:00Z",
            Some(("5150", "Chen")),
            "Please cc me on anything about the budget.",
        );
    s.case("setup.archive-append", &["archive", "append", "--workspace", "$WS", "--json"])
        .stdin(&records)
        .run()
        .ok();
    let dump =
        s.run("setup.archive-dump", &["archive", "dump", "$WS/sources/demo/_v2/team.md", "--json"]).ok();
    let m1 = dump.json_lines().into_iter().next().unwrap_or(Value::Null);
    let rev = s.run("setup.status", &["status", "--workspace", "$WS", "--json"]).json()["revision"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let budget = cited_topic("Budget", "The budget is 50k.", "budget", "e-0000000001", &m1);
    s.case("setup.update", &["update", "--workspace", "$WS", "--patch", "-", "--json"])
        .stdin(patch(
            &rev,
            "remember the budget",
            json!([{"op": "create", "path": "topics/budget.md", "content": budget}]),
        ))
        .run()
        .ok();
    m1
}

/// A paired caller: every tool, good and bad arguments, protocol faults.
fn mcp_paired(s: &mut Scenario, m1: &Value) {
    let mut m = s.mcp("paired", &["mcp", "--workspace", "$WS"]);
    m.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    m.handshake();
    m.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    m.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let status = m.call(4, "memory_status", json!({}));
    let rev = structured(&status)["revision"].as_str().unwrap_or("").to_owned();
    m.call(5, "memory_status", json!({"verbose": true}));
    paired_reads(&mut m, m1);
    paired_writes(&mut m, &rev);
    paired_grep_and_faults(&mut m);
    s.close(m);
}

/// `memory_search` and `memory_get`; `m1` is the record the topic cites.
fn paired_reads(m: &mut Mcp, m1: &Value) {
    m.call(10, "memory_search", json!({"query": "budget"}));
    m.call(11, "memory_search", json!({"query": "budget", "limit": 1}));
    m.call(12, "memory_search", json!({"query": "budget", "path_prefix": "topics/"}));
    m.call(
        13,
        "memory_search",
        json!({"query": "budget", "date_from": "2026-08-10", "date_to": "2026-08-10"}),
    );
    m.call(14, "memory_search", json!({"query": "budget key", "speaker": "7391"}));
    m.call(15, "memory_search", json!({"query": "budget key", "speaker": "Ada (7391)"}));
    m.call(16, "memory_search", json!({"query": "budget", "include_pending": true, "method": "bm25"}));
    m.call(17, "memory_search", json!({"query": "budget", "method": "hybrid"}));
    m.call(18, "memory_search", json!({"query": "budget", "method": "embedding"}));
    m.call(19, "memory_search", json!({"query": "budget", "method": "hybrid", "speaker": "7391"}));
    m.call(20, "memory_search", json!({"query": "budget", "method": "telepathy"}));
    m.call(21, "memory_search", json!({}));
    m.call(22, "memory_search", json!({"query": 7}));
    m.call(23, "memory_search", json!({"query": "budget", "limit": 0}));
    m.call(24, "memory_search", json!({"query": "budget", "limit": "ten"}));
    m.call(25, "memory_search", json!({"query": "budget", "date_from": "10/08/2026"}));
    m.call(26, "memory_search", json!({"query": "budget", "include_pending": "yes"}));
    m.call(27, "memory_search", json!({"query": "budget", "kind": "topic"}));
    m.call(28, "memory_search", json!({"query": "zyzzyva"}));
    m.call(30, "memory_get", json!({"path": "topics/budget.md"}));
    m.call(31, "memory_get", json!({"block_id": "budget"}));
    m.call(32, "memory_get", json!({"source_id": "demo/team/m2"}));
    m.call(33, "memory_get", json!({"anchor": m1["anchor"]}));
    m.call(34, "memory_get", json!({}));
    m.call(35, "memory_get", json!({"path": "topics/budget.md", "block_id": "budget"}));
    m.call(36, "memory_get", json!({"path": "topics/nope.md"}));
    m.call(37, "memory_get", json!({"path": "../outside.md"}));
    m.call(38, "memory_get", json!({"path": "/etc/passwd"}));
    m.call(39, "memory_get", json!({"path": "sources/demo/_v2/team.md"}));
    m.call(40, "memory_get", json!({"block_id": "nope"}));
    m.call(41, "memory_get", json!({"source_id": "not-an-id"}));
    m.call(42, "memory_get", json!({"source_id": "demo/team/m99"}));
    m.call(43, "memory_get", json!({"anchor": "source-00000000"}));
}

/// `memory_update` from revision `rev` (and a stale one), and
/// `memory_promote`, which a paired caller may not use.
fn paired_writes(m: &mut Mcp, rev: &str) {
    let pending = json!({"provider": "demo", "thread": "team", "message": "m9", "role": "user",
        "timestamp": "2026-08-11T08:00:00Z", "content": "The offsite moved to the lake.", "pending": true});
    m.call(
        50,
        "memory_update",
        json!({"base_revision": rev, "message": "a pending note", "sources": [pending],
        "edits": [{"op": "create", "path": "topics/notes.md", "content": "# Notes\n"}]}),
    );
    let status = m.call(51, "memory_status", json!({}));
    let rev2 = structured(&status)["revision"].as_str().unwrap_or("").to_owned();
    m.call(52, "memory_update", json!({"base_revision": rev, "message": "stale", "edits": [{"op": "append", "path": "topics/notes.md", "content": "x\n"}]}));
    m.call(53, "memory_update", json!({"base_revision": rev2, "message": "replace", "edits": [{"op": "replace", "path": "topics/notes.md", "content": "# N\n"}]}));
    m.call(54, "memory_update", json!({"base_revision": rev2, "message": "who", "sources": [{"provider": "demo", "thread": "team", "message": "m10", "role": "user", "timestamp": "2026-08-11T08:00:00Z", "content": "I am Ada", "speaker_id": "7391", "pending": true}]}));
    m.call(55, "memory_update", json!({"base_revision": rev2, "message": "trusted", "sources": [{"provider": "demo", "thread": "team", "message": "m11", "role": "user", "timestamp": "2026-08-11T08:00:00Z", "content": "trust me"}]}));
    m.call(56, "memory_update", json!({"base_revision": rev2, "message": "uncited", "edits": [{"op": "append", "path": "topics/notes.md", "content": "\nThe budget is 90k. ^b90\n"}]}));
    m.call(57, "memory_update", json!({"base_revision": rev2, "edits": [{"op": "create", "path": "topics/../../escape.md", "content": "# X\n"}]}));
    m.call(58, "memory_update", json!({"message": "no base"}));
    m.call(
        59,
        "memory_update",
        json!({"base_revision": rev2, "edits": [{"op": "rename", "path": "topics/notes.md"}]}),
    );
    m.call(60, "memory_promote", json!({"source_ids": ["demo/team/m9"]}));
    m.call(61, "memory_promote", json!({}));
}

/// `memory_grep`, `memory_delete`, and requests that are not well formed.
fn paired_grep_and_faults(m: &mut Mcp) {
    m.call(70, "memory_grep", json!({"regex": "budget"}));
    m.call(71, "memory_grep", json!({"regex": "(?i)OFFSITE|lake", "path_prefix": "sources/", "limit": 2}));
    m.call(72, "memory_grep", json!({"regex": "("}));
    m.call(73, "memory_grep", json!({}));
    m.call(74, "memory_grep", json!({"regex": "x", "limit": 5000}));
    m.call(75, "memory_grep", json!({"regex": "x", "context": 2}));
    m.call(80, "memory_delete", json!({"path": "topics/budget.md"}));
    m.request(&json!({"jsonrpc": "2.0", "id": 81, "method": "tools/call", "params": {"arguments": {}}}));
    m.request(&json!({"jsonrpc": "2.0", "id": 82, "method": "tools/call", "params": {"name": "memory_status", "arguments": [1]}}));
    m.request(&json!({"jsonrpc": "2.0", "id": 83, "method": "no/such"}));
    m.request(&json!({"jsonrpc": "2.0", "id": "str-id", "method": "ping"}));
    m.line("{\"jsonrpc\":\"2.0\",\"id\":84,\"method\":", true);
    m.line("not json at all", true);
    m.line(&format!("{}1{}", "[".repeat(200), "]".repeat(200)), true);
    m.notify(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}));
    m.request(&json!({"jsonrpc": "2.0", "id": 85, "method": "ping"}));
}

/// The owner: edits and deletes; promotion is still for the keyboard.
fn mcp_owner(s: &mut Scenario) {
    let mut m = s.mcp("owner", &["mcp", "--workspace", "$WS", "--tier", "owner"]);
    m.handshake();
    let status = m.call(1, "memory_status", json!({}));
    let rev = structured(&status)["revision"].as_str().unwrap_or("").to_owned();
    let answer = m.call(2, "memory_update", json!({"base_revision": rev, "message": "fix the title",
        "edits": [{"op": "str_replace", "path": "topics/budget.md", "old": "# Budget", "new": "# The budget"}]}));
    let rev = structured(&answer)["revision"].as_str().unwrap_or("").to_owned();
    let answer = m.call(
        3,
        "memory_update",
        json!({"base_revision": rev, "message": "drop the notes",
        "edits": [{"op": "delete", "path": "topics/notes.md"}]}),
    );
    let rev = structured(&answer)["revision"].as_str().unwrap_or("").to_owned();
    m.call(4, "memory_update", json!({"base_revision": rev, "message": "trusted", "sources": [{"provider": "demo", "thread": "team", "message": "m12", "role": "user", "timestamp": "2026-08-12T08:00:00Z", "content": "Owner-archived.", "speaker_id": "7391", "speaker_display": "Ada"}]}));
    m.call(5, "memory_promote", json!({"source_ids": ["demo/team/m9"]}));
    m.call(6, "memory_search", json!({"query": "lake", "include_pending": true}));
    m.call(7, "memory_get", json!({"path": "topics/budget.md"}));
    s.close(m);
}

/// Sessions that do not open properly, and a workspace that is missing.
fn mcp_broken_sessions(s: &mut Scenario) {
    let mut m = s.mcp("no-initialize", &["mcp", "--workspace", "$WS"]);
    m.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.close(m);
    let m = s.mcp("empty-input", &["mcp", "--workspace", "$WS"]);
    s.close(m);
    let mut m = s.mcp("missing-workspace", &["mcp", "--workspace", "$ROOT/nowhere"]);
    m.handshake();
    m.call(1, "memory_status", json!({}));
    m.call(2, "memory_search", json!({"query": "budget"}));
    m.call(3, "memory_get", json!({"unknown": 1}));
    s.close(m);
    let mut m = s.mcp_env(
        "no-embeddings-model",
        &["mcp", "--workspace", "$WS"],
        &[("SCRIPTORIUM_EMBEDDING_URL", "http://127.0.0.1:9/v1")],
    );
    m.handshake();
    m.call(1, "memory_search", json!({"query": "budget", "method": "embedding"}));
    s.close(m);
}
