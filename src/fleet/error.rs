//! [`FleetError`]: why a store call did not answer.

use std::fmt;

/// A store call failed: Redis refused or dropped it, or it missed its
/// deadline. Requests never fail because of it; this is what `connect`
/// returns, and what the store methods return to direct callers.
#[derive(Debug)]
pub struct FleetError {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Redis(redis::RedisError),
    Deadline,
    Reply,
}

impl FleetError {
    pub(crate) fn deadline() -> Self {
        Self {
            kind: Kind::Deadline,
        }
    }

    pub(crate) fn reply() -> Self {
        Self { kind: Kind::Reply }
    }

    /// The call missed its deadline.
    pub fn is_deadline(&self) -> bool {
        matches!(self.kind, Kind::Deadline)
    }
}

impl From<redis::RedisError> for FleetError {
    fn from(e: redis::RedisError) -> Self {
        Self {
            kind: Kind::Redis(e),
        }
    }
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Redis(e) => write!(f, "fleet store: {e}"),
            Kind::Deadline => f.write_str("fleet store: the call missed its deadline"),
            Kind::Reply => f.write_str("fleet store: unexpected script reply"),
        }
    }
}

impl std::error::Error for FleetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Redis(e) => Some(e),
            _ => None,
        }
    }
}
