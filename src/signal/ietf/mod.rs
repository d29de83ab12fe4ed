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
//! ignored with a debug event.

mod legacy;
mod list;
mod members;

use super::fields::{Clock, Field, Fields};
use super::quota::Quota;
use members::Members;

/// Every IETF policy of the response, named lists first.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>, out: &mut Vec<Quota>) {
    let policy = structured(fields, Field::RateLimitPolicy, Shape::List).unwrap_or_default();
    let (named, dictionary) = match structured(fields, Field::RateLimit, Shape::List) {
        Some(members) if list::is_named(&members) => (members, None),
        _ => (
            Members::default(),
            structured(fields, Field::RateLimit, Shape::Dictionary),
        ),
    };
    list::read(&policy, &named, out);
    legacy::read(fields, clock, &policy, dictionary.as_ref(), out);
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    List,
    Dictionary,
}

/// `field` as a structured-field List or Dictionary, all lines merged;
/// `None` when absent or invalid.
fn structured<'a>(fields: &Fields<'a>, field: Field, shape: Shape) -> Option<Members<'a>> {
    if !fields.has(field) {
        return None;
    }
    let mut members = Members::default();
    for value in fields.values(field) {
        let parser = sfv::Parser::new(value.as_bytes());
        let parsed = match shape {
            Shape::List => parser.parse_list_with_visitor(members),
            Shape::Dictionary => parser.parse_dictionary_with_visitor(members),
        };
        match parsed {
            Ok(merged) => members = merged,
            Err(error) => {
                tracing::debug!(?field, ?value, ?shape, %error, "ignoring a malformed structured field");
                return None;
            }
        }
    }
    Some(members)
}

#[cfg(test)]
mod tests;
