//! [`DrawList`]: the draws of one frame's pick, borrowed for this frame or shared across
//! frames.

use super::PickDraw;
use std::sync::Arc;

/// The draws [`Picker::record`](crate::Picker::record) picks among. Anything that derefs to
/// a slice of draws converts into one (`&draws`, `&vec`, `std::slice::from_ref(&draw)`), and
/// so does a shared list (`&Arc<[PickDraw]>`).
///
/// A shared list is for draws the host keeps from frame to frame: the picker keeps a
/// bounding-volume hierarchy of their world bounds and checks every draw once, for as long as
/// that `Arc` lives, so culling costs O(log draws + hits) instead of O(draws) and later frames
/// skip the checks. When draws move or change, hand in a new `Arc`.
#[derive(Clone, Copy, Debug)]
pub enum DrawList<'a> {
    /// This frame's draws: each is checked, and culled by a walk over all of them.
    Borrowed(&'a [PickDraw]),
    /// Draws kept across frames (see the type's docs).
    Shared(&'a Arc<[PickDraw]>),
}

impl DrawList<'_> {
    /// The draws, in the order their indices name them.
    pub fn draws(&self) -> &[PickDraw] {
        match self {
            DrawList::Borrowed(d) => d,
            DrawList::Shared(d) => d,
        }
    }
}

impl<'a> From<&'a [PickDraw]> for DrawList<'a> {
    fn from(draws: &'a [PickDraw]) -> Self {
        DrawList::Borrowed(draws)
    }
}

impl<'a> From<&'a Vec<PickDraw>> for DrawList<'a> {
    fn from(draws: &'a Vec<PickDraw>) -> Self {
        DrawList::Borrowed(draws)
    }
}

impl<'a, const N: usize> From<&'a [PickDraw; N]> for DrawList<'a> {
    fn from(draws: &'a [PickDraw; N]) -> Self {
        DrawList::Borrowed(draws)
    }
}

impl<'a> From<&'a Arc<[PickDraw]>> for DrawList<'a> {
    fn from(draws: &'a Arc<[PickDraw]>) -> Self {
        DrawList::Shared(draws)
    }
}
