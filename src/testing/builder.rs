//! Builder methods every responder shares, written once.

/// Adds the response-shape builder methods and the counters to a responder
/// type with `shape: Shape` and `counters: Counters` fields.
macro_rules! shape_methods {
    ($ty:ident) => {
        impl $ty {
            /// Add a way for rejected responses to say when to come back.
            ///
            /// Styles accumulate: `.retry_after(Seconds).retry_after(ProblemJsonMillis)`
            /// sends both `Retry-After` and a problem+json body. Default: none,
            /// so rejections are bare.
            pub fn retry_after(mut self, style: $crate::testing::RetryAfterStyle) -> Self {
                self.shape.add_hint(style);
                self
            }

            /// Drop every hint style and quota dialect: rejections become a
            /// bare status with no headers and no body.
            pub fn bare(mut self) -> Self {
                self.shape.clear();
                self
            }

            /// The status of rejected responses. Default: `429 Too Many Requests`
            /// (RFC 6585 §4); `503 Service Unavailable` is the other status a
            /// server sends with `Retry-After`.
            pub fn reject_status(mut self, status: http::StatusCode) -> Self {
                self.shape.set_reject_status(status);
                self
            }

            /// The response for admitted requests; hint and quota headers are
            /// added to it. Default: `200 OK` with an empty body.
            pub fn admitted_response(mut self, template: wiremock::ResponseTemplate) -> Self {
                self.shape.set_admitted(template);
                self
            }

            /// Requests answered so far, by every clone of this responder.
            pub fn received(&self) -> u64 {
                self.counters.received()
            }

            /// Requests admitted so far, by every clone of this responder.
            pub fn admitted(&self) -> u64 {
                self.counters.admitted()
            }

            /// Requests rejected so far, by every clone of this responder.
            pub fn rejected(&self) -> u64 {
                self.counters.rejected()
            }
        }
    };
}

/// Adds [`Dialect`](crate::testing::Dialect) selection to a responder that models a quota.
macro_rules! dialect_methods {
    ($ty:ident) => {
        impl $ty {
            /// Add a quota dialect: every response, admitted or rejected,
            /// describes the quota in it.
            ///
            /// Dialects accumulate. Default: none.
            pub fn dialect(mut self, dialect: $crate::testing::Dialect) -> Self {
                self.shape.add_dialect(dialect);
                self
            }
        }
    };
}

pub(crate) use dialect_methods;
pub(crate) use shape_methods;

/// Adds `per_second`, `per_minute` and `with_window` to a windowed
/// responder type with `fn build(limit: NonZeroU32, window: Duration)`;
/// `$per` words how `limit` relates to the window ("per", "in any").
macro_rules! window_constructors {
    ($ty:ident, $per:literal) => {
        impl $ty {
            #[doc = concat!("`limit` requests ", $per, " one second.")]
            pub fn per_second(limit: std::num::NonZeroU32) -> Self {
                Self::build(limit, std::time::Duration::from_secs(1))
            }

            #[doc = concat!("`limit` requests ", $per, " one minute.")]
            pub fn per_minute(limit: std::num::NonZeroU32) -> Self {
                Self::build(limit, std::time::Duration::from_secs(60))
            }

            #[doc = concat!("`limit` requests ", $per, " `window`; `None` when the window is zero.")]
            pub fn with_window(
                limit: std::num::NonZeroU32,
                window: std::time::Duration,
            ) -> Option<Self> {
                (!window.is_zero()).then(|| Self::build(limit, window))
            }
        }
    };
}

pub(crate) use window_constructors;
