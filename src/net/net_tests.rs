#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn the_issuer_of_a_certificate_is_read_from_its_der() {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "Corp Inspection CA");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "Example Corp");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().unwrap();
    let ca = params.self_signed(&key).unwrap();
    assert_eq!(
        verify::issuer_name(ca.der()).as_deref(),
        Some("CN=Corp Inspection CA, O=Example Corp")
    );
    assert_eq!(verify::issuer_name(b"\x30\x03\x02\x01"), None);
}

#[test]
fn network_table_merges_and_reads_one_or_many_ca_files() {
    let one: NetworkFile = toml::from_str("ca_file = \"~/corp.pem\"").unwrap();
    let many: NetworkFile =
        toml::from_str("ca_file = [\"a.pem\", \"b.pem\"]\nproxy = \"http://p:1\"").unwrap();
    let merged = one.clone().merge(many.clone());
    assert_eq!(merged.ca_file.unwrap().paths().len(), 2);
    assert_eq!(merged.proxy.as_deref(), Some("http://p:1"));
    let env = |name: &str| (name == "HOME").then(|| "/home/u".to_string());
    let settings = NetworkSettings::from_config(&one, &env).unwrap();
    assert_eq!(
        settings.ca.ca_files,
        vec![PathBuf::from("/home/u/corp.pem")]
    );
    assert_eq!(
        settings.first_byte_timeout,
        Some(DEFAULT_FIRST_BYTE_TIMEOUT)
    );
    assert_eq!(settings.local_first_byte_timeout, None);
    assert!(toml::from_str::<NetworkFile>("proxyy = \"x\"").is_err());
}

#[test]
fn loopback_servers_get_no_first_byte_timeout_by_default() {
    let network = Network::new(NetworkSettings::default()).unwrap();
    let local = Url::parse("http://127.0.0.1:8080/v1").unwrap();
    let remote = Url::parse("https://api.example.com/v1").unwrap();
    assert_eq!(network.first_byte_timeout(&local), None);
    assert_eq!(
        network.first_byte_timeout(&remote),
        Some(DEFAULT_FIRST_BYTE_TIMEOUT)
    );
}

#[test]
fn a_ca_file_that_is_not_pem_is_a_start_up_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corp.pem");
    std::fs::write(&path, "not a certificate").unwrap();
    let settings = NetworkSettings {
        ca: CaSources {
            ca_files: vec![path.clone()],
            ..CaSources::default()
        },
        ..NetworkSettings::default()
    };
    let err = Network::new(settings).unwrap_err().to_string();
    assert!(
        err.contains("corp.pem") && err.contains("no PEM certificate"),
        "{err}"
    );
    let missing = NetworkSettings {
        ca: CaSources {
            ca_files: vec![dir.path().join("gone.pem")],
            ..CaSources::default()
        },
        ..NetworkSettings::default()
    };
    assert!(
        Network::new(missing)
            .unwrap_err()
            .to_string()
            .contains("gone.pem")
    );
}
