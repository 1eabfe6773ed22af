//! The provider's models, for the `/model` picker: `GET {base_url}/models` in the OpenAI
//! shape (`{"data": [{"id": …}, …]}`), which OpenAI, DeepSeek, OpenRouter, vLLM, llama.cpp,
//! LM Studio and Ollama's OpenAI API all answer, and Anthropic's too (its list has the same
//! `data` of `id`s; the key goes in `x-api-key` with `anthropic-version`, see
//! `formats::auth_headers`). One short request, no retries: the picker
//! takes a typed name instead when this fails, and says why.

use std::time::Duration;

use serde_json::Value;

/// Longest the listing may take before the picker says it is unavailable.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// Most names kept of one listing (OpenRouter lists hundreds; the picker filters them).
const MAX_MODELS: usize = 2_000;

/// Why the provider's list could not be had, in words for the picker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("{url} did not answer within {secs}s")]
    Timeout { url: String, secs: u64 },
    #[error("could not reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("{url} did not answer a model list (expected {{\"data\": [{{\"id\": …}}]}})")]
    NotAList { url: String },
    #[error("{url} listed no models")]
    Empty { url: String },
}

/// The model ids `{base_url}/models` lists, in the provider's order.
pub async fn list_models(
    http: &reqwest::Client,
    base_url: &str,
    auth: &[(&'static str, String)],
    timeout: Duration,
) -> Result<Vec<String>, ListError> {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let mut request = http.get(&url).timeout(timeout);
    for (name, value) in auth {
        request = request.header(*name, value);
    }
    let response = request
        .send()
        .await
        .map_err(|err| failed(&url, &err, timeout))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ListError::Status {
            url,
            status: status.as_u16(),
        });
    }
    let body = response
        .bytes()
        .await
        .map_err(|err| failed(&url, &err, timeout))?;
    let ids = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|body| ids_in(&body))
        .ok_or_else(|| ListError::NotAList { url: url.clone() })?;
    if ids.is_empty() {
        return Err(ListError::Empty { url });
    }
    Ok(ids)
}

fn failed(url: &str, err: &reqwest::Error, timeout: Duration) -> ListError {
    if err.is_timeout() {
        return ListError::Timeout {
            url: url.to_string(),
            secs: timeout.as_secs().max(1),
        };
    }
    // The innermost cause says what happened (refused, no such host); reqwest's own text
    // around it does not.
    let mut reason = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        reason = cause.to_string();
        source = cause.source();
    }
    ListError::Unreachable {
        url: url.to_string(),
        reason,
    }
}

/// The ids of an OpenAI-shaped listing, duplicates and blanks dropped; `None` when `body` is
/// not one.
pub fn ids_in(body: &Value) -> Option<Vec<String>> {
    let mut ids: Vec<String> = Vec::new();
    for entry in body["data"].as_array()? {
        let Some(id) = entry["id"].as_str().map(str::trim) else {
            continue;
        };
        if !id.is_empty() && !ids.iter().any(|seen| seen == id) && ids.len() < MAX_MODELS {
            ids.push(id.to_string());
        }
    }
    Some(ids)
}

/// What the picker offers: the configured model first, then the current one, then the
/// listed ones in the provider's order, each once.
pub fn offered(configured: &str, current: &str, listed: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in [configured, current]
        .into_iter()
        .chain(listed.iter().map(String::as_str))
    {
        if !name.is_empty() && !out.iter().any(|seen| seen == name) {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_keep_the_providers_order_without_duplicates_or_blanks() {
        let body = json!({"object": "list", "data": [
            {"id": "b"}, {"id": "a"}, {"id": "b"}, {"id": " "}, {"object": "model"}, {"id": 3}
        ]});
        assert_eq!(ids_in(&body), Some(vec!["b".to_string(), "a".to_string()]));
        assert_eq!(ids_in(&json!({"models": []})), None);
        assert_eq!(ids_in(&json!([1, 2])), None);
    }

    #[test]
    fn the_configured_model_comes_first_then_the_current_one() {
        let listed = vec!["x".to_string(), "cfg".to_string(), "y".to_string()];
        assert_eq!(offered("cfg", "now", &listed), ["cfg", "now", "x", "y"]);
        assert_eq!(offered("", "now", &[]), ["now"]);
        assert_eq!(offered("same", "same", &listed), ["same", "x", "cfg", "y"]);
    }
}
