//! The run's network as cairn and its tools use it: the one HTTP stack, the web tools'
//! egress client, and the proxy and CA variables commands granted the network get.

use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::config::Config;
use crate::net::{Network, NetworkSettings, ProxyTarget};
use crate::process::net_env::{CA_VARS, CredentialedVar, NetworkEnv};
use crate::web::WebEnv;
use crate::web::resolve::SystemResolver;

/// The web tools' egress client: the system resolver, the one HTTP stack (its proxies, CAs
/// and connect timeout). The search key is remembered so that it is redacted wherever a
/// tool's output would show it.
pub fn web_env(config: &Config, network: &Network) -> Result<Arc<WebEnv>> {
    if let Some(search) = &config.web.search
        && let (Some(name), Some(key)) = (&search.key_env, &search.api_key)
    {
        crate::secrets::remember(name, key);
    }
    WebEnv::new(
        config.web.clone(),
        Arc::new(SystemResolver),
        Arc::new(network.clone()),
    )
    .map_err(|message| eyre!(message))
}

/// The HTTP stack of the run, from `[network]` and the environment as it was at start-up
/// (`secrets::var` still holds a proxy URL with a password that the scrubber took out).
/// A malformed proxy or an unreadable `ca_file` stops the start with the reason.
pub fn network_stack(file: &crate::net::NetworkFile) -> Result<Network> {
    let settings = NetworkSettings::from_config(file, &crate::secrets::var)
        .wrap_err("reading the network settings")?;
    Network::new(settings).wrap_err("setting up the network")
}

/// The proxy and CA variables of commands granted the network, from the stack: `[network]
/// proxy` as the four proxy variables (with `NO_PROXY` keeping loopback direct, as cairn does),
/// the environment's password-carrying proxies the scrubber took out (their credentials only
/// where `pass_env` lists the variable, see `process::net_env`), and one CA bundle file when
/// the user added CAs.
pub(super) fn command_network_env(network: &Network, config: &Config) -> Result<NetworkEnv> {
    let mut env = NetworkEnv::default();
    let mut add = |names: &[&str], target: &ProxyTarget| {
        for name in names {
            if target.has_credentials {
                env.credentialed.push(CredentialedVar {
                    name: (*name).to_string(),
                    full: target.secret_url(),
                    bare: target.shown(),
                });
            } else {
                env.plain.push(((*name).to_string(), target.secret_url()));
            }
        }
    };
    let proxies = network.proxies();
    if let Some(configured) = &proxies.configured {
        add(
            &["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"],
            configured,
        );
        let listed = config
            .network
            .no_proxy
            .clone()
            .or_else(|| crate::secrets::var("NO_PROXY"))
            .or_else(|| crate::secrets::var("no_proxy"));
        let no_proxy = match listed.filter(|l| !l.trim().is_empty()) {
            Some(list) => format!("{list},localhost,127.0.0.1,::1"),
            None => "localhost,127.0.0.1,::1".to_string(),
        };
        env.plain.push(("NO_PROXY".into(), no_proxy.clone()));
        env.plain.push(("no_proxy".into(), no_proxy));
    } else {
        // Proxies without credentials are still in the environment and pass as they are.
        for (names, target) in [
            (["HTTPS_PROXY", "https_proxy"], &proxies.https),
            (["HTTP_PROXY", "http_proxy"], &proxies.http),
            (["ALL_PROXY", "all_proxy"], &proxies.all),
        ] {
            if let Some(target) = target.as_ref().filter(|t| t.has_credentials) {
                add(&names, target);
            }
        }
    }
    if let Some(bundle) = crate::net::roots::command_bundle(network.ca_sources())
        .wrap_err("writing the CA bundle for commands")?
    {
        let path = bundle.to_string_lossy().into_owned();
        for name in CA_VARS {
            env.plain.push(((*name).to_string(), path.clone()));
        }
        env.keep = Some(Arc::new(bundle));
    }
    Ok(env)
}
