//! The arguments of each `memory_*` tool as a typed struct: unknown
//! arguments are refused, and a test checks every struct against its tool's
//! JSON Schema in [`super::tool_specs`].

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;
use crate::search::Method;

/// `memory_search`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Free text.
    pub query: String,
    /// At most this many hits (1 to 100, default 10).
    pub limit: Option<u64>,
    /// Only paths starting with this.
    pub path_prefix: Option<String>,
    /// Only documents dated on or after this UTC day (YYYY-MM-DD).
    pub date_from: Option<String>,
    /// Only documents dated on or before this UTC day (YYYY-MM-DD).
    pub date_to: Option<String>,
    /// Only records of this speaker (an id, or a name one identity has).
    pub speaker: Option<String>,
    /// How to rank (default BM25).
    pub method: Option<Method>,
    /// Include pending blocks and records.
    pub include_pending: Option<bool>,
}

/// `memory_get`: exactly one of the four.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// A topic file.
    pub path: Option<String>,
    /// A block.
    pub block_id: Option<String>,
    /// An archived record by id.
    pub source_id: Option<String>,
    /// An archived record by `source-HASH8` anchor.
    pub anchor: Option<String>,
}

/// `memory_status`: no arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

/// `memory_promote`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromoteArgs {
    /// The records to trust.
    pub source_ids: Vec<String>,
}

/// `memory_grep`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// A regular expression (Rust regex syntax).
    pub regex: String,
    /// Only paths starting with this.
    pub path_prefix: Option<String>,
    /// At most this many lines (1 to 1000, default 100).
    pub limit: Option<u64>,
}

/// The arguments of `tool`, or `INVALID_ARGUMENT` saying what is wrong.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, Error> {
    T::deserialize(args).map_err(|e| Error::invalid(format!("{tool}: {e}")))
}

/// `limit` within `1..=max`, else `default`.
pub(crate) fn limit(given: Option<u64>, default: u64, max: u64) -> Result<usize, Error> {
    match given {
        None => Ok(default as usize),
        Some(n) if (1..=max).contains(&n) => Ok(n as usize),
        Some(_) => Err(Error::invalid(format!("\"limit\" must be an integer from 1 to {max}"))),
    }
}

#[cfg(test)]
mod tests {
    //! Every tool's struct against its schema: the same argument names, the
    //! same required ones.
    use std::collections::BTreeSet;

    use serde::de::{self, Visitor};

    use super::*;

    /// The field names serde asks a deserializer for.
    struct Fields(Vec<&'static str>);

    #[derive(Debug)]
    struct Stop;

    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }

    impl std::error::Error for Stop {}

    impl de::Error for Stop {
        fn custom<T: std::fmt::Display>(_: T) -> Stop {
            Stop
        }
    }

    impl<'de> de::Deserializer<'de> for &mut Fields {
        type Error = Stop;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0.extend_from_slice(fields);
            Err(Stop)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    fn fields<T: DeserializeOwned>() -> BTreeSet<String> {
        let mut f = Fields(Vec::new());
        let _ = T::deserialize(&mut f);
        f.0.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The arguments `{}` lacks, as serde says it.
    fn required<T: DeserializeOwned>() -> BTreeSet<String> {
        let mut missing = BTreeSet::new();
        let mut given = serde_json::Map::new();
        loop {
            match T::deserialize(&Value::Object(given.clone())) {
                Ok(_) => return missing,
                Err(e) => {
                    let text = e.to_string();
                    let name = text
                        .strip_prefix("missing field `")
                        .and_then(|r| r.split('`').next())
                        .unwrap_or_else(|| panic!("not a missing field: {text}"))
                        .to_owned();
                    given.insert(name.clone(), example(&name));
                    missing.insert(name);
                }
            }
        }
    }

    fn example(name: &str) -> Value {
        if name == "source_ids" {
            serde_json::json!([])
        } else {
            Value::String(String::new())
        }
    }

    fn schema_of(tool: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let spec = super::super::tool_specs()
            .into_iter()
            .find(|s| s["function"]["name"] == tool)
            .unwrap_or_else(|| panic!("no spec for {tool}"));
        let p = &spec["function"]["parameters"];
        assert_eq!(p["additionalProperties"], false, "{tool} refuses unknown arguments");
        let props = p["properties"].as_object().unwrap().keys().cloned().collect();
        let req =
            p["required"].as_array().into_iter().flatten().map(|v| v.as_str().unwrap().to_owned()).collect();
        (props, req)
    }

    fn check<T: DeserializeOwned>(tool: &str) {
        let (props, req) = schema_of(tool);
        assert_eq!(fields::<T>(), props, "{tool}: the struct's fields are the schema's properties");
        assert_eq!(required::<T>(), req, "{tool}: the struct's required fields are the schema's");
    }

    #[test]
    fn every_struct_matches_its_schema() {
        check::<SearchArgs>("memory_search");
        check::<GetArgs>("memory_get");
        check::<StatusArgs>("memory_status");
        check::<PromoteArgs>("memory_promote");
        check::<GrepArgs>("memory_grep");
    }

    #[test]
    fn unknown_and_mistyped_arguments_are_refused() {
        let e =
            parse::<GrepArgs>("memory_grep", &serde_json::json!({"regex": "a", "glob": "*"})).unwrap_err();
        assert!(e.message.starts_with("memory_grep: unknown field `glob`"), "{e}");
        let e = parse::<SearchArgs>("memory_search", &serde_json::json!({"query": 5})).unwrap_err();
        assert!(e.message.contains("invalid type"), "{e}");
        let e = parse::<SearchArgs>("memory_search", &serde_json::json!({"query": "a", "method": "vibes"}))
            .unwrap_err();
        assert!(e.message.contains("unknown variant `vibes`"), "{e}");
        assert_eq!(
            limit(Some(0), 10, 100).unwrap_err().message,
            "\"limit\" must be an integer from 1 to 100"
        );
    }
}
