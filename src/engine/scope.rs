//! What shares one rate limit: a [`Scope`].

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

/// The key under which a rate limit's state is shared.
///
/// Every request with the same scope shares one pause, one learned quota and
/// one set of counters, whichever clone of the client or concurrent task sent
/// it. The adapters default to the request's origin as its URL spells it,
/// `scheme://host[:port]` (a default port is omitted, as URLs omit it); key
/// it otherwise when the server limits per key, e.g. per API key:
///
/// ```
/// use courteous::{Client, Scope};
///
/// let client = Client::builder()
///     .scope_by(|req: &reqwest::Request| {
///         let key = req.headers().get("x-api-key").and_then(|v| v.to_str().ok());
///         Scope::new(format!("{}|{}", req.url().host_str().unwrap_or(""), key.unwrap_or("")))
///     })
///     .build();
/// # let _ = client;
/// assert_eq!(Scope::new("https://api.example.com").as_str(), "https://api.example.com");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(Arc<str>);

impl Scope {
    /// A scope named by any string.
    pub fn new(key: impl Into<Arc<str>>) -> Self {
        Self(key.into())
    }

    /// The scope's key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for Scope {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Scope {
    fn from(key: &str) -> Self {
        Self::new(key)
    }
}

impl From<String> for Scope {
    fn from(key: String) -> Self {
        Self::new(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_reads_back_its_key_in_every_form() {
        let scope = Scope::from("api.example.com");
        assert_eq!(scope.as_str(), "api.example.com");
        assert_eq!(scope.to_string(), "api.example.com");
        assert_eq!(format!("{scope:?}"), "\"api.example.com\"");
        let key: &str = scope.borrow();
        assert_eq!(key, "api.example.com");
        assert_eq!(Scope::from(String::from("a")), Scope::new("a"));
    }
}
