//! The core render: never over budget (counted independently), a prefix of
//! the eligible blocks in file order, and exactly the rest reported.

use proptest::prelude::*;
use scriptorium_topic_markdown::validate::{check, Loaded};

use crate::resolver;
use scriptorium_topic_markdown::views::render_core;

fn independent_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base().expect("bundled vocabulary").encode_with_special_tokens(text).len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn within_budget_prefix_and_report(sizes in proptest::collection::vec((1usize..120, any::<bool>()), 1..30), budget in 10usize..2_500) {
        let mut text = String::from("# Core\n\n");
        let mut eligible = Vec::new();
        for (i, (words, pending)) in sizes.iter().enumerate() {
            let body: Vec<String> = (0..*words).map(|w| format!("fact{}x{w}", i)).collect();
            let label = if *pending { "e-20a9ff0b11" } else { "e-1175dea39c" };
            text.push_str(&format!("{}.[^{label}] ^k{i}\n\n", body.join(" ")));
            if !pending {
                eligible.push(format!("k{i}"));
            }
        }
        text.push_str("[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-11111111)\n");
        text.push_str("[^e-20a9ff0b11]: Time: `2024-03-16`; Sources: [chat/t/m2](../sources/chat/_v2/t.md#source-22222222)\n");
        let topics = [Loaded::parse("topics/core.md", &text)];
        let checked = check(&topics, &resolver());
        prop_assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
        let r = render_core(topics.first(), &checked, budget);
        let included: Vec<String> = match &r.bytes {
            Some(b) => {
                let tokens = independent_tokens(b);
                prop_assert!(tokens <= budget, "{} > {}", tokens, budget);
                prop_assert_eq!(tokens, r.report.tokens);
                eligible.iter().filter(|id| b.contains(&format!(" ^{id}\n"))).cloned().collect()
            }
            None => Vec::new(),
        };
        // A prefix of the eligible blocks, and the report names the rest.
        prop_assert_eq!(&eligible[..included.len()], &included[..]);
        prop_assert_eq!(&eligible[included.len()..], &r.report.omitted[..]);
        if let Some(b) = &r.bytes {
            prop_assert!(!b.contains("e-20a9ff0b11"), "a pending block's citation reached core.md");
        }
    }
}
