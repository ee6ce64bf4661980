//! Invariant checks driven by arbitrary bytes: the body of the
//! `topic_parse` fuzz target and of the corpus replay in this crate's tests.

use crate::parse::TopicFile;
use crate::validate::{check, ArchiveResolver, Loaded};
use crate::views::{render, CORE_BUDGET};

/// `topic_parse`: any UTF-8 text parses without panicking and prints back
/// to itself; checking and rendering it never panic and render twice the
/// same bytes.
pub fn check_topic_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (file, _) = TopicFile::parse_lenient(text);
    assert_eq!(file.print(), text, "print(parse(text)) != text");
    if let Ok(strict) = TopicFile::parse(text) {
        assert_eq!(strict.print(), text);
    }
    let mut resolver = ArchiveResolver::default();
    resolver.insert(
        "chat/t/m1".into(),
        "sources/chat/_v2/t.md".into(),
        "source-11111111".into(),
        false,
        "I like tea and maps.",
    );
    let topics = [Loaded::parse("topics/core.md", text), Loaded::parse("topics/people/x.md", text)];
    let checked = check(&topics, &resolver);
    let a = render(&topics, &checked, CORE_BUDGET);
    let b = render(&topics, &checked, CORE_BUDGET);
    assert_eq!(a, b, "rendering is not deterministic");
    if let Some(core) = a.files.get("core.md") {
        assert!(crate::views::count_tokens(core) <= CORE_BUDGET);
    }
}
