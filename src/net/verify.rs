//! Certificate checks as rustls's WebPKI verifier makes them, with one addition: a failure
//! carries the host and the issuer that was not trusted (`UntrustedCertificate`), so the error
//! the user reads can name them and say how to add a CA. rustls's own error
//! (`invalid peer certificate: UnknownIssuer`) names neither.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme};

/// Why a server's certificate was refused, with the names needed to fix it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the certificate of {host} {why}")]
pub struct UntrustedCertificate {
    pub host: String,
    /// The issuer of the top certificate the server sent (`CN=…, O=…`).
    pub issuer: Option<String>,
    /// What rustls found (unknown issuer, expired, other name).
    pub why: String,
    /// True when the chain ends at a CA cairn does not know: adding that CA fixes it.
    pub unknown_issuer: bool,
}

#[derive(Debug)]
pub struct NamingVerifier {
    inner: Arc<WebPkiServerVerifier>,
}

impl NamingVerifier {
    pub fn new(inner: Arc<WebPkiServerVerifier>) -> Self {
        Self { inner }
    }
}

impl ServerCertVerifier for NamingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|err| match err {
                Error::InvalidCertificate(cause) => {
                    let top = intermediates.last().unwrap_or(end_entity);
                    let unknown_issuer = matches!(cause, CertificateError::UnknownIssuer);
                    let why = describe(&cause);
                    Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
                        UntrustedCertificate {
                            host: server_name.to_str().into_owned(),
                            issuer: issuer_name(top),
                            why,
                            unknown_issuer,
                        },
                    ))))
                }
                other => other,
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

fn describe(cause: &CertificateError) -> String {
    match cause {
        CertificateError::UnknownIssuer => "is signed by a CA cairn does not trust".into(),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => "has expired".into(),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "is not valid yet (check the clock)".into()
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "is for another host name".into()
        }
        CertificateError::Revoked => "was revoked".into(),
        CertificateError::BadSignature => "has a bad signature".into(),
        other => format!("was refused ({other:?})"),
    }
}

/// The issuer of a DER certificate as `CN=…, O=…, OU=…`; `None` when it cannot be read.
/// Only the three attributes a person recognises a CA by are read.
pub fn issuer_name(cert: &[u8]) -> Option<String> {
    let (_, certificate, _) = der_item(cert)?;
    let (_, tbs, _) = der_item(certificate)?;
    let mut rest = tbs;
    // [0] version, optional.
    let (tag, _, after) = der_item(rest)?;
    if tag == 0xA0 {
        rest = after;
    }
    let (_, _serial, after) = der_item(rest)?;
    let (_, _signature, after) = der_item(after)?;
    let (tag, issuer, _) = der_item(after)?;
    if tag != 0x30 {
        return None;
    }
    let mut parts = Vec::new();
    let mut rdns = issuer;
    while !rdns.is_empty() {
        let (_, set, next) = der_item(rdns)?;
        rdns = next;
        let mut attrs = set;
        while !attrs.is_empty() {
            let (_, attr, next) = der_item(attrs)?;
            attrs = next;
            let (_, oid, value) = der_item(attr)?;
            let (value_tag, value, _) = der_item(value)?;
            let label = match oid {
                [0x55, 0x04, 0x03] => "CN",
                [0x55, 0x04, 0x0A] => "O",
                [0x55, 0x04, 0x0B] => "OU",
                _ => continue,
            };
            // UTF8String, PrintableString, IA5String, T61String: text as bytes.
            if matches!(value_tag, 0x0C | 0x13 | 0x16 | 0x14) {
                parts.push((label, String::from_utf8_lossy(value).into_owned()));
            }
        }
    }
    let order = ["CN", "O", "OU"];
    parts.sort_by_key(|(label, _)| order.iter().position(|o| o == label));
    let text: Vec<String> = parts.iter().map(|(l, v)| format!("{l}={v}")).collect();
    (!text.is_empty()).then(|| text.join(", "))
}

/// One DER item: (tag, contents, what follows).
fn der_item(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *bytes.first()?;
    let first = *bytes.get(1)?;
    let (len, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let count = usize::from(first & 0x7F);
        if count == 0 || count > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..count {
            len = (len << 8) | usize::from(*bytes.get(2 + i)?);
        }
        (len, 2 + count)
    };
    let end = header.checked_add(len)?;
    let contents = bytes.get(header..end)?;
    Some((tag, contents, bytes.get(end..)?))
}
