//! What every pick pass owner needs: the allocator, the render pass and its pipelines.

use crate::cull::Plan;
use crate::draw::PickDraw;
use crate::error::PickError;
use crate::memory::Memory;
use crate::pass::{self, PassLayout, PassTargets};
use crate::picker::HostDevice;
use crate::pipeline::Pipelines;
use crate::record::{self, Framing, PassRecording};
use crate::view_math::CameraSnapshot;
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::sync::{Arc, Mutex};

pub(crate) struct PassKit {
    pub memory: Memory,
    pub layout: PassLayout,
    pub render_pass: vk::RenderPass,
    /// `Option` only so `Drop` can release the pipelines before the render pass.
    pub pipelines: Option<Pipelines>,
    max_draw_indirect_count: u32,
    /// Batch rows per slot of the owner's batch buffers (0: no batching).
    pub batch_rows: u32,
}

impl PassKit {
    /// # Safety
    /// As [`crate::Picker::new`].
    pub unsafe fn new(host: &HostDevice<'_>, layout: PassLayout) -> Result<Self, PickError> {
        let missing = pass::check_formats(host.instance, host.physical_device, layout);
        if !missing.is_empty() {
            return Err(PickError::Unsupported { missing });
        }
        let allocator = match &host.allocator {
            Some(shared) => shared.clone(),
            None => Arc::new(Mutex::new(Allocator::new(&AllocatorCreateDesc {
                instance: host.instance.clone(),
                device: host.device.clone(),
                physical_device: host.physical_device,
                debug_settings: Default::default(),
                buffer_device_address: false,
                allocation_sizes: Default::default(),
            })?)),
        };
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let limits = unsafe { host.instance.get_physical_device_properties(host.physical_device) }.limits;
        let mut kit = PassKit {
            memory: Memory { device: host.device.clone(), allocator },
            layout,
            render_pass: vk::RenderPass::null(),
            pipelines: None,
            // Without multiDrawIndirect, only 1 is allowed.
            max_draw_indirect_count: if host.batching_features_enabled { limits.max_draw_indirect_count.max(1) } else { 1 },
            batch_rows: 0,
        };
        kit.render_pass = pass::create_render_pass(host.device, layout)?;
        kit.pipelines = Some(Pipelines::new(host.device, kit.render_pass, layout.detail, layout.depth)?);
        Ok(kit)
    }

    /// Validates the planned draws, builds any pipeline they need (with up to `batch_rows`
    /// draws batched), and returns the recorder: after this nothing can fail, so an error
    /// leaves the command buffer untouched.
    pub fn recording<'a>(
        &'a mut self,
        cmd: vk::CommandBuffer,
        targets: &'a PassTargets,
        camera: &'a CameraSnapshot,
        framing: Framing,
        draws: &[PickDraw],
        plan: &Plan,
    ) -> Result<PassRecording<'a>, PickError> {
        let missing = || PickError::Vulkan(vk::Result::ERROR_INITIALIZATION_FAILED);
        record::prepare(self.pipelines.as_mut().ok_or_else(missing)?, draws, plan, self.batch_rows)?;
        let pipelines = self.pipelines.as_ref().ok_or_else(missing)?;
        Ok(PassRecording {
            device: &self.memory.device,
            cmd,
            render_pass: self.render_pass,
            layout: self.layout,
            targets,
            pipelines,
            camera,
            framing,
            max_draw_indirect_count: self.max_draw_indirect_count,
        })
    }
}

impl Drop for PassKit {
    fn drop(&mut self) {
        self.pipelines = None;
        // SAFETY: the owner's contract says the GPU no longer uses the render pass; null is ignored.
        unsafe { self.memory.device.destroy_render_pass(self.render_pass, None) };
    }
}
