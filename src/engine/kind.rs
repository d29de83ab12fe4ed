//! What the engine takes a scope's quota for: one name per row of the
//! pacer's table (`pacer/mod.rs`), read from the evidence it holds now.

/// The kind of quota the engine paces a scope by, as far as its evidence
/// goes (read with [`ScopeStats::quota_kind`](crate::ScopeStats::quota_kind)).
///
/// The kind is read anew from the models' state every time (a concurrency
/// limit refuted by a lone refused send is no longer one), though some of
/// that state is still held for good once seen (a fixed window or a
/// sliding log the pacer recognised stays one). Quotas in other units
/// (tokens) and a declared quota are paced beside it and are not a kind.
///
/// | kind | the evidence | paced by |
/// |---|---|---|
/// | [`Unknown`](Self::Unknown) | nothing yet, or only a refusal without a hint | the server's hints and backoff |
/// | [`Bucket`](Self::Bucket) | a stated policy, refills seen, or a rate learned between refusals | a mirror refilled at the rate |
/// | [`FixedWindow`](Self::FixedWindow) | no refill while we alone drew the quota down; a burst back whole after a refusal | the window spent, then its end |
/// | [`SlidingLog`](Self::SlidingLog) | a window whose next one opens short by our own sends | at most `limit` of our sends in any window |
/// | [`SlidingCounter`](Self::SlidingCounter) | a reset beyond one window; a burst that never comes back whole | `limit − 1` per window, or one unit at a time |
/// | [`LeakyBucket`](Self::LeakyBucket) | `used/size` readings whose fall measures a drain (a meter of one unit: the sends it admitted, and its refusals' waits) | the drain measured |
/// | [`Concurrency`](Self::Concurrency) | refusals outlasted by our sends served beside them | at most K of ours in flight |
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QuotaKind {
    /// Nothing learned yet.
    #[default]
    Unknown,
    /// Units come back continuously, at a rate.
    Bucket,
    /// Units come back all at once, at a window's end.
    FixedWindow,
    /// Each unit comes back a window after it was spent.
    SlidingLog,
    /// Two fixed windows, the previous one weighted by its overlap.
    SlidingCounter,
    /// A meter that drains at a rate (`used/size`).
    LeakyBucket,
    /// At most so many requests in service at once.
    Concurrency,
}

impl QuotaKind {
    /// A short name, as the pacer's table and the sweep's report use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Bucket => "bucket",
            Self::FixedWindow => "fixed window",
            Self::SlidingLog => "sliding log",
            Self::SlidingCounter => "sliding window counter",
            Self::LeakyBucket => "leaky bucket",
            Self::Concurrency => "concurrency limit",
        }
    }
}
