//! Drafts -00 … -07: one current state plus unnamed policies.
//!
//! The current state comes from the separate `RateLimit-Limit` /
//! `-Remaining` / `-Reset` fields (-00 … -06) or the -07 dictionary
//! `RateLimit: limit=100, remaining=50, reset=5`. Unnamed policies come from
//! `RateLimit-Policy: 100;w=60` (-05 … -07) and from the members after the
//! first of `RateLimit-Limit: 10, 10;w=1, 50;w=60` (-00 … -04; `window=` in
//! -00). A policy whose quota equals the current limit is the current one: it
//! lends its window to the current state instead of being listed twice.
//!
//! Duplicated lines of `RateLimit-Remaining` keep the smallest value and of
//! `RateLimit-Reset` the largest (the polite reading). `RateLimit-Reset`
//! above one year of seconds is read as an epoch timestamp, as some servers
//! that predate the drafts send one.

use std::ops::Range;
use std::time::Duration;

use super::super::fields::{Clock, Field, Fields};
use super::super::numbers::{
    count_from_bare_item, parse_integer, parse_seconds, seconds_from_bare_item, until,
};
use super::super::quota::{Quota, QuotaSource};
use super::members::Member;

/// An unnamed policy: quota and window.
struct Policy {
    quota: u64,
    window: Option<Duration>,
    taken: bool,
}

fn policy(member: &Member<'_>) -> Option<Policy> {
    let quota = count_from_bare_item(member.value.as_ref()?)?;
    Some(Policy {
        quota,
        window: member.params.w,
        taken: false,
    })
}

/// The structured fields, already parsed.
pub(super) struct Parsed<'m, 'a> {
    pub(super) members: &'m [Member<'a>],
    /// `RateLimit-Policy`.
    pub(super) policy: Range<usize>,
    /// `RateLimit` when it is a dictionary.
    pub(super) dictionary: Option<Range<usize>>,
    /// `RateLimit-Limit` when it is a valid List.
    pub(super) limit: Option<Range<usize>>,
}

/// Appends the legacy current states and their unnamed policies.
pub(super) fn read(
    fields: &Fields<'_>,
    clock: &Clock<'_>,
    parsed: &Parsed<'_, '_>,
    out: &mut Vec<Quota>,
) {
    let members = parsed.members;
    let mut policies: Vec<Policy> = members[parsed.policy.clone()]
        .iter()
        .filter_map(policy)
        .collect();
    let mut currents = [
        parsed
            .dictionary
            .clone()
            .and_then(|range| from_dictionary(&members[range])),
        separate(fields, clock, parsed, &mut policies),
    ];
    if currents.iter().all(Option::is_none) && policies.is_empty() {
        return;
    }
    let source = currents
        .iter()
        .flatten()
        .map(Quota::source)
        .next()
        .unwrap_or(QuotaSource::IetfSeparate);
    for current in currents.iter_mut().flatten() {
        if current.window().is_some() {
            continue;
        }
        let matching = policies
            .iter_mut()
            .find(|policy| Some(policy.quota) == current.limit() && policy.window.is_some());
        if let Some(policy) = matching {
            policy.taken = true;
            current.set_window(policy.window);
        }
    }
    out.extend(currents.into_iter().flatten());
    for policy in policies.into_iter().filter(|policy| !policy.taken) {
        let mut quota = Quota::new(source).with_limit(policy.quota);
        quota.set_window(policy.window);
        out.push(quota);
    }
}

/// The -07 `RateLimit` dictionary.
fn from_dictionary(dictionary: &[Member<'_>]) -> Option<Quota> {
    let value = |key: &str| {
        let member = dictionary.iter().find(|member| member.key == Some(key))?;
        member.value.as_ref()
    };
    let limit = value("limit").and_then(count_from_bare_item);
    let remaining = value("remaining").and_then(count_from_bare_item);
    let reset = value("reset").and_then(seconds_from_bare_item);
    if limit.is_none() && remaining.is_none() && reset.is_none() {
        tracing::debug!(
            ?dictionary,
            "ignoring a RateLimit dictionary without limit/remaining/reset"
        );
        return None;
    }
    let mut quota = Quota::new(QuotaSource::IetfDictionary);
    quota.set_limit(limit);
    quota.set_remaining(remaining);
    quota.set_reset(reset);
    Some(quota)
}

/// GitLab's `RateLimit-ResetTime` (an HTTP-date), measured against `Date`;
/// the latest when duplicated.
fn reset_time(fields: &Fields<'_>, clock: &Clock<'_>) -> Option<Duration> {
    fields
        .values(Field::RateLimitResetTime)
        .filter_map(|value| httpdate::parse_http_date(value.to_str().ok()?.trim()).ok())
        .max()
        .map(|at| until(at, clock.reference()))
}

/// The separate fields; the members after the first of `RateLimit-Limit`
/// are added to `policies`.
fn separate(
    fields: &Fields<'_>,
    clock: &Clock<'_>,
    parsed: &Parsed<'_, '_>,
    policies: &mut Vec<Policy>,
) -> Option<Quota> {
    if !fields.has_any(&[
        Field::RateLimitLimit,
        Field::RateLimitRemaining,
        Field::RateLimitReset,
        Field::RateLimitResetTime,
        Field::RateLimitObserved,
    ]) {
        return None;
    }
    let mut limit = None;
    let mut window = None;
    if let Some(range) = parsed.limit.clone() {
        let mut members = parsed.members[range].iter().filter_map(policy);
        if let Some(first) = members.next() {
            limit = Some(first.quota);
            window = first.window;
        }
        policies.extend(members);
    } else if fields.has(Field::RateLimitLimit) {
        limit = fields.smallest(Field::RateLimitLimit, parse_integer);
    }
    let remaining = fields.smallest(Field::RateLimitRemaining, parse_integer);
    // GitLab: `RateLimit-Observed` is the count used.
    let remaining = remaining.or_else(|| {
        let observed = fields.largest(Field::RateLimitObserved, parse_integer)?;
        Some(limit?.saturating_sub(observed))
    });
    let raw_reset = fields.largest(Field::RateLimitReset, parse_seconds);
    let reset = raw_reset
        .map(|reset| clock.reset(reset))
        .or_else(|| reset_time(fields, clock));
    if limit.is_none() && remaining.is_none() && reset.is_none() {
        return None;
    }
    let mut quota = Quota::new(QuotaSource::IetfSeparate);
    quota.set_name(fields.text(Field::RateLimitName).map(str::to_owned));
    quota.set_limit(limit);
    quota.set_remaining(remaining);
    quota.set_reset(reset);
    quota.set_reset_precision(raw_reset.and_then(|reset| clock.reset_precision(reset)));
    quota.set_window(window);
    Some(quota)
}
