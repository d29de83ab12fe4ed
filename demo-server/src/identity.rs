//! Who is asking: the client identity a quota is keyed on.
//!
//! Taken from `X-Client-Id`, else an API-key header, else (only with an
//! explicit trust option) `X-Forwarded-For`, else the peer address. The raw
//! bytes are hashed (SHA-256, first 128 bits in hex) into the key, so an
//! identity of any length or encoding yields a fixed-size, injection-free key
//! name, and identities from different sources never collide.

use std::net::IpAddr;

use axum::http::{HeaderMap, HeaderName};
use sha2::{Digest, Sha256};

/// Where the server reads identities from.
#[derive(Debug, Clone)]
pub struct IdentityConfig {
    client_id_header: HeaderName,
    api_key_header: HeaderName,
    trust_forwarded_for: bool,
}

impl Default for IdentityConfig {
    /// `X-Client-Id` (as in the original experiment's demo), `X-Api-Key`, `X-Forwarded-For` not trusted.
    fn default() -> Self {
        Self {
            client_id_header: HeaderName::from_static("x-client-id"),
            api_key_header: HeaderName::from_static("x-api-key"),
            trust_forwarded_for: false,
        }
    }
}

impl IdentityConfig {
    /// Trust the last `X-Forwarded-For` entry, the one appended by the (single)
    /// proxy in front of the server. Only enable behind such a proxy: otherwise
    /// any client picks its own quota.
    pub fn trust_forwarded_for(mut self, trust: bool) -> Self {
        self.trust_forwarded_for = trust;
        self
    }

    /// Read the API key from this header instead of `X-Api-Key`.
    pub fn api_key_header(mut self, name: HeaderName) -> Self {
        self.api_key_header = name;
        self
    }

    /// Identify the client of a request.
    pub fn identify(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> ClientIdentity {
        if let Some(value) = headers.get(&self.client_id_header) {
            return ClientIdentity::new(Source::ClientId, value.as_bytes());
        }
        if let Some(value) = headers.get(&self.api_key_header) {
            return ClientIdentity::new(Source::ApiKey, value.as_bytes());
        }
        if self.trust_forwarded_for
            && let Some(ip) = last_forwarded_for(headers)
        {
            return ClientIdentity::new(Source::ForwardedFor, ip.to_string().as_bytes());
        }
        match peer {
            Some(ip) => ClientIdentity::new(Source::Peer, ip.to_string().as_bytes()),
            None => ClientIdentity::new(Source::Unknown, b""),
        }
    }
}

fn last_forwarded_for(headers: &HeaderMap) -> Option<IpAddr> {
    let last = headers.get_all("x-forwarded-for").iter().next_back()?;
    last.to_str().ok()?.rsplit(',').next()?.trim().parse().ok()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    ClientId,
    ApiKey,
    ForwardedFor,
    Peer,
    Unknown,
}

impl Source {
    fn tag(self) -> &'static str {
        match self {
            Source::ClientId => "client-id",
            Source::ApiKey => "api-key",
            Source::ForwardedFor => "forwarded-for",
            Source::Peer => "peer",
            Source::Unknown => "unknown",
        }
    }
}

/// A hashed client identity and a label safe to show in `/stats` and logs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientIdentity {
    hash: String,
    label: String,
}

/// Longest client id shown verbatim in `/stats`.
const MAX_LABEL: usize = 64;

impl ClientIdentity {
    fn new(source: Source, raw: &[u8]) -> Self {
        let mut digest = Sha256::new();
        // Length-prefixed source tag: ("client-id", b"x") and ("api-key", b"x") differ.
        digest.update([source.tag().len() as u8]);
        digest.update(source.tag().as_bytes());
        digest.update(raw);
        let hash: String = digest.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let label = match source {
            Source::ClientId | Source::ForwardedFor | Source::Peer if is_printable(raw) => {
                let text = String::from_utf8_lossy(raw);
                match source {
                    Source::ClientId => text.into_owned(),
                    _ => format!("{}:{text}", source.tag()),
                }
            }
            // Never echo API keys; show garbage ids by hash.
            _ => format!("{}#{}", source.tag(), &hash[..12]),
        };
        Self { hash, label }
    }

    /// 32 hex digits (128 bits of SHA-256): the `{hash tag}` of the client's keys.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The client id when it is short printable ASCII, else `source#hash-prefix`.
    pub fn label(&self) -> &str {
        &self.label
    }
}

fn is_printable(raw: &[u8]) -> bool {
    !raw.is_empty() && raw.len() <= MAX_LABEL && raw.iter().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn id_of(config: &IdentityConfig, pairs: &[(&str, &[u8])]) -> ClientIdentity {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        config.identify(&headers, Some("10.0.0.1".parse().unwrap()))
    }

    #[test]
    fn sources_in_order_and_distinct() {
        let config = IdentityConfig::default();
        let by_id = id_of(
            &config,
            &[("x-client-id", b"alice"), ("x-api-key", b"alice")],
        );
        assert_eq!(by_id.label(), "alice");
        let by_key = id_of(&config, &[("x-api-key", b"alice")]);
        assert_ne!(by_id.hash(), by_key.hash());
        assert!(
            !by_key.label().contains("alice"),
            "API keys are never shown"
        );
        let by_peer = id_of(&config, &[("x-forwarded-for", b"1.2.3.4")]);
        assert_eq!(
            by_peer.label(),
            "peer:10.0.0.1",
            "XFF ignored unless trusted"
        );
        let trusted = config.trust_forwarded_for(true);
        let by_xff = id_of(&trusted, &[("x-forwarded-for", b"6.6.6.6, 1.2.3.4")]);
        assert_eq!(by_xff.label(), "forwarded-for:1.2.3.4");
        let bad_xff = id_of(&trusted, &[("x-forwarded-for", b"not-an-ip")]);
        assert_eq!(bad_xff.label(), "peer:10.0.0.1");
    }

    #[test]
    fn garbage_ids_hash_to_fixed_size_distinct_keys() {
        let config = IdentityConfig::default();
        let long = vec![b'a'; 4096];
        let ids = [
            id_of(&config, &[("x-client-id", b"")]),
            id_of(&config, &[("x-client-id", &long)]),
            id_of(&config, &[("x-client-id", b"\xff\xfe}{:*")]),
            id_of(&config, &[("x-client-id", b"a")]),
            id_of(&config, &[("x-client-id", b"}:v1:{")]),
        ];
        for (i, a) in ids.iter().enumerate() {
            assert_eq!(a.hash().len(), 32);
            assert!(a.hash().bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(a.label().len() <= MAX_LABEL + 20);
            for b in &ids[i + 1..] {
                assert_ne!(a.hash(), b.hash());
            }
        }
    }
}
