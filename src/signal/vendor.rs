//! Quota headers only one API sends: OpenAI's (and Azure OpenAI's)
//! `x-ratelimit-*-{requests,tokens}`, Anthropic's `anthropic-ratelimit-*`,
//! Shopify's `X-Shopify-Shop-Api-Call-Limit` and Azure Resource Manager's
//! `x-ms-ratelimit-remaining-*`. Each is recognised without a preset.
//!
//! - OpenAI: `limit` and `remaining` counts, `reset` a Go duration (`6m0s`,
//!   `250ms`, `1m30.5s`) or plain seconds; one quota named `requests`
//!   (unit requests), one named `tokens` (unit tokens).
//! - Anthropic: `limit` and `remaining` counts, `reset` an RFC 3339
//!   timestamp in UTC measured against `Date`; quotas named `requests`,
//!   `tokens`, `input-tokens`, `output-tokens`, each in its unit.
//! - Shopify: `used/size` of a leaky bucket that drains two calls a second
//!   on the standard plans (Shopify's REST rate-limit documentation; Plus
//!   drains 20): limit the size, remaining `size - used`, the window the
//!   time to drain a full bucket, the reset the time to drain this one.
//!   Both are assumed, not stated: the engine's pacer takes the drain as a
//!   prior and follows the one the readings measure (`engine/drain.rs`).
//! - Azure Resource Manager: what is left of the subscription's `reads`,
//!   `writes` and `deletes` (quotas named `subscription-reads`, …), and of
//!   each resource provider policy in `x-ms-ratelimit-remaining-resource`
//!   (`Microsoft.Compute/GetVMScaleSet3Min;197,…`, one quota per policy).
//!
//! Duplicated lines keep the polite reading, malformed values are ignored.

use std::time::Duration;

use super::fields::{Clock, Field, Fields};
use super::numbers::{parse_count, parse_go_duration, parse_integer, parse_rfc3339, until};
use super::quota::{Quota, QuotaSource, QuotaUnit};

/// One named quota's three fields.
struct Named {
    name: &'static str,
    unit: QuotaUnit,
    limit: Field,
    remaining: Field,
    reset: Field,
}

const OPENAI: [Named; 2] = [
    Named {
        name: "requests",
        unit: QuotaUnit::Requests,
        limit: Field::XRateLimitLimitRequests,
        remaining: Field::XRateLimitRemainingRequests,
        reset: Field::XRateLimitResetRequests,
    },
    Named {
        name: "tokens",
        unit: QuotaUnit::Tokens,
        limit: Field::XRateLimitLimitTokens,
        remaining: Field::XRateLimitRemainingTokens,
        reset: Field::XRateLimitResetTokens,
    },
];

const ANTHROPIC: [Named; 4] = [
    Named {
        name: "requests",
        unit: QuotaUnit::Requests,
        limit: Field::AnthropicRequestsLimit,
        remaining: Field::AnthropicRequestsRemaining,
        reset: Field::AnthropicRequestsReset,
    },
    Named {
        name: "tokens",
        unit: QuotaUnit::Tokens,
        limit: Field::AnthropicTokensLimit,
        remaining: Field::AnthropicTokensRemaining,
        reset: Field::AnthropicTokensReset,
    },
    Named {
        name: "input-tokens",
        unit: QuotaUnit::InputTokens,
        limit: Field::AnthropicInputTokensLimit,
        remaining: Field::AnthropicInputTokensRemaining,
        reset: Field::AnthropicInputTokensReset,
    },
    Named {
        name: "output-tokens",
        unit: QuotaUnit::OutputTokens,
        limit: Field::AnthropicOutputTokensLimit,
        remaining: Field::AnthropicOutputTokensRemaining,
        reset: Field::AnthropicOutputTokensReset,
    },
];

/// Every vendor quota of the response, in the order of this module's list.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>, out: &mut Vec<Quota>) {
    for named in &OPENAI {
        let reset = fields.largest(named.reset, parse_go_duration);
        out.extend(read_named(fields, named, QuotaSource::OpenAi, reset));
    }
    for named in &ANTHROPIC {
        let reset = fields
            .largest(named.reset, parse_rfc3339)
            .map(|at| until(at, clock.reference()));
        out.extend(read_named(fields, named, QuotaSource::Anthropic, reset));
    }
    out.extend(shopify(fields));
    azure(fields, out);
}

fn read_named(
    fields: &Fields<'_>,
    named: &Named,
    source: QuotaSource,
    reset: Option<Duration>,
) -> Option<Quota> {
    let limit = fields.smallest(named.limit, parse_count);
    let remaining = fields.smallest(named.remaining, parse_count);
    if limit.is_none() && remaining.is_none() && reset.is_none() {
        return None;
    }
    let mut quota = Quota::new(source)
        .with_name(named.name)
        .with_unit(named.unit);
    quota.set_limit(limit);
    quota.set_remaining(remaining);
    quota.set_reset(reset);
    Some(quota)
}

/// Calls a Shopify REST bucket drains per second on the standard plans.
pub(crate) const SHOPIFY_DRAIN_PER_SEC: u64 = 2;

/// `X-Shopify-Shop-Api-Call-Limit: used/size`; the fullest reading wins.
fn shopify(fields: &Fields<'_>) -> Option<Quota> {
    let (used, size) = fields.largest(Field::XShopifyShopApiCallLimit, |text| {
        let slash = text.iter().position(|&byte| byte == b'/')?;
        let used = parse_integer(text[..slash].trim_ascii())?;
        let size = parse_integer(text[slash + 1..].trim_ascii())?;
        // Ordered by how little is left, so `largest` is the polite reading.
        Some((used.min(size), size))
    })?;
    let drain = |calls: u64| {
        Duration::from_secs(calls / SHOPIFY_DRAIN_PER_SEC)
            + Duration::from_millis(calls % SHOPIFY_DRAIN_PER_SEC * 1000 / SHOPIFY_DRAIN_PER_SEC)
    };
    Some(
        Quota::new(QuotaSource::Shopify)
            .with_limit(size)
            .with_remaining(size - used)
            .with_window(drain(size))
            .with_reset(drain(used)),
    )
}

/// Azure Resource Manager's remaining counts.
fn azure(fields: &Fields<'_>, out: &mut Vec<Quota>) {
    for (field, name) in [
        (Field::XMsRemainingSubscriptionReads, "subscription-reads"),
        (Field::XMsRemainingSubscriptionWrites, "subscription-writes"),
        (
            Field::XMsRemainingSubscriptionDeletes,
            "subscription-deletes",
        ),
    ] {
        if let Some(remaining) = fields.smallest(field, parse_integer) {
            out.push(
                Quota::new(QuotaSource::AzureResourceManager)
                    .with_name(name)
                    .with_remaining(remaining),
            );
        }
    }
    // `policy;remaining` pairs, comma-separated; at most 16 policies.
    let policies = fields
        .values(Field::XMsRemainingResource)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|text| text.split(','))
        .filter_map(|pair| {
            let (name, remaining) = pair.trim().rsplit_once(';')?;
            let remaining = parse_integer(remaining.trim().as_bytes())?;
            let name = name.trim();
            (!name.is_empty()).then_some((name, remaining))
        })
        .take(16);
    for (name, remaining) in policies {
        out.push(
            Quota::new(QuotaSource::AzureResourceManager)
                .with_name(name)
                .with_remaining(remaining),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use http::{HeaderMap, HeaderValue};

    use super::*;

    fn read_all(pairs: &[(&'static str, &'static str)]) -> Vec<Quota> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        // 2025-08-21T12:40:00Z
        let now = UNIX_EPOCH + Duration::from_secs(1_755_780_000);
        let mut out = Vec::new();
        read(
            &Fields::scan(&headers),
            &Clock::new(&headers, now),
            &mut out,
        );
        out
    }

    #[test]
    fn openai_requests_and_tokens_at_once() {
        let quotas = read_all(&[
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-limit-tokens", "150000"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-remaining-tokens", "149984"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]);
        assert_eq!(quotas.len(), 2);
        let (requests, tokens) = (&quotas[0], &quotas[1]);
        assert_eq!(requests.name(), Some("requests"));
        assert_eq!(requests.unit(), QuotaUnit::Requests);
        assert_eq!(
            (requests.limit(), requests.remaining()),
            (Some(60), Some(59))
        );
        assert_eq!(requests.reset(), Some(Duration::from_secs(1)));
        assert_eq!(tokens.unit(), QuotaUnit::Tokens);
        assert_eq!(tokens.remaining(), Some(149_984));
        assert_eq!(tokens.reset(), Some(Duration::from_secs(360)));
        assert!(quotas.iter().all(|q| q.source() == QuotaSource::OpenAi));
    }

    #[test]
    fn openai_fractional_go_durations_and_azure_plain_seconds() {
        let quotas = read_all(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1m30.5s"),
            ("x-ratelimit-remaining-tokens", "12"),
            ("x-ratelimit-reset-tokens", "17"),
        ]);
        assert_eq!(quotas[0].reset(), Some(Duration::from_millis(90_500)));
        assert_eq!(quotas[1].reset(), Some(Duration::from_secs(17)));
        // A malformed reset alone is no quota; a malformed count is no count.
        assert!(read_all(&[("x-ratelimit-reset-tokens", "soon")]).is_empty());
        let quotas = read_all(&[
            ("x-ratelimit-remaining-tokens", "-3"),
            ("x-ratelimit-limit-tokens", "1000"),
        ]);
        assert_eq!(
            (quotas[0].limit(), quotas[0].remaining()),
            (Some(1000), None)
        );
    }

    #[test]
    fn anthropic_three_quotas_with_rfc3339_resets() {
        let quotas = read_all(&[
            ("date", "Thu, 21 Aug 2025 12:40:00 GMT"),
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("anthropic-ratelimit-requests-reset", "2025-08-21T12:40:59Z"),
            ("anthropic-ratelimit-input-tokens-limit", "40000"),
            ("anthropic-ratelimit-input-tokens-remaining", "39000"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "2025-08-21T12:40:01.500Z",
            ),
            ("anthropic-ratelimit-output-tokens-limit", "8000"),
            ("anthropic-ratelimit-output-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2025-08-21T12:40:30Z",
            ),
        ]);
        let names: Vec<_> = quotas
            .iter()
            .map(|q| (q.name().unwrap(), q.unit()))
            .collect();
        assert_eq!(
            names,
            [
                ("requests", QuotaUnit::Requests),
                ("input-tokens", QuotaUnit::InputTokens),
                ("output-tokens", QuotaUnit::OutputTokens)
            ]
        );
        assert_eq!(quotas[0].reset(), Some(Duration::from_secs(59)));
        assert_eq!(quotas[1].reset(), Some(Duration::from_millis(1500)));
        assert_eq!(quotas[2].remaining(), Some(0));
        // A past reset is now; a reset in another offset is ignored.
        let quotas = read_all(&[
            ("anthropic-ratelimit-tokens-reset", "2020-01-01T00:00:00Z"),
            (
                "anthropic-ratelimit-requests-reset",
                "2025-08-21T14:40:59+02:00",
            ),
        ]);
        assert_eq!(quotas.len(), 1);
        assert_eq!(quotas[0].reset(), Some(Duration::ZERO));
    }

    #[test]
    fn shopify_leaky_bucket() {
        let quota = read_all(&[("x-shopify-shop-api-call-limit", "32/40")]).remove(0);
        assert_eq!((quota.limit(), quota.remaining()), (Some(40), Some(8)));
        assert_eq!(quota.window(), Some(Duration::from_secs(20)));
        assert_eq!(quota.reset(), Some(Duration::from_secs(16)));
        let over = read_all(&[("x-shopify-shop-api-call-limit", "41/40")]).remove(0);
        assert_eq!(over.remaining(), Some(0));
        let odd = read_all(&[("x-shopify-shop-api-call-limit", "3/40")]).remove(0);
        assert_eq!(odd.reset(), Some(Duration::from_millis(1500)));
        for bad in ["32", "/40", "32/", "a/b", "-1/40"] {
            let mut headers = HeaderMap::new();
            headers.insert(
                "x-shopify-shop-api-call-limit",
                HeaderValue::from_static(bad),
            );
            let mut out = Vec::new();
            read(
                &Fields::scan(&headers),
                &Clock::new(&headers, SystemTime::now()),
                &mut out,
            );
            assert!(out.is_empty(), "{bad}");
        }
    }

    #[test]
    fn azure_resource_manager_remaining_counts() {
        let quotas = read_all(&[
            ("x-ms-ratelimit-remaining-subscription-reads", "11999"),
            ("x-ms-ratelimit-remaining-subscription-writes", "1199"),
            (
                "x-ms-ratelimit-remaining-resource",
                "Microsoft.Compute/GetVMScaleSet3Min;197,Microsoft.Compute/GetVMScaleSet30Min;1297, junk",
            ),
        ]);
        let read: Vec<_> = quotas
            .iter()
            .map(|q| (q.name().unwrap(), q.remaining().unwrap()))
            .collect();
        assert_eq!(
            read,
            [
                ("subscription-reads", 11_999),
                ("subscription-writes", 1_199),
                ("Microsoft.Compute/GetVMScaleSet3Min", 197),
                ("Microsoft.Compute/GetVMScaleSet30Min", 1_297)
            ]
        );
    }
}
