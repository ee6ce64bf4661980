//! Shared helpers of the benchmarks: deterministic, realistic workloads.
//!
//! The archive generator writes v2 files the way a busy group chat fills
//! them: bodies of 50–500 bytes of words, a few multi-line messages, CRLF
//! and U+2028 now and then, trusted speakers, speakerless assistant turns,
//! forged labels inside bodies, and some pending records.

pub mod categories;
pub mod claude_code;
pub mod corpus;
pub mod forced_write;
pub mod locomo;
pub mod long_history;
pub mod page_cache;
pub mod peer_index;
pub mod sync_pair;
pub mod workspace_gen;

use scriptorium_source_archive::{v2, Role, SourceId, SourceRecord, Speaker};

/// The p50 and p99 of `v`, in milliseconds (nearest rank).
pub fn percentiles(mut v: Vec<std::time::Duration>) -> (f64, f64) {
    v.sort();
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

/// A whole number from the environment variable `name` (`_` separators
/// allowed), if it is set and parses.
pub fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().replace('_', "").parse().ok())
}

/// A small deterministic PRNG (xorshift64*), so every run measures the same bytes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo) as u64) as usize
    }
}

/// The vocabulary of every generated record and block (and of the prompts
/// the hook benchmark sends, so that they match).
pub const WORDS: &[&str] = &[
    "the",
    "budget",
    "is",
    "fine",
    "we",
    "should",
    "ship",
    "on",
    "friday",
    "please",
    "remember",
    "that",
    "Ada",
    "prefers",
    "short",
    "answers",
    "deploy",
    "staging",
    "review",
    "merge",
    "tests",
    "passed",
    "meeting",
    "moved",
    "to",
    "Tuesday",
    "cost",
    "estimate",
    "50k",
    "Flask",
    "tracker",
    "invoice",
    "über",
    "café",
    "日本語",
    "ok",
    "thanks",
    "- [ ]",
    "`cargo test`",
    "[2026-08-09] INFO ready",
];

/// One realistic record of `thread` number `n`.
pub fn record(rng: &mut Rng, thread: &str, n: usize) -> SourceRecord {
    let target = rng.range(50, 500);
    let mut body = String::with_capacity(target + 16);
    if rng.range(0, 20) == 0 {
        body.push_str("[Ada (7391)] ");
    }
    while body.len() < target {
        let w = WORDS[rng.range(0, WORDS.len())];
        body.push_str(w);
        body.push(match rng.range(0, 40) {
            0 => '\n',
            1 => '\u{2028}',
            2 => '.',
            _ => ' ',
        });
    }
    if rng.range(0, 30) == 0 {
        body.push_str("\r\n");
    }
    let (role, speaker) = match rng.range(0, 4) {
        0 => (Role::Assistant, None),
        1 => (Role::User, Speaker::from_transport(Some("4402"), Some("Bo"))),
        2 => (Role::User, Speaker::from_transport(Some("-100--42"), Some("Mal [admin]"))),
        _ => (Role::User, Speaker::from_transport(Some("7391"), Some("Ada Lovelace"))),
    };
    let id = SourceId::new("openprogram", thread, &format!("msg_{n:08x}")).expect("generated ids are valid");
    let ts = format!(
        "2026-08-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        1 + n % 28,
        n % 24,
        n % 60,
        (n / 60) % 60,
        n % 1000
    );
    SourceRecord::new(id, role, &ts, speaker, rng.range(0, 50) == 0, body)
        .expect("generated records are valid")
}

/// A v2 file of at least `min_bytes`, its frame count and its LF count.
pub fn archive(min_bytes: usize, thread: &str) -> (Vec<u8>, usize, usize) {
    let mut rng = Rng::new(0x5eed);
    let mut out = Vec::with_capacity(min_bytes + 4096);
    out.extend_from_slice(v2::MARKER.as_bytes());
    out.push(b'\n');
    let mut n = 0;
    while out.len() < min_bytes {
        v2::write_frame(&record(&mut rng, thread, n), &mut out);
        n += 1;
    }
    let lines = memchr::memchr_iter(b'\n', &out).count();
    (out, n, lines)
}

/// A topic workspace in memory: `files` topic files of `blocks_per_file`
/// blocks, each citing one or two of `records` archived records (one in
/// fifty pending), with links between files; and the resolver over the
/// records.
pub fn topic_workspace(
    files: usize,
    blocks_per_file: usize,
    records: usize,
) -> (Vec<(String, String)>, scriptorium_topic_markdown::validate::ArchiveResolver<'static>) {
    let mut rng = Rng::new(0xc0ffee);
    let mut resolver = scriptorium_topic_markdown::validate::ArchiveResolver::default();
    let mut anchors = Vec::with_capacity(records);
    for n in 0..records {
        let id = SourceId::new("openprogram", &format!("t{}", n / 1000), &format!("m{n}")).expect("valid id");
        let (text, path, anchor) = (id.text(), id.v2_path(), id.anchor());
        resolver.insert(text.clone(), path.clone(), anchor.clone(), n % 50 == 49, format!("Message {n}."));
        anchors.push((text, path, anchor));
    }
    let mut out = Vec::with_capacity(files);
    for f in 0..files {
        let path = format!("topics/t{:02}/f{f}.md", f % 100);
        let mut s = format!("---\ndescription: File {f}.\nkind: theme\n---\n# File {f}\n\n");
        let mut defs = String::new();
        for b in 0..blocks_per_file {
            let words: Vec<&str> = (0..rng.range(8, 40)).map(|_| WORDS[rng.range(0, WORDS.len())]).collect();
            let label = format!("e-{:010x}", f * blocks_per_file + b);
            let link = if b % 4 == 0 && f > 0 {
                format!(" See [[t{:02}/f{}#^b{}x{}]].", (f - 1) % 100, f - 1, f - 1, b)
            } else {
                String::new()
            };
            s.push_str(&format!("{}.{link}[^{label}] ^b{f}x{b}\n\n", words.join(" ")));
            let (t1, p1, a1) = &anchors[rng.range(0, records)];
            let mut sources = format!("[{t1}](../../{p1}#{a1})");
            if b % 3 == 0 {
                let (t2, p2, a2) = &anchors[rng.range(0, records)];
                sources.push_str(&format!(", [{t2}](../../{p2}#{a2})"));
            }
            let day = 1 + rng.range(0, 28);
            defs.push_str(&format!(
                "[^{label}]: Time: `2026-0{}-{day:02}T10:00:00Z`; Sources: {sources}\n",
                1 + b % 9
            ));
        }
        s.push_str(&defs);
        out.push((path, s));
    }
    (out, resolver)
}

/// The `scriptorium` binary the benches run: `SCRIPTORIUM_BIN`, or the one
/// built beside the running bench (`target/<profile>/scriptorium`; `cargo
/// xtask bench` and `cargo xtask ci` build it first).
pub fn cli() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("SCRIPTORIUM_BIN") {
        return p.into();
    }
    let exe = std::env::current_exe().expect("the bench knows its path");
    let dir =
        exe.parent().and_then(std::path::Path::parent).expect("the bench lives in target/<profile>/deps");
    let bin = dir.join(format!("scriptorium{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build it first (cargo build --release -p scriptorium --bin scriptorium), or set SCRIPTORIUM_BIN",
        bin.display()
    );
    bin
}
