#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn the_bearer_challenge_is_read_with_quoted_and_bare_parameters() {
    let header = r#"Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#;
    assert_eq!(
        parse_challenge(header),
        Some(BearerChallenge {
            resource_metadata: Some(
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp".into()
            ),
            scope: Some("files:read files:write".into()),
        })
    );
    let bare = "Basic realm=\"x\", Bearer resource_metadata=https://a.example/m";
    assert_eq!(
        parse_challenge(bare).and_then(|c| c.resource_metadata),
        Some("https://a.example/m".into())
    );
    assert_eq!(parse_challenge("Basic realm=\"x\""), None);
    assert_eq!(parse_challenge("Bearer"), Some(BearerChallenge::default()));
}

#[test]
fn the_well_known_places_follow_the_spec_order() {
    let server = Url::parse("https://mcp.example.com/public/mcp?x=1").unwrap();
    let resource: Vec<String> = resource_metadata_urls(&server)
        .iter()
        .map(Url::to_string)
        .collect();
    assert_eq!(
        resource,
        [
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
        ]
    );
    let issuer = Url::parse("https://auth.example.com/tenant1").unwrap();
    let auth: Vec<String> = auth_server_metadata_urls(&issuer)
        .iter()
        .map(Url::to_string)
        .collect();
    assert_eq!(
        auth,
        [
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
    let root = Url::parse("https://auth.example.com").unwrap();
    assert_eq!(auth_server_metadata_urls(&root).len(), 2);
}

#[test]
fn only_https_or_loopback_endpoints_are_accepted() {
    assert!(super::super::secure_url("https://a.example/token", "t").is_ok());
    assert!(super::super::secure_url("http://127.0.0.1:8080/token", "t").is_ok());
    assert!(super::super::secure_url("http://localhost/token", "t").is_ok());
    assert!(matches!(
        super::super::secure_url("http://a.example/token", "t"),
        Err(OAuthError::Insecure(_))
    ));
}
