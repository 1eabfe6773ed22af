#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

#[test]
fn missing_key_names_the_variable_and_the_config_file() {
    let err = Config::resolve(ConfigFile::default(), &env_of(&[]), "cfg.toml".into()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("DEEPSEEK_API_KEY"), "{text}");
    assert!(text.contains("cfg.toml"), "{text}");
}

#[test]
fn presets_fill_url_model_and_key() {
    let file = ConfigFile {
        provider: Some("openai".into()),
        ..Default::default()
    };
    let cfg = Config::resolve(file, &env_of(&[("OPENAI_API_KEY", "k")]), "c".into()).unwrap();
    assert_eq!(cfg.provider.base_url, "https://api.openai.com/v1");
    assert_eq!(cfg.provider.api_key.as_deref(), Some("k"));
    let ollama = ConfigFile {
        provider: Some("ollama".into()),
        ..Default::default()
    };
    let cfg = Config::resolve(ollama, &env_of(&[]), "c".into()).unwrap();
    assert_eq!(cfg.provider.api_key, None);
}

#[test]
fn custom_server_key_is_optional() {
    let file = ConfigFile {
        provider: Some("custom".into()),
        base_url: Some("http://127.0.0.1:9/v1/".into()),
        ..Default::default()
    };
    let cfg = Config::resolve(file, &env_of(&[]), "c".into()).unwrap();
    assert_eq!(cfg.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(cfg.provider.api_key, None);
}

#[test]
fn later_layers_win() {
    let file = ConfigFile {
        model: Some("a".into()),
        max_steps: Some(5),
        ..Default::default()
    };
    let env = ConfigFile::from_env(&env_of(&[("CAIRN_MODEL", "b")])).unwrap();
    let merged = file.merge(env);
    assert_eq!(merged.model.as_deref(), Some("b"));
    assert_eq!(merged.max_steps, Some(5));
}

#[test]
fn switching_provider_drops_the_old_providers_model_and_url() {
    let file = ConfigFile {
        provider: Some("openai".into()),
        model: Some("gpt-4.1".into()),
        base_url: Some("https://proxy.example/v1".into()),
        ..Default::default()
    };
    let flags = ConfigFile {
        provider: Some("deepseek".into()),
        ..Default::default()
    };
    let merged = file.clone().merge(flags);
    assert_eq!(merged.model, None);
    assert_eq!(merged.base_url, None);
    let same = file.merge(ConfigFile {
        provider: Some("openai".into()),
        ..Default::default()
    });
    assert_eq!(same.model.as_deref(), Some("gpt-4.1"));
}

#[test]
fn zero_steps_is_refused() {
    let file = ConfigFile {
        max_steps: Some(0),
        provider: Some("ollama".into()),
        ..Default::default()
    };
    let err = Config::resolve(file, &env_of(&[]), "c.toml".into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_steps"), "{err}");
}

#[test]
fn mistakes_report_line_and_key() {
    let path = Path::new("x.toml");
    let err = ConfigFile::parse("model = \"m\"\nmax_step = 3\n", path)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("x.toml") && err.contains("line 2") && err.contains("max_step"),
        "{err}"
    );
    let err = ConfigFile::parse("max_steps = \"ten\"\n", path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1") && err.contains("max_steps"), "{err}");
    let err = ConfigFile::parse("mode = \"sometimes\"\n", path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sometimes"), "{err}");
    let err = ConfigFile::parse("model = \n", path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn the_example_config_loads_and_documents_every_key() {
    let text = include_str!("../../config.example.toml");
    let file = ConfigFile::parse(text, Path::new("config.example.toml")).unwrap();
    assert_eq!(file.provider.as_deref(), Some("deepseek"));
    assert!(file.bash.is_some() && file.sandbox.is_some() && file.permissions.is_some());
    for key in [
        "provider",
        "model",
        "base_url",
        "api_key_env",
        "mode",
        "max_steps",
        "context_window",
        "compact_threshold",
        "input",
        "cached_input",
        "output",
        "max_retries",
        "max_tokens",
        "temperature",
        "request_idle_timeout_secs",
        "request_timeout_secs",
        "max_reply_bytes",
        "max_tool_call_bytes",
        "api",
        "reasoning_effort",
        "thinking_budget",
        "cache_ttl",
        "pass_env",
        "enabled",
        "network",
        "writable",
        "deny_read",
        "allow_unix_sockets",
        "max_processes",
        "max_memory_mb",
        "read_only_max_processes",
        "read_only_max_memory_mb",
        "allow",
        "ask",
        "deny",
        "allow_private",
        "max_bytes",
        "timeout_secs",
        "backend",
        "url",
    ] {
        assert!(
            text.contains(&format!("{key} =")),
            "config.example.toml does not document `{key}`"
        );
    }
    assert!(text.contains("[web]") && text.contains("[web.search]"));
    for key in [
        "max_stop_blocks",
        "matcher",
        "command",
        "timeout_secs",
        "on_error",
    ] {
        assert!(
            text.contains(&format!("# {key} =")),
            "[hooks] does not document `{key}`"
        );
    }
    let cfg = Config::resolve(file, &env_of(&[("DEEPSEEK_API_KEY", "k")]), "c".into()).unwrap();
    assert_eq!(cfg.mode, Mode::AutoEdit);
}

#[test]
fn the_example_config_lists_every_built_in_secret_store() {
    let text = include_str!("../../config.example.toml");
    for store in crate::secret_stores::DEFAULT_STORES {
        let own = store.ends_with("/cairn");
        assert!(
            own || text.contains(&format!("~/{store},")) || text.contains(&format!("~/{store}\n")),
            "config.example.toml does not name the built-in store {store}"
        );
    }
}

#[test]
fn deny_read_entries_of_every_layer_add_up() {
    let user = ConfigFile::parse("[sandbox]\ndeny_read = [\"~/.a\"]\n", Path::new("u")).unwrap();
    let project =
        ConfigFile::parse("[sandbox]\ndeny_read = [\"/etc/b\"]\n", Path::new("p")).unwrap();
    let merged = user.merge(project);
    assert_eq!(
        merged.sandbox.and_then(|s| s.deny_read),
        Some(vec!["~/.a".to_string(), "/etc/b".to_string()])
    );
}

#[test]
fn bad_mode_in_env_is_reported() {
    let err = ConfigFile::from_env(&env_of(&[("CAIRN_MODE", "yolo")])).unwrap_err();
    assert!(err.to_string().contains("CAIRN_MODE"));
}

#[test]
fn the_anthropic_preset_speaks_messages_and_api_chooses_the_format() {
    let file = ConfigFile {
        provider: Some("anthropic".into()),
        ..Default::default()
    };
    let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant")]);
    let cfg = Config::resolve(file.clone(), &env, "c".into()).unwrap();
    assert_eq!(cfg.provider.base_url, "https://api.anthropic.com/v1");
    assert_eq!(cfg.provider.wire.api, crate::llm::Api::Anthropic);
    assert_eq!(cfg.provider.api_key.as_deref(), Some("sk-ant"));
    let missing = Config::resolve(file, &env_of(&[]), "c".into()).unwrap_err();
    assert!(
        missing.to_string().contains("ANTHROPIC_API_KEY"),
        "{missing}"
    );
    // Other presets speak chat unless `api` (the file, CAIRN_API, --api) says otherwise.
    let openai = ConfigFile {
        provider: Some("openai".into()),
        api: Some(crate::llm::Api::Responses),
        reasoning_effort: Some("high".into()),
        thinking_budget: Some(4000),
        cache_ttl: Some(crate::llm::CacheTtl::OneHour),
        ..Default::default()
    };
    let cfg = Config::resolve(openai, &env_of(&[("OPENAI_API_KEY", "k")]), "c".into()).unwrap();
    assert_eq!(cfg.provider.wire.api, crate::llm::Api::Responses);
    assert_eq!(cfg.provider.wire.reasoning_effort.as_deref(), Some("high"));
    assert_eq!(cfg.provider.wire.thinking_budget, Some(4000));
    assert_eq!(cfg.provider.wire.cache_ttl, crate::llm::CacheTtl::OneHour);
    let layer = ConfigFile::from_env(&env_of(&[("CAIRN_API", "anthropic")])).unwrap();
    assert_eq!(layer.api, Some(crate::llm::Api::Anthropic));
    assert!(ConfigFile::from_env(&env_of(&[("CAIRN_API", "claude")])).is_err());
    let bad = ConfigFile::parse("api = \"claude\"\n", Path::new("c.toml")).unwrap_err();
    assert!(
        bad.to_string()
            .contains("expected chat, anthropic or responses"),
        "{bad}"
    );
    // A layer that switches provider does not inherit the old one's format.
    let merged = ConfigFile {
        provider: Some("openai".into()),
        api: Some(crate::llm::Api::Responses),
        ..Default::default()
    }
    .merge(ConfigFile {
        provider: Some("anthropic".into()),
        ..Default::default()
    });
    assert_eq!(merged.api, None);
}
