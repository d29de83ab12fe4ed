//! Drafts -08 … -11: named policies.
//!
//! `RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400` describes
//! policies (`q` quota, required; `w` window seconds; `qu` unit; `pk`
//! partition key); `RateLimit: "burst";r=50;t=30` their current state (`r`
//! remaining, required; `t` seconds until restored; `pk`). Items are joined by
//! name. Names may be Strings (-09 on) or Tokens (-08). An item without its
//! required parameter is ignored.

use super::super::quota::{Quota, QuotaSource, QuotaUnit};
use std::ops::Range;

use super::members::Member;

/// Whether a parsed `RateLimit` List is the named form (some member has a
/// name and an `r` parameter).
pub(super) fn is_named(members: &[Member<'_>]) -> bool {
    members
        .iter()
        .any(|member| member.name().is_some() && member.params.r.is_some())
}

/// Appends the named policies, joined with their current state.
pub(super) fn read(
    members: &mut [Member<'_>],
    policy: Range<usize>,
    limits: Range<usize>,
    out: &mut Vec<Quota>,
) {
    let first = out.len();
    for member in &mut members[policy] {
        let (Some(name), Some(quota)) = (member.name(), member.params.q) else {
            continue;
        };
        let policy = super::push_mut(
            out,
            Quota::new(QuotaSource::IetfList)
                .with_name(name)
                .with_limit(quota)
                .with_unit(member.params.qu.unwrap_or(QuotaUnit::Requests)),
        );
        policy.set_window(member.params.w);
        policy.set_partition_key(member.params.pk.take());
    }
    for member in &mut members[limits] {
        let (Some(name), Some(remaining)) = (member.name(), member.params.r) else {
            continue;
        };
        let joined = out[first..]
            .iter()
            .position(|quota| quota.name() == Some(name) && quota.remaining().is_none());
        let quota = match joined {
            Some(offset) => &mut out[first + offset],
            None => super::push_mut(out, Quota::new(QuotaSource::IetfList).with_name(name)),
        };
        quota.set_remaining(Some(remaining));
        quota.set_reset(member.params.t);
        if let Some(key) = member.params.pk.take() {
            quota.set_partition_key(Some(key));
        }
    }
}
