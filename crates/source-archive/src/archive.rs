//! Reading a workspace's whole archive: every v2 file and every legacy file,
//! with v2 winning over legacy for the same source id (FORMAT.md §2.6).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::code::Code;
use crate::error::{Error, Result};
use crate::fsio;
use crate::id::SourceId;
use crate::json::RecordView;
use crate::legacy::{self, LegacyRecord};
use crate::pct;
use crate::record::SourceRecord;
use crate::v2::{self, Diagnostic, Expect};

/// A file whose bytes do not fully parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// Workspace-relative path.
    pub path: String,
    /// Where and why its valid prefix ends.
    pub diagnostic: Diagnostic,
}

/// Everything archived in a workspace.
#[derive(Debug, Default)]
pub struct Archive {
    v2: BTreeMap<SourceId, SourceRecord>,
    legacy: Vec<(String, LegacyRecord)>,
    problems: Vec<FileProblem>,
}

/// A record found by id: v2 when there is one, legacy otherwise.
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    /// A v2 record (trusted identity, if any).
    V2(&'a SourceRecord),
    /// A legacy record and the workspace-relative path of its file.
    Legacy(&'a str, &'a LegacyRecord),
}

fn sorted_entries(dir: &Path) -> Result<Vec<(String, fs::FileType)>> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(e, "cannot list", dir)),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(e, "cannot list", dir))?;
        let ft = entry.file_type().map_err(|e| Error::io(e, "cannot stat", &entry.path()))?;
        out.push((entry.file_name().to_string_lossy().into_owned(), ft));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

impl Archive {
    /// Reads `<root>/sources/`. Damaged files contribute their valid prefix
    /// and a [`FileProblem`]; only I/O failures are errors.
    pub fn scan(root: &Path) -> Result<Archive> {
        let mut archive = Archive::default();
        let sources = root.join("sources");
        for (pname, pft) in sorted_entries(&sources)? {
            if !pft.is_dir() {
                continue;
            }
            let pdir = sources.join(&pname);
            for (name, ft) in sorted_entries(&pdir.join("_v2"))? {
                let Some(stem) = name.strip_suffix(".md") else { continue };
                if !ft.is_file() {
                    continue;
                }
                let rel = format!("sources/{pname}/_v2/{name}");
                let bytes = fsio::read_file(&pdir.join("_v2").join(&name))?;
                let (p, t) =
                    (pct::decode_canonical(pname.as_bytes()), pct::decode_canonical(stem.as_bytes()));
                let (Ok(p), Ok(t)) = (p, t) else {
                    archive.problems.push(FileProblem {
                        path: rel,
                        diagnostic: Diagnostic {
                            offset: 0,
                            line: 1,
                            reason: "file name is not a canonical PCT provider/thread".into(),
                        },
                    });
                    continue;
                };
                let parsed = v2::parse_prefix(&bytes, Some(Expect { provider: &p, thread: &t }));
                for f in &parsed.frames {
                    let r = f.to_record();
                    archive.v2.insert(r.id().clone(), r);
                }
                if let Some(diagnostic) = parsed.error {
                    archive.problems.push(FileProblem { path: rel, diagnostic });
                }
            }
            for (name, ft) in sorted_entries(&pdir)? {
                if ft.is_file() && name.ends_with(".md") {
                    let bytes = fsio::read_file(&pdir.join(&name))?;
                    let rel = format!("sources/{pname}/{name}");
                    for r in legacy::parse(&bytes) {
                        archive.legacy.push((rel.clone(), r));
                    }
                }
            }
        }
        let v2 = &archive.v2;
        archive.legacy.retain(|(_, r)| r.id.as_ref().is_none_or(|id| !v2.contains_key(id)));
        Ok(archive)
    }

    /// The record with this id: v2 preferred, legacy otherwise.
    pub fn get(&self, id: &SourceId) -> Option<Found<'_>> {
        if let Some(r) = self.v2.get(id) {
            return Some(Found::V2(r));
        }
        self.legacy.iter().find(|(_, r)| r.id.as_ref() == Some(id)).map(|(p, r)| Found::Legacy(p, r))
    }

    /// Every v2 record, ordered by source id.
    pub fn v2_records(&self) -> impl Iterator<Item = &SourceRecord> {
        self.v2.values()
    }

    /// Every legacy record not shadowed by a v2 record, with its file.
    pub fn legacy_records(&self) -> impl Iterator<Item = (&str, &LegacyRecord)> {
        self.legacy.iter().map(|(p, r)| (p.as_str(), r))
    }

    /// Files that do not parse to their end.
    pub fn problems(&self) -> &[FileProblem] {
        &self.problems
    }
}

/// The records of one archive file, as `archive dump` prints them.
#[derive(Debug)]
pub struct Dump {
    /// Every record of the valid prefix.
    pub records: Vec<RecordView>,
    /// Why the file does not parse to its end (`VALIDATION_FAILED` with the
    /// byte offset and line of the bad frame).
    pub error: Option<Error>,
}

/// Reads any archive file: v2 when it lies in a `_v2` folder, legacy when it
/// lies in the legacy location `sources/<provider>/` (whatever its bytes look
/// like), and elsewhere v2 when it starts with the marker, legacy otherwise.
///
/// A v2 file at `…/<provider>/_v2/<thread>.md` must hold only that
/// conversation; elsewhere (a copy, say) its first frame decides.
pub fn dump(path: &Path) -> Result<Dump> {
    let meta = fs::metadata(path).map_err(|e| {
        let kind = if e.kind() == std::io::ErrorKind::NotFound { Code::NotFound } else { Code::Io };
        Error::new(kind, format!("cannot read {}: {e}", path.display())).with_path(path)
    })?;
    if meta.is_dir() {
        return Err(
            Error::invalid(format!("{} is a directory, not an archive file", path.display())).with_path(path)
        );
    }
    let bytes = fsio::read_file(path)?;
    let parent = path.parent();
    let in_v2 = parent.and_then(Path::file_name).is_some_and(|n| n == "_v2");
    // `sources/<provider>/<thread>.md` is the legacy location: whatever its
    // bytes look like, nothing in it is trusted.
    let legacy_location =
        !in_v2 && parent.and_then(Path::parent).and_then(Path::file_name).is_some_and(|n| n == "sources");
    if in_v2 || (!legacy_location && bytes.starts_with(v2::MARKER.as_bytes())) {
        let names = in_v2
            .then(|| {
                let provider = parent?.parent()?.file_name()?.to_str()?;
                let thread = path.file_name()?.to_str()?.strip_suffix(".md")?;
                Some((
                    pct::decode_canonical(provider.as_bytes()).ok()?,
                    pct::decode_canonical(thread.as_bytes()).ok()?,
                ))
            })
            .flatten();
        let expect = names.as_ref().map(|(p, t)| Expect { provider: p, thread: t });
        let parsed = v2::parse_prefix(&bytes, expect);
        let records = parsed.frames.iter().map(|f| RecordView::of_record(&f.to_record())).collect();
        let error = parsed.error.map(|d| {
            Error::new(Code::ValidationFailed, format!("{}: {}", path.display(), d))
                .with_path(path)
                .with_offset(d.offset as u64)
                .with_line(d.line)
        });
        return Ok(Dump { records, error });
    }
    // Legacy: provider/thread from the path for records that name no id.
    let fallback = (|| {
        let thread = path.file_name()?.to_str()?.strip_suffix(".md")?;
        let provider = parent?.file_name()?.to_str()?;
        Some((pct::decode_lenient(provider)?, pct::decode_lenient(thread)?))
    })();
    let shown = path.to_string_lossy();
    let rel = shown.find("sources/").map(|k| &shown[k..]).unwrap_or(&shown);
    let records = legacy::parse(&bytes)
        .iter()
        .map(|r| RecordView::of_legacy(r, rel, fallback.as_ref().map(|(p, t)| (p.as_str(), t.as_str()))))
        .collect();
    Ok(Dump { records, error: None })
}
