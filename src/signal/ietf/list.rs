//! Drafts -08 … -11: named policies.
//!
//! `RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400` describes
//! policies (`q` quota, required; `w` window seconds; `qu` unit; `pk`
//! partition key); `RateLimit: "burst";r=50;t=30` their current state (`r`
//! remaining, required; `t` seconds until restored; `pk`). Items are joined by
//! name. Names may be Strings (-09 on) or Tokens (-08). An item without its
//! required parameter is ignored.

use std::time::Duration;

use sfv::BareItemFromInput;

use super::super::numbers::{count_from_bare_item, seconds_from_bare_item};
use super::super::quota::{Quota, QuotaSource, QuotaUnit};
use super::members::{Member, Members};

/// Whether a parsed `RateLimit` List is the named form (some member has a
/// name and an `r` parameter).
pub(super) fn is_named(members: &Members<'_>) -> bool {
    members
        .0
        .iter()
        .any(|member| member.name().is_some() && member.params.r.is_some())
}

fn count(key: &str, value: Option<&BareItemFromInput<'_>>) -> Option<u64> {
    let value = value?;
    let count = count_from_bare_item(value);
    if count.is_none() {
        tracing::debug!(key, ?value, "ignoring a malformed RateLimit parameter");
    }
    count
}

fn seconds(key: &str, value: Option<&BareItemFromInput<'_>>) -> Option<Duration> {
    let value = value?;
    let seconds = seconds_from_bare_item(value);
    if seconds.is_none() {
        tracing::debug!(key, ?value, "ignoring a malformed RateLimit parameter");
    }
    seconds
}

fn partition_key(member: &Member<'_>) -> Option<Vec<u8>> {
    let key = member
        .params
        .pk
        .as_ref()?
        .as_byte_sequence()
        .map(<[u8]>::to_vec);
    if key.is_none() {
        tracing::debug!(?member.params.pk, "ignoring a pk that is not a byte sequence");
    }
    key
}

fn unit(member: &Member<'_>) -> QuotaUnit {
    match &member.params.qu {
        None => QuotaUnit::Requests,
        Some(sfv::GenericBareItem::String(unit)) => QuotaUnit::from_name(unit.as_str()),
        Some(sfv::GenericBareItem::Token(unit)) => QuotaUnit::from_name(unit.as_str()),
        Some(_) => QuotaUnit::Other,
    }
}

/// Appends the named policies, joined with their current state.
pub(super) fn read(policy: &Members<'_>, limits: &Members<'_>, out: &mut Vec<Quota>) {
    let first = out.len();
    for member in &policy.0 {
        let (Some(name), Some(quota)) = (member.name(), count("q", member.params.q.as_ref()))
        else {
            continue;
        };
        let mut policy = Quota::new(QuotaSource::IetfList)
            .with_name(name)
            .with_limit(quota)
            .with_unit(unit(member));
        policy.set_window(seconds("w", member.params.w.as_ref()));
        policy.set_partition_key(partition_key(member));
        out.push(policy);
    }
    for member in &limits.0 {
        let (Some(name), Some(remaining)) = (member.name(), count("r", member.params.r.as_ref()))
        else {
            continue;
        };
        let joined = out[first..]
            .iter()
            .position(|quota| quota.name() == Some(name) && quota.remaining().is_none());
        let quota = match joined {
            Some(offset) => &mut out[first + offset],
            None => out.push_mut(Quota::new(QuotaSource::IetfList).with_name(name)),
        };
        quota.set_remaining(Some(remaining));
        quota.set_reset(seconds("t", member.params.t.as_ref()));
        if let Some(key) = partition_key(member) {
            quota.set_partition_key(Some(key));
        }
    }
}
