//! The pass: the render pass, its pipelines and its targets, and [`PassKit`], what every
//! owner of a pick pass (the picker, the debug ID image) holds.

pub(crate) mod pipeline;
pub(crate) mod rect;
pub(crate) mod render_pass;
pub(crate) mod targets;

use crate::error::PickError;
use crate::gpu::{Memory, Owned};
use ash::vk;
use pipeline::Pipelines;
pub(crate) use render_pass::{formats_missing, PassLayout};

pub(crate) struct PassKit {
    /// Dropped before the render pass they were built for (fields drop in order).
    pub pipelines: Pipelines,
    pub render_pass: Owned<vk::RenderPass>,
    pub memory: Memory,
    pub layout: PassLayout,
    /// Largest draw count of one indirect draw (1 without multiDrawIndirect).
    pub max_draw_indirect_count: u32,
    /// Batch rows per slot of the owner's batch buffers (0: no batching).
    pub batch_rows: u32,
    /// `maxVertexInputBindingStride`: draws' strides are checked against it.
    pub max_stride: u32,
}

impl PassKit {
    /// The render pass and pipeline set for `layout`; `batching` says the host enabled
    /// multiDrawIndirect.
    pub fn new(memory: &Memory, limits: &vk::PhysicalDeviceLimits, layout: PassLayout, batching: bool) -> Result<Self, PickError> {
        let render_pass = render_pass::create_render_pass(memory, layout)?;
        let pipelines = Pipelines::new(memory, render_pass.handle, pipeline::Flavour::Hit { detail: layout.detail }, None)?;
        Ok(PassKit {
            pipelines,
            render_pass,
            memory: memory.clone(),
            layout,
            max_draw_indirect_count: if batching { limits.max_draw_indirect_count.max(1) } else { 1 },
            batch_rows: 0,
            max_stride: limits.max_vertex_input_binding_stride,
        })
    }
}
