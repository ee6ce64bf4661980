//! Coalescing with real threads (each opens its own lock files, as separate
//! processes would): one write at a time, one follow-up at most, every
//! trigger covered by a write that starts after it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::*;

const LONG: Duration = Duration::from_secs(600);

fn run_of(c: Claim) -> Running {
    match c {
        Claim::Run(r) => r,
        Claim::Absorbed => panic!("expected to run"),
    }
}

#[test]
fn triggers_while_a_write_runs_queue_one_follow_up_and_the_rest_are_absorbed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let first = run_of(claim(root, "s", false, LONG).unwrap());
    assert!(!first.force);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for i in 0..8 {
            let tx = tx.clone();
            scope.spawn(move || tx.send(claim(root, "s", i == 5, LONG).unwrap()).unwrap());
        }
        // Seven are absorbed at once; none runs beside the running write.
        for _ in 0..7 {
            assert!(matches!(rx.recv().unwrap(), Claim::Absorbed), "a second write while one runs");
        }
        // The eighth, the follow-up, waits for the running write.
        assert!(rx.try_recv().is_err());
        drop(first);
        let next = run_of(rx.recv().unwrap());
        assert!(next.force, "it absorbed a forced trigger, so it is forced");
        // While it runs the queue is free again: the next trigger queues
        // behind it and runs once it is done.
        let (tx2, rx2) = mpsc::channel();
        scope.spawn(move || tx2.send(claim(root, "s", false, LONG).unwrap()).unwrap());
        drop(next);
        let last = run_of(rx2.recv().unwrap());
        assert!(!last.force, "the forced flag was used up");
    });
    // Another session is never held up.
    let _a = run_of(claim(root, "s", false, LONG).unwrap());
    let _b = run_of(claim(root, "t", false, LONG).unwrap());
}

#[test]
fn a_follow_up_past_its_deadline_is_locked_and_its_forced_flag_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let first = run_of(claim(root, "s", false, LONG).unwrap());
    let e = claim(root, "s", true, Duration::ZERO).unwrap_err();
    assert_eq!(e.code, Code::Locked);
    assert!(e.message.contains("still ran"), "{e}");
    drop(first);
    // The next write takes the forced request it could not run.
    let next = run_of(claim(root, "s", false, LONG).unwrap());
    assert!(next.force);
    drop(next);
    assert!(!run_of(claim(root, "s", false, LONG).unwrap()).force);
}

#[test]
fn many_triggers_at_once_never_run_two_writes_and_every_one_is_covered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `recorded` counts triggers (each bumps it before claiming, as a hook
    // records turns before it starts a write); a write reads it when it
    // starts, as a write reads the pending turns.
    let recorded = AtomicUsize::new(0);
    let active = AtomicUsize::new(0);
    let writes = AtomicUsize::new(0);
    let newest_read = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for t in 0..12 {
            let (recorded, active, writes, newest_read) = (&recorded, &active, &writes, &newest_read);
            scope.spawn(move || {
                for k in 0..25 {
                    recorded.fetch_add(1, Ordering::SeqCst);
                    let Claim::Run(r) = claim(root, "s", (t + k) % 7 == 0, LONG).unwrap() else { continue };
                    assert_eq!(active.fetch_add(1, Ordering::SeqCst), 0, "two writes of one session at once");
                    newest_read.fetch_max(recorded.load(Ordering::SeqCst), Ordering::SeqCst);
                    writes.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    active.fetch_sub(1, Ordering::SeqCst);
                    drop(r);
                }
            });
        }
    });
    let total = recorded.load(Ordering::SeqCst);
    assert_eq!(total, 12 * 25);
    assert_eq!(newest_read.load(Ordering::SeqCst), total, "the last trigger was covered by a write after it");
    let writes = writes.load(Ordering::SeqCst);
    assert!((1..=total).contains(&writes), "{writes}");
}
