//! What the host asks for each frame: which pixel, seen through which camera and viewport,
//! and which draws take part.

pub(crate) mod camera;
pub(crate) mod cursor;
pub(crate) mod host_writes;
pub(crate) mod query;
pub(crate) mod viewport;

use crate::draw::PickContributor;
use crate::error::PickError;
use crate::ignore::{Ignore, PickFilter};
use camera::{CameraSnapshot, DepthConvention, Ray};
use glam::{Mat4, UVec2};
use host_writes::HostWrites;
use viewport::Viewport;

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
    /// The host's GPU writes, earlier in the same queue, to buffers this pick reads: the
    /// picker records the barriers for them (see [`PickRequest::with_host_writes`]). `None`:
    /// the host orders its writes itself.
    pub host_writes: Option<HostWrites>,
}

impl<'a> PickRequest<'a> {
    /// A request for `pixel` with the host's camera; every pickable draw takes part.
    pub fn new(pixel: UVec2, viewport: impl Into<Viewport>, view: Mat4, projection: Mat4) -> Self {
        PickRequest { pixel, viewport: viewport.into(), view, projection, depth: None, filter: None, ignore: &[], contributors: &[], host_writes: None }
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

    /// States that GPU work the host recorded earlier in the same queue wrote, at `stages`
    /// with `access`, buffers this pick reads (vertex, index, instance, joint and morph
    /// buffers, indirect commands and counts, hook resources), and may write them again
    /// later at the same stages. The picker then records, around everything it records, a
    /// memory barrier from those writes to the pass's reads (draw indirect, vertex input,
    /// vertex and fragment shaders) and an execution dependency from those reads to the
    /// host's later work at `stages`. A GPU-driven host that records the pick right after its
    /// culling dispatch says `with_host_writes(COMPUTE_SHADER, SHADER_WRITE)`. Without it the
    /// host records such barriers itself ([`crate::Picker::record_queries`]' contract).
    /// Masks no barrier can carry (no stage, a read access, a write none of the stages
    /// performs) are refused with [`PickError::InvalidRequest`].
    pub fn with_host_writes(mut self, stages: ash::vk::PipelineStageFlags, access: ash::vk::AccessFlags) -> Self {
        self.host_writes = Some(HostWrites { stages, access });
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
    use crate::id::ObjectId;

    #[test]
    fn requests_can_cross_threads() {
        fn send<T: Send + Sync>(_: &T) {}
        let filter = |id: ObjectId| id.get() != 3;
        let request = PickRequest::new(UVec2::ZERO, Viewport::full(4, 4), Mat4::IDENTITY, Mat4::IDENTITY).with_filter(&filter);
        send(&request);
    }
}
