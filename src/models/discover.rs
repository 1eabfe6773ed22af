//! Asks the provider how large the model's context window is, where it can tell: OpenRouter's
//! `/models` (`context_length`), Ollama's `/api/show` (`num_ctx` when the model is configured
//! with one, else `model_info.*.context_length`), vLLM's `/v1/models` (`max_model_len`) and
//! similar fields of other local servers. Asked once, with a short timeout, off the start-up
//! path; the answer (also "it does not say") is cached in a small JSON file in the data
//! directory so later starts do not ask again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A known answer is kept this long; "unknown" for a day (the server may be fixed meanwhile).
const KNOWN_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
const UNKNOWN_TTL: Duration = Duration::from_secs(24 * 3600);

/// Where and what to ask.
#[derive(Clone)]
pub struct WindowProbe {
    /// Preset name: `openrouter`, `ollama`, `custom`, … (others are not asked).
    pub provider: String,
    /// The API root, `/v1` included.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// The cache file.
    pub cache: PathBuf,
    pub timeout: Duration,
    /// A client of the run's HTTP stack (its CAs and proxies; loopback direct). `None`: a
    /// direct connection.
    pub http: Option<reqwest::Client>,
}

impl std::fmt::Debug for WindowProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowProbe")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    #[serde(default)]
    windows: BTreeMap<String, CachedWindow>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct CachedWindow {
    window: Option<u64>,
    /// Seconds since the Unix epoch.
    at: u64,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl WindowProbe {
    fn key(&self) -> String {
        format!("{} {} {}", self.provider, self.base_url, self.model)
    }

    /// Whether this provider can say at all (DeepSeek's and OpenAI's `/models` do not).
    pub fn can_ask(&self) -> bool {
        matches!(self.provider.as_str(), "openrouter" | "ollama" | "custom")
    }

    /// The cached answer, when there is a fresh one: `Some(None)` means "asked, no answer".
    pub fn cached(&self) -> Option<Option<u64>> {
        let entry = *read_cache(&self.cache).windows.get(&self.key())?;
        let ttl = if entry.window.is_some() {
            KNOWN_TTL
        } else {
            UNKNOWN_TTL
        };
        (now_secs().saturating_sub(entry.at) < ttl.as_secs()).then_some(entry.window)
    }

    /// The window, from the cache or by asking once. A failure to ask is cached as unknown.
    pub async fn window(&self) -> Option<u64> {
        if !self.can_ask() {
            return None;
        }
        if let Some(known) = self.cached() {
            return known;
        }
        let window = tokio::time::timeout(self.timeout, self.ask())
            .await
            .ok()
            .flatten();
        self.store(window);
        window
    }

    fn store(&self, window: Option<u64>) {
        let mut cache = read_cache(&self.cache);
        cache.windows.insert(
            self.key(),
            CachedWindow {
                window,
                at: now_secs(),
            },
        );
        if let Err(err) = write_cache(&self.cache, &cache) {
            tracing::debug!("could not cache the context window: {err}");
        }
    }

    async fn ask(&self) -> Option<u64> {
        let client = match &self.http {
            Some(client) => client.clone(),
            // Never reqwest's own reading of the proxy variables: a server on loopback is
            // reached directly, whatever HTTP_PROXY says.
            None => reqwest::Client::builder().no_proxy().build().ok()?,
        };
        let root = self.base_url.trim_end_matches('/');
        match self.provider.as_str() {
            "ollama" => self.ollama_show(&client, root).await,
            _ => match self.models_list(&client, root).await {
                Some(window) => Some(window),
                // A custom URL may be an Ollama server spoken to through its OpenAI API.
                None if self.provider == "custom" => self.ollama_show(&client, root).await,
                None => None,
            },
        }
    }

    async fn models_list(&self, client: &reqwest::Client, root: &str) -> Option<u64> {
        // Each request has its own deadline too, so the lookup never outlives `timeout`
        // whoever awaits it (and a server that sends headers and then nothing is left).
        let mut request = client.get(format!("{root}/models")).timeout(self.timeout);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let bytes = request.send().await.ok()?.bytes().await.ok()?;
        window_in_models(&serde_json::from_slice(&bytes).ok()?, &self.model)
    }

    async fn ollama_show(&self, client: &reqwest::Client, root: &str) -> Option<u64> {
        let api = root.strip_suffix("/v1").unwrap_or(root);
        let request = serde_json::json!({"model": self.model, "name": self.model});
        let bytes = client
            .post(format!("{api}/api/show"))
            .timeout(self.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(request.to_string())
            .send()
            .await
            .ok()?
            .bytes()
            .await
            .ok()?;
        window_in_show(&serde_json::from_slice(&bytes).ok()?)
    }
}

/// The window of `model` in a `/models` listing (OpenRouter, vLLM, llama.cpp, LM Studio).
pub fn window_in_models(body: &Value, model: &str) -> Option<u64> {
    let entry = body["data"]
        .as_array()?
        .iter()
        .find(|m| m["id"].as_str() == Some(model))?;
    [
        &entry["context_length"],
        &entry["max_model_len"],
        &entry["context_window"],
        &entry["max_context_length"],
        &entry["top_provider"]["context_length"],
        &entry["meta"]["n_ctx_train"],
    ]
    .into_iter()
    .find_map(Value::as_u64)
    .filter(|&w| w > 0)
}

/// The window in Ollama's `/api/show` answer: the `num_ctx` the model runs with when its
/// Modelfile sets one (that is what the server enforces), else the trained length.
pub fn window_in_show(body: &Value) -> Option<u64> {
    let configured = body["parameters"].as_str().and_then(|params| {
        params.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    configured
        .or_else(|| {
            body["model_info"]
                .as_object()?
                .iter()
                .find_map(|(key, value)| {
                    key.ends_with(".context_length")
                        .then(|| value.as_u64())
                        .flatten()
                })
        })
        .filter(|&w| w > 0)
}

fn read_cache(path: &Path) -> CacheFile {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Written to a temporary file and renamed, so two cairns starting at once never leave half a file.
fn write_cache(path: &Path, cache: &CacheFile) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(cache).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn listings_of_each_server_kind_give_the_window() {
        let openrouter = json!({"data": [
            {"id": "other/x", "context_length": 8192},
            {"id": "deepseek/deepseek-chat", "context_length": 163_840, "top_provider": {"context_length": 64_000}},
        ]});
        assert_eq!(
            window_in_models(&openrouter, "deepseek/deepseek-chat"),
            Some(163_840)
        );
        let vllm =
            json!({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32_768}]});
        assert_eq!(window_in_models(&vllm, "Qwen/Qwen3-8B"), Some(32_768));
        let llamacpp = json!({"data": [{"id": "m.gguf", "meta": {"n_ctx_train": 4096}}]});
        assert_eq!(window_in_models(&llamacpp, "m.gguf"), Some(4096));
        assert_eq!(window_in_models(&vllm, "not-there"), None);
        assert_eq!(window_in_models(&json!({"data": "x"}), "a"), None);
    }

    #[test]
    fn ollama_prefers_the_configured_num_ctx() {
        let show = json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx 16384",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32_768},
        });
        assert_eq!(window_in_show(&show), Some(16_384));
        let plain = json!({"model_info": {"llama.context_length": 131_072}});
        assert_eq!(window_in_show(&plain), Some(131_072));
        assert_eq!(window_in_show(&json!({})), None);
    }

    /// A one-route HTTP server on 127.0.0.1: answers every request with `body`, counting them.
    async fn serve(body: String) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        (url, hits)
    }

    #[tokio::test]
    async fn a_vllm_server_is_asked_once_and_its_answer_cached() {
        let (url, hits) = serve(
            json!({"object": "list", "data": [{"id": "qwen", "max_model_len": 24_576}]})
                .to_string(),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let probe = WindowProbe {
            provider: "custom".into(),
            base_url: url,
            api_key: None,
            model: "qwen".into(),
            cache: dir.path().join("models.json"),
            timeout: Duration::from_secs(5),
            http: None,
        };
        assert_eq!(probe.window().await, Some(24_576));
        assert_eq!(probe.window().await, Some(24_576));
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn the_answer_is_cached_and_a_dead_server_costs_one_short_wait() {
        let dir = tempfile::tempdir().unwrap();
        // Nothing listens on port 9 of localhost: the probe fails fast, and says so once.
        let probe = WindowProbe {
            provider: "custom".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: None,
            model: "m".into(),
            cache: dir.path().join("models.json"),
            timeout: Duration::from_millis(500),
            http: None,
        };
        assert_eq!(probe.window().await, None);
        assert_eq!(probe.cached(), Some(None));
        probe.store(Some(4096));
        assert_eq!(probe.window().await, Some(4096));
        let deepseek = WindowProbe {
            provider: "deepseek".into(),
            ..probe.clone()
        };
        assert!(!deepseek.can_ask());
        assert_eq!(deepseek.window().await, None);
    }
}
