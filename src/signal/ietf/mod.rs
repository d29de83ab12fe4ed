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

use super::fields::{Clock, Field, Fields};
use super::quota::Quota;

/// Every IETF policy of the response, named lists first.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>, out: &mut Vec<Quota>) {
    let policy = structured_list(fields, Field::RateLimitPolicy).unwrap_or_default();
    let (named, dictionary) = match structured_list(fields, Field::RateLimit) {
        Some(items) if list::is_named(&items) => (items, None),
        _ => (Vec::new(), structured_dictionary(fields, Field::RateLimit)),
    };
    list::read(&policy, &named, out);
    legacy::read(fields, clock, &policy, dictionary.as_ref(), out);
}

/// `field` as a structured-field List; `None` when absent or invalid.
fn structured_list(fields: &Fields<'_>, field: Field) -> Option<sfv::List> {
    if !fields.has(field) {
        return None;
    }
    let mut list = sfv::List::new();
    for value in fields.values(field) {
        match sfv::Parser::new(value.as_bytes()).parse_list_with_visitor(list) {
            Ok(merged) => list = merged,
            Err(error) => {
                tracing::debug!(?field, ?value, %error, "ignoring a field that is not a structured List");
                return None;
            }
        }
    }
    Some(list)
}

/// `field` as a structured-field Dictionary; `None` when absent or invalid.
fn structured_dictionary(fields: &Fields<'_>, field: Field) -> Option<sfv::Dictionary> {
    if !fields.has(field) {
        return None;
    }
    let mut dictionary = sfv::Dictionary::new();
    for value in fields.values(field) {
        match sfv::Parser::new(value.as_bytes()).parse_dictionary_with_visitor(dictionary) {
            Ok(merged) => dictionary = merged,
            Err(error) => {
                tracing::debug!(?field, ?value, %error, "ignoring a field that is neither a structured List nor Dictionary");
                return None;
            }
        }
    }
    Some(dictionary)
}

/// The plain item of a list member (inner lists are not used by any draft).
fn item(entry: &sfv::ListEntry) -> Option<&sfv::Item> {
    match entry {
        sfv::ListEntry::Item(item) => Some(item),
        sfv::ListEntry::InnerList(_) => None,
    }
}

#[cfg(test)]
mod tests;
