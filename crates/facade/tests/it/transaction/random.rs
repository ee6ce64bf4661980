//! Random invalid patches (proptest): each is refused with the code
//! FORMAT.md §6 says wins, and writes nothing.

use super::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Create,
    Append,
    Replace,
    StrReplace,
    Delete,
}

impl Op {
    fn edit(self, path: &str, text: &str) -> Value {
        match self {
            Op::Create => create(path, text),
            Op::Append => append(path, text),
            Op::Replace => replace(path, text),
            Op::StrReplace => str_replace(path, "Ada", text),
            Op::Delete => delete(path),
        }
    }

    fn paired_refuses(self) -> bool {
        matches!(self, Op::Replace | Op::StrReplace | Op::Delete)
    }
}

#[derive(Debug, Clone)]
enum EditKind {
    /// A valid append of a new block to ada.md.
    Good,
    /// A valid create of a new file.
    GoodCreate,
    BadPath(usize, Op),
    BadOp(usize),
    UnknownKey,
    EmptyOld,
    Missing(Op),
    OldAbsent,
    CreateExisting,
    /// A new file citing a record that is not archived.
    Unvalidated,
}

#[derive(Debug, Clone)]
enum Shape {
    Whole,
    Truncated(u16),
    Trailing,
    NotObject(usize),
    ExtraKey,
    NoBase,
}

#[derive(Debug, Clone)]
struct Case {
    shape: Shape,
    stale: Option<String>,
    paired: bool,
    source: bool,
    edits: Vec<EditKind>,
}

const BAD_PATHS: [&str; 12] = [
    "../x.md",
    "/abs.md",
    "topics/a.txt",
    "sources/x.md",
    "topics//a.md",
    "topics\\a.md",
    "topics/a\0b.md",
    "topics/./a.md",
    "topics/x.MD",
    "topics/.md",
    "core.md",
    "topics/a/../../x.md",
];
const BAD_OPS: [&str; 6] = ["chmod", "rename", "Create", "APPEND", "", "insert"];

impl Case {
    fn op_of(e: &EditKind) -> Option<Op> {
        match e {
            EditKind::Good => Some(Op::Append),
            EditKind::GoodCreate | EditKind::CreateExisting | EditKind::Unvalidated => Some(Op::Create),
            // A missing file cannot be "created" wrongly: that one deletes.
            EditKind::Missing(Op::Create) => Some(Op::Delete),
            EditKind::BadPath(_, op) | EditKind::Missing(op) => Some(*op),
            EditKind::EmptyOld | EditKind::OldAbsent => Some(Op::StrReplace),
            EditKind::BadOp(_) => None,
            EditKind::UnknownKey => Some(Op::Append),
        }
    }

    /// The code FORMAT.md §6 says wins.
    fn expected(&self) -> &'static str {
        let invalid = |e: &EditKind| {
            matches!(
                e,
                EditKind::BadPath(..) | EditKind::BadOp(_) | EditKind::UnknownKey | EditKind::EmptyOld
            )
        };
        if !matches!(self.shape, Shape::Whole) || self.edits.iter().any(invalid) {
            return "INVALID_ARGUMENT";
        }
        // The case's record names Ada: a paired caller may not.
        if self.paired && self.source {
            return "INVALID_ARGUMENT";
        }
        if self.paired && self.edits.iter().filter_map(Case::op_of).any(Op::paired_refuses) {
            return "PERMISSION_DENIED";
        }
        if self.stale.is_some() {
            return "CONFLICT";
        }
        // CONFLICT wins over NOT_FOUND whatever the edits' order.
        if self.edits.iter().any(|e| matches!(e, EditKind::CreateExisting)) {
            return "CONFLICT";
        }
        if self.edits.iter().any(|e| matches!(e, EditKind::Missing(_) | EditKind::OldAbsent)) {
            return "NOT_FOUND";
        }
        if self.edits.iter().any(|e| matches!(e, EditKind::Unvalidated)) {
            return "VALIDATION_FAILED";
        }
        unreachable!("every case has a defect: {self:?}")
    }

    fn text(&self, rev: &str) -> String {
        let edits: Vec<Value> = self
            .edits
            .iter()
            .enumerate()
            .map(|(k, e)| match e {
                EditKind::Good => append(
                    ADA_PATH,
                    &appended_block("Random.", &format!("e-{:010x}", 0xabc0 + k), &format!("r{k}")),
                ),
                EditKind::GoodCreate => create(
                    &format!("topics/new-{k}.md"),
                    &format!(
                        "Created.[^e-00000000ff] ^c{k}x\n\n{}\n",
                        footnote("e-00000000ff", "team-1", "m1", "../")
                    ),
                ),
                EditKind::BadPath(i, op) => op.edit(BAD_PATHS[*i], "x"),
                EditKind::BadOp(i) => json!({"op": BAD_OPS[*i], "path": ADA_PATH, "content": "x"}),
                EditKind::UnknownKey => {
                    json!({"op": "append", "path": ADA_PATH, "content": "x", "mode": "0644"})
                }
                EditKind::EmptyOld => str_replace(ADA_PATH, "", "x"),
                EditKind::Missing(op) => match op {
                    Op::Create => delete(&format!("topics/missing-{k}.md")),
                    op => op.edit(&format!("topics/missing-{k}.md"), "x"),
                },
                EditKind::OldAbsent => str_replace(ADA_PATH, "no such text anywhere", "x"),
                EditKind::CreateExisting => create(ADA_PATH, "x"),
                EditKind::Unvalidated => create(
                    &format!("topics/bad-{k}.md"),
                    &format!(
                        "Unknown.[^e-00000000fe] ^u{k}x\n\n{}\n",
                        footnote("e-00000000fe", "team-1", "m404", "../")
                    ),
                ),
            })
            .collect();
        let sources =
            if self.source { vec![record("prop", "p1", "must not be archived", true)] } else { vec![] };
        let mut v = json!({"base_revision": self.stale.as_deref().unwrap_or(rev), "message": "random",
            "sources": sources, "edits": edits});
        match &self.shape {
            Shape::Whole => v.to_string(),
            Shape::Truncated(at) => {
                let s = v.to_string();
                let cut = usize::from(*at) % s.len();
                s[..cut].to_owned()
            }
            Shape::Trailing => format!("{v} x"),
            Shape::NotObject(i) => ["[]", "null", "\"patch\"", "42", "{\"base_revision\": 7}"][*i].to_owned(),
            Shape::ExtraKey => {
                v["extra"] = 1.into();
                v.to_string()
            }
            Shape::NoBase => {
                v.as_object_mut().unwrap().remove("base_revision");
                v.to_string()
            }
        }
    }
}

fn case_strategy() -> impl proptest::strategy::Strategy<Value = Case> {
    use proptest::prelude::*;
    let op = prop_oneof![
        Just(Op::Create),
        Just(Op::Append),
        Just(Op::Replace),
        Just(Op::StrReplace),
        Just(Op::Delete)
    ];
    let edit = prop_oneof![
        3 => Just(EditKind::Good),
        1 => Just(EditKind::GoodCreate),
        2 => (0..BAD_PATHS.len(), op.clone()).prop_map(|(i, op)| EditKind::BadPath(i, op)),
        1 => (0..BAD_OPS.len()).prop_map(EditKind::BadOp),
        1 => Just(EditKind::UnknownKey),
        1 => Just(EditKind::EmptyOld),
        3 => op.prop_map(EditKind::Missing),
        1 => Just(EditKind::OldAbsent),
        1 => Just(EditKind::CreateExisting),
        2 => Just(EditKind::Unvalidated),
    ];
    let shape = prop_oneof![
        10 => Just(Shape::Whole),
        1 => any::<u16>().prop_map(Shape::Truncated),
        1 => Just(Shape::Trailing),
        1 => (0..5usize).prop_map(Shape::NotObject),
        1 => Just(Shape::ExtraKey),
        1 => Just(Shape::NoBase),
    ];
    (
        shape,
        proptest::option::weighted(0.25, "[0-9a-f]{64}"),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(edit, 1..4),
    )
        .prop_map(|(shape, stale, paired, source, edits)| {
            let mut c = Case { shape, stale, paired, source, edits };
            let defect = !matches!(c.shape, Shape::Whole)
                || c.stale.is_some()
                || c.edits.iter().any(|e| !matches!(e, EditKind::Good | EditKind::GoodCreate));
            if !defect {
                c.stale = Some("0".repeat(64));
            }
            c
        })
}

#[test]
fn random_invalid_patches_are_refused_and_write_nothing() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let before = snapshot(root);
    let hist = history(root).len();
    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let mut runner = TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
    runner
        .run(&case_strategy(), |case| {
            let text = case.text(&rev);
            let tier = if case.paired { "paired" } else { "owner" };
            let out = update(root, &text, &["--tier", tier]);
            let code = out.status.code();
            if code != Some(1) {
                return Err(TestCaseError::fail(format!("exit {code:?} for {case:?}: {}", stderr(&out))));
            }
            let lines = json_lines(&out.stderr);
            if lines.len() != 1 || !out.stdout.is_empty() {
                return Err(TestCaseError::fail(format!("output for {case:?}: {lines:?}")));
            }
            let got = lines[0]["error"]["code"].as_str().unwrap_or_default().to_owned();
            if !CODES.contains(&got.as_str()) || got != case.expected() {
                return Err(TestCaseError::fail(format!(
                    "{case:?}: expected {}, got {}",
                    case.expected(),
                    lines[0]
                )));
            }
            if snapshot(root) != before || history(root).len() != hist {
                return Err(TestCaseError::fail(format!("{case:?} changed the workspace")));
            }
            seen.borrow_mut().insert(got);
            Ok(())
        })
        .unwrap();
    assert_eq!(revision(root), rev);
    // Not only malformed patches: the refusals made under the lock ran too
    // (all 32 cases sharing one code has a chance of about 1e-5).
    assert!(seen.borrow().len() >= 2, "only {:?} was produced", seen.borrow());
}
