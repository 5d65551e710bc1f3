//! Checking a deformation against the draw and the device before anything is recorded.

use super::{BufferRange, Deformation, VertexStream};
use ash::vk;
use glam::Mat4;

impl Deformation {
    /// Checks streams, buffers and the CPU pose against the draw's `vertex_count` positions,
    /// the device's largest binding stride and storage range.
    pub(crate) fn validate(&self, vertex_count: u32, max_stride: u32, max_storage_range: u32) -> Result<(), String> {
        if self.skin.is_none() && self.morph.is_none() {
            return Err("the deformation has neither a skin nor morph targets".into());
        }
        let storage = |r: &BufferRange, needed: u64, what: &str| -> Result<(), String> {
            r.check_size(what)?;
            if r.buffer == vk::Buffer::null() {
                return Err(format!("the {what} buffer is null"));
            }
            if !r.offset.is_multiple_of(4) {
                return Err(format!("the {what} offset {} is not a multiple of 4", r.offset));
            }
            if needed > r.size {
                return Err(format!("the {what} need {needed} bytes, the range holds {}", r.size));
            }
            if r.size == 0 {
                return Err(format!("the {what} range is empty"));
            }
            if r.offset.saturating_add(r.size) > u64::from(max_storage_range) {
                return Err(format!("the {what} buffer's first {} bytes exceed maxStorageBufferRange ({max_storage_range})", r.offset.saturating_add(r.size)));
            }
            Ok(())
        };
        let stream = |s: &VertexStream, size: u32, component: u32, what: &str| -> Result<(), String> {
            if s.range.buffer == vk::Buffer::null() {
                return Err(format!("the {what} buffer is null"));
            }
            s.range.check_size(what)?;
            if s.stride < size || s.stride > max_stride {
                return Err(format!("{what} stride {} lies outside {size}..={max_stride} bytes", s.stride));
            }
            if !s.range.offset.is_multiple_of(u64::from(component)) || !s.stride.is_multiple_of(component) {
                return Err(format!("{what} offset {} and stride {} must be multiples of {component} bytes", s.range.offset, s.stride));
            }
            let needed = u64::from(vertex_count.saturating_sub(1)) * u64::from(s.stride) + u64::from(size);
            if vertex_count > 0 && needed > s.range.size {
                return Err(format!("{what} of {vertex_count} vertices need {needed} bytes, the range holds {}", s.range.size));
            }
            Ok(())
        };
        if let Some(skin) = &self.skin {
            if skin.joint_count == 0 {
                return Err("a skin needs at least one joint".into());
            }
            storage(&skin.matrices, u64::from(skin.joint_count) * 64, "joint matrices")?;
            for (k, set) in std::iter::once(&skin.influences).chain(&skin.more_influences).enumerate() {
                stream(&set.joints, set.joint_format.bytes(), set.joint_format.component_bytes(), &format!("joints_{k}"))?;
                stream(&set.weights, set.weight_format.bytes(), set.weight_format.component_bytes(), &format!("weights_{k}"))?;
            }
            if skin.reads_streams_from_storage() {
                for (k, s) in skin.streams().enumerate() {
                    if s.range.offset.saturating_add(s.range.size) > u64::from(max_storage_range) {
                        let end = s.range.offset.saturating_add(s.range.size);
                        return Err(format!("streams_in_storage: influence stream {k}'s first {end} bytes exceed maxStorageBufferRange ({max_storage_range})"));
                    }
                }
            }
            if let Some(pose) = self.pose.as_ref().filter(|p| p.joint_matrices.len() < skin.joint_count as usize) {
                return Err(format!("the CPU pose has {} joint matrices for {} joints", pose.joint_matrices.len(), skin.joint_count));
            }
        }
        if let Some(morph) = &self.morph {
            if morph.target_count == 0 {
                return Err("morph targets need at least one target".into());
            }
            storage(&morph.deltas, (u64::from(morph.target_count) * u64::from(vertex_count)).saturating_mul(12), "morph deltas")?;
            storage(&morph.weights, u64::from(morph.target_count) * 4, "morph weights")?;
            if let Some(pose) = self.pose.as_ref().filter(|p| p.morph_weights.len() < morph.target_count as usize) {
                return Err(format!("the CPU pose has {} morph weights for {} targets", pose.morph_weights.len(), morph.target_count));
            }
        }
        if let Some(pose) = &self.pose {
            if !pose.joint_matrices.iter().all(Mat4::is_finite) || !pose.morph_weights.iter().all(|w| w.is_finite()) {
                return Err("the CPU pose has a non-finite value".into());
            }
        }
        Ok(())
    }
}
