//! The views cache's table of contents, `.scriptorium/views/state`: for
//! the revision it describes, every decodable topic file (its entry file
//! and where its runs are in `relations.json`), the sort keys of every
//! `recent_events.jsonl` candidate and of every timeline line, and the
//! stamps of the timeline files. Fixed-width rows, so reading and
//! rewriting it is copying bytes; replaced atomically, not fsynced (a
//! cache: it names the revision it describes).

use crate::views::stamp::Stamp;
use scriptorium_topic_markdown::time::Instant;

const HEADER: &str = "scriptorium views state 1";

/// Bytes of one encoded [`Row`].
const ROW: usize = 24;

/// Where a run of a file's items is in `relations.json`, and its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span<K> {
    /// Byte offset in `relations.json`.
    pub offset: u64,
    /// Byte length.
    pub len: u64,
    /// How many items.
    pub count: u64,
    /// First item's key.
    pub first: K,
    /// Last item's key.
    pub last: K,
}

/// One decodable topic file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRow {
    /// Its number in the tables (stable while the file exists).
    pub fid: u32,
    /// Workspace-relative path.
    pub path: String,
    /// Its entry file's name (the eligible blocks' view pieces).
    pub entry: String,
    /// Its nodes in `relations.json`.
    pub nodes: Span<String>,
    /// Its edges in `relations.json`, if it has any.
    pub edges: Option<Span<(String, String)>>,
}

/// A block's place in `recent_events.jsonl` order, or on a timeline day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The instant that orders it: seconds since the Unix epoch (kept
    /// apart from its nanoseconds, so that a row takes 24 bytes).
    pub seconds: i64,
    /// The instant's nanoseconds.
    pub nanos: u32,
    /// The UTC day as `yyyymmdd` (0 for event rows).
    pub day: i32,
    /// Its file.
    pub fid: u32,
    /// Its block id's rank among its file's eligible block ids.
    pub rank: u32,
}

impl Row {
    /// The row of block `rank` of file `fid`, on `day`, ordered by `time`.
    pub fn new(day: i32, time: Instant, fid: u32, rank: u32) -> Row {
        Row { seconds: time.seconds, nanos: time.nanos, day, fid, rank }
    }

    /// The instant that orders it.
    pub fn time(&self) -> Instant {
        Instant { seconds: self.seconds, nanos: self.nanos }
    }
}

// A workspace of 100,000 blocks holds 200,000 rows in memory per commit.
const _: () = assert!(std::mem::size_of::<Row>() == 24);

/// The whole table of contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    /// The revision it describes.
    pub revision: String,
    /// The next unused file number.
    pub next_fid: u32,
    /// Every decodable topic file, by path.
    pub files: Vec<FileRow>,
    /// Every block with an event, in `recent_events.jsonl` order.
    pub events: Vec<Row>,
    /// Every timeline line, by day, then in the day file's order.
    pub days: Vec<Row>,
    /// The stamp of each timeline file written, by day.
    pub day_files: Vec<(i32, Stamp)>,
}

struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn span<K>(&mut self, s: &Span<K>, key: impl Fn(&mut Out, &K)) {
        self.u64(s.offset);
        self.u64(s.len);
        self.u64(s.count);
        key(self, &s.first);
        key(self, &s.last);
    }
    /// Hands what is gathered to `w` once it fills a block.
    fn spill(&mut self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.0.len() >= 1 << 16 {
            w.write_all(&self.0)?;
            self.0.clear();
        }
        Ok(())
    }
    fn row(&mut self, r: &Row) {
        self.u32(r.day as u32);
        self.i64(r.seconds);
        self.u32(r.nanos);
        self.u32(r.fid);
        self.u32(r.rank);
    }
}

struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn span<K>(&mut self, key: impl Fn(&mut In<'a>) -> Option<K>) -> Option<Span<K>> {
        Some(Span {
            offset: self.u64()?,
            len: self.u64()?,
            count: self.u64()?,
            first: key(self)?,
            last: key(self)?,
        })
    }
    /// `n` fixed-width rows, decoded straight from their bytes.
    fn rows(&mut self) -> Option<Vec<Row>> {
        let n = self.len()?;
        let bytes = self.take(n.checked_mul(ROW)?)?;
        let u32_at = |c: &[u8], at: usize| u32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]]);
        Some(
            bytes
                .chunks_exact(ROW)
                .map(|c| Row {
                    day: u32_at(c, 0) as i32,
                    seconds: i64::from_le_bytes(c[4..12].try_into().expect("eight bytes")),
                    nanos: u32_at(c, 12),
                    fid: u32_at(c, 16),
                    rank: u32_at(c, 20),
                })
                .collect(),
        )
    }
}

fn pair(i: &mut In<'_>) -> Option<(String, String)> {
    Some((i.str()?, i.str()?))
}

impl State {
    /// The bytes of the state.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes).expect("writing to memory cannot fail");
        bytes
    }

    /// Writes the bytes of the state to `w`, a block at a time (never the
    /// whole state in memory).
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut o = Out(format!("{HEADER}\t{}\n", self.revision).into_bytes());
        o.u32(self.next_fid);
        o.u64(self.files.len() as u64);
        for f in &self.files {
            o.u32(f.fid);
            o.str(&f.path);
            o.str(&f.entry);
            o.span(&f.nodes, |o, k| o.str(k));
            match &f.edges {
                Some(e) => {
                    o.u32(1);
                    o.span(e, |o, (a, b)| {
                        o.str(a);
                        o.str(b);
                    });
                }
                None => o.u32(0),
            }
            o.spill(w)?;
        }
        for rows in [&self.events, &self.days] {
            o.u64(rows.len() as u64);
            for r in rows {
                o.row(r);
                o.spill(w)?;
            }
        }
        o.u64(self.day_files.len() as u64);
        for (day, s) in &self.day_files {
            o.u32(*day as u32);
            o.u64(s.len);
            o.i64(s.modified);
            o.u64(s.inode);
        }
        w.write_all(&o.0)
    }

    /// The state in `bytes`, if they are whole and describe `revision`.
    pub fn decode(bytes: &[u8], revision: &str) -> Option<State> {
        let nl = memchr::memchr(b'\n', bytes)?;
        let head = std::str::from_utf8(&bytes[..nl]).ok()?;
        if head.strip_prefix(HEADER)?.strip_prefix('\t')? != revision {
            return None;
        }
        let mut i = In(&bytes[nl + 1..]);
        let mut s = State { revision: revision.to_owned(), next_fid: i.u32()?, ..State::default() };
        for _ in 0..i.len()? {
            let fid = i.u32()?;
            let path = i.str()?;
            let entry = i.str()?;
            let nodes = i.span(In::str)?;
            let edges = match i.u32()? {
                0 => None,
                1 => Some(i.span(pair)?),
                _ => return None,
            };
            s.files.push(FileRow { fid, path, entry, nodes, edges });
        }
        s.events = i.rows()?;
        s.days = i.rows()?;
        for _ in 0..i.len()? {
            let day = i.u32()? as i32;
            s.day_files.push((day, Stamp { len: i.u64()?, modified: i.i64()?, inode: i.u64()? }));
        }
        // Every number a row or a file names was given out.
        let given = |fid: u32| fid < s.next_fid;
        let named =
            s.files.iter().all(|f| given(f.fid)) && s.events.iter().chain(&s.days).all(|r| given(r.fid));
        (i.0.is_empty() && named).then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_round_trips_and_refuses_what_it_does_not_describe() {
        let span = |k: &str| Span { offset: 3, len: 9, count: 2, first: k.to_owned(), last: format!("{k}z") };
        let s = State {
            revision: "r1".into(),
            next_fid: 7,
            files: vec![FileRow {
                fid: 3,
                path: "topics/a \"b\".md".into(),
                entry: "0123".into(),
                nodes: span("topics/a.md"),
                edges: Some(Span {
                    offset: 1,
                    len: 2,
                    count: 1,
                    first: ("x".into(), "y".into()),
                    last: ("x".into(), "z".into()),
                }),
            }],
            events: vec![Row::new(0, Instant { seconds: -5, nanos: 9 }, 3, 1)],
            days: vec![Row::new(20_240_316, Instant { seconds: 5, nanos: 0 }, 3, 0)],
            day_files: vec![(20_240_316, Stamp { len: 10, modified: 11, inode: 12 })],
        };
        let bytes = s.encode();
        assert_eq!(State::decode(&bytes, "r1"), Some(s.clone()));
        assert_eq!(State::decode(&bytes, "r2"), None);
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(State::decode(&bytes[..cut], "r1"), None, "cut at {cut}");
        }
        // A row naming a file number never given out.
        let mut bad = s.clone();
        bad.next_fid = 3;
        assert_eq!(State::decode(&bad.encode(), "r1"), None);
    }
}
