//! Which deformed pipeline a draw takes: its influence sets' vertex layouts, or their formats
//! when they are read from storage.

use super::{Deformation, Influences, JointFormat, Skin, WeightFormat};

/// One influence set's vertex layout: joint format and stride, weight format and stride, and
/// where joints and weights interleave in one buffer at one stride, the weights' offset from
/// the joints (then one vertex binding serves both).
pub(crate) type SetLayout = (JointFormat, u32, WeightFormat, u32, Option<u32>);

/// What distinguishes deformed pipelines: how many influence sets, and their vertex layouts
/// (read from storage: only the formats, strides 0 and nothing shared).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DeformKey {
    pub sets: [Option<SetLayout>; 2],
    /// Joints and weights are read as storage words, not vertex attributes.
    pub from_storage: bool,
}

impl DeformKey {
    /// Which of the five deformed vertex shaders (precompiled, or a hook program's) draws it:
    /// 0 to 2 influence sets read as vertex attributes, then 1 or 2 read from storage.
    pub fn shader_variant(&self) -> usize {
        let sets = self.set_count().min(2);
        if self.from_storage && sets > 0 {
            2 + sets
        } else {
            sets
        }
    }

    pub fn of(d: &Deformation) -> Self {
        let from_storage = d.skin.as_ref().is_some_and(Skin::reads_streams_from_storage);
        let set = |i: &Influences| {
            if from_storage {
                return (i.joint_format, 0, i.weight_format, 0, None);
            }
            let (j, w) = (&i.joints, &i.weights);
            // 2047: the least maxVertexInputAttributeOffset a device may have.
            let shared = (j.range.buffer == w.range.buffer && j.stride == w.stride && w.range.offset >= j.range.offset)
                .then(|| w.range.offset - j.range.offset)
                .filter(|&delta| delta <= 2047)
                .map(|delta| delta as u32);
            (i.joint_format, j.stride, i.weight_format, w.stride, shared)
        };
        let skin = d.skin.as_ref();
        DeformKey { sets: [skin.map(|s| set(&s.influences)), skin.and_then(|s| s.more_influences.as_ref().map(set))], from_storage }
    }

    /// The shader's format codes (joints, weights of each set; 0 for a missing set), its
    /// specialization constants 1 to 4.
    pub fn format_codes(&self) -> [u32; 4] {
        let codes = |set: &Option<SetLayout>| set.map_or([0, 0], |(j, _, w, _, _)| [j.code(), w.code()]);
        let ([a, b], [c, d]) = (codes(&self.sets[0]), codes(&self.sets[1]));
        [a, b, c, d]
    }

    /// Influence sets the shader reads (0, 1 or 2).
    pub fn set_count(&self) -> usize {
        self.sets.iter().flatten().count()
    }
}
