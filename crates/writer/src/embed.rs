//! `Embedder`: any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI,
//! Ollama, vLLM, llama.cpp's server, LM Studio), over a blocking HTTP
//! client. Failures are classified like the chat client's.

use std::time::Duration;

use serde_json::{json, Value};

use scriptorium_scheduler::Code;

use crate::model::ModelError;
use crate::openai::{checked_endpoint, post_json};

/// The longest text sent for one input, in characters: longer texts are
/// cut (at a character boundary), since every endpoint has a context limit
/// and a paragraph's opening carries its meaning.
pub const MAX_INPUT_CHARS: usize = 8_000;

/// How many texts go in one request.
pub const BATCH: usize = 64;

/// A client of one embedding model at one endpoint. Its `Debug` form shows
/// neither the API key nor credentials in the URL.
#[derive(Clone)]
pub struct Embedder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("base_url", &crate::openai::redact_url(&self.base_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// A client of `model` at `base_url` (e.g. `http://127.0.0.1:11434/v1`;
    /// requests go to `{base_url}/embeddings`). `api_key` is sent as a
    /// bearer token when present.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scriptorium_writer::embed::Embedder;
    /// let e = Embedder::new("http://127.0.0.1:11434/v1/", "nomic-embed-text", None, Duration::from_secs(30))?;
    /// assert_eq!(e.identity(), "nomic-embed-text@http://127.0.0.1:11434/v1");
    /// assert!(Embedder::new("ftp://x", "m", None, Duration::from_secs(1)).is_err());
    /// # Ok::<(), scriptorium_writer::model::ModelError>(())
    /// ```
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<Embedder, ModelError> {
        let url = checked_endpoint(base_url, model, "embedding model")?;
        let agent = ureq::AgentBuilder::new().timeout(timeout).build();
        Ok(Embedder { base_url: url, model: model.to_owned(), api_key, agent })
    }

    /// `model@url` (credentials in the URL removed): vectors from another
    /// identity are not comparable.
    pub fn identity(&self) -> String {
        format!("{}@{}", self.model, crate::openai::redact_url(&self.base_url))
    }

    /// One vector per text, in order, all of one dimension. Texts longer
    /// than [`MAX_INPUT_CHARS`] are cut; at most [`BATCH`] go per request.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let got = self.request(chunk)?;
            if let (Some(first), Some(new)) = (out.first(), got.first()) {
                if first.len() != new.len() {
                    return Err(unavailable(format!(
                        "the embedding server changed dimension between requests ({} then {})",
                        first.len(),
                        new.len()
                    )));
                }
            }
            out.extend(got);
        }
        Ok(out)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let url = format!("{}/embeddings", self.base_url);
        let input: Vec<&str> = texts.iter().map(|t| cut(t)).collect();
        let body = json!({"model": self.model, "input": input}).to_string();
        let text = post_json(&self.agent, &url, self.api_key.as_deref(), &body, "embedding server")?;
        parse_embeddings(&text, texts.len())
    }
}

fn cut(text: &str) -> &str {
    match text.char_indices().nth(MAX_INPUT_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn unavailable(why: String) -> ModelError {
    ModelError::new(Code::ModelUnavailable, why)
}

/// Reads an embeddings answer for `n` inputs: `data[i].embedding`, placed
/// by `data[i].index` when present. Refuses a count that is not `n`, an
/// empty or non-finite vector, and mixed dimensions.
///
/// ```
/// use scriptorium_writer::embed::parse_embeddings;
/// let body = r#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
/// assert_eq!(parse_embeddings(body, 2).unwrap(), vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
/// assert!(parse_embeddings(body, 3).is_err());
/// ```
pub fn parse_embeddings(body: &str, n: usize) -> Result<Vec<Vec<f32>>, ModelError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| unavailable(format!("the embedding server's answer is not JSON: {e}")))?;
    let data = v["data"]
        .as_array()
        .ok_or_else(|| unavailable("the embedding server's answer has no data array".to_owned()))?;
    if data.len() != n {
        return Err(unavailable(format!(
            "the embedding server answered {} vectors for {n} inputs",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (i, item) in data.iter().enumerate() {
        let at = match item.get("index") {
            None | Some(Value::Null) => i,
            Some(x) => match x.as_u64() {
                Some(k) if (k as usize) < n => k as usize,
                _ => return Err(unavailable(format!("data[{i}].index {x} is not below {n}"))),
            },
        };
        let raw = item["embedding"]
            .as_array()
            .ok_or_else(|| unavailable(format!("data[{i}] has no embedding array")))?;
        let vector: Vec<f32> = raw
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32).filter(|f| f.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                unavailable(format!("data[{i}].embedding holds a value that is not a finite number"))
            })?;
        if vector.is_empty() {
            return Err(unavailable(format!("data[{i}].embedding is empty")));
        }
        if out[at].replace(vector).is_some() {
            return Err(unavailable(format!("index {at} appears twice in the embedding answer")));
        }
    }
    let out: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    if out.len() != n {
        return Err(unavailable("the embedding answer leaves an input without a vector".to_owned()));
    }
    if out.iter().any(|v| v.len() != out[0].len()) {
        return Err(unavailable("the embedding answer mixes vector dimensions".to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cut_keeps_whole_characters() {
        let long = "é".repeat(MAX_INPUT_CHARS + 5);
        assert_eq!(cut(&long).chars().count(), MAX_INPUT_CHARS);
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn bad_answers_are_model_unavailable() {
        for body in [
            "not json",
            r#"{"nodata":1}"#,
            r#"{"data":[{"embedding":[]}]}"#,
            r#"{"data":[{"embedding":["x"]}]}"#,
            r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
            r#"{"data":[{"embedding":[1]},{"embedding":[1,2]}]}"#,
            r#"{"data":[{"index":7,"embedding":[1]}]}"#,
        ] {
            let n = if body.contains("},{") { 2 } else { 1 };
            let e = parse_embeddings(body, n).unwrap_err();
            assert_eq!(e.code, Code::ModelUnavailable, "{body}: {}", e.reason);
        }
    }

    #[test]
    fn credentials_never_show() {
        let e = Embedder::new(
            "http://ada:s3cret@127.0.0.1:9/v1",
            "m",
            Some("sk-key".into()),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(e.identity(), "m@http://***@127.0.0.1:9/v1");
        let debug = format!("{e:?}");
        assert!(!debug.contains("s3cret") && !debug.contains("sk-key"), "{debug}");
        let failure = e.embed(&["x"]).unwrap_err();
        assert_eq!(failure.code, Code::ModelUnavailable);
        assert!(!failure.reason.contains("s3cret"), "{}", failure.reason);
    }

    #[test]
    fn order_without_index_is_the_answer_order() {
        let got = parse_embeddings(r#"{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}"#, 2).unwrap();
        assert_eq!(got, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
    }
}
