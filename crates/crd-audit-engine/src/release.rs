//! [`Release`]: the Kubernetes release whose semantics the engine applies.

use crate::cel::env::{Env, NEWEST_RELEASE};
use crate::schema::{Items, Props, SchemaOrBool};

/// A Kubernetes release, 1.`minor`, whose semantics the engine applies: [`check_crd`]
/// and [`CrdValidator::for_release`] judge as a kube-apiserver of that release would.
///
/// What depends on the release:
///
/// - the CEL environment a new rule compiles in: CRD create validation of a 1.N server uses
///   its compatibility version 1.(N-1), so that the CRD still works after a rollback by one
///   release (a rule using a library 1.(N-1) lacks does not compile: IP and CIDR functions
///   are refused before 1.31, named formats before 1.32, two-variable comprehensions before
///   1.33...);
/// - the CEL environment stored rules compile in when objects are validated: every library
///   the 1.N binary has;
/// - `optionalOldSelf`: the server drops it from a CRD it is given before 1.30 (its feature
///   gate, `CRDValidationRatcheting`, was off by default).
///
/// The environments are modelled from 1.27 on (older releases get the libraries 1.27 has
/// too); a release newer than the newest modelled ([`Release::NEWEST`]) is judged as the
/// newest.
///
/// [`check_crd`]: crate::check_crd
/// [`CrdValidator::for_release`]: crate::CrdValidator::for_release
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    minor: u32,
}

/// The first release that ratchets updates (`CRDValidationRatcheting`, on by default).
const RATCHETING_SINCE: u32 = 30;

impl Default for Release {
    /// [`Release::NEWEST`].
    fn default() -> Self {
        Release::NEWEST
    }
}

impl Release {
    /// The newest release modelled, 1.36: what [`crate::check_crd`] and
    /// [`crate::CrdValidator::new`] judge by.
    pub const NEWEST: Release = Release {
        minor: NEWEST_RELEASE,
    };

    /// The release 1.`minor` (at most [`Release::NEWEST`]).
    pub const fn new(minor: u32) -> Release {
        Release {
            minor: if minor > NEWEST_RELEASE {
                NEWEST_RELEASE
            } else {
                minor
            },
        }
    }

    /// The minor version (`36` for 1.36).
    pub const fn minor(self) -> u32 {
        self.minor
    }

    /// Whether the release validates updates with ratcheting (an update that leaves invalid
    /// values unchanged is accepted): from 1.30, where the `CRDValidationRatcheting` feature
    /// gate is on by default.
    pub const fn ratchets(self) -> bool {
        self.minor >= RATCHETING_SINCE
    }

    /// The CEL environment CRD validation compiles new rules in.
    pub(crate) const fn new_expressions(self) -> Env {
        Env::new_expressions(self.minor)
    }

    /// The CEL environment the rules of a stored CRD compile in.
    pub(crate) const fn stored_expressions(self) -> Env {
        Env::stored(self.minor)
    }

    /// Whether the server keeps a rule's `optionalOldSelf` when it is given a CRD (its
    /// feature gate, `CRDValidationRatcheting`, is on by default from 1.30).
    pub(crate) const fn keeps_optional_old_self(self) -> bool {
        self.minor >= RATCHETING_SINCE
    }

    /// Drops from a schema of a CRD what the server of this release drops from a CRD it is
    /// given (the CRD strategy's `PrepareForCreate`): `optionalOldSelf` before 1.30.
    pub(crate) fn prepare_schema(self, s: &mut Props) {
        if !self.keeps_optional_old_self() {
            drop_optional_old_self(s);
        }
    }
}

/// Drops the `optionalOldSelf` of every rule, in the nodes the CRD strategy walks for it:
/// properties, additional properties and items.
fn drop_optional_old_self(s: &mut Props) {
    for r in &mut s.x_validations {
        r.optional_old_self = None;
    }
    if let Some(SchemaOrBool::Schema(a)) = &mut s.additional_properties {
        drop_optional_old_self(a);
    }
    for p in s.properties.values_mut() {
        drop_optional_old_self(p);
    }
    match &mut s.items {
        Some(Items::Schema(item)) => drop_optional_old_self(item),
        Some(Items::Array(list)) => list.iter_mut().for_each(drop_optional_old_self),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_newer_than_modelled_are_the_newest() {
        assert_eq!(Release::new(30).minor(), 30);
        assert_eq!(Release::new(40), Release::NEWEST);
        assert_eq!(Release::new(20).minor(), 20);
        assert_eq!(Release::default(), Release::NEWEST);
        assert!(Release::new(29) < Release::new(30));
    }
}
