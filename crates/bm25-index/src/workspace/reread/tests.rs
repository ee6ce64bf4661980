//! Reading documents back gives exactly what the build had: the indexed
//! text and, as JSON, byte for byte the payload a version-6 index stored
//! (records pending, promoted or not, with and without speakers; blocks
//! with aliases, CRLF line endings, links and pending citations).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::Path;

use scriptorium_source_archive::json::to_line;
use scriptorium_source_archive::{append, input, trust, SourceId};

use super::super::documents::{topic_units, v2_unit, Sources};
use super::super::listing::{list_files, read};
use super::*;
use crate::tokenize::{Tokenizer, TokenizerConfig};

fn rec(thread: &str, msg: &str, extra: &str, content: &str) -> String {
    format!(
        r#"{{"provider":"chat","thread":"{thread}","message":"{msg}","role":"user","timestamp":"2026-08-09T10:00:00Z","content":{}{extra}}}"#,
        serde_json::to_string(content).unwrap()
    )
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let lines = [
        rec(
            "g1",
            "m1",
            r#","speaker_id":"7391","speaker_display":"Ada""#,
            "the budget is 50k for the garden",
        ),
        rec("g1", "m2", r#","pending":true"#, "a pending note\r\nwith a CRLF and 東京"),
        rec("g1", "m3", r#","pending":true,"speaker_display":"Bo""#, "promoted later"),
        rec("g2", "m1", "", "tea at five"),
    ];
    let records = input::read_records(lines.join("\n").as_bytes()).unwrap();
    append::append(root, &records).unwrap();
    fs::write(
        root.join(trust::AUDIT_FILE),
        "{\"time\":\"2026-08-10T00:00:00Z\",\"action\":\"promote\",\"who\":\"owner\",\"sources\":[\"chat/g1/m3\"]}\n",
    )
    .unwrap();
    let anchor = |m: &str| SourceId::new("chat", "g1", m).unwrap().anchor();
    let def = |label: &str, m: &str| {
        format!("[^{label}]: Time: `2026-08-09T10:00:00Z`; Sources: [chat/g1/{m}](../../sources/chat/_v2/g1.md#{})", anchor(m))
    };
    fs::create_dir_all(root.join("topics/people")).unwrap();
    let card = format!(
        "---\r\nkind: person\r\naliases: [Ada, Ada L., Lovelace]\r\n---\r\n# Ada\r\n\r\n\
         Ada runs the [garden](../plain.md) budget.[^e-1175dea39c] ^a1\r\n\r\n\
         Two lines,\r\nthe second one; Lovelace is said.[^e-2275dea39c] ^a2\r\n\r\n{}\r\n{}\r\n",
        def("e-1175dea39c", "m1"),
        def("e-2275dea39c", "m2"),
    );
    fs::write(root.join("topics/people/ada.md"), card).unwrap();
    fs::write(
        root.join("topics/plain.md"),
        format!(
            "# Plain\n\nA plain note about tea.[^e-3375dea39c] ^p1\n\n{}\n",
            def("e-3375dea39c", "m3").replace("../../sources", "../sources")
        ),
    )
    .unwrap();
    ws
}

/// The units a build makes of the workspace, with text and payload.
fn built_units(root: &Path) -> Vec<crate::segment::Unit> {
    let listing = list_files(root).unwrap();
    let promoted: BTreeSet<String> = trust::promoted(root).unwrap();
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: None };
    for ((kind, rel), listed) in &listing {
        if *kind == Kind::Source {
            let (bytes, stamp) = read(root, rel, *listed).unwrap();
            let mut unit = v2_unit(rel, &bytes, stamp, &promoted);
            unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
            sources.fresh.insert(rel.clone(), unit);
        }
    }
    let tok = Tokenizer::new(TokenizerConfig::default());
    let topics = topic_units(root, &listing, &sources, &mut 0, None, &tok).unwrap();
    let mut units: Vec<_> = sources.fresh.into_values().collect();
    units.extend(topics);
    units
}

#[test]
fn documents_read_back_equal_what_was_built() {
    let ws = workspace();
    let root = ws.path();
    let opened = super::super::build(root, TokenizerConfig::default()).unwrap();
    let view = &opened.view;
    let units = built_units(root);
    let mut seen = (0, 0, false, false);
    for u in &units {
        for doc in &u.docs {
            let stored = view.find(u.kind, &u.path, &doc.anchor).unwrap().expect("indexed");
            assert!(
                matches!(stored.origin, Origin::Span { .. }),
                "{} {}: no text stored",
                u.path,
                doc.anchor
            );
            for mut files in [Files::spans(root), Files::whole(root)] {
                let read = files.read(&stored).unwrap();
                assert_eq!(read.indexed, doc.text, "{} {}", u.path, doc.anchor);
                assert_eq!(to_line(&read.found), doc.payload, "{} {}", u.path, doc.anchor);
            }
            match u.kind {
                Kind::Source => seen.0 += 1,
                Kind::Topic => seen.1 += 1,
            }
            seen.2 |= doc.text.contains("\n(aliases: ");
            seen.3 |= doc.payload.contains(r#""trust":"pending""#);
        }
    }
    assert_eq!(seen, (4, 3, true, true), "every kind of document was compared");
    for u in view.units().unwrap() {
        let docs = unit_documents(root, view, &u).unwrap();
        let want = units.iter().find(|b| b.path == u.path).unwrap();
        assert_eq!(
            docs.iter().map(|(d, _)| d.text.clone()).collect::<Vec<_>>(),
            want.docs.iter().map(|d| d.text.clone()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn changed_bytes_are_never_read_back_as_the_document() {
    let ws = workspace();
    let root = ws.path();
    let opened = super::super::build(root, TokenizerConfig::default()).unwrap();
    let view = &opened.view;
    let card = root.join("topics/people/ada.md");
    let archive = root.join(SourceId::new("chat", "g1", "m1").unwrap().v2_path());
    for (path, from, to) in [(&card, "runs", "RUNS"), (&archive, "budget", "BUDGET")] {
        let before = fs::read_to_string(path).unwrap();
        fs::write(path, before.replacen(from, to, 1)).unwrap();
        let units = view.units().unwrap();
        let rel = path.strip_prefix(root).unwrap().to_str().unwrap();
        let unit = units.iter().find(|u| u.path == rel).unwrap();
        let err = unit_documents(root, view, unit).unwrap_err();
        assert!(err.0.contains("changed since it was indexed"), "{err}");
        fs::remove_file(path).unwrap();
        assert!(unit_documents(root, view, unit).is_err(), "a vanished file");
        fs::write(path, before).unwrap();
        assert!(unit_documents(root, view, unit).is_ok());
    }
}

#[test]
fn only_workspace_files_are_read() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().join("ws");
    fs::create_dir_all(root.join("topics")).unwrap();
    fs::write(ws.path().join("secret.md"), "x ^a1").unwrap();
    let span = Span { offset: 0, len: 5, hash: crate::format::checksum(b"x ^a1") };
    for path in ["topics/../../secret.md", "/etc/passwd", "secret.md", "topics//a.md"] {
        let stored = Stored {
            kind: Kind::Topic,
            pending: false,
            day: None,
            path,
            anchor: "a1",
            key: "",
            origin: Origin::Span { span, time: None, aliases: "" },
            speakers: Vec::new(),
        };
        for mut files in [Files::spans(&root), Files::whole(&root)] {
            let err = files.read(&stored).unwrap_err();
            assert!(err.0.contains("not a workspace file"), "{path}: {err}");
        }
    }
}
