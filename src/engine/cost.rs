//! [`Cost`]: what one request spends of a quota counted in another unit
//! than requests.

use crate::signal::QuotaUnit;

/// What one request spends of a quota counted in `unit` (model tokens,
/// query points, bytes), declared before it is sent.
///
/// A scope paces every quota its server announces: requests by the pacer,
/// the others (OpenAI's `x-ratelimit-*-tokens`, Anthropic's
/// `anthropic-ratelimit-output-tokens-*`, …) by their cost. A request that
/// declares none is taken to cost what the readings showed earlier
/// requests cost (the quota's fall per request); a declared cost replaces
/// that estimate for this request, and is best an upper bound (a request's
/// `max_tokens` plus its prompt). Each reading re-syncs the mirror to the
/// server's `remaining`.
///
/// An answer that states what its request spent settles the cost: with
/// [`SignalParser::read_usage`](crate::signal::SignalParser::read_usage)
/// on (the [`OpenAi`](crate::preset::OpenAi) and
/// [`Anthropic`](crate::preset::Anthropic) presets turn it on), the
/// `usage` of a whole JSON answer replaces what the request reserved, so a
/// token quota stays counted right between readings (a response without
/// the token headers), and what undeclared requests cost is learned from
/// exact counts ([`Usage`](crate::signal::Usage) says which count settles
/// which unit). A stream's usage is the caller's to read.
///
/// ```
/// use courteous::signal::SignalParser;
///
/// // Any client: read `usage` from success bodies.
/// let client = courteous::Client::builder()
///     .parser(SignalParser::new().read_usage(true))
///     .build();
/// # let _ = client;
/// ```
///
/// Declare it with [`RequestOptions::cost`](crate::RequestOptions::cost):
///
/// ```
/// use courteous::RequestOptions;
/// use courteous::engine::Cost;
///
/// // A chat completion that may use up to 1,200 tokens.
/// let options = RequestOptions::new().cost(Cost::tokens(1_200));
/// assert_eq!(options.get_costs(), &[Cost::tokens(1_200)]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cost {
    unit: QuotaUnit,
    amount: u64,
}

impl Cost {
    /// `amount` units of `unit`. A cost in requests is ignored (every
    /// request costs one).
    pub fn new(unit: QuotaUnit, amount: u64) -> Self {
        Self { unit, amount }
    }

    /// `amount` model tokens (input and output together: OpenAI's
    /// `tokens`, Anthropic's `tokens`).
    pub fn tokens(amount: u64) -> Self {
        Self::new(QuotaUnit::Tokens, amount)
    }

    /// The unit counted.
    pub fn unit(&self) -> QuotaUnit {
        self.unit
    }

    /// How many units.
    pub fn amount(&self) -> u64 {
        self.amount
    }
}
