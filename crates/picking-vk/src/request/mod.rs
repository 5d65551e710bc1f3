//! What the host states for each frame's pick beyond its queries: the camera and viewport
//! ([`PickRequest`]), which draws take part ([`Ignore`], [`PickFilter`]), and its own GPU
//! writes the pass must wait for ([`HostWrites`]); [`Ray`] is the pick ray a pixel casts.

pub(crate) mod camera;
pub(crate) mod cursor;
pub(crate) mod host_writes;
pub(crate) mod query;
pub(crate) mod result_readers;
pub(crate) mod viewport;

pub use crate::ignore::{Ignore, PickFilter};
pub use camera::Ray;
pub use host_writes::HostWrites;

use crate::draw::raster::Culling;
use crate::draw::PickContributor;
use crate::error::{Input, PickError};
use camera::{CameraSnapshot, DepthConvention};
use glam::{Mat4, UVec2};
use result_readers::ResultReaders;
use viewport::Viewport;

/// How one frame is picked: the camera and viewport the host renders with, and which draws
/// take part. The pixels asked about are the queries' ([`crate::PickQuery`]). `Send`, so it
/// can be built on another thread.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct PickRequest<'a> {
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
    /// The faces the host culls for every draw whose [`RasterState::culling`](crate::draw::RasterState::culling)
    /// is `None` (the default): [`Culling::NONE`] unless set. An engine that culls back faces
    /// says so here once ([`PickRequest::with_culling`]); a pick through a culled back face
    /// would name what the host does not show.
    pub culling: Culling,
    /// The host's passes that read this frame's GPU results, when the picker writes them
    /// ([`PickerConfig::gpu_results`](crate::PickerConfig::gpu_results)): the picker's barrier
    /// makes the results visible to them. Default: vertex, fragment and compute shader reads.
    pub result_readers: ResultReaders,
}

impl<'a> PickRequest<'a> {
    /// A request with the host's camera; every pickable draw takes part.
    pub fn new(viewport: impl Into<Viewport>, view: Mat4, projection: Mat4) -> Self {
        PickRequest {
            viewport: viewport.into(),
            view,
            projection,
            depth: None,
            filter: None,
            ignore: &[],
            contributors: &[],
            host_writes: None,
            culling: Culling::NONE,
            result_readers: ResultReaders::default(),
        }
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
    /// vertex and fragment shaders, and compute: the GPU planner reads storage-buffer
    /// instances) and an execution dependency from those reads to the
    /// host's later work at `stages`. A GPU-driven host that records the pick right after its
    /// culling dispatch says `with_host_writes(COMPUTE_SHADER, SHADER_WRITE)`. Without it the
    /// host records such barriers itself ([`crate::Picker::record`]' contract).
    /// Masks no barrier can carry (no stage, a read access, a write none of the stages
    /// performs) are refused with [`PickError::InvalidInput`] naming [`Input::HostWrites`].
    pub fn with_host_writes(mut self, stages: ash::vk::PipelineStageFlags, access: ash::vk::AccessFlags) -> Self {
        self.host_writes = Some(HostWrites { stages, access });
        self
    }

    /// Sets [`PickRequest::culling`]: the faces culled, and the front face, for every draw that
    /// states none of its own.
    pub fn with_culling(mut self, cull_mode: ash::vk::CullModeFlags, front_face: ash::vk::FrontFace) -> Self {
        self.culling = Culling::new(cull_mode, front_face);
        self
    }

    /// Sets [`PickRequest::result_readers`]. Masks no barrier can carry (no stage, an access
    /// that is not a read of a buffer, a read none of the stages performs) are refused by
    /// [`crate::Picker::record`] with [`PickError::InvalidInput`] naming
    /// [`Input::ResultReaders`]; the stages must be ones the device enabled.
    pub fn with_result_readers(mut self, readers: ResultReaders) -> Self {
        self.result_readers = readers;
        self
    }

    /// States the depth convention (checked against the projection).
    pub fn with_depth(mut self, depth: DepthConvention) -> Self {
        self.depth = Some(depth);
        self
    }

    /// The world-space ray through framebuffer `pixel`'s centre, from the near plane, as the
    /// picker casts it; `Ok(None)` only for degenerate cameras.
    pub fn ray(&self, pixel: UVec2) -> Result<Option<Ray>, PickError> {
        Ok(self.camera()?.pixel_ray(pixel))
    }

    /// Refuses host writes or result readers in a stage of `disabled` (those the device
    /// was created without, where the host said which: a barrier naming one is invalid).
    pub(crate) fn check_enabled_stages(&self, disabled: ash::vk::PipelineStageFlags) -> Result<(), PickError> {
        let writes = self.host_writes.map(|w| (Input::HostWrites, w.stages));
        let readers = Some((Input::ResultReaders, self.result_readers.stages));
        for (input, stages) in [writes, readers].into_iter().flatten() {
            if stages.intersects(disabled) {
                let reason = format!("{:?}: the device was created without these stages", stages & disabled);
                return Err(PickError::InvalidInput { input, reason });
            }
        }
        Ok(())
    }

    pub(crate) fn camera(&self) -> Result<CameraSnapshot, PickError> {
        if !self.culling.is_known() {
            return Err(PickError::InvalidInput { input: Input::Camera, reason: format!("unknown culling {:?}", self.culling) });
        }
        let mut camera = CameraSnapshot::new(self.view, self.projection, self.viewport, self.depth)?;
        camera.culling = self.culling;
        Ok(camera)
    }
}

impl std::fmt::Debug for PickRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PickRequest")
            .field("viewport", &self.viewport)
            .field("depth", &self.depth)
            .field("filter", &self.filter.is_some())
            .field("ignore", &self.ignore)
            .field("culling", &self.culling)
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
        let request = PickRequest::new(Viewport::full(4, 4), Mat4::IDENTITY, Mat4::IDENTITY).with_filter(&filter);
        send(&request);
    }
}
