//! What install puts into an agent's JSON settings, and how it finds it
//! again: the hook matcher groups under `"hooks"` (Claude Code's
//! `settings.json`, Codex's `hooks.json`: the same shape) and the MCP
//! server under `"mcpServers"` (Claude Code's `.mcp.json` and
//! `~/.claude.json`).
//!
//! Each function takes a file's text and gives its new text; a refusal
//! changes nothing. Installing first takes out what an earlier install put
//! in (unless it is exactly what would be written again, when the text is
//! returned untouched), then adds its entries last in their containers, so
//! that taking them out again ([`take_hooks`], [`take_mcp`]) gives back the
//! text from before the install.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::jsontext::{self, insert_member, push_element, remove_child, Node, Style};
use super::shell;
use crate::{Code, Error};

/// One hook: `{"type":"command","command":…,"timeout":…}`.
#[derive(Debug, serde::Serialize)]
struct Hook<'a> {
    /// Always `command`.
    r#type: &'static str,
    /// The shell command.
    command: &'a str,
    /// Seconds before the agent gives up on it.
    timeout: u64,
}

/// One matcher group without a matcher (every occurrence of the event).
#[derive(Debug, serde::Serialize)]
struct Group<'a> {
    /// Our one hook.
    hooks: [Hook<'a>; 1],
}

/// Which events get a hook, with each hook's timeout in seconds.
pub(crate) type Events = [(&'static str, u64)];

/// The `"hooks"` object install writes when there is none: each event
/// with its one group, in the order given.
#[derive(Debug)]
struct HooksObject<'a> {
    /// The hook command.
    command: &'a str,
    /// The events and their timeouts.
    events: &'a Events,
}

impl Serialize for HooksObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.events.len()))?;
        for &(event, timeout) in self.events {
            map.serialize_entry(event, &[group(self.command, timeout)])?;
        }
        map.end()
    }
}

/// Our matcher group for one event.
fn group(command: &str, timeout: u64) -> Group<'_> {
    Group { hooks: [Hook { r#type: "command", command, timeout }] }
}

/// The MCP server entry: `{"type":"stdio","command":…,"args":[…]}`.
#[derive(Debug, serde::Serialize)]
pub(crate) struct McpServer<'a> {
    /// Always `stdio`.
    r#type: &'static str,
    /// The `scriptorium` binary.
    command: &'a str,
    /// `mcp --workspace DIR`.
    args: [&'a str; 3],
}

impl<'a> McpServer<'a> {
    /// `exe mcp --workspace workspace` over stdio.
    pub(crate) fn new(exe: &'a str, workspace: &'a str) -> McpServer<'a> {
        McpServer { r#type: "stdio", command: exe, args: ["mcp", "--workspace", workspace] }
    }
}

/// The name the MCP server is registered under.
pub(crate) const SERVER_NAME: &str = "scriptorium";

/// The document's root object, or the refusal: not JSON (with its line
/// and column), or not an object.
fn root(text: &str) -> Result<Node, Error> {
    let node = jsontext::parse(text).map_err(|f| Error {
        line: Some(f.line as u64),
        ..Error::invalid(format!("is not valid JSON: {} (line {}, column {})", f.message, f.line, f.column))
    })?;
    if node.members().is_none() {
        return Err(Error::invalid("is not a JSON object"));
    }
    Ok(node)
}

/// Whether `text` is an object with no members.
pub(crate) fn is_empty_object(text: &str) -> bool {
    root(text).is_ok_and(|r| r.len() == 0)
}

/// Where one of our hooks lies: the indices of its event member, its group
/// and its hook.
#[derive(Debug, Clone, Copy)]
struct Found {
    /// The event's member in `hooks`.
    event: usize,
    /// The group in the event's array.
    group: usize,
    /// The hook in the group's `hooks`.
    hook: usize,
}

/// Our hooks in the `hooks` object, in file order: hook objects whose
/// `command` runs `scriptorium hook <harness>`.
fn our_hooks(text: &str, hooks: &Node, harness: &str) -> Vec<Found> {
    let mut found = Vec::new();
    for (event, m) in hooks.members().unwrap_or_default().iter().enumerate() {
        for (group, g) in m.value.elements().unwrap_or_default().iter().enumerate() {
            let Some((_, list)) = g.member("hooks") else { continue };
            for (hook, h) in list.value.elements().unwrap_or_default().iter().enumerate() {
                let ours = h.member("command").is_some_and(|(_, c)| {
                    c.value.value(text).as_str().is_some_and(|c| shell::is_hook_command(c, harness))
                });
                if ours {
                    found.push(Found { event, group, hook });
                }
            }
        }
    }
    found
}

/// `text` with our hooks taken out, and with them each container left
/// empty by it: the group, the event's array, the `hooks` object.
pub(crate) fn take_hooks(text: &str, harness: &str) -> Result<String, Error> {
    let mut text = text.to_owned();
    loop {
        let r = root(&text)?;
        let Some((at, member)) = r.member("hooks") else { return Ok(text) };
        let hooks = &member.value;
        let Some(f) = our_hooks(&text, hooks, harness).first().copied() else { return Ok(text) };
        let event = &hooks.members().unwrap_or_default()[f.event].value;
        let group = &event.elements().unwrap_or_default()[f.group];
        let list = &group.member("hooks").expect("found in it").1.value;
        text = if list.len() > 1 {
            remove_child(&text, list, f.hook)
        } else if event.len() > 1 {
            remove_child(&text, event, f.group)
        } else if hooks.len() > 1 {
            remove_child(&text, hooks, f.event)
        } else {
            remove_child(&text, &r, at)
        };
    }
}

/// Whether the file holds exactly our hooks: one per event, each alone in
/// a group that is exactly the one install writes, and no other.
fn hooks_in_place(text: &str, harness: &str, command: &str, events: &Events) -> Result<bool, Error> {
    let r = root(text)?;
    let Some((_, member)) = r.member("hooks") else { return Ok(false) };
    let hooks = &member.value;
    let found = our_hooks(text, hooks, harness);
    if found.len() != events.len() {
        return Ok(false);
    }
    let members = hooks.members().unwrap_or_default();
    Ok(events.iter().all(|&(event, timeout)| {
        let want = serde_json::to_value(group(command, timeout)).expect("a group serializes");
        found.iter().any(|f| {
            let m = &members[f.event];
            let g = &m.value.elements().unwrap_or_default()[f.group];
            m.key == event && hooks.member(event).is_some_and(|(i, _)| i == f.event) && g.value(text) == want
        })
    }))
}

/// `text` with our hooks: `command` for each event, replacing what an
/// earlier install wrote. `INVALID_ARGUMENT` when `hooks` is not an object
/// or an event's value not an array.
pub(crate) fn put_hooks(text: &str, harness: &str, command: &str, events: &Events) -> Result<String, Error> {
    if hooks_in_place(text, harness, command, events)? {
        return Ok(text.to_owned());
    }
    let mut text = take_hooks(text, harness)?;
    let style = Style::of(&text);
    let r = root(&text)?;
    match r.member("hooks") {
        None => return Ok(insert_member(&text, &r, "hooks", &HooksObject { command, events }, &style)),
        Some((_, m)) if m.value.members().is_none() => {
            return Err(Error::invalid("has a \"hooks\" value that is not an object"));
        }
        Some(_) => {}
    }
    for &(event, timeout) in events {
        let r = root(&text)?;
        let hooks = &r.member("hooks").expect("checked above").1.value;
        text = match hooks.member(event) {
            None => insert_member(&text, hooks, event, &[group(command, timeout)], &style),
            Some((_, m)) if m.value.elements().is_some() => {
                push_element(&text, &m.value, &group(command, timeout), &style)
            }
            Some(_) => {
                return Err(Error::invalid(format!("has a \"hooks.{event}\" value that is not an array")))
            }
        };
    }
    Ok(text)
}

/// Whether `server` is an entry install wrote: an object whose `args`
/// start with `"mcp"`.
fn is_our_server(text: &str, server: &Node) -> bool {
    server.member("args").is_some_and(|(_, a)| {
        a.value.elements().and_then(|e| e.first()).is_some_and(|first| first.value(text) == "mcp")
    })
}

/// `text` without our MCP server entry (and without `mcpServers` when that
/// leaves it empty); another entry named `scriptorium` is left alone.
pub(crate) fn take_mcp(text: &str) -> Result<String, Error> {
    let mut text = text.to_owned();
    loop {
        let r = root(&text)?;
        let Some((at, member)) = r.member("mcpServers") else { return Ok(text) };
        let servers = &member.value;
        let ours = servers
            .members()
            .unwrap_or_default()
            .iter()
            .position(|m| m.key == SERVER_NAME && is_our_server(&text, &m.value));
        let Some(index) = ours else { return Ok(text) };
        text =
            if servers.len() > 1 { remove_child(&text, servers, index) } else { remove_child(&text, &r, at) };
    }
}

/// `text` with our MCP server entry, replacing one an earlier install
/// wrote. `INVALID_ARGUMENT` when `mcpServers` is not an object;
/// `CONFLICT` when an entry named `scriptorium` is not ours.
pub(crate) fn put_mcp(text: &str, server: &McpServer<'_>) -> Result<String, Error> {
    let r = root(text)?;
    if let Some((_, m)) = r.member("mcpServers") {
        let Some(_) = m.value.members() else {
            return Err(Error::invalid("has a \"mcpServers\" value that is not an object"));
        };
        if let Some((_, existing)) = m.value.member(SERVER_NAME) {
            let want: Value = serde_json::to_value(server).expect("a server serializes");
            let count = m.value.members().unwrap_or_default().iter().filter(|s| s.key == SERVER_NAME).count();
            if count == 1 && existing.value.value(text) == want {
                return Ok(text.to_owned());
            }
            if !is_our_server(text, &existing.value) {
                return Err(Error::new(
                    Code::Conflict,
                    "already has an MCP server named \"scriptorium\" that install did not write (its args do not start with \"mcp\"); rename or remove it first",
                ));
            }
        }
    }
    let text = take_mcp(text)?;
    let style = Style::of(&text);
    let r = root(&text)?;
    Ok(match r.member("mcpServers") {
        None => insert_member(&text, &r, "mcpServers", &Single(SERVER_NAME, server), &style),
        Some((_, m)) => insert_member(&text, &m.value, SERVER_NAME, server, &style),
    })
}

/// An object of one member.
#[derive(Debug)]
struct Single<'a, T>(&'a str, &'a T);

impl<T: Serialize> Serialize for Single<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.0, self.1)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const CMD: &str = "'/bin/scriptorium' hook claude-code --workspace '/w'";
    const EVENTS: &Events = &[("SessionStart", 30), ("Stop", 60)];

    fn hooks_of(text: &str) -> Value {
        serde_json::from_str::<Value>(text).unwrap()["hooks"].clone()
    }

    #[test]
    fn put_adds_a_group_per_event_and_take_restores() {
        let text = "{\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\"type\": \"command\", \"command\": \"echo\"}\n                ]\n            }\n        ]\n    }\n}";
        let put = put_hooks(text, "claude-code", CMD, EVENTS).unwrap();
        let hooks = hooks_of(&put);
        assert_eq!(hooks["Stop"].as_array().unwrap().len(), 2, "{put}");
        assert_eq!(hooks["Stop"][1], json!({"hooks": [{"type": "command", "command": CMD, "timeout": 60}]}));
        assert_eq!(hooks["SessionStart"][0]["hooks"][0]["timeout"], 30);
        assert!(
            put.contains("\n                        \"type\": \"command\",\n"),
            "four spaces kept: {put}"
        );
        assert_eq!(put_hooks(&put, "claude-code", CMD, EVENTS).unwrap(), put, "idempotent");
        assert_eq!(take_hooks(&put, "claude-code").unwrap(), text);
        assert_eq!(take_hooks(text, "claude-code").unwrap(), text, "nothing of ours: nothing changes");
    }

    #[test]
    fn another_workspace_replaces_ours() {
        let first = put_hooks("{}", "codex", "scriptorium hook codex --workspace /a", EVENTS).unwrap();
        let second = put_hooks(&first, "codex", "scriptorium hook codex --workspace /b", EVENTS).unwrap();
        assert!(!second.contains("/a") && second.matches("/b").count() == 2, "{second}");
        assert_eq!(take_hooks(&second, "codex").unwrap(), "{}");
        // A hook sharing a group with ours stays when ours goes.
        let shared =
            r#"{"hooks":{"Stop":[{"hooks":[{"command":"echo"},{"command":"scriptorium hook codex"}]}]}}"#;
        assert_eq!(
            take_hooks(shared, "codex").unwrap(),
            r#"{"hooks":{"Stop":[{"hooks":[{"command":"echo"}]}]}}"#
        );
        // Claude Code's hooks are not Codex's.
        assert_eq!(take_hooks(&first, "claude-code").unwrap(), first);
    }

    #[test]
    fn refusals() {
        assert!(put_hooks("[]", "codex", CMD, EVENTS).unwrap_err().message.contains("not a JSON object"));
        assert!(put_hooks(r#"{"hooks":1}"#, "codex", CMD, EVENTS).unwrap_err().message.contains("\"hooks\""));
        let e = put_hooks(r#"{"hooks":{"Stop":{}}}"#, "codex", CMD, EVENTS).unwrap_err();
        assert!(e.message.contains("hooks.Stop"), "{e:?}");
        let e = put_hooks("{\n\"a\" 1}", "codex", CMD, EVENTS).unwrap_err();
        assert_eq!(e.line, Some(2), "{e:?}");
        let server = McpServer::new("/bin/scriptorium", "/w");
        let e = put_mcp(r#"{"mcpServers":{"scriptorium":{"command":"x"}}}"#, &server).unwrap_err();
        assert_eq!(e.code, Code::Conflict);
    }

    #[test]
    fn mcp_round_trip() {
        let text =
            "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n  \"tipsShown\": 3\n}\n";
        let server = McpServer::new("/bin/scriptorium", "/w");
        let put = put_mcp(text, &server).unwrap();
        let v: Value = serde_json::from_str(&put).unwrap();
        assert_eq!(
            v["mcpServers"]["scriptorium"],
            json!({"type": "stdio", "command": "/bin/scriptorium", "args": ["mcp", "--workspace", "/w"]})
        );
        assert_eq!(put_mcp(&put, &server).unwrap(), put);
        assert_eq!(take_mcp(&put).unwrap(), text);
        let moved = put_mcp(&put, &McpServer::new("/bin/scriptorium", "/v")).unwrap();
        assert_eq!(take_mcp(&moved).unwrap(), text);
        assert!(is_empty_object(&take_mcp(&put_mcp("{}\n", &server).unwrap()).unwrap()));
    }

    /// Any JSON value, with keys drawn from the ones install looks at.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            "[a-zé\"\\\\ \u{2028}]{0,6}".prop_map(Value::from),
        ];
        let keys =
            prop::sample::select(vec!["hooks", "Stop", "SessionStart", "command", "mcpServers", "env", "é"]);
        leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((keys.clone(), inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    /// A `hooks` object as people write them: events with matcher groups,
    /// some of them Codex's hooks (not Claude Code's).
    fn hooks_value() -> impl Strategy<Value = Value> {
        let command =
            prop::sample::select(vec!["echo hi", "scriptorium hook codex", "'/x/scriptorium' hook"]);
        let hook = (command, any::<bool>()).prop_map(|(c, t)| {
            if t {
                json!({"type": "command", "command": c, "timeout": 5})
            } else {
                json!({"type": "command", "command": c})
            }
        });
        let group =
            (prop::option::of("[a-z|]{0,5}"), prop::collection::vec(hook, 0..3)).prop_map(|(m, h)| {
                let mut g = json!({"hooks": h});
                if let Some(m) = m {
                    g["matcher"] = m.into();
                }
                g
            });
        let event = prop::sample::select(vec!["Stop", "SessionStart", "Notification"]);
        prop::collection::vec((event, prop::collection::vec(group, 0..3)), 1..4)
            .prop_map(|e| Value::Object(e.into_iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect()))
    }

    /// `value` as a person or a program would have written it.
    fn written(value: &Value, unit: &str, crlf: bool, final_newline: bool) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, formatter)).unwrap();
        let mut text = String::from_utf8(out).unwrap();
        if final_newline {
            text.push('\n');
        }
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        text
    }

    /// Empty containers install would fill: taking ours out removes them
    /// (docs/install.md says so), so the bytes cannot come back.
    fn has_empty_container(root: &Value) -> bool {
        let empty = |v: &Value| v.as_object().is_some_and(|o| o.is_empty());
        let hooks = &root["hooks"];
        empty(hooks)
            || empty(&root["mcpServers"])
            || EVENTS.iter().any(|(e, _)| hooks[*e].as_array().is_some_and(|a| a.is_empty()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn install_is_idempotent_and_uninstall_restores_the_bytes(
            fields in prop::collection::vec((prop::sample::select(vec!["hooks", "mcpServers", "model", "é"]), value()), 0..4),
            hooks in prop::option::of(hooks_value()),
            unit in prop::sample::select(vec!["  ", "    ", "\t"]),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
        ) {
            let mut root = Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
            if let Some(hooks) = hooks {
                root["hooks"] = hooks;
            }
            prop_assume!(!has_empty_container(&root));
            let text = written(&root, unit, crlf, final_newline);
            if let Ok(put) = put_hooks(&text, "claude-code", CMD, EVENTS) {
                prop_assert_eq!(put_hooks(&put, "claude-code", CMD, EVENTS).unwrap(), put.clone());
                prop_assert_eq!(take_hooks(&put, "claude-code").unwrap(), text.clone());
                // The parsed file is the old one plus our groups, last.
                let mut without: Value = serde_json::from_str(&put).unwrap();
                let hooks = without["hooks"].as_object_mut().unwrap();
                for (event, _) in EVENTS {
                    let groups = hooks.get_mut(*event).unwrap().as_array_mut().unwrap();
                    let ours = groups.pop().unwrap();
                    prop_assert_eq!(&ours["hooks"][0]["command"], &json!(CMD));
                    if groups.is_empty() {
                        hooks.remove(*event);
                    }
                }
                if hooks.is_empty() {
                    without.as_object_mut().unwrap().remove("hooks");
                }
                prop_assert_eq!(without, root.clone());
            }
            let server = McpServer::new("/bin/scriptorium", "/w");
            if let Ok(put) = put_mcp(&text, &server) {
                prop_assert_eq!(put_mcp(&put, &server).unwrap(), put.clone());
                prop_assert_eq!(take_mcp(&put).unwrap(), text.clone());
            }
        }
    }
}
