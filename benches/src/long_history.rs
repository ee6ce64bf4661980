//! A workspace with a long history, for the history benchmark: the
//! generated workspace (`workspace_gen`) then `n` transactions alternating
//! between one record appended to an archive file and one block appended
//! to a topic file, each committed by `history::commit_installed` exactly
//! as an install commits it (the files are written directly, not through
//! the whole transaction, which would cost a minute per thousand here).

use std::io::Write;
use std::path::Path;

use scriptorium_source_archive::{v2, Role, SourceId, SourceRecord};
use scriptorium_transaction::disk::{Disk, Faults};
use scriptorium_transaction::history::{self, Planned, Stamp};
use scriptorium_transaction::revision;

use crate::workspace_gen::Workspace;

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

fn append(root: &Path, path: &str, bytes: &[u8]) -> Fallible<()> {
    let mut f = std::fs::OpenOptions::new().append(true).open(root.join(path))?;
    f.write_all(bytes)?;
    Ok(())
}

/// Adds `n` transactions to the history of `ws`; returns the archive file
/// the records went to.
pub fn extend(ws: &Workspace, n: usize) -> Fallible<String> {
    let archive = SourceId::new("bench", "history", "m0")?.v2_path();
    let first = SourceRecord::new(
        SourceId::new("bench", "history", "m0")?,
        Role::User,
        "2026-12-01T00:00:00Z",
        None,
        false,
        "the first record".into(),
    )?;
    let full = ws.root.join(&archive);
    std::fs::create_dir_all(full.parent().expect("a folder"))?;
    std::fs::write(&full, v2::write_file([&first]))?;
    let faults = Faults::default();
    for k in 1..=n {
        let path = if k % 2 == 0 {
            let id = SourceId::new("bench", "history", &format!("m{k}"))?;
            let r = SourceRecord::new(
                id,
                Role::User,
                "2026-12-01T00:00:00Z",
                None,
                false,
                format!("record {k}"),
            )?;
            let mut bytes = Vec::new();
            v2::write_frame(&r, &mut bytes);
            append(&ws.root, &archive, &bytes)?;
            archive.clone()
        } else {
            let files = &ws.topic_files;
            let path = files[if files.len() > 1 { 1 + k % (files.len() - 1) } else { 0 }].clone();
            append(&ws.root, &path, format!("\nNote {k} of the long history. ^hist{k}\n").as_bytes())?;
            path
        };
        let rev = revision::compute(&ws.root)?;
        let planned = Planned {
            summary: format!("bench: transaction {k}"),
            stamp: Stamp {
                revision: rev.hex,
                writer: "update".into(),
                tier: "owner".into(),
                ..Stamp::default()
            },
            paths: vec![path],
            merge: None,
        };
        history::commit_installed(&ws.root, Disk::new(&faults), &planned)?;
    }
    Ok(archive)
}
