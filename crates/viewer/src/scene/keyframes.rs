//! A scene's keyframe data as the file gives it: node transforms, skins, and animation
//! channels with their samplers ([`crate::animation`] poses a scene with them).

use glam::{DMat4, DQuat, DVec3, Mat4};
use std::sync::Arc;

/// A node's transform relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeTransform {
    /// Translation, rotation, scale: what animations target.
    Trs { translation: DVec3, rotation: DQuat, scale: DVec3 },
    /// A matrix (glTF forbids animating such nodes).
    Matrix(DMat4),
}

impl Default for NodeTransform {
    fn default() -> Self {
        NodeTransform::Matrix(DMat4::IDENTITY)
    }
}

impl NodeTransform {
    pub fn matrix(&self) -> DMat4 {
        match *self {
            NodeTransform::Trs { translation, rotation, scale } => DMat4::from_scale_rotation_translation(scale, rotation.normalize(), translation),
            NodeTransform::Matrix(m) => m,
        }
    }
}

/// A glTF skin: its joints (indices into `Scene::nodes`) and their inverse bind matrices,
/// and the joint matrices of the current pose.
#[derive(Clone, Debug, Default)]
pub struct Skin {
    pub joints: Vec<usize>,
    pub inverse_bind: Vec<DMat4>,
    /// Per joint, at the current pose: the joint's world (relative to the scene's origin)
    /// times its inverse bind matrix. A skinned mesh's node transform plays no part (glTF).
    pub palette: Vec<Mat4>,
}

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    Translation,
    Rotation,
    Scale,
    /// Morph target weights (as many per key as the node's mesh has targets).
    Weights,
}

/// How a sampler interpolates between keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    Step,
    Linear,
    /// Hermite: each key holds (in-tangent, value, out-tangent).
    CubicSpline,
}

/// One animated property of one node.
#[derive(Clone, Debug)]
pub struct Channel {
    /// Index into `Scene::nodes`.
    pub node: usize,
    pub property: Property,
    pub interpolation: Interpolation,
    /// Key times in seconds, increasing (shared by the channels of one sampler input).
    pub times: Arc<[f32]>,
    /// Key values, `width` floats per key (three times as many for cubic splines; shared by
    /// the channels of one sampler output).
    pub values: Arc<[f32]>,
    pub width: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Animation {
    pub name: Option<String>,
    pub channels: Vec<Channel>,
}

impl Animation {
    /// The last key time of any channel.
    pub fn duration(&self) -> f32 {
        self.channels.iter().filter_map(|c| c.times.last().copied()).fold(0.0, f32::max)
    }
}

impl Channel {
    /// The value at `time` (`width` floats), clamped to the first and last keys.
    pub fn sample(&self, time: f32) -> Vec<f64> {
        let w = self.width;
        let spline = self.interpolation == Interpolation::CubicSpline;
        let stride = if spline { 3 * w } else { w };
        // The key's value (the middle third of a spline key).
        let value = |k: usize| -> Vec<f64> {
            let at = k * stride + if spline { w } else { 0 };
            self.values[at..at + w].iter().map(|&v| f64::from(v)).collect()
        };
        let keys = &self.times;
        let last = keys.len() - 1;
        if time <= keys[0] || time.is_nan() {
            return value(0);
        }
        if time >= keys[last] {
            return value(last);
        }
        let k = keys.partition_point(|&t| t <= time) - 1;
        let (t0, t1) = (f64::from(keys[k]), f64::from(keys[k + 1]));
        let dt = t1 - t0;
        let s = if dt > 0.0 { (f64::from(time) - t0) / dt } else { 0.0 };
        match self.interpolation {
            Interpolation::Step => value(k),
            Interpolation::Linear if self.property == Property::Rotation => {
                let q = |v: Vec<f64>| DQuat::from_xyzw(v[0], v[1], v[2], v[3]).normalize();
                let r = q(value(k)).slerp(q(value(k + 1)), s);
                vec![r.x, r.y, r.z, r.w]
            }
            Interpolation::Linear => value(k).iter().zip(value(k + 1)).map(|(a, b)| a + (b - a) * s).collect(),
            Interpolation::CubicSpline => {
                let part = |key: usize, third: usize, i: usize| f64::from(self.values[key * stride + third * w + i]);
                let (s2, s3) = (s * s, s * s * s);
                let (h00, h10, h01, h11) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2);
                (0..w).map(|i| h00 * part(k, 1, i) + h10 * dt * part(k, 2, i) + h01 * part(k + 1, 1, i) + h11 * dt * part(k + 1, 0, i)).collect()
            }
        }
    }
}
