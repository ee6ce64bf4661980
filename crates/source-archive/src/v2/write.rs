//! The frame writer: the canonical bytes of a record, and of a new file.

use super::MARKER;
use crate::pct;
use crate::record::SourceRecord;

/// Appends one frame for `record` to `out`.
pub fn write_frame(record: &SourceRecord, out: &mut Vec<u8>) {
    let text = record.id().text();
    out.extend_from_slice(b"\n<a id=\"source-");
    out.extend_from_slice(crate::id::anchor_hash(text.as_bytes()).as_bytes());
    out.extend_from_slice(b"\"></a>\n<!-- source:");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b" -->\n<!-- role:");
    out.extend_from_slice(record.role().as_str().as_bytes());
    out.extend_from_slice(b" -->\n");
    if record.is_pending() {
        out.extend_from_slice(b"<!-- trust:pending -->\n");
    }
    if let Some(s) = record.speaker() {
        out.extend_from_slice(b"<!-- speaker-id:");
        out.extend_from_slice(pct::encode(s.id().unwrap_or("")).as_bytes());
        out.extend_from_slice(b" -->\n");
    }
    out.extend_from_slice(b"<!-- record-lines:");
    out.extend_from_slice(record.record_lines().to_string().as_bytes());
    out.extend_from_slice(b" -->\n[");
    out.extend_from_slice(record.timestamp().as_bytes());
    out.extend_from_slice(b"] ");
    out.extend_from_slice(record.header_label().as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(record.content().as_bytes());
    out.push(b'\n');
}

/// The bytes of a new v2 file holding `records` in order.
pub fn write_file<'r>(records: impl IntoIterator<Item = &'r SourceRecord>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(MARKER.as_bytes());
    out.push(b'\n');
    for r in records {
        write_frame(r, &mut out);
    }
    out
}
