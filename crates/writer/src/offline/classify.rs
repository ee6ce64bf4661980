//! Which sentences of a turn the offline writer keeps, and as what: plain
//! English word rules, no model (`docs/writer.md`, *What is kept*).

use std::ops::Range;

/// What a kept sentence states. The classes are tried in this order, and a
/// sentence has the first that matches: each sentence is written once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Statement {
    /// A standing preference or instruction: `I prefer …`, `I hate …`,
    /// `I like X better than Y`, `please always / never / avoid / don't …`,
    /// `avoid …`, `call me …`, `from now on …`, `I want you to …`.
    Standing,
    /// A durable fact about the speaker: who they are (`I'm a product
    /// manager`, `I work at / as …`, `my name is …`, `I live in …`),
    /// a relationship (`my sister is …`, `Ada is my wife`), a favourite
    /// (`my favorite … is`), or where something lives (a path such as
    /// `~/Projects/foo`, a URL, `… lives at / in …`).
    Fact,
    /// A first-person plan or event with a date (`I'm flying to Oslo next
    /// week`, `I went to the fair yesterday`).
    Dated,
    /// A decision or a group's dated plan or event (`we decided …`,
    /// `we agreed …`, `let's go with …`, `decided to …`, `we're moving
    /// the launch to Friday`).
    Decision,
}

/// Whether `c` ends a line: LF, CR, VT, FF, NEL, and the Unicode line and
/// paragraph separators U+2028, U+2029.
fn line_end(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Sentences: split at line ends (any of [`line_end`]) and after `.`, `!`,
/// `?` followed by white space, except where the text after the break
/// starts with a lowercase letter (`5 p.m. unless …`, `e.g. tea`, a line
/// that goes on `…French\u{2028}except on Mondays`): a sentence starts with a
/// character that is not lowercase. Each is a trimmed slice of `text`.
pub fn sentences(text: &str) -> Vec<&str> {
    spans(text).into_iter().map(|r| &text[r]).collect()
}

/// The byte ranges of [`sentences`].
fn spans(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let (cut, next) = if line_end(c) {
            (i, i + c.len_utf8())
        } else if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|(_, n)| n.is_whitespace()) {
            (i + 1, i + 1)
        } else {
            continue;
        };
        if text[next..].trim_start().starts_with(char::is_lowercase) {
            continue;
        }
        push(&mut out, text, start..cut);
        start = next;
    }
    push(&mut out, text, start..text.len());
    out
}

fn push(out: &mut Vec<Range<usize>>, text: &str, r: Range<usize>) {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let kept = s.trim();
    if !kept.is_empty() {
        out.push(r.start + lead..r.start + lead + kept.len());
    }
}

/// The words that open a sentence which qualifies the one before it: a
/// condition or an exception (`Only if I say so.`, `Unless it is Friday.`,
/// `But not on Mondays.`). Each item one word, or words separated by spaces.
pub const QUALIFIERS: &[&str] = &[
    "only",
    "unless",
    "except",
    "excluding",
    "but",
    "however",
    "otherwise",
    "if",
    "when",
    "whenever",
    "until",
    "as long as",
    "so long as",
    "provided",
    "providing",
    "though",
    "although",
    "not",
];

/// Whether the sentence `s` opens with one of the [`QUALIFIERS`].
pub fn qualifies(s: &str) -> bool {
    let w = lower_words(s);
    QUALIFIERS.iter().any(|q| {
        let q: Vec<&str> = q.split(' ').collect();
        w.len() >= q.len() && q.iter().zip(&w).all(|(a, b)| a == b)
    })
}

/// The sentences of `text` that `keep` accepts, each with the sentences
/// right after it that [`qualifies`] joined to it: `(sentence, statement)`,
/// where the statement is the slice of `text` from the sentence to its last
/// qualifier, so an instruction is never kept without its conditions. A
/// qualifier joined to a kept sentence is not looked at on its own.
pub fn statements(text: &str, mut keep: impl FnMut(&str) -> bool) -> Vec<(&str, &str)> {
    let spans = spans(text);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(first) = spans.get(i) {
        let sentence = &text[first.clone()];
        i += 1;
        if !keep(sentence) {
            continue;
        }
        let mut end = first.end;
        while let Some(next) = spans.get(i).filter(|n| qualifies(&text[(*n).clone()])) {
            end = next.end;
            i += 1;
        }
        out.push((sentence, &text[first.start..end]));
    }
    out
}

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|w| !w.is_empty())
}

/// The words of a sentence, lowercased, `’` read as `'`.
fn lower_words(s: &str) -> Vec<String> {
    words(s).map(|w| w.replace('’', "'").to_lowercase()).collect()
}

/// Whether a sentence speaks of its speaker: `I`, `I'm`, `I've`, `I'll`,
/// `I'd`, `me`, `my`, `mine`, `myself`.
pub fn first_person(s: &str) -> bool {
    words(s).any(|w| {
        let w = w.replace('’', "'");
        matches!(w.as_str(), "I" | "I'm" | "I've" | "I'll" | "I'd")
            || matches!(w.to_lowercase().as_str(), "me" | "my" | "mine" | "myself")
    })
}

/// Whether a sentence states a standing preference or instruction
/// ([`Statement::Standing`]).
pub fn preference(s: &str) -> bool {
    standing(&lower_words(s))
}

/// What the sentence `s` states, if it is worth keeping; `None` for small
/// talk, which stays in the archive only.
pub fn classify(s: &str) -> Option<Statement> {
    let w = lower_words(s);
    if w.is_empty() {
        None
    } else if standing(&w) {
        Some(Statement::Standing)
    } else if fact(s, &w) {
        Some(Statement::Fact)
    } else if dated(&w) && w.iter().any(|x| FIRST_PERSON.contains(&x.as_str())) {
        Some(Statement::Dated)
    } else if decision(&w) {
        Some(Statement::Decision)
    } else {
        None
    }
}

const FIRST_PERSON: &[&str] = &["i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "myself"];
const GROUP: &[&str] = &["we", "we're", "we've", "we'll", "we'd", "let's", "our", "us"];

/// Whether `w` holds the word sequence `seq` (each item one word, or a
/// `|`-separated choice of words).
fn has(w: &[String], seq: &[&str]) -> bool {
    position(w, seq).is_some()
}

/// Where `w` first holds the word sequence `seq` (see [`has`]).
fn position(w: &[String], seq: &[&str]) -> Option<usize> {
    if seq.is_empty() || w.len() < seq.len() {
        return None;
    }
    (0..=w.len() - seq.len()).find(|&i| seq.iter().zip(&w[i..]).all(|(p, x)| p.split('|').any(|c| c == x)))
}

fn standing(w: &[String]) -> bool {
    const SEQS: &[&[&str]] = &[
        &["i", "prefer|hate|detest"],
        &["i", "can't|cannot", "stand"],
        &["call", "me"],
        &["i", "want|need", "you", "to"],
        &["i'd", "like", "you", "to"],
        &["please", "always|never|avoid|don't|stop|remember|use|call|keep|answer|reply|write|speak|respond"],
        &["please", "do", "not"],
    ];
    if SEQS.iter().any(|s| has(w, s)) || w.first().is_some_and(|x| x == "avoid") {
        return true;
    }
    // `From now on, answer in French` asks something; `I'll write it down
    // from now on` tells of the speaker's own plan.
    if position(w, &["from", "now", "on"])
        .is_some_and(|at| at == 0 || w.iter().any(|x| matches!(x.as_str(), "you" | "your" | "please")))
    {
        return true;
    }
    // `I like tea better than coffee`, `I love X more than Y`.
    position(w, &["i", "like|love|enjoy"]).is_some_and(|at| {
        let rest = &w[at + 2..w.len().min(at + 8)];
        rest.windows(2).any(|p| matches!(p[0].as_str(), "better" | "more") && p[1] == "than")
    })
}

const RELATIONS: &str =
    "wife|husband|partner|boyfriend|girlfriend|fiance|fiancee|fiancé|fiancée|sister|brother|\
mother|mom|mum|father|dad|son|daughter|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin|niece|\
nephew|boss|manager|colleague|coworker|roommate|friend|neighbor|neighbour|dog|cat";

fn fact(s: &str, w: &[String]) -> bool {
    // Who the speaker is. `I'm a bit tired` or `I'm a big fan` says how
    // they are, not who.
    let vague =
        ["bit", "little", "lot", "mix", "big", "huge", "total", "fan", "sucker", "part", "fine", "mess"];
    let identity = w.windows(3).enumerate().any(|(at, t)| {
        let subject = t[0] == "i'm" || (t[0] == "am" && (at == 0 || w[at - 1] == "i"));
        subject && matches!(t[1].as_str(), "a" | "an") && !vague.contains(&t[2].as_str())
    });
    const SEQS: &[&[&str]] = &[
        &["i", "work|worked", "at|as|for"],
        &["i'm|am", "working", "at|as|for"],
        &["my", "name|job|role|title|pronouns|email|address|birthday", "is|are"],
        &["i", "live|lived", "in|at"],
        &["i", "was", "born"],
        &["i", "grew", "up"],
        &["i", "moved", "to"],
        &["my", "favorite|favourite|favorites|favourites"],
        &["lives", "at|under"],
    ];
    if identity || SEQS.iter().any(|q| has(w, q)) {
        return true;
    }
    if has(w, &["my", RELATIONS, "is|was|named|called"]) || has(w, &["is|was", "my", RELATIONS]) {
        return true;
    }
    // A path or a URL: where something lives.
    s.split_whitespace().any(|t| {
        let t = t.trim_matches(|c: char| matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')'));
        t.contains("://")
            || t.starts_with("~/")
            || t.starts_with("./")
            || (t.starts_with('/') && t[1..].contains('/'))
    })
}

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAYS: &[&str] = &["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const UNITS: &[&str] = &[
    "week", "weekend", "month", "year", "summer", "winter", "spring", "fall", "autumn", "morning", "evening",
    "night",
];

/// Whether a sentence names a time: a weekday, a month (`may` only after
/// `in`, `on`, `last`, `next`, `this`, `of` or before a number),
/// `today`-like words (`tomorrow`, `tonight`, `yesterday`), `next`/`last`/
/// `this` + week, month, year, a season or a part of the day, `… ago`, a
/// year (1900–2099) or an ISO date.
fn dated(w: &[String]) -> bool {
    w.iter().enumerate().any(|(i, x)| {
        let prev = i.checked_sub(1).map(|p| w[p].as_str());
        MONTHS.contains(&x.as_str())
            || DAYS.contains(&x.as_str())
            || matches!(x.as_str(), "tomorrow" | "tonight" | "yesterday")
            || (x == "may"
                && (matches!(prev, Some("in" | "on" | "last" | "next" | "this" | "of"))
                    || w.get(i + 1).is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))))
            || (matches!(x.as_str(), "next" | "last" | "this")
                && w.get(i + 1).is_some_and(|n| UNITS.contains(&n.trim_end_matches('s'))))
            || (x == "ago" && i > 0)
            || (x.len() == 4
                && (x.starts_with("19") || x.starts_with("20"))
                && x.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn decision(w: &[String]) -> bool {
    const SEQS: &[&[&str]] = &[
        &["we", "decided|agreed|chose|picked"],
        &["we've|we", "decided|agreed|chosen|picked"],
        &["we", "have", "decided|agreed|chosen"],
        &["let's", "go", "with"],
        &["we're|we", "going", "with"],
        &["decided", "to|on|that|against"],
        &["agreed", "to|on|that"],
        &["the", "decision", "is|was"],
        &["the", "plan", "is|was"],
    ];
    SEQS.iter().any(|s| has(w, s)) || (dated(w) && w.iter().any(|x| GROUP.contains(&x.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<Statement> {
        classify(s)
    }

    #[test]
    fn sentences_and_first_person() {
        assert_eq!(
            sentences("I like tea. You like coffee!\nMy dog is 3.5 years old"),
            ["I like tea.", "You like coffee!", "My dog is 3.5 years old"]
        );
        assert!(first_person("I’m moving to Oslo"));
        assert!(first_person("that is mine"));
        assert!(!first_person("Imagine a mime"));
    }

    #[test]
    fn a_kept_sentence_takes_the_sentences_that_qualify_it() {
        let text = "Nice. Please avoid jargon. Only in emails. As long as I'm cc'd. Thanks! But see you.";
        let kept = statements(text, |s| classify(s).is_some());
        assert_eq!(
            kept,
            [("Please avoid jargon.", "Please avoid jargon. Only in emails. As long as I'm cc'd.")]
        );
        // A qualifier after small talk stands on its own; `as long` alone is
        // not `as long as`.
        assert_eq!(statements("Nice. But I live in Oslo.", |s| classify(s).is_some()).len(), 1);
        assert!(
            qualifies("Unless it rains.") && qualifies("so long as you ask") && !qualifies("As long ago")
        );
        assert!(!qualifies("Butter is nice.") && !qualifies("Onlyfans"));
    }

    #[test]
    fn standing_preferences_and_instructions() {
        for s in [
            "Honestly, I prefer tea",
            "Please always answer in French.",
            "I'm a product manager, please avoid jargon.",
            "Avoid jargon.",
            "Please don't use emoji",
            "Please do not deploy on Fridays",
            "Call me Max.",
            "From now on, answer in French.",
            "Please keep it short from now on.",
            "I'd love it if you wrote in French from now on.",
            "I hate long meetings.",
            "I like tea better than coffee.",
            "I want you to check the tests first.",
        ] {
            assert_eq!(class(s), Some(Statement::Standing), "{s}");
        }
        for s in [
            "I'd prefer not to say",
            "Always here to help!",
            "Never give up!",
            "Don't worry!",
            "I love it!",
            "But I'll also start writing down my favorite memories from now on.",
        ] {
            assert_ne!(class(s), Some(Statement::Standing), "{s}");
        }
    }

    #[test]
    fn facts_about_the_speaker() {
        for s in [
            "I'm a product manager.",
            "I am an engineer at Acme",
            "I work as a nurse.",
            "My name is Ada.",
            "I live in Oslo.",
            "I grew up in Lagos.",
            "My sister is a doctor.",
            "Bo is my husband.",
            "My favorite band is Queen.",
            "The project lives at ~/Projects/foo.",
            "The notes are in /srv/notes/2026.",
            "The docs are at https://example.org/docs.",
        ] {
            assert_eq!(class(s), Some(Statement::Fact), "{s}");
        }
        assert_eq!(class("I'm a bit tired, but I'm a nurse."), Some(Statement::Fact));
        for s in ["I'm a bit tired.", "I'm a big fan!", "That sounds great!", "Thanks, you too!"] {
            assert_eq!(class(s), None, "{s}");
        }
    }

    #[test]
    fn dated_plans_and_events() {
        for s in [
            "I'm flying to Oslo next week.",
            "I went to a support group yesterday.",
            "I'll call the bank on Monday.",
            "I may visit in May 2027.",
            "I started painting 3 years ago.",
            "My exam is on 2026-05-01.",
        ] {
            assert_eq!(class(s), Some(Statement::Dated), "{s}");
        }
        for s in ["I may be late.", "I had a great time!", "This is the week."] {
            assert_eq!(class(s), None, "{s}");
        }
    }

    #[test]
    fn decisions_and_group_events() {
        for s in [
            "We decided to ship on Friday.",
            "We agreed on Postgres.",
            "Let's go with the blue logo.",
            "Decided to cancel the launch.",
            "We're moving the launch to next month.",
            "The plan is to meet at noon.",
        ] {
            assert_eq!(class(s), Some(Statement::Decision), "{s}");
        }
        assert_eq!(class("We'll make a difference!"), None);
    }

    #[test]
    fn each_sentence_has_one_class_by_precedence() {
        // A preference outranks the fact in the same sentence, a fact the
        // date, a first-person date the group.
        assert_eq!(class("I'm a product manager, please avoid jargon."), Some(Statement::Standing));
        assert_eq!(class("I moved to Oslo last year."), Some(Statement::Fact));
        assert_eq!(class("I and my team decided last week."), Some(Statement::Dated));
    }
}
