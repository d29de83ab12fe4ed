//! The error of a failed rate-limit check.

use std::fmt;

/// A store could not answer a check (Redis down, timed out, bad reply).
///
/// Opaque; ask it with the predicates.
#[derive(Debug)]
pub struct StoreError {
    kind: Kind,
    source: Option<redis::RedisError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Redis,
    Timeout,
    Overloaded,
    BadReply,
}

impl StoreError {
    pub(crate) fn timeout() -> Self {
        Self {
            kind: Kind::Timeout,
            source: None,
        }
    }
    pub(crate) fn overloaded() -> Self {
        Self {
            kind: Kind::Overloaded,
            source: None,
        }
    }
    pub(crate) fn bad_reply() -> Self {
        Self {
            kind: Kind::BadReply,
            source: None,
        }
    }

    /// The check missed its deadline.
    pub fn is_timeout(&self) -> bool {
        self.kind == Kind::Timeout
    }
    /// Too many checks were already in flight.
    pub fn is_overloaded(&self) -> bool {
        self.kind == Kind::Overloaded
    }
    /// Redis answered with an error or could not be reached.
    pub fn is_redis(&self) -> bool {
        self.kind == Kind::Redis
    }
    /// Redis answered something the server did not expect.
    pub fn is_bad_reply(&self) -> bool {
        self.kind == Kind::BadReply
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(error: redis::RedisError) -> Self {
        Self {
            kind: Kind::Redis,
            source: Some(error),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Redis => f.write_str("redis error")?,
            Kind::Timeout => f.write_str("rate-limit check missed its deadline")?,
            Kind::Overloaded => f.write_str("too many rate-limit checks in flight")?,
            Kind::BadReply => f.write_str("unexpected reply from redis")?,
        }
        if let Some(source) = &self.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}
