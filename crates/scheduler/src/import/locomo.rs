//! The LoCoMo benchmark's JSON: conversations of dated sessions between two
//! speakers.

use serde_json::Value;

use super::{normalise_timestamp, Transcript};
use crate::error::{Error, Result};
use crate::node::{Node, NodeKind, NodeRole};

/// The provider of LoCoMo conversations.
pub const LOCOMO_PROVIDER: &str = "locomo";

/// A LoCoMo session date (`1:56 pm on 8 May, 2023`) read as UTC.
pub fn locomo_time(s: &str) -> Option<String> {
    let (time, date) = s.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) {
        return None;
    }
    match ampm.to_ascii_lowercase().as_str() {
        "am" if h == 12 => h = 0,
        "am" => {}
        "pm" if h != 12 => h += 12,
        "pm" => {}
        _ => return None,
    }
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: i8 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: i16 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let mo = MONTHS.iter().position(|x| x.eq_ignore_ascii_case(month))? as i8 + 1;
    let dt = jiff::civil::DateTime::new(year, mo, day, h, m, 0, 0).ok()?;
    let t = dt.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    normalise_timestamp(&t.to_string())
}

/// One session per LoCoMo sample.
pub(super) fn locomo(text: &str) -> Result<Vec<Transcript>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(format!("not JSON: {e}")).line(e.line() as u64))?;
    let samples = match &v {
        Value::Array(a) => a.as_slice(),
        Value::Object(_) => std::slice::from_ref(&v),
        _ => return Err(Error::invalid("not a LoCoMo sample list")),
    };
    let mut out = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        let id = s
            .get("sample_id")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid(format!("sample {k} has no \"sample_id\" string")))?;
        let conv = s
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| Error::invalid(format!("sample {id:?} has no \"conversation\" object")))?;
        // `session_N` with N written canonically (no sign, no leading zero).
        let mut numbers: Vec<u32> = conv
            .iter()
            .filter(|(_, v)| v.is_array())
            .filter_map(|(k, _)| {
                k.strip_prefix("session_")?.parse().ok().filter(|n: &u32| *k == format!("session_{n}"))
            })
            .collect();
        numbers.sort_unstable();
        let session = format!("locomo/{id}");
        let mut nodes: Vec<Node> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for n in numbers {
            let date_key = format!("session_{n}_date_time");
            let date = conv.get(&date_key).and_then(Value::as_str).unwrap_or("");
            let ts = locomo_time(date).ok_or_else(|| {
                Error::invalid(format!(
                    "sample {id:?}: {date_key} {date:?} is not like \"1:56 pm on 8 May, 2023\""
                ))
            })?;
            let turns =
                conv.get(&format!("session_{n}")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            for (i, t) in turns.iter().enumerate() {
                let field = |f: &str| t.get(f).and_then(Value::as_str);
                let dia = field("dia_id").ok_or_else(|| {
                    Error::invalid(format!("sample {id:?}: session_{n} turn {i} has no \"dia_id\""))
                })?;
                if !seen.insert(dia.to_owned()) {
                    continue;
                }
                let mut content = field("text").unwrap_or("").to_owned();
                if let Some(c) = field("blip_caption") {
                    content.push_str(&format!("\n[shared an image: {c}]"));
                }
                let node = Node {
                    id: dia.to_owned(),
                    parent: nodes.last().map(|p| p.id.clone()),
                    role: NodeRole::User,
                    kind: NodeKind::Turn,
                    timestamp: ts.clone(),
                    content,
                    speaker_id: None,
                    speaker_display: field("speaker").map(str::to_owned),
                    provider: LOCOMO_PROVIDER.to_owned(),
                    thread: id.to_owned(),
                    pending: false,
                };
                node.check()
                    .map_err(|e| Error::invalid(format!("sample {id:?}: turn {dia:?}: {}", e.message)))?;
                nodes.push(node);
            }
        }
        out.push(Transcript { session, nodes, head: None, lenient_parents: false, continues: false });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_dates() {
        assert_eq!(locomo_time("1:56 pm on 8 May, 2023").as_deref(), Some("2023-05-08T13:56:00Z"));
        assert_eq!(locomo_time("12:09 am on 1 January, 2024").as_deref(), Some("2024-01-01T00:09:00Z"));
        assert_eq!(locomo_time("12:30 pm on 29 February, 2024").as_deref(), Some("2024-02-29T12:30:00Z"));
        assert_eq!(locomo_time("12:09 am on 13 September, 2023").as_deref(), Some("2023-09-13T00:09:00Z"));
        assert_eq!(locomo_time("noon"), None);
        assert_eq!(locomo_time("1:56 pm on 30 February, 2023"), None);
        assert_eq!(locomo_time("13:56 pm on 8 May, 2023"), None);
        assert_eq!(locomo_time("yesterday"), None);
    }
}
