//! Concurrent read-modify-write writers lose no increment, and readers
//! never see a half-installed patch.

use super::*;

fn counter_of(text: &str) -> u64 {
    let at = text.find("Counter is ").expect("the counter block") + "Counter is ".len();
    let end = at + text[at..].find('.').unwrap();
    text[at..end].parse().unwrap()
}

#[cfg(unix)]
#[test]
#[allow(clippy::print_stderr)]
fn concurrent_writers_lose_no_increment() {
    use std::os::unix::fs::MetadataExt;

    const WRITERS: usize = 4;
    const EACH: usize = 5;
    let ws = workspace();
    let root = ws.path().to_path_buf();
    let counter = "topics/counter.md";
    let body = |n: u64| {
        format!(
            "Counter is {n}.[^e-c0c0c0c0c0] ^ctr\n\n{}\n",
            footnote("e-c0c0c0c0c0", "team-1", "m1", "../")
        )
    };
    let c = updated(&root, &patch(&revision(&root), vec![], vec![create(counter, &body(0))]), &[]);
    let rev0 = c["revision"].as_str().unwrap().to_owned();
    let hist0 = history(&root).len();
    let lock = root.join(".scriptorium/write.lock");
    let inode = std::fs::metadata(&lock).unwrap().ino();

    let handles: Vec<_> = (0..WRITERS)
        .map(|k| {
            let root = root.clone();
            std::thread::spawn(move || {
                let (mut done, mut conflicts, mut locked) = (0, 0, 0);
                let mut attempts = 0;
                while done < EACH {
                    attempts += 1;
                    assert!(attempts < 500, "writer {k} starves");
                    // The revision first, then the file: a file read after
                    // a newer revision can only make the patch stale.
                    let rev = revision(&root);
                    let text = std::fs::read_to_string(root.join(counter)).unwrap();
                    let n = counter_of(&text);
                    let edit = if (k + attempts) % 2 == 0 {
                        replace(
                            counter,
                            &text.replacen(&format!("Counter is {n}."), &format!("Counter is {}.", n + 1), 1),
                        )
                    } else {
                        str_replace(counter, &format!("Counter is {n}."), &format!("Counter is {}.", n + 1))
                    };
                    let out = update(&root, &patch(&rev, vec![], vec![edit]), &["--timeout-ms", "50"]);
                    if out.status.success() {
                        done += 1;
                        continue;
                    }
                    let err = error_of(&out);
                    match err["code"].as_str().unwrap() {
                        "CONFLICT" => conflicts += 1,
                        "LOCKED" => locked += 1,
                        other => panic!("writer {k}: unexpected {other}: {err}"),
                    }
                }
                (done, conflicts, locked)
            })
        })
        .collect();
    let started = Instant::now();
    let (mut successes, mut conflicts, mut locked) = (0, 0, 0);
    for h in handles {
        let (d, c, l) = h.join().unwrap();
        successes += d;
        conflicts += c;
        locked += l;
    }
    let retries = conflicts + locked;
    eprintln!(
        "{WRITERS} writers x {EACH} increments in {:?}: {conflicts} CONFLICT and {locked} LOCKED retries",
        started.elapsed()
    );
    assert_eq!(successes, WRITERS * EACH);
    let text = std::fs::read_to_string(root.join(counter)).unwrap();
    assert_eq!(counter_of(&text), (WRITERS * EACH) as u64, "an increment was lost ({retries} retries)");
    assert_eq!(text, body((WRITERS * EACH) as u64));
    // The history is one chain of 20 transactions.
    let hist = history(&root);
    assert_eq!(hist.len(), hist0 + WRITERS * EACH);
    let mut prev = rev0.clone();
    for h in &hist[hist0..] {
        assert_eq!(h["revision_before"], prev.as_str(), "the history is a chain");
        prev = h["revision_after"].as_str().unwrap().to_owned();
    }
    assert_eq!(prev, revision(&root));
    assert_eq!(std::fs::metadata(&lock).unwrap().ino(), inode, "the lock file never moves");
    let (code, lines) = check(&root);
    assert_eq!(code, Some(0), "{lines:?}");
}

/// Readers (`status`) running while two-file patches install only ever see
/// a revision the history names: never a mixture of one file's new bytes
/// and another's old ones.
#[test]
fn readers_never_see_a_half_installed_patch() {
    let ws = workspace();
    let root = ws.path().to_path_buf();
    let rev0 = revision(&root);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (root, done) = (root.clone(), done.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) || seen.is_empty() {
                seen.push(revision(&root));
            }
            seen
        })
    };
    let mut rev = rev0.clone();
    for t in 0..12u64 {
        let label = format!("e-{:010x}", 0x20_0000 + t);
        let message = format!("r{t}");
        let content = format!(
            "\nRead trial {t}.[^{label}] ^rd{t}\n\n{}\n",
            footnote(&label, "reads", &message, "../../")
        );
        let p =
            patch(&rev, vec![record("reads", &message, "read me", false)], vec![append(ADA_PATH, &content)]);
        rev = updated(&root, &p, &[])["revision"].as_str().unwrap().to_owned();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = reader.join().unwrap();
    let mut known: std::collections::BTreeSet<String> =
        history(&root).iter().map(|h| h["revision_after"].as_str().unwrap().to_owned()).collect();
    known.insert(rev0);
    for r in &seen {
        assert!(known.contains(r), "a reader saw revision {r}, which no transaction produced");
    }
}
