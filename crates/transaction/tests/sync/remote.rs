//! The remote's side: a lock a killed push left, a hook that refuses, and
//! a real network transport (`git daemon`).

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_transaction::Code;

use crate::common::{assert_converged, create, git, record, source_ids, Net};

#[test]
fn a_stale_branch_lock_in_the_remote_is_locked_until_removed() {
    let net = Net::new(2);
    net.write(0, vec![record("shared", "m1", "one")], vec![]);
    let lock = net.remote().join("refs/heads/main.lock");
    std::fs::write(&lock, "").unwrap();
    let before = net.remote_main();
    let err = net.try_sync(0).unwrap_err();
    assert_eq!(err.code, Code::Locked, "{err}");
    assert!(err.message.contains("refs/heads/main.lock"), "{err}");
    assert_eq!(net.remote_main(), before);
    std::fs::remove_file(&lock).unwrap();
    let done = net.sync(0);
    assert!(done.pushed && done.attempts == 1, "{done:?}");
    net.sync(1);
    assert_converged(&net, 2);
}

#[test]
fn a_push_the_remote_refuses_is_not_retried_and_the_next_sync_goes_through() {
    let net = Net::new(2);
    let marker = net.dir.path().join("refused-once");
    let hook = net.remote().join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nif [ -e '{0}' ]; then exit 0; fi\necho once >> '{0}'\necho 'not now' >&2\nexit 1\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.write(1, vec![record("shared", "m1", "one")], vec![]);
    let before = net.remote_main();
    let err = net.try_sync(1).unwrap_err();
    assert_eq!(err.code, Code::Io, "{err}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "once\n", "the hook ran once: no retry");
    assert_eq!(net.remote_main(), before);
    let done = net.sync(1);
    assert!(done.pushed, "{done:?}");
    assert_eq!(done.attempts, 1);
    net.sync(0);
    assert_converged(&net, 2);
}

/// A `git daemon` child, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
#[allow(clippy::print_stderr)] // the reason a skip is a skip
fn machines_sync_through_git_daemon() {
    let available = Command::new("git").args(["daemon", "-h"]).output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout).contains("usage: git daemon")
            || String::from_utf8_lossy(&o.stderr).contains("usage: git daemon")
    });
    if !available {
        eprintln!("skipped: `git daemon -h` does not run on this machine (install git-daemon-run)");
        return;
    }
    let net = Net::empty(0);
    let port = free_port();
    let child = Command::new("git")
        .arg("daemon")
        .arg("--reuseaddr")
        .arg(format!("--base-path={}", net.dir.path().display()))
        .args(["--export-all", "--enable=receive-pack", "--listen=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(net.dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("git daemon starts");
    let _daemon = Daemon(child);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "git daemon never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("git://127.0.0.1:{port}/remote.git");
    net.join_at(0, &url);
    net.join_at(1, &url);
    net.write(0, vec![record("shared", "m0", "zero")], vec![create("shared", 1, "shared", "m0", "Start.")]);
    assert_eq!(net.sync(0).outcome, "pushed");
    assert_eq!(net.sync(1).outcome, "fast_forward");
    net.write(1, vec![record("shared", "m1", "one")], vec![create("one", 2, "shared", "m1", "One.")]);
    net.write(0, vec![record("shared", "m2", "two")], vec![]);
    net.sync(1);
    assert_eq!(net.sync(0).outcome, "merged");
    net.sync(1);
    assert_converged(&net, 2);
    assert_eq!(source_ids(&net.root(1)).len(), 3);
    assert_eq!(git(&net.root(0), &["remote", "get-url", "origin"]).trim(), url);
}
