//! [`IdImage`]: the same pick pass at the full size of the view, read back whole. For debug
//! views (the ID buffer in false colour), parity checks and benchmarks; never needed to pick.

use crate::draw::PickDraw;
use crate::error::{Input, PickError, Requirement};
use crate::gpu::{image_info, word_at, GpuBuffer, Memory};
use crate::handoff::{PassStats, Texels};
use crate::host::HostDevice;
use crate::pass::render_pass::DEPTH_FORMAT;
use crate::pass::rendering::Rendering;
use crate::pass::targets::PassTargets;
use crate::pass::{PassKit, PassLayout};
use crate::plan::Plan;
use crate::record::{Framing, PassRecording};
use crate::request::viewport::ViewportLimits;
use crate::request::PickRequest;
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Full-size ID, (draw, instance) and depth images of a view, with a host-readable copy.
pub struct IdImage {
    // Fields drop in order: buffers and images before the pass kit.
    readback: GpuBuffer,
    targets: PassTargets,
    kit: PassKit,
    plan: Plan,
    extent: vk::Extent2D,
    viewport_limits: ViewportLimits,
    /// Recordings so far: each is a frame of the storage buffer sets, whose sets from
    /// earlier ones are never reused (their buffers may be gone) and may be rewritten
    /// (those recordings completed, as `record`'s contract says).
    recordings: u64,
    /// Shader stages the device lacks (where the host said): refused in host writes.
    disabled_stages: vk::PipelineStageFlags,
}

/// Per-pixel bytes in the readback buffer: ID (8), draw/instance (8), depth (4).
const TEXEL_BYTES: u64 = 20;

/// What [`IdImage::record`] copies to the readback buffer after the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdCopy {
    /// No copy: the images stay on the GPU.
    Nothing,
    /// Only this framebuffer pixel: read it with [`IdImage::read_pixel`].
    Pixel(glam::UVec2),
    /// Every pixel: read them with [`IdImage::read`].
    Whole,
}

impl IdImage {
    /// Creates images of `width` x `height` pixels (basic attachments only).
    ///
    /// # Safety
    /// As [`crate::Picker::new`].
    pub unsafe fn new(host: HostDevice<'_>, width: u32, height: u32) -> Result<Self, PickError> {
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let limits = unsafe { host.instance.get_physical_device_properties(host.physical_device) }.limits;
        check_size(&limits, width, height)?;
        // SAFETY: as above.
        let support = unsafe { crate::PickSupport::query(host.instance, host.instance_api_version, host.physical_device) };
        let layout = PassLayout { detail: false, sampled: false };
        // SAFETY: the caller's contract is `Memory::new`'s.
        let mut memory = unsafe { Memory::new(host.instance, host.device, host.physical_device, host.allocator.as_ref(), host.debug_utils) }?;
        memory.pipeline_cache = host.pipeline_cache;
        let draw_limits = host.draw_limits(&limits);
        let kit = PassKit::new(&memory, &limits, layout, &Rendering::RenderPass, false, draw_limits)?;
        let extent = vk::Extent2D { width, height };
        let targets = PassTargets::new(&memory, &kit.pass, layout, extent)?;
        let bytes = u64::from(width) * u64::from(height) * TEXEL_BYTES;
        let readback = GpuBuffer::new(&memory, "id image readback", bytes, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        Ok(IdImage {
            readback,
            targets,
            kit,
            plan: Plan::default(),
            extent,
            viewport_limits: ViewportLimits::of(&limits, support.negative_viewport_height()),
            recordings: 0,
            disabled_stages: host.disabled_stages(),
        })
    }

    /// Bytes the attachments of a `width` x `height` ID image need on this device, asked of
    /// the driver without allocating anything (for memory comparisons).
    ///
    /// Sizes the device cannot make are refused as [`IdImage::new`] refuses them.
    ///
    /// # Safety
    /// The device and physical device belong to the live instance.
    pub unsafe fn attachment_bytes_for(host: HostDevice<'_>, width: u32, height: u32) -> Result<u64, PickError> {
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let limits = unsafe { host.instance.get_physical_device_properties(host.physical_device) }.limits;
        check_size(&limits, width, height)?;
        let device = host.device;
        let layout = PassLayout { detail: false, sampled: false };
        let color = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        let depth = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        let formats = layout.color_formats().iter().map(|&f| (f, color)).chain([(DEPTH_FORMAT, depth)]);
        let mut total = 0;
        for (format, usage) in formats {
            let info = image_info(format, vk::Extent2D { width, height }, usage);
            // SAFETY: valid create info; the image is destroyed right after the query.
            unsafe {
                let image = device.create_image(&info, None)?;
                total += device.get_image_memory_requirements(image).size;
                device.destroy_image(image, None);
            }
        }
        Ok(total)
    }

    /// Width and height in pixels.
    pub fn extent(&self) -> (u32, u32) {
        (self.extent.width, self.extent.height)
    }

    /// Bytes of the images (not the readback buffer).
    pub fn attachment_bytes(&self) -> u64 {
        self.targets.bytes()
    }

    /// Records the pass over the whole view (or, with `scissor`, only that framebuffer pixel:
    /// the classic full-size-attachment approach) and the copy `copy` asks for.
    ///
    /// # Safety
    /// As [`crate::Picker::record`]; the images must not be in use by other pending GPU work
    /// that this command buffer is not ordered after, and the GPU work of this image's
    /// previous `record` has completed (the descriptor sets it bound are rewritten).
    pub unsafe fn record(
        &mut self,
        cmd: vk::CommandBuffer,
        request: &PickRequest<'_>,
        draws: &[PickDraw],
        scissor: Option<glam::UVec2>,
        copy: IdCopy,
    ) -> Result<PassStats, PickError> {
        let camera = request.camera()?;
        let copied = match copy {
            IdCopy::Pixel(pixel) => Some(pixel),
            IdCopy::Nothing | IdCopy::Whole => None,
        };
        for pixel in scissor.iter().chain(&copied) {
            if pixel.x >= self.extent.width || pixel.y >= self.extent.height {
                return Err(PickError::OutsideView { x: pixel.x.into(), y: pixel.y.into() });
            }
        }
        self.viewport_limits.check(&request.viewport, 0.0, 0.0)?;
        if let Some(w) = &request.host_writes {
            w.check()?;
        }
        request.check_enabled_stages(self.disabled_stages)?;
        let contributor_ids = crate::draw::contributor::check_ranges(request.contributors, draws)?;
        self.plan.build(request, draws, None, Some(self.kit.draw_limits))?;
        self.recordings += 1;
        self.kit.instance_sets.begin_frame(self.recordings, self.recordings);
        let recording = PassRecording::prepare(&mut self.kit, cmd, &self.targets, &camera, Framing::FullView { scissor }, draws, &self.plan)?
            .with_contributors(request, contributor_ids);
        let mut snapshots = Vec::new();
        // SAFETY: the caller's contract covers `cmd` and the buffers; `prepare` passed.
        let stats = unsafe {
            if let Some(w) = &request.host_writes {
                w.record_before(recording.device, cmd);
            }
            recording.record(request, draws, &self.plan, &mut snapshots, None)
        };
        if copy != IdCopy::Nothing {
            // SAFETY: as above.
            unsafe { self.record_copy_out(cmd, copied) };
        }
        if let Some(w) = &request.host_writes {
            // SAFETY: as above.
            unsafe { w.record_after(&self.kit.memory.device, cmd) };
        }
        Ok(stats)
    }

    /// # Safety
    /// `cmd` is recording outside a render pass, after the pass that rendered `targets`.
    unsafe fn record_copy_out(&self, cmd: vk::CommandBuffer, pixel: Option<glam::UVec2>) {
        let (d, targets, readback) = (&self.kit.memory.device, &self.targets, &self.readback);
        let pixels = u64::from(self.extent.width) * u64::from(self.extent.height);
        // The whole image, or one texel placed first in each attachment's region.
        let (image_offset, image_extent) = match pixel {
            Some(p) => (vk::Offset3D { x: p.x as i32, y: p.y as i32, z: 0 }, vk::Extent3D { width: 1, height: 1, depth: 1 }),
            None => (vk::Offset3D::default(), vk::Extent3D { width: self.extent.width, height: self.extent.height, depth: 1 }),
        };
        let region = |offset: u64, aspect| vk::BufferImageCopy {
            buffer_offset: offset,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_offset,
            image_extent,
        };
        let color = vk::ImageAspectFlags::COLOR;
        let barrier = |src, dst| readback.barrier(src, dst, 0, vk::WHOLE_SIZE);
        // SAFETY: images are in TRANSFER_SRC_OPTIMAL after the pass; the regions fit the buffer.
        unsafe {
            let before = barrier(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::HOST_READ, vk::AccessFlags::TRANSFER_WRITE);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[before],
                &[],
            );
            d.cmd_copy_image_to_buffer(cmd, targets.images()[0].image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, readback.buffer, &[region(0, color)]);
            d.cmd_copy_image_to_buffer(cmd, targets.images()[1].image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, readback.buffer, &[region(pixels * 8, color)]);
            d.cmd_copy_image_to_buffer(
                cmd,
                targets.depth_image(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                readback.buffer,
                &[region(pixels * 16, vk::ImageAspectFlags::DEPTH)],
            );
            let after = barrier(vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &[], &[after], &[]);
        }
    }

    /// The texel copied by the last [`IdCopy::Pixel`](IdCopy::Pixel) record.
    ///
    /// # Safety
    /// The command buffer that last recorded this image's copy has completed, or will never
    /// be submitted (the bytes read are then an older copy's, not undefined).
    pub unsafe fn read_pixel(&self) -> Result<Texels, PickError> {
        // SAFETY: the caller's contract.
        let bytes = unsafe { self.readback_bytes() }?;
        Ok(self.texel(bytes, 0))
    }

    /// The texels of every pixel, row by row, from the last recorded copy.
    ///
    /// # Safety
    /// The command buffer that last recorded this image's copy has completed, or will never
    /// be submitted (the bytes read are then an older copy's, not undefined).
    pub unsafe fn read(&self) -> Result<Vec<Texels>, PickError> {
        // SAFETY: the caller's contract.
        let bytes = unsafe { self.readback_bytes() }?;
        Ok((0..self.pixel_count()).map(|i| self.texel(bytes, i)).collect())
    }

    /// # Safety
    /// As [`IdImage::read`].
    unsafe fn readback_bytes(&self) -> Result<&[u8], PickError> {
        // SAFETY: the caller's contract.
        unsafe { self.readback.host_bytes() }
    }

    fn pixel_count(&self) -> usize {
        (u64::from(self.extent.width) * u64::from(self.extent.height)) as usize
    }

    /// Texel `i` of the readback: each attachment's copy sits in its own region.
    fn texel(&self, bytes: &[u8], i: usize) -> Texels {
        let pixels = self.pixel_count();
        let word = |at: usize| word_at(bytes, at);
        Texels {
            id: [word(i * 8), word(i * 8 + 4)],
            draw_instance: [word(pixels * 8 + i * 8), word(pixels * 8 + i * 8 + 4)],
            depth: f32::from_bits(word(pixels * 16 + i * 4)),
            detail: None,
        }
    }
}

/// Refuses an ID image of no pixels, or one past the device's framebuffer and image limits.
fn check_size(limits: &vk::PhysicalDeviceLimits, width: u32, height: u32) -> Result<(), PickError> {
    if width == 0 || height == 0 {
        return Err(PickError::InvalidInput { input: Input::ImageSize, reason: format!("{width}x{height} pixels") });
    }
    let largest = limits.max_framebuffer_width.min(limits.max_image_dimension2_d).min(limits.max_framebuffer_height);
    if width > largest || height > largest {
        let needed = format!("an ID image of {width}x{height} pixels; the device allows {largest}");
        return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxFramebufferWidth/Height", needed }] });
    }
    Ok(())
}
