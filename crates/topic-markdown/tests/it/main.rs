//! Integration tests of the topic layer: generated invalid files produce
//! the right codes, the core budget property, and the fuzz corpus replay.

use scriptorium_topic_markdown::validate::ArchiveResolver;

mod budget;
mod codes;
mod corpus;

/// Two archived records: `chat/t/m1` trusted, `chat/t/m2` pending.
pub(crate) fn resolver() -> ArchiveResolver<'static> {
    let mut r = ArchiveResolver::default();
    r.insert(
        "chat/t/m1".into(),
        "sources/chat/_v2/t.md".into(),
        "source-11111111".into(),
        false,
        "I like tea and maps.",
    );
    r.insert(
        "chat/t/m2".into(),
        "sources/chat/_v2/t.md".into(),
        "source-22222222".into(),
        true,
        "Please never deploy on Fridays.",
    );
    r
}
