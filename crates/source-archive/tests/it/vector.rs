//! The worked test vector of FORMAT.md §2 (`tests/data/`).

use scriptorium_source_archive::archive::dump;
use scriptorium_source_archive::{append, input, json};

use crate::data;

#[test]
fn append_writes_the_exact_bytes_and_dump_reads_them_back() {
    let ws = tempfile::tempdir().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    let records = input::read_records(&input[..]).unwrap();
    assert_eq!(records.len(), 6);
    let report = append::append(ws.path(), &records).unwrap();
    assert_eq!(report.appended, 6);
    assert_eq!(report.duplicates, 0);
    assert_eq!(report.files, ["sources/chat/_v2/team-1.md"]);
    let written = std::fs::read(ws.path().join("sources/chat/_v2/team-1.md")).unwrap();
    let expected = std::fs::read(data("team-1.md")).unwrap();
    assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(ws.path().join("sources/chat/_v2/team-1.md")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    // The temporary folder holds nothing once the write is done.
    assert_eq!(std::fs::read_dir(ws.path().join(".scriptorium/tmp")).unwrap().count(), 0);

    let expected_dump: Vec<serde_json::Value> = std::fs::read_to_string(data("dump-output.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for path in [ws.path().join("sources/chat/_v2/team-1.md"), data("team-1.md")] {
        let d = dump(&path).unwrap();
        assert!(d.error.is_none());
        let got: Vec<serde_json::Value> =
            d.records.iter().map(|r| serde_json::from_str(&json::to_line(r)).unwrap()).collect();
        assert_eq!(got, expected_dump);
    }
}
