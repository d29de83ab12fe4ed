//! Borrowing `sfv` visitors: a List or Dictionary field parsed into the few
//! parts the drafts use, without the owned `sfv` types' per-key and
//! per-parameter allocations (they dominated the parse time).
//!
//! Syntax is still fully validated by `sfv`; duplicate parameters and
//! dictionary keys keep the last instance, as RFC 9651 requires.

use std::convert::Infallible;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, Ignored, InnerListVisitor, ItemVisitor, ListVisitor,
    ParameterVisitor,
};
use sfv::{BareItemFromInput, KeyRef};

/// The parameters any draft defines; others are validated and dropped.
#[derive(Debug, Default)]
pub(super) struct Params<'de> {
    pub(super) q: Option<BareItemFromInput<'de>>,
    pub(super) w: Option<BareItemFromInput<'de>>,
    /// `window`, draft -00's name for `w`.
    pub(super) window: Option<BareItemFromInput<'de>>,
    pub(super) qu: Option<BareItemFromInput<'de>>,
    pub(super) pk: Option<BareItemFromInput<'de>>,
    pub(super) r: Option<BareItemFromInput<'de>>,
    pub(super) t: Option<BareItemFromInput<'de>>,
}

/// One List member, or one Dictionary member with its key.
#[derive(Debug, Default)]
pub(super) struct Member<'de> {
    pub(super) key: Option<&'de str>,
    /// `None` for an inner list (no draft uses them).
    pub(super) value: Option<BareItemFromInput<'de>>,
    pub(super) params: Params<'de>,
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

/// The members of one field, across all its lines.
#[derive(Debug, Default)]
pub(super) struct Members<'de>(pub(super) Vec<Member<'de>>);

struct Slot<'a, 'de> {
    members: &'a mut Vec<Member<'de>>,
    key: Option<&'de str>,
}

struct ParamSlot<'a, 'de>(&'a mut Params<'de>);

impl<'de> ListVisitor<'de> for Members<'de> {
    type Out = Self;
    type Error = Infallible;

    fn entry(&mut self) -> Result<impl EntryVisitor<'de>, Self::Error> {
        Ok(Slot {
            members: &mut self.0,
            key: None,
        })
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(self)
    }
}

impl<'de> DictionaryVisitor<'de> for Members<'de> {
    type Out = Self;
    type Error = Infallible;

    fn entry(&mut self, key: &'de KeyRef) -> Result<impl EntryVisitor<'de>, Self::Error> {
        let key = key.as_str();
        self.0.retain(|member| member.key != Some(key));
        Ok(Slot {
            members: &mut self.0,
            key: Some(key),
        })
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(self)
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
        let member = self.members.push_mut(Member {
            key: self.key,
            value: Some(bare_item),
            params: Params::default(),
        });
        Ok(ParamSlot(&mut member.params))
    }
}

impl<'de> ParameterVisitor<'de> for ParamSlot<'_, 'de> {
    type Out = ();
    type Error = Infallible;

    fn parameter(
        &mut self,
        key: &'de KeyRef,
        value: BareItemFromInput<'de>,
    ) -> Result<(), Self::Error> {
        let params = &mut *self.0;
        let slot = match key.as_str() {
            "q" => &mut params.q,
            "w" => &mut params.w,
            "window" => &mut params.window,
            "qu" => &mut params.qu,
            "pk" => &mut params.pk,
            "r" => &mut params.r,
            "t" => &mut params.t,
            _ => return Ok(()),
        };
        *slot = Some(value);
        Ok(())
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_members_and_the_last_duplicate_parameter() {
        let members: Members<'_> = sfv::Parser::new(r#""a";q=1;q=2;x=?1, (1 2);w=3, tok;r=4"#)
            .parse_list_with_visitor(Members::default())
            .unwrap();
        let [a, inner, tok] = &members.0[..] else {
            panic!("{members:?}")
        };
        assert_eq!(a.name(), Some("a"));
        assert_eq!(
            a.params.q.as_ref().and_then(|q| q.as_integer()),
            Some(sfv::integer(2))
        );
        assert!(inner.value.is_none() && inner.params.w.is_none());
        assert_eq!(tok.name(), Some("tok"));
    }

    #[test]
    fn dictionaries_keep_the_last_duplicate_key() {
        let members: Members<'_> = sfv::Parser::new("limit=1, remaining=2, limit=3")
            .parse_dictionary_with_visitor(Members::default())
            .unwrap();
        let keys: Vec<_> = members.0.iter().map(|member| member.key).collect();
        assert_eq!(keys, [Some("remaining"), Some("limit")]);
        assert_eq!(
            members.0[1].value.as_ref().and_then(|v| v.as_integer()),
            Some(sfv::integer(3))
        );
    }

    #[test]
    fn syntax_errors_are_still_errors() {
        let result = sfv::Parser::new("a;q=").parse_list_with_visitor(Members::default());
        assert!(result.is_err());
    }
}
