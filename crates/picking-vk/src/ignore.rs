//! What a request leaves out: its ignore rules and filter, and [`Admission`], the two as a
//! contributor applies them. Below both `request` (which holds them) and `draw` (whose
//! contributors read them).

use crate::id::ObjectId;

/// Leaves an object, or some of its instances, out of one request: the surface behind shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignore {
    /// Every draw with this ID.
    Object(ObjectId),
    /// Instances `start..start + count` of the instanced draws with this ID. A draw without
    /// instances (its hits' `instance` is `None`) is left out only by [`Ignore::Object`].
    Instances {
        /// The object.
        id: ObjectId,
        /// First instance left out.
        start: u32,
        /// How many instances are left out.
        count: u32,
    },
}

impl Ignore {
    /// One instance of an object.
    pub fn instance(id: ObjectId, index: u32) -> Self {
        Ignore::Instances { id, start: index, count: 1 }
    }

    /// Whether the rule leaves out instance `instance` of object `id`.
    pub fn covers(&self, id: ObjectId, instance: u32) -> bool {
        match *self {
            Ignore::Object(o) => o == id,
            Ignore::Instances { id: o, start, count } => o == id && instance >= start && instance - start < count,
        }
    }
}

/// A predicate over object IDs: draws for which it returns `false` neither hit nor occlude.
pub type PickFilter<'a> = dyn Fn(ObjectId) -> bool + Sync + 'a;

/// A request's filter and ignore rules, as a [`PickContributor`](crate::contributor::PickContributor)
/// applies them to the objects it draws ([`crate::contributor::ContributorContext::admission`]): what they
/// leave out neither hits nor occludes, as for the picker's own draws.
#[derive(Clone, Copy)]
pub struct Admission<'a> {
    ignore: &'a [Ignore],
    filter: Option<&'a PickFilter<'a>>,
}

impl<'a> Admission<'a> {
    /// The rules of a request.
    pub(crate) fn new(ignore: &'a [Ignore], filter: Option<&'a PickFilter<'a>>) -> Self {
        Admission { ignore, filter }
    }

    /// Whether instance `instance` of object `id` takes part (ID 0 never does).
    pub fn admits(&self, id: u64, instance: u32) -> bool {
        let Ok(id) = ObjectId::new(id) else { return false };
        !self.ignore.iter().any(|rule| rule.covers(id, instance)) && self.filter.is_none_or(|f| f(id))
    }

    /// Whether every object takes part (no rule and no filter): a contributor may then draw all
    /// without asking [`Admission::admits`].
    pub fn admits_all(&self) -> bool {
        self.ignore.is_empty() && self.filter.is_none()
    }
}

impl std::fmt::Debug for Admission<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission").field("ignore", &self.ignore).field("filter", &self.filter.is_some()).finish()
    }
}
