//! The certificates cairn trusts: the bundled Mozilla roots, the system store (the bundle file
//! or directory the distribution keeps, which is where `update-ca-certificates` puts an added
//! CA), and the user's own: `SSL_CERT_FILE`, `SSL_CERT_DIR` (a `:` list of directories, hashed
//! `abcd1234.0` links or plain `.pem`/`.crt` files alike) and `[network] ca_file`. All of them
//! together: adding a CA never takes the others away (rustls-native-certs would use
//! `SSL_CERT_FILE` *instead of* the system store, so it is not used).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use super::NetError;

/// Bundle files of the common distributions (Debian/Ubuntu/Arch/Alpine, Fedora/RHEL, openSUSE,
/// and others), as Go's crypto/x509 lists them. The first one that exists is the store.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// Directories read when no bundle file exists.
const SYSTEM_DIRS: &[&str] = &["/etc/ssl/certs", "/etc/pki/tls/certs"];

/// The roots, and what the user added (for the "how to fix" text and `cairn doctor`-like output).
#[derive(Debug, Clone)]
pub struct Roots {
    pub store: RootCertStore,
    /// Problems with the user's `SSL_CERT_*` variables: the run goes on, the user is told.
    pub warnings: Vec<String>,
}

/// Where the user's CAs come from.
#[derive(Debug, Clone, Default)]
pub struct CaSources {
    /// `[network] ca_file`: an unreadable or empty one is a start-up error.
    pub ca_files: Vec<PathBuf>,
    /// `SSL_CERT_FILE`.
    pub cert_file: Option<PathBuf>,
    /// `SSL_CERT_DIR`, split at `:`.
    pub cert_dirs: Vec<PathBuf>,
    /// Whether to read the system store (tests turn it off to stay independent of the machine).
    pub system: bool,
}

impl CaSources {
    pub fn from_env(ca_files: Vec<PathBuf>, env: &dyn Fn(&str) -> Option<String>) -> CaSources {
        CaSources {
            ca_files,
            cert_file: env("SSL_CERT_FILE").map(PathBuf::from),
            cert_dirs: env("SSL_CERT_DIR")
                .map(|dirs| {
                    dirs.split(':')
                        .filter(|d| !d.is_empty())
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            system: true,
        }
    }
}

/// The system store, read once per process (it is the same for every client).
fn system_certs() -> &'static [CertificateDer<'static>] {
    static SYSTEM: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    SYSTEM.get_or_init(|| {
        if let Some(bundle) = SYSTEM_BUNDLES.iter().map(Path::new).find(|p| p.is_file()) {
            return pem_file(bundle).unwrap_or_default();
        }
        SYSTEM_DIRS
            .iter()
            .flat_map(|dir| pem_dir(Path::new(dir)).unwrap_or_default())
            .collect()
    })
}

pub fn load(sources: &CaSources) -> Result<Roots, NetError> {
    let mut store = RootCertStore::empty();
    store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if sources.system {
        // Malformed entries of the system store are skipped: the distribution's to fix.
        let _ = store.add_parsable_certificates(system_certs().iter().cloned());
    }
    let mut warnings = Vec::new();
    if let Some(file) = &sources.cert_file {
        match pem_file(file) {
            Ok(certs) if !certs.is_empty() => add_all(&mut store, certs, file, &mut warnings),
            Ok(_) => warnings.push(format!(
                "SSL_CERT_FILE={}: no PEM certificate in it; ignored",
                file.display()
            )),
            Err(err) => warnings.push(format!("SSL_CERT_FILE={}: {err}; ignored", file.display())),
        }
    }
    for dir in &sources.cert_dirs {
        match pem_dir(dir) {
            Ok(certs) => add_all(&mut store, certs, dir, &mut warnings),
            Err(err) => warnings.push(format!(
                "SSL_CERT_DIR entry {}: {err}; ignored",
                dir.display()
            )),
        }
    }
    for file in &sources.ca_files {
        let certs = pem_file(file).map_err(|err| NetError::CaFile {
            path: file.clone(),
            reason: err.to_string(),
        })?;
        if certs.is_empty() {
            return Err(NetError::CaFile {
                path: file.clone(),
                reason: "no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into(),
            });
        }
        let (_, bad) = store.add_parsable_certificates(certs);
        if bad > 0 {
            return Err(NetError::CaFile {
                path: file.clone(),
                reason: format!("{bad} certificate(s) in it could not be parsed"),
            });
        }
    }
    Ok(Roots { store, warnings })
}

/// A PEM bundle for commands that may use the network, when the user added CAs of their own:
/// the system store and the user's `SSL_CERT_FILE` and `[network] ca_file` certificates in one
/// file. One file, because OpenSSL's `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` and
/// `GIT_SSL_CAINFO` each replace the system store rather than add to it; pointing them at the
/// corporate CA alone would break every public site. Written to a fresh file of the temp
/// directory (created exclusively, random name), removed when the returned path is dropped.
/// `None`: no CA of the user's, so the commands' own defaults are right.
pub fn command_bundle(sources: &CaSources) -> std::io::Result<Option<tempfile::TempPath>> {
    if sources.ca_files.is_empty() && sources.cert_file.is_none() {
        return Ok(None);
    }
    let mut pem = String::new();
    let system = if sources.system { system_certs() } else { &[] };
    let user = sources
        .cert_file
        .iter()
        .chain(&sources.ca_files)
        .filter_map(|path| pem_file(path).ok())
        .flatten();
    for cert in system.iter().cloned().chain(user) {
        pem.push_str(&to_pem(&cert));
    }
    let mut file = tempfile::Builder::new()
        .prefix("cairn-ca-")
        .suffix(".pem")
        .tempfile()?;
    std::io::Write::write_all(&mut file, pem.as_bytes())?;
    Ok(Some(file.into_temp_path()))
}

fn to_pem(cert: &CertificateDer<'_>) -> String {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

fn add_all(
    store: &mut RootCertStore,
    certs: Vec<CertificateDer<'static>>,
    from: &Path,
    warnings: &mut Vec<String>,
) {
    let (_, bad) = store.add_parsable_certificates(certs);
    if bad > 0 {
        warnings.push(format!(
            "{}: {bad} certificate(s) could not be parsed and were skipped",
            from.display()
        ));
    }
}

/// Every certificate of a PEM file (other PEM sections, such as keys, are skipped).
fn pem_file(path: &Path) -> std::io::Result<Vec<CertificateDer<'static>>> {
    let bytes = std::fs::read(path)?;
    Ok(CertificateDer::pem_slice_iter(&bytes)
        .filter_map(Result::ok)
        .collect())
}

/// Every certificate of the PEM files of a directory: OpenSSL's hashed links (`abcd1234.0`)
/// and plain files are read alike; files without a certificate are skipped.
fn pem_dir(dir: &Path) -> std::io::Result<Vec<CertificateDer<'static>>> {
    let mut certs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        // `is_file` follows the hashed symlinks to their targets.
        if path.is_file()
            && let Ok(mut found) = pem_file(&path)
        {
            certs.append(&mut found);
        }
    }
    Ok(certs)
}
