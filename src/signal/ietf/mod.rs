//! The IETF RateLimit header fields in every draft shape
//! (draft-ietf-httpapi-ratelimit-headers).
//!
//! - -00 … -06: separate `RateLimit-Limit` (optionally with `;w=` policies),
//!   `RateLimit-Remaining`, `RateLimit-Reset`, and from -05 `RateLimit-Policy: 100;w=60`;
//! - -07: the `RateLimit: limit=100, remaining=50, reset=5` dictionary;
//! - -08 … -11: Lists of named policies in `RateLimit-Policy` and `RateLimit`.
//!
//! Structured fields are parsed with `sfv`. A field split over several lines
//! is parsed as the lines joined with commas (RFC 9110 §5.3); a line that
//! does not parse makes the whole field invalid (RFC 9651 §4.2), so it is
//! ignored with a debug event. At most 64 members are read per field (see
//! `members::MAX_MEMBERS`).

mod legacy;
mod list;
mod members;

use std::ops::Range;

use super::fields::{Clock, Field, Fields};
use super::quota::Quota;
use members::Members;

/// Every IETF policy of the response, named lists first.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>, out: &mut Vec<Quota>) {
    if !fields.has_any(&[
        Field::RateLimit,
        Field::RateLimitPolicy,
        Field::RateLimitLimit,
        Field::RateLimitRemaining,
        Field::RateLimitReset,
        Field::RateLimitResetTime,
        Field::RateLimitObserved,
    ]) {
        return;
    }
    // Room for a typical response (two or three fields of two or three
    // members) without regrowing, and under 1 KiB, which glibc serves from
    // its per-thread cache (measured: 8 members cost more than 7).
    let mut members = Members {
        list: Vec::with_capacity(7),
        field_start: 0,
    };
    let policy = structured(fields, Field::RateLimitPolicy, Shape::List, &mut members);
    let policy = policy.unwrap_or_default();
    let mut named = 0..0;
    let mut dictionary = None;
    match structured(fields, Field::RateLimit, Shape::List, &mut members) {
        Some(range) if list::is_named(&members.list[range.clone()]) => named = range,
        other => {
            if let Some(range) = other {
                members.list.truncate(range.start);
            }
            dictionary = structured(fields, Field::RateLimit, Shape::Dictionary, &mut members);
        }
    }
    // A plain `RateLimit-Limit: 100` (the common -06 shape) needs no
    // structured parse: the separate-field reader takes it as an integer.
    let plain_limit = fields
        .values(Field::RateLimitLimit)
        .all(|value| value.as_bytes().iter().all(u8::is_ascii_digit));
    let limit = if plain_limit {
        None
    } else {
        structured(fields, Field::RateLimitLimit, Shape::List, &mut members)
    };
    list::read(&mut members.list, policy.clone(), named, out);
    let parsed = legacy::Parsed {
        members: &members.list,
        policy,
        dictionary,
        limit,
    };
    legacy::read(fields, clock, &parsed, out);
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    List,
    Dictionary,
}

/// Appends `field`, parsed as a structured-field List or Dictionary with all
/// its lines merged, to `members`; returns its range, or `None` (and appends
/// nothing) when the field is absent or invalid.
fn structured<'a>(
    fields: &Fields<'a>,
    field: Field,
    shape: Shape,
    members: &mut Members<'a>,
) -> Option<Range<usize>> {
    if !fields.has(field) {
        return None;
    }
    let start = members.list.len();
    members.field_start = start;
    for value in fields.values(field) {
        let parser = sfv::Parser::new(value.as_bytes());
        let parsed = match shape {
            Shape::List => parser.parse_list_with_visitor(&mut *members),
            Shape::Dictionary => parser.parse_dictionary_with_visitor(&mut *members),
        };
        if let Err(error) = parsed {
            tracing::debug!(?field, ?value, ?shape, %error, "ignoring a malformed structured field");
            members.list.truncate(start);
            return None;
        }
    }
    if members.field_full() {
        tracing::debug!(?field, "too many rate-limit policies; later ones ignored");
    }
    Some(start..members.list.len())
}

#[cfg(test)]
mod tests;

/// Pushes `item` and returns it, as `Vec::push_mut` (Rust 1.95) does, for
/// the crate's older minimum toolchain.
pub(super) fn push_mut<T>(items: &mut Vec<T>, item: T) -> &mut T {
    items.push(item);
    let last = items.len() - 1;
    &mut items[last]
}
