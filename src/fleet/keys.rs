//! Key naming: every key of one scope carries the same hash tag, so a scope
//! lives in one Redis Cluster slot and one script can touch all of it.
//!
//! `{prefix}:{<32 hex of SHA-256(scope)>}:state` (hash) and `…:members`
//! (sorted set). Only the part in braces is hashed by Redis Cluster; the
//! digest keeps any scope text (long, binary, with braces) out of the key
//! syntax.

use sha2::{Digest, Sha256};

/// The two keys of one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopeKeys {
    pub(crate) state: String,
    pub(crate) members: String,
}

impl ScopeKeys {
    pub(crate) fn new(prefix: &str, scope: &str) -> Self {
        let digest = Sha256::digest(scope.as_bytes());
        let mut tag = String::with_capacity(32);
        for byte in &digest[..16] {
            tag.push_str(&format!("{byte:02x}"));
        }
        Self {
            state: format!("{prefix}:{{{tag}}}:state"),
            members: format!("{prefix}:{{{tag}}}:members"),
        }
    }

    /// The hash tag both keys share (what Redis Cluster hashes).
    #[cfg(test)]
    pub(crate) fn tag(&self) -> &str {
        let open = self.state.find('{').map_or(0, |i| i + 1);
        let close = self.state.find('}').unwrap_or(open);
        &self.state[open..close]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_keys_share_one_tag_and_scopes_differ() {
        let a = ScopeKeys::new("courteous:v1", "http://127.0.0.1:8080");
        let b = ScopeKeys::new("courteous:v1", "http://127.0.0.1:8081");
        assert!(a.members.contains(&format!("{{{}}}", a.tag())));
        assert_eq!(a.tag().len(), 32);
        assert_ne!(a.tag(), b.tag());
        assert!(a.state.starts_with("courteous:v1:{"));
    }

    #[test]
    fn braces_in_a_scope_stay_out_of_the_key_syntax() {
        let k = ScopeKeys::new("p", "{evil}}{");
        assert_eq!(k.state.matches('{').count(), 1);
        assert!(k.tag().chars().all(|c| c.is_ascii_hexdigit()));
    }
}
