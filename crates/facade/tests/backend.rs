//! The backend contract: the local backend end to end, the disabled one,
//! and the process-wide slot.

use scriptorium::tools::args::SearchArgs;
use std::sync::Arc;

use scriptorium::backend::{get_backend, set_backend, DisabledBackend, LocalMemoryBackend, MemoryBackend};
use scriptorium::scheduler::import::{import, read, Format};
use scriptorium::scheduler::store::SESSIONS_DB;
use scriptorium::scheduler::SqliteStore;
use scriptorium::tools::Caller;
use scriptorium::transaction::Tier;
use serde_json::json;

#[test]
fn local_backend_writes_recalls_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let t = dir.path().join("t.jsonl");
    std::fs::write(&t, "{\"session\":\"s\",\"id\":\"1\",\"role\":\"user\",\"timestamp\":\"2026-01-01T10:00:00Z\",\"content\":\"I prefer green tea.\",\"speaker_id\":\"7391\",\"speaker_display\":\"Ada\"}\n").unwrap();
    scriptorium::transaction::layout::ensure(root).unwrap();
    let store = SqliteStore::open(&root.join(SESSIONS_DB)).unwrap();
    import(&store, &read(Format::Jsonl, &t).unwrap()).unwrap();
    let memory = LocalMemoryBackend::new(root);
    assert_eq!(memory.write("s", false), None, "under the threshold: nothing owed yet");
    assert!(memory.system_prompt().unwrap().is_empty());
    assert_eq!(memory.write("s", true), None);
    let prompt = memory.system_prompt().unwrap();
    assert!(prompt.as_str().contains("I prefer green tea."), "{prompt}");
    let recall = memory.recall("what tea does Ada like").unwrap();
    assert!(recall.as_str().starts_with("<memory-context>"));
    assert!(memory.recall("xylophone").unwrap().is_empty());
    let answer = memory.search(&SearchArgs { query: "tea".into(), ..SearchArgs::default() }).unwrap();
    assert!(!answer.hits.is_empty());
    assert!(answer.hits[0].snippet.contains("tea"), "{:?}", answer.hits[0]);
    assert_eq!(memory.status().unwrap().pending_turns, Some(0));
    let owner = Caller { tier: Tier::Owner, interactive: true };
    let promoted = memory.call_tool("memory_promote", &json!({"source_ids": ["jsonl/s/1"]}), &owner).unwrap();
    assert_eq!(promoted["already_trusted"], json!(["jsonl/s/1"]));
}

#[test]
fn disabled_backend_says_nothing_and_refuses_tools() {
    let off = DisabledBackend;
    assert_eq!(off.name(), "none");
    assert!(off.system_prompt().unwrap().is_empty());
    assert!(off.recall("anything").unwrap().is_empty());
    assert_eq!(off.write("s", true), None);
    let args = SearchArgs { query: "x".into(), ..SearchArgs::default() };
    assert_eq!(off.search(&args).unwrap_err().code.as_str(), "MEMORY_DISABLED");
    let c = Caller { tier: Tier::Owner, interactive: true };
    assert_eq!(off.call_tool("memory_status", &json!({}), &c).unwrap_err().code.as_str(), "MEMORY_DISABLED");
}

#[test]
fn the_process_wide_backend_can_be_swapped() {
    assert_eq!(get_backend().name(), "none", "disabled until a runtime sets one");
    let dir = tempfile::tempdir().unwrap();
    set_backend(Arc::new(LocalMemoryBackend::new(dir.path())));
    assert_eq!(get_backend().name(), "local");
    let handles: Vec<_> = (0..4).map(|_| std::thread::spawn(|| get_backend().name().to_owned())).collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), "local");
    }
    let previous = set_backend(Arc::new(DisabledBackend)).unwrap();
    assert_eq!(previous.name(), "local");
}

#[test]
fn the_local_backend_reorganizes_with_the_pass_it_was_given() {
    use scriptorium::scheduler::dream::{Report, Unchanged};
    use scriptorium::scheduler::watch::Reorganize;
    use scriptorium::scheduler::WriteFailure;
    struct Pass(usize);
    impl Reorganize for Pass {
        fn reorganize(&mut self) -> Result<Report, WriteFailure> {
            self.0 += 1;
            Ok(Report { changed: vec![format!("topics/pass-{}.md", self.0)], ..Report::default() })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let memory = LocalMemoryBackend::new(dir.path());
    let offline = memory.reorganize().unwrap();
    assert_eq!(
        (offline.changed.len(), offline.reason),
        (0, Some(Unchanged::NothingSelected)),
        "no pass: the offline one"
    );
    let memory = memory.with_reorganizer(Box::new(Pass(0)));
    assert_eq!(memory.reorganize().unwrap().changed, ["topics/pass-1.md"]);
    assert_eq!(memory.reorganize().unwrap().changed, ["topics/pass-2.md"], "the same pass, kept");
}

#[test]
fn the_local_backend_without_a_pass_runs_the_offline_hygiene() {
    use scriptorium::scheduler::dream::Unchanged;
    use scriptorium::transaction::{Base, Committer, Edit, Patch};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let record = serde_json::json!({"provider": "chat", "thread": "t", "message": "m1", "role": "user",
        "timestamp": "2026-01-01T10:00:00Z", "content": "I drink tea.", "speaker_id": "7", "speaker_display": "Bo"});
    let record = scriptorium::archive::input::parse_record(&record.to_string()).unwrap();
    let id = record.id().clone();
    let def = format!(
        "[^e-0000000001]: Time: `2026-01-01`; Sources: [{}](../{}#{})",
        id.text(),
        id.v2_path(),
        id.anchor()
    );
    let text =
        format!("# Bo\n\nBo drinks tea.[^e-0000000001] ^a\n\nbo drinks  TEA.[^e-0000000001] ^b\n\n{def}\n");
    let patch = Patch {
        base_revision: String::new(),
        message: "twins".into(),
        sources: vec![record],
        edits: vec![Edit::Create { path: "topics/bo.md".into(), content: text }],
    };
    Committer::open(root, std::time::Duration::from_secs(5))
        .unwrap()
        .commit(&patch, Tier::Owner, Base::Any)
        .unwrap();
    let r = LocalMemoryBackend::new(root).reorganize().unwrap();
    assert_eq!((r.changed, r.hygiene.merged, r.reason), (vec!["topics/bo.md".to_owned()], 1, None));
    assert_eq!(r.selected.len(), 1, "what a model would be given");
    let again = LocalMemoryBackend::new(root).reorganize().unwrap();
    assert_eq!((again.changed.len(), again.reason), (0, Some(Unchanged::NoModel)));
}

#[test]
fn a_workspace_configured_none_refuses_every_tool_even_called_directly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("scriptorium.toml"), "[memory]\nbackend = \"none\"\n").unwrap();
    let owner = Caller { tier: Tier::Owner, interactive: true };
    for name in scriptorium::tools::TOOLS {
        let e = scriptorium::tools::call_tool(&root, name, &json!({}), &owner).unwrap_err();
        assert_eq!(e.code.as_str(), "MEMORY_DISABLED", "{name}");
    }
    let names: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["scriptorium.toml"], "nothing created");
    assert_eq!(scriptorium::backend::open_configured(&root).unwrap().name(), "none");
    std::fs::write(root.join("scriptorium.toml"), "[memory]\nbackend = \"local\"\n").unwrap();
    assert_eq!(scriptorium::backend::open_configured(&root).unwrap().name(), "local");
}
