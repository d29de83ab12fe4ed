//! Drafts -08 … -11: named policies.
//!
//! `RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400` describes
//! policies (`q` quota, required; `w` window seconds; `qu` unit; `pk`
//! partition key); `RateLimit: "burst";r=50;t=30` their current state (`r`
//! remaining, required; `t` seconds until restored; `pk`). Items are joined by
//! name. Names may be Strings (-09 on) or Tokens (-08). An item without its
//! required parameter is ignored.

use super::super::numbers::{count_from_bare_item, seconds_from_bare_item};
use super::super::quota::{Quota, QuotaSource, QuotaUnit};
use super::item;

/// Whether a parsed `RateLimit` List is the named form (some member has a
/// name and an `r` parameter).
pub(super) fn is_named(list: &sfv::List) -> bool {
    list.iter()
        .filter_map(item)
        .any(|item| name(item).is_some() && item.params.contains_key("r"))
}

fn name(item: &sfv::Item) -> Option<&str> {
    match &item.bare_item {
        sfv::BareItem::String(name) => Some(name.as_str()),
        sfv::BareItem::Token(name) => Some(name.as_str()),
        _ => None,
    }
}

fn count(item: &sfv::Item, key: &str) -> Option<u64> {
    let value = item.params.get(key)?;
    let count = count_from_bare_item(value);
    if count.is_none() {
        tracing::debug!(key, ?value, "ignoring a malformed RateLimit parameter");
    }
    count
}

fn seconds(item: &sfv::Item, key: &str) -> Option<std::time::Duration> {
    let value = item.params.get(key)?;
    let seconds = seconds_from_bare_item(value);
    if seconds.is_none() {
        tracing::debug!(key, ?value, "ignoring a malformed RateLimit parameter");
    }
    seconds
}

fn partition_key(item: &sfv::Item) -> Option<Vec<u8>> {
    item.params
        .get("pk")
        .and_then(|value| value.as_byte_sequence())
        .map(<[u8]>::to_vec)
}

fn unit(item: &sfv::Item) -> QuotaUnit {
    match item.params.get("qu") {
        None => QuotaUnit::Requests,
        Some(sfv::BareItem::String(unit)) => QuotaUnit::from_name(unit.as_str()),
        Some(sfv::BareItem::Token(unit)) => QuotaUnit::from_name(unit.as_str()),
        Some(_) => QuotaUnit::Other,
    }
}

/// Appends the named policies, joined with their current state.
pub(super) fn read(policy: &sfv::List, limits: &sfv::List, out: &mut Vec<Quota>) {
    let first = out.len();
    for item in policy.iter().filter_map(item) {
        let (Some(name), Some(quota)) = (name(item), count(item, "q")) else {
            continue;
        };
        let mut policy = Quota::new(QuotaSource::IetfList)
            .with_name(name)
            .with_limit(quota)
            .with_unit(unit(item));
        policy.set_window(seconds(item, "w"));
        policy.set_partition_key(partition_key(item));
        out.push(policy);
    }
    for item in limits.iter().filter_map(item) {
        let (Some(name), Some(remaining)) = (name(item), count(item, "r")) else {
            continue;
        };
        let joined = out[first..]
            .iter()
            .position(|quota| quota.name() == Some(name) && quota.remaining().is_none());
        let index = match joined {
            Some(offset) => first + offset,
            None => {
                out.push(Quota::new(QuotaSource::IetfList).with_name(name));
                out.len() - 1
            }
        };
        let quota = &mut out[index];
        quota.set_remaining(Some(remaining));
        quota.set_reset(seconds(item, "t"));
        if let Some(key) = partition_key(item) {
            quota.set_partition_key(Some(key));
        }
    }
}
