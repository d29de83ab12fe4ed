//! Request counts every responder keeps, shared by its clones.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many requests a responder saw, admitted and rejected.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counters {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    received: AtomicU64,
    admitted: AtomicU64,
    rejected: AtomicU64,
}

impl Counters {
    pub(crate) fn record(&self, admitted: bool) {
        self.inner.received.fetch_add(1, Ordering::Relaxed);
        let counter = if admitted {
            &self.inner.admitted
        } else {
            &self.inner.rejected
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn received(&self) -> u64 {
        self.inner.received.load(Ordering::Relaxed)
    }

    pub(crate) fn admitted(&self) -> u64 {
        self.inner.admitted.load(Ordering::Relaxed)
    }

    pub(crate) fn rejected(&self) -> u64 {
        self.inner.rejected.load(Ordering::Relaxed)
    }
}
