//! The pass: its shape and how it begins (a render pass or dynamic rendering), its pipelines
//! and its targets, and [`PassKit`], what every owner of a pick pass (the picker, the debug
//! ID image) holds.

pub(crate) mod compute;
pub(crate) mod hook_compile;
pub(crate) mod hook_glsl;
pub(crate) mod hook_reflect;
pub(crate) mod hooked;
pub(crate) mod instance_sets;
pub(crate) mod pipeline;
pub(crate) mod pipeline_key;
pub(crate) mod rect;
pub(crate) mod render_pass;
pub(crate) mod rendering;
pub(crate) mod spirv;
pub(crate) mod targets;
pub(crate) mod vertex_input;

use crate::draw::DrawLimits;
use crate::error::PickError;
use crate::gpu::Memory;
use ash::vk;
use instance_sets::InstanceSets;
use pipeline::Pipelines;
pub(crate) use render_pass::{formats_missing, sampled_formats_missing, PassLayout};
use rendering::{Pass, Rendering};

pub(crate) struct PassKit {
    /// Dropped before the pass they were built for (fields drop in order).
    pub pipelines: Pipelines,
    pub pass: Pass,
    /// Sets binding the host's instance storage buffers (shared with the rectangle kit).
    pub instance_sets: InstanceSets,
    pub memory: Memory,
    pub layout: PassLayout,
    /// Largest draw count of one indirect draw (1 without multiDrawIndirect).
    pub max_draw_indirect_count: u32,
    /// Batch rows per slot of the owner's batch buffers (0: no batching).
    pub batch_rows: u32,
    /// What draws may do on this device: they are checked against it.
    pub draw_limits: DrawLimits,
}

impl PassKit {
    /// The pass and pipeline set for `layout`, begun the way `rendering` says; `batching`
    /// says batched recording is on; `draw_limits` what the host enabled for draws.
    pub fn new(
        memory: &Memory,
        limits: &vk::PhysicalDeviceLimits,
        layout: PassLayout,
        rendering: &Rendering,
        batching: bool,
        draw_limits: DrawLimits,
    ) -> Result<Self, PickError> {
        let pass = Pass::new(memory, render_pass::hit_shape(layout), rendering)?;
        let flavour = pipeline_key::Flavour::Hit { detail: layout.detail };
        let instance_sets = InstanceSets::new(memory)?;
        let pipeline_limits = pipeline_key::PipelineLimits::of(limits, draw_limits.wide_lines);
        let pipelines = Pipelines::new(memory, pass.pipeline_target(), flavour, None, instance_sets.layout.handle, pipeline_limits)?;
        Ok(PassKit {
            pipelines,
            pass,
            instance_sets,
            memory: memory.clone(),
            layout,
            max_draw_indirect_count: if batching { limits.max_draw_indirect_count.max(1) } else { 1 },
            batch_rows: 0,
            draw_limits,
        })
    }
}
