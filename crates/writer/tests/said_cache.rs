//! `.scriptorium/said.cache`: what the topic files say was said, kept per
//! file with the hash of its bytes, so a write reads only the files whose
//! hash changed; a stale, torn or damaged cache is never trusted.

use scriptorium_source_archive::SourceRecord;
use scriptorium_testkit::*;
use scriptorium_writer::offline::{self, SAID_CACHE};

fn ada(message: &str, content: &str) -> SourceRecord {
    record_by(message, Some(("7391", "Ada")), content)
}

/// A workspace where Ada said `I live in Paris.`, and a write after it
/// (small talk: nothing new in her file), which cached her file.
fn said_once() -> tempfile::TempDir {
    let dir = workspace();
    offline::write(&input(dir.path(), &[ada("m1", "I live in Paris.")])).unwrap();
    offline::write(&input(dir.path(), &[ada("m2", "Ok, thanks!")])).unwrap();
    dir
}

fn cache(root: &std::path::Path) -> String {
    std::fs::read_to_string(root.join(SAID_CACHE)).unwrap()
}

/// Makes the cache say that Ada's file says `I moved to Oslo.` where it
/// says `I live in Paris.`, then has Ada say `I moved to Oslo.`: whether it
/// is written tells whether her file was read or the cache believed.
fn oslo_written(root: &std::path::Path, damage: impl Fn(String) -> String) -> bool {
    let text = cache(root);
    assert!(text.contains("\t\"Ada [id 7391]\"\t\"i live in paris.\"\t"), "{text}");
    let text = damage(text.replace("\"i live in paris.\"", "\"i moved to oslo.\""));
    std::fs::write(root.join(SAID_CACHE), text).unwrap();
    offline::write(&input(root, &[ada("m3", "I moved to Oslo.")])).unwrap();
    std::fs::read_to_string(root.join(ada_file())).unwrap().contains("Oslo")
}

#[test]
fn a_file_whose_hash_the_cache_holds_is_not_read_again() {
    let dir = said_once();
    assert!(!oslo_written(dir.path(), |t| t), "the cached entry answered, the file was not read");
}

#[test]
fn an_entry_for_other_bytes_is_read_again() {
    let dir = said_once();
    let root = dir.path();
    let other = |t: String| {
        let (head, rest) = t.split_once(".md\"\t").unwrap();
        format!("{head}.md\"\t{}{}", "0".repeat(64), &rest[64..])
    };
    assert!(oslo_written(root, other));
    // Written back, by the write's plan, for the file as it was read.
    let text = cache(root);
    assert!(text.contains("\"i live in paris.\"") && !text.contains(&"0".repeat(64)), "{text}");
}

#[test]
fn a_torn_or_damaged_cache_is_not_trusted() {
    // Cut after a whole line: the entry holds fewer sentences than it says.
    let dir = said_once();
    let torn = |t: String| {
        let cut = t.trim_end_matches('\n').rfind('\n').unwrap() + 1;
        let (head, _) = t.split_at(cut);
        let head = head.to_owned();
        format!("{head}\t\"Ada [id 7391]\"\t\"i moved to oslo.\"\tnull\n").replacen("\t1\n", "\t3\n", 1)
    };
    assert!(oslo_written(dir.path(), torn));
    // A sentence line of Ada's that does not decode.
    let dir = said_once();
    assert!(oslo_written(dir.path(), |t| t.replace("\"i moved to oslo.\"", "\"i moved to oslo.")));
    // Another version, or not a cache at all.
    let dir = said_once();
    assert!(oslo_written(dir.path(), |t| t.replace("said cache 1", "said cache 0")));
    let dir = said_once();
    assert!(oslo_written(dir.path(), |_| "\u{0}\u{0}\u{0}".to_owned()));
    assert!(cache(dir.path()).starts_with("scriptorium said cache 1\n"), "rebuilt");
}

#[test]
fn a_paragraph_moved_to_a_file_the_batch_does_not_write_still_counts() {
    let dir = said_once();
    let root = dir.path();
    // A reorganize moves Ada's paragraph into a file of its own.
    let text = std::fs::read_to_string(root.join(ada_file())).unwrap();
    std::fs::create_dir_all(root.join("topics/archive")).unwrap();
    std::fs::write(root.join("topics/archive/moved.md"), &text).unwrap();
    std::fs::remove_file(root.join(ada_file())).unwrap();
    offline::write(&input(root, &[ada("m4", "I live in Paris.")])).unwrap();
    assert!(!root.join(ada_file()).exists(), "her sentence is said already, in the moved file");
}
