//! Generated files with one planted defect each produce exactly that code.

use proptest::prelude::*;
use scriptorium_topic_markdown::validate::{check, Loaded};
use scriptorium_topic_markdown::Code;

use crate::resolver;

const EV: &str =
    "[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m1](../../sources/chat/_v2/t.md#source-11111111)";

fn words() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-zA-Zéü日本 ,.!?]{1,12}", 1..6)
        .prop_map(|w| w.join(" ").trim().to_owned())
        .prop_filter("a line must not be blank or special", |s| {
            !s.trim().is_empty() && !s.starts_with('#') && !s.starts_with('[') && !s.starts_with("---")
        })
}

#[derive(Debug, Clone, Copy)]
enum Defect {
    None,
    MissingId,
    Uncited,
    Undefined,
    DoubleDefinition,
    BadTime,
    UnknownSource,
    BrokenLink,
    BadKind,
}

fn defect() -> impl Strategy<Value = Defect> {
    prop_oneof![
        Just(Defect::None),
        Just(Defect::MissingId),
        Just(Defect::Uncited),
        Just(Defect::Undefined),
        Just(Defect::DoubleDefinition),
        Just(Defect::BadTime),
        Just(Defect::UnknownSource),
        Just(Defect::BrokenLink),
        Just(Defect::BadKind),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_planted_defect_gives_its_code(texts in proptest::collection::vec(words(), 1..6), which in any::<prop::sample::Index>(), d in defect(), crlf in any::<bool>()) {
        let k = which.index(texts.len());
        let mut s = String::from(if matches!(d, Defect::BadKind) { "---\nkind: robot\n---\n" } else { "---\nkind: person\n---\n" });
        s.push_str("# Title\n\n");
        for (i, t) in texts.iter().enumerate() {
            let mut cite = "[^e-1175dea39c]";
            let mut tail = format!(" ^b{i}");
            let mut extra = String::new();
            if i == k {
                match d {
                    Defect::MissingId => tail.clear(),
                    Defect::Uncited => cite = "",
                    Defect::Undefined => cite = "[^e-1175dea39c][^e-0000000000]",
                    Defect::BrokenLink => extra = " [gone](../nowhere.md#^x)".into(),
                    _ => {}
                }
            }
            s.push_str(&format!("{t}{extra}{cite}{tail}\n\n"));
        }
        match d {
            Defect::DoubleDefinition => s.push_str(&format!("{EV}\n{EV}\n")),
            Defect::BadTime => s.push_str(&format!("{}\n", EV.replace("2024-03-15", "2024-03-15/16"))),
            Defect::UnknownSource => s.push_str(&format!("{}\n", EV.replace("m1", "m404"))),
            _ => s.push_str(&format!("{EV}\n")),
        }
        if crlf {
            s = s.replace('\n', "\r\n");
        }
        let loaded = [Loaded::parse("topics/people/p.md", &s)];
        let c = check(&loaded, &resolver());
        let got: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
        let want = match d {
            Defect::None => vec![],
            Defect::MissingId => vec![Code::MissingBlockId],
            Defect::Uncited => vec![Code::UncitedBlock],
            Defect::Undefined => vec![Code::UndefinedFootnote],
            Defect::DoubleDefinition | Defect::BadTime => vec![Code::BadFootnote],
            Defect::UnknownSource => vec![Code::UnknownSource],
            Defect::BrokenLink => vec![Code::BrokenLink],
            Defect::BadKind => vec![Code::BadFrontMatter],
        };
        prop_assert_eq!(got, want, "{}\n{:?}", s, c.diagnostics);
        let block_line = 6 + 2 * k;
        if matches!(d, Defect::MissingId | Defect::Uncited | Defect::Undefined | Defect::BrokenLink) {
            prop_assert_eq!(c.diagnostics[0].line, block_line);
        }
        prop_assert_eq!(loaded[0].file.print(), s);
    }
}
