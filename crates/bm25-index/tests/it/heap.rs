//! Heap memory at query time does not grow with the index: the memory map
//! (here a `Vec` made before measuring) holds the index, not the heap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use scriptorium_bm25_index::search::{Bm25, Filters, View};
use scriptorium_bm25_index::segment::{build, Document, Kind, Segment, Stamp, Unit};
use scriptorium_bm25_index::tokenize::TokenizerConfig;

/// Counts this thread's live heap bytes and their peak.
pub(crate) struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are plain thread-local cells without destructors.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|l| {
            l.set(l.get() + layout.size());
            let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
        });
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(layout.size())));
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn corpus(n: usize) -> Vec<Unit> {
    let words =
        ["budget", "tea", "garden", "plan", "paris", "music", "dog", "code", "ada", "travel", "meadow"];
    let mut x = 11u64;
    (0..n / 100)
        .map(|u| Unit {
            kind: Kind::Source,
            path: format!("sources/p/_v2/t{u:05}.md"),
            stamp: Stamp::default(),
            deps: Vec::new(),
            docs: (0..100)
                .map(|i| {
                    let text: Vec<&str> = (0..12)
                        .map(|_| {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                            words[(x >> 33) as usize % words.len()]
                        })
                        .collect();
                    Document {
                        anchor: format!("source-{i:08x}"),
                        key: String::new(),
                        day: Some(i % 50),
                        pending: false,
                        speakers: vec![format!("s{}", i % 10)],
                        text: text.join(" "),
                        payload: String::new(),
                        span: None,
                        time: None,
                        aliases: String::new(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The peak heap bytes of running the queries once more (after a warm-up
/// that verified every chunk the queries touch).
fn peak_of_queries(view: &View) -> usize {
    let queries = ["budget garden plan", "tea", "paris music dog code ada travel meadow budget"];
    let filters = [
        Filters::default(),
        Filters { speaker: Some("s3".into()), ..Filters::default() },
        Filters { day_from: Some(10), day_to: Some(12), ..Filters::default() },
        Filters { path_prefix: Some("sources/p/_v2/t0001".into()), ..Filters::default() },
    ];
    let run = || {
        for q in queries {
            for f in &filters {
                assert!(!view.search(q, f, 5, Bm25::default()).unwrap().is_empty());
            }
        }
    };
    run();
    LIVE.with(|l| PEAK.with(|p| p.set(l.get())));
    let base = LIVE.with(Cell::get);
    run();
    PEAK.with(Cell::get) - base
}

#[test]
fn query_heap_does_not_grow_with_the_index() {
    let config = TokenizerConfig::default();
    let mut peaks = Vec::new();
    for n in [2_000, 50_000] {
        let view =
            View::new(Segment::open_vec(build(corpus(n), config, None), config).unwrap(), None).unwrap();
        peaks.push(peak_of_queries(&view));
    }
    // What a query holds: per term two cursors, each with one decoded
    // block (1 KiB), and the window's score accumulators (32 KiB).
    assert!(peaks.iter().all(|&p| p < 64 * 1024), "{peaks:?}");
    assert!(peaks[1] <= peaks[0] + 1024, "heap grew with the index: {peaks:?}");
}
