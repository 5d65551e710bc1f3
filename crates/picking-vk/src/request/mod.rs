//! What the host asks for each frame: which pixel, seen through which camera and viewport,
//! and which draws take part.

pub(crate) mod camera;
pub(crate) mod cursor;
pub(crate) mod query;
pub(crate) mod viewport;

use crate::draw::PickContributor;
use crate::error::PickError;
use crate::id::ObjectId;
use camera::{CameraSnapshot, DepthConvention, Ray};
use glam::{Mat4, UVec2};
use viewport::Viewport;

/// Leaves an object, or some of its instances, out of one request: the surface behind shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignore {
    /// Every draw with this ID.
    Object(ObjectId),
    /// Instances `start..start + count` of the draws with this ID.
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
}

/// A predicate over object IDs: draws for which it returns `false` neither hit nor occlude.
pub type PickFilter<'a> = dyn Fn(ObjectId) -> bool + Sync + 'a;

/// One frame's pick: the framebuffer pixel, the camera and viewport the host renders with,
/// and which draws take part. `Send`, so it can be built on another thread.
#[derive(Clone, Copy)]
pub struct PickRequest<'a> {
    /// Framebuffer pixel, origin top-left (see [`crate::cursor_to_pixel`]).
    pub pixel: UVec2,
    /// The host's viewport, unchanged.
    pub viewport: Viewport,
    /// World to view.
    pub view: Mat4,
    /// View to clip, as the host renders with it (Vulkan clip space).
    pub projection: Mat4,
    /// The depth convention the host states; `None` reads it off the projection and
    /// viewport. A statement they contradict is refused.
    pub depth: Option<DepthConvention>,
    /// Draws for which this returns `false` neither hit nor occlude.
    pub filter: Option<&'a PickFilter<'a>>,
    /// Objects and instances left out of this request.
    pub ignore: &'a [Ignore],
    /// The host's own draws in the pick pass (see [`PickContributor`]).
    pub contributors: &'a [&'a dyn PickContributor],
}

impl<'a> PickRequest<'a> {
    /// A request for `pixel` with the host's camera; every pickable draw takes part.
    pub fn new(pixel: UVec2, viewport: impl Into<Viewport>, view: Mat4, projection: Mat4) -> Self {
        PickRequest { pixel, viewport: viewport.into(), view, projection, depth: None, filter: None, ignore: &[], contributors: &[] }
    }

    /// Sets [`PickRequest::filter`].
    pub fn with_filter(mut self, filter: &'a PickFilter<'a>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Sets [`PickRequest::ignore`].
    pub fn with_ignore(mut self, ignore: &'a [Ignore]) -> Self {
        self.ignore = ignore;
        self
    }

    /// Sets [`PickRequest::contributors`].
    pub fn with_contributors(mut self, contributors: &'a [&'a dyn PickContributor]) -> Self {
        self.contributors = contributors;
        self
    }

    /// States the depth convention (checked against the projection).
    pub fn with_depth(mut self, depth: DepthConvention) -> Self {
        self.depth = Some(depth);
        self
    }

    /// The world-space ray through the pixel's centre, from the near plane, as the picker
    /// casts it; `Ok(None)` only for degenerate cameras.
    pub fn ray(&self) -> Result<Option<Ray>, PickError> {
        Ok(self.camera()?.pixel_ray(self.pixel))
    }

    pub(crate) fn camera(&self) -> Result<CameraSnapshot, PickError> {
        CameraSnapshot::new(self.view, self.projection, self.viewport, self.depth)
    }
}

impl std::fmt::Debug for PickRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PickRequest")
            .field("pixel", &self.pixel)
            .field("viewport", &self.viewport)
            .field("depth", &self.depth)
            .field("filter", &self.filter.is_some())
            .field("ignore", &self.ignore)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_can_cross_threads() {
        fn send<T: Send + Sync>(_: &T) {}
        let filter = |id: ObjectId| id.get() != 3;
        let request = PickRequest::new(UVec2::ZERO, Viewport::full(4, 4), Mat4::IDENTITY, Mat4::IDENTITY).with_filter(&filter);
        send(&request);
    }
}
