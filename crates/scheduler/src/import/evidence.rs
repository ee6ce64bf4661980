//! LoCoMo's question evidence: the dia_ids a question's answer stands on,
//! as the data writes them (`D8:6; D9:17`, the typo `D:11:26`).

/// The dia_ids of evidence `items` as written, sorted, each once; parts
/// that are not `D<session>:<turn>` are left out.
///
/// ```
/// use scriptorium_scheduler::import::evidence::dia_ids;
/// assert_eq!(dia_ids(["D8:6; D9:17", "D:11:26", "D", "D1:3"]), ["D11:26", "D1:3", "D8:6", "D9:17"]);
/// ```
pub fn dia_ids<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out = Vec::new();
    for e in items {
        for part in e.split(';') {
            let p = part.trim();
            let p = p.strip_prefix("D:").map_or_else(|| p.to_owned(), |r| format!("D{r}"));
            let ok = p
                .strip_prefix('D')
                .and_then(|r| r.split_once(':'))
                .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok());
            if ok {
                out.push(p);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
