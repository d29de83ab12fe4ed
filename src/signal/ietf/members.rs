//! Borrowing `sfv` visitors: a List or Dictionary field parsed into the few
//! parts the drafts use, without the owned `sfv` types' per-key and
//! per-parameter allocations (they dominated the parse time).
//!
//! Syntax is still fully validated by `sfv`; duplicate parameters and
//! dictionary keys keep the last instance, as RFC 9651 requires. Parameter
//! values are converted as they are visited; a malformed one (a negative
//! quota, a string window, …) reads as absent, with a debug event.

use std::convert::Infallible;
use std::time::Duration;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, Ignored, InnerListVisitor, ItemVisitor, ListVisitor,
    ParameterVisitor,
};
use sfv::{BareItemFromInput, GenericBareItem, KeyRef};

use super::super::numbers::{count_from_bare_item, seconds_from_bare_item};
use super::super::quota::QuotaUnit;

/// The parameters any draft defines, converted; others are validated and dropped.
#[derive(Debug, Default)]
pub(super) struct Params {
    /// `q`: quota units per window.
    pub(super) q: Option<u64>,
    /// `w` (or `window`, its name in draft -00): window seconds.
    pub(super) w: Option<Duration>,
    /// `qu`: quota unit.
    pub(super) qu: Option<QuotaUnit>,
    /// `pk`: partition key.
    pub(super) pk: Option<Vec<u8>>,
    /// `r`: remaining quota units.
    pub(super) r: Option<u64>,
    /// `t`: seconds until the quota is restored.
    pub(super) t: Option<Duration>,
}

impl Params {
    fn set(&mut self, key: &str, value: BareItemFromInput<'_>) {
        let valid = match key {
            "q" => {
                self.q = count_from_bare_item(&value);
                self.q.is_some()
            }
            "r" => {
                self.r = count_from_bare_item(&value);
                self.r.is_some()
            }
            "w" | "window" => {
                self.w = seconds_from_bare_item(&value);
                self.w.is_some()
            }
            "t" => {
                self.t = seconds_from_bare_item(&value);
                self.t.is_some()
            }
            "qu" => {
                self.qu = match &value {
                    GenericBareItem::String(unit) => Some(QuotaUnit::from_name(unit.as_str())),
                    GenericBareItem::Token(unit) => Some(QuotaUnit::from_name(unit.as_str())),
                    _ => None,
                };
                self.qu.is_some()
            }
            "pk" => match value {
                GenericBareItem::ByteSequence(bytes) => {
                    self.pk = Some(bytes);
                    return;
                }
                other => {
                    self.pk = None;
                    tracing::debug!(key, ?other, "ignoring a malformed RateLimit parameter");
                    return;
                }
            },
            _ => true,
        };
        if !valid {
            tracing::debug!(key, ?value, "ignoring a malformed RateLimit parameter");
        }
    }
}

/// One List member, or one Dictionary member with its key.
#[derive(Debug, Default)]
pub(super) struct Member<'de> {
    pub(super) key: Option<&'de str>,
    /// `None` for an inner list (no draft uses them).
    pub(super) value: Option<BareItemFromInput<'de>>,
    pub(super) params: Params,
}

impl Member<'_> {
    /// The member's String or Token value (a policy name).
    pub(super) fn name(&self) -> Option<&str> {
        match self.value.as_ref()? {
            sfv::GenericBareItem::String(name) => Some(name.as_str()),
            sfv::GenericBareItem::Token(name) => Some(name.as_str()),
            _ => None,
        }
    }
}

/// At most this many members are kept per IETF field; later ones are still
/// validated but ignored. Real servers send a
/// handful of policies; the cap bounds the work (joins are quadratic) a
/// hostile response with thousands of members could cause.
pub(super) const MAX_MEMBERS: usize = 64;

/// Parsed members of every structured field of a response, in one buffer
/// (one allocation); each field is a range of it. `&mut Members` is the
/// visitor: it appends, up to [`MAX_MEMBERS`] after `field_start`.
#[derive(Debug, Default)]
pub(super) struct Members<'de> {
    pub(super) list: Vec<Member<'de>>,
    /// Where the field being parsed starts in `list`.
    pub(super) field_start: usize,
}

impl Members<'_> {
    /// Whether the field being parsed has reached [`MAX_MEMBERS`].
    pub(super) fn field_full(&self) -> bool {
        self.list.len() - self.field_start >= MAX_MEMBERS
    }
}

struct Slot<'a, 'de> {
    members: &'a mut Vec<Member<'de>>,
    key: Option<&'de str>,
}

struct ParamSlot<'a>(&'a mut Params);

impl<'de> ListVisitor<'de> for &mut Members<'de> {
    type Out = ();
    type Error = Infallible;

    fn entry(&mut self) -> Result<impl EntryVisitor<'de>, Self::Error> {
        // `None` validates the member and drops it.
        Ok((!self.field_full()).then_some(Slot {
            members: &mut self.list,
            key: None,
        }))
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(())
    }
}

impl<'de> DictionaryVisitor<'de> for &mut Members<'de> {
    type Out = ();
    type Error = Infallible;

    fn entry(&mut self, key: &'de KeyRef) -> Result<impl EntryVisitor<'de>, Self::Error> {
        let key = key.as_str();
        // Only dictionary members have keys, and one dictionary is parsed
        // per buffer: this drops the earlier instance of a duplicate key.
        self.list.retain(|member| member.key != Some(key));
        Ok((!self.field_full()).then_some(Slot {
            members: &mut self.list,
            key: Some(key),
        }))
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(())
    }
}

impl<'de> EntryVisitor<'de> for Slot<'_, 'de> {
    type Error = Infallible;

    fn item(self) -> Result<impl ItemVisitor<'de>, Self::Error> {
        Ok(self)
    }

    fn inner_list(self) -> Result<impl InnerListVisitor<'de>, Self::Error> {
        self.members.push(Member {
            key: self.key,
            ..Member::default()
        });
        Ok(Ignored)
    }
}

impl<'de> ItemVisitor<'de> for Slot<'_, 'de> {
    type Out = ();
    type Error = Infallible;

    fn bare_item(
        self,
        bare_item: BareItemFromInput<'de>,
    ) -> Result<impl ParameterVisitor<'de, Out = Self::Out>, Self::Error> {
        let member = super::push_mut(
            self.members,
            Member {
                key: self.key,
                value: Some(bare_item),
                params: Params::default(),
            },
        );
        Ok(ParamSlot(&mut member.params))
    }
}

impl<'de> ParameterVisitor<'de> for ParamSlot<'_> {
    type Out = ();
    type Error = Infallible;

    fn parameter(
        &mut self,
        key: &'de KeyRef,
        value: BareItemFromInput<'de>,
    ) -> Result<(), Self::Error> {
        self.0.set(key.as_str(), value);
        Ok(())
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(input: &str) -> Members<'_> {
        let mut members = Members::default();
        sfv::Parser::new(input)
            .parse_list_with_visitor(&mut members)
            .unwrap();
        members
    }

    #[test]
    fn lists_keep_members_and_the_last_duplicate_parameter() {
        let members = list(r#""a";q=1;q=2;x=?1, (1 2);w=3, tok;r=4"#);
        let [a, inner, tok] = &members.list[..] else {
            panic!("{members:?}")
        };
        assert_eq!(a.name(), Some("a"));
        assert_eq!(a.params.q, Some(2));
        assert!(inner.value.is_none() && inner.params.w.is_none());
        assert_eq!(tok.name(), Some("tok"));
    }

    #[test]
    fn parameters_are_converted_and_malformed_ones_read_as_absent() {
        let members = list(r#"a;q=-1;w=1.5;qu=content-bytes;pk=:AAE=:;r=5;t="7";x=1"#);
        let params = &members.list[0].params;
        assert_eq!(params.q, None);
        assert_eq!(params.w, Some(Duration::from_millis(1500)));
        assert_eq!(params.qu, Some(QuotaUnit::ContentBytes));
        assert_eq!(params.pk.as_deref(), Some(&[0u8, 1][..]));
        assert_eq!((params.r, params.t), (Some(5), None));
        let members = list("a;w=60;q=1;q=2;w=?1");
        assert_eq!(
            (members.list[0].params.q, members.list[0].params.w),
            (Some(2), None)
        );
    }

    #[test]
    fn dictionaries_keep_the_last_duplicate_key() {
        let mut members = Members::default();
        sfv::Parser::new("limit=1, remaining=2, limit=3")
            .parse_dictionary_with_visitor(&mut members)
            .unwrap();
        let keys: Vec<_> = members.list.iter().map(|member| member.key).collect();
        assert_eq!(keys, [Some("remaining"), Some("limit")]);
        assert_eq!(
            members.list[1].value.as_ref().and_then(|v| v.as_integer()),
            Some(sfv::integer(3))
        );
    }

    #[test]
    fn members_beyond_the_cap_are_validated_but_dropped() {
        let many = vec!["\"p\";q=1"; MAX_MEMBERS + 10].join(", ");
        assert_eq!(list(&many).list.len(), MAX_MEMBERS);
        let invalid = format!("{many}, ;");
        let result = sfv::Parser::new(&invalid).parse_list_with_visitor(&mut Members::default());
        assert!(result.is_err());
    }

    #[test]
    fn syntax_errors_are_still_errors() {
        let result = sfv::Parser::new("a;q=").parse_list_with_visitor(&mut Members::default());
        assert!(result.is_err());
    }
}
