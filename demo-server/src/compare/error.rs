//! Why the comparison could not run.

use std::fmt;

/// The comparison failed: a client process, a replica or the store.
#[derive(Debug)]
pub struct CompareError {
    message: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Client,
    Setup,
}

impl CompareError {
    pub(crate) fn client(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: Kind::Client,
        }
    }
    pub(crate) fn setup(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: Kind::Setup,
        }
    }

    /// An example client failed, timed out or printed no report.
    pub fn is_client(&self) -> bool {
        self.kind == Kind::Client
    }
    /// A replica, the proxy, the store or the output file failed.
    pub fn is_setup(&self) -> bool {
        self.kind == Kind::Setup
    }
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompareError {}

impl From<crate::StoreError> for CompareError {
    fn from(e: crate::StoreError) -> Self {
        Self::setup(format!("store: {e}"))
    }
}

impl From<std::io::Error> for CompareError {
    fn from(e: std::io::Error) -> Self {
        Self::setup(e.to_string())
    }
}

impl From<crate::ConfigError> for CompareError {
    fn from(e: crate::ConfigError) -> Self {
        Self::setup(e.to_string())
    }
}
