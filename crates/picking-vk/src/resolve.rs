//! Turning the texels read back for one frame into a [`PickResult`], using the snapshot taken
//! when that frame was recorded (so later scene changes cannot remap it).

use crate::detail::{self, DetailSource, HitDetail, MeshGeometry};
use crate::draw::{PickDraw, Triangles};
use crate::id::ObjectId;
use crate::record::PassStats;
use crate::view_math::{CameraSnapshot, Ray};
use glam::{DVec3, Mat4, UVec2};
use std::sync::Arc;

/// What the picker remembers of a recorded draw until its frame resolves. Geometry is held by
/// `Arc`, so a result refers to the geometry as registered when it was recorded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DrawSnapshot {
    pub id: ObjectId,
    pub instanced: bool,
    pub model: Mat4,
    pub triangles: Triangles,
    pub geometry: Option<Arc<MeshGeometry>>,
    pub instance_transforms: Option<Arc<[Mat4]>>,
}

impl DrawSnapshot {
    pub fn of(draw: &PickDraw) -> Self {
        DrawSnapshot {
            id: draw.id,
            instanced: draw.instances.is_some(),
            model: draw.model,
            triangles: draw.triangles,
            geometry: draw.geometry.clone(),
            instance_transforms: draw.instance_transforms.clone(),
        }
    }

    /// Object-to-world of one instance; `None` for an instanced draw without CPU transforms.
    fn world(&self, instance: u32) -> Option<Mat4> {
        if !self.instanced {
            return Some(self.model);
        }
        let t = self.instance_transforms.as_ref()?.get(instance as usize)?;
        Some(self.model * *t)
    }
}

/// The raw values read back for the picked pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Texels {
    pub id: [u32; 2],
    /// (draw index, instance index).
    pub draw_instance: [u32; 2],
    pub depth: f32,
    /// (primitive index, barycentric bits x3) when the detail attachment exists.
    pub detail: Option<[u32; 4]>,
}

/// What lies under the picked pixel.
#[derive(Clone, Debug, PartialEq)]
pub struct PickHit {
    pub id: ObjectId,
    /// Instance index within its draw, for instanced draws.
    pub instance: Option<u32>,
    /// Index of the draw among those recorded that frame.
    pub draw_index: u32,
    /// Framebuffer depth of the nearest fragment.
    pub depth: f32,
    /// World-space point: the pixel centre unprojected at `depth`.
    pub world: DVec3,
    /// Distance from the camera's eye to `world`.
    pub distance: f64,
    /// Present when the picker runs with the detail attachment.
    pub detail: Option<HitDetail>,
}

/// Statistics of the frame that produced a result.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PickStats {
    pub pass: PassStats,
    /// GPU time of the pick pass and its copy, with `PickerConfig::timestamps`.
    pub gpu_time_ns: Option<f64>,
}

/// The answer for one frame's pick.
#[derive(Clone, Debug, PartialEq)]
pub struct PickResult {
    /// What the pick pass did (draws recorded and culled, GPU time when measured).
    pub stats: PickStats,
    /// The frame number `Picker::record` returned in its ticket.
    pub frame: u64,
    /// The framebuffer pixel that was picked.
    pub pixel: UVec2,
    /// The ray through the pixel centre; `None` only for degenerate cameras.
    pub ray: Option<Ray>,
    /// `None` for a miss.
    pub hit: Option<PickHit>,
}

impl PickResult {
    pub fn id(&self) -> Option<ObjectId> {
        self.hit.as_ref().map(|h| h.id)
    }
}

/// Builds the result from the frame's snapshot and texels.
pub(crate) fn resolve(frame: u64, pixel: UVec2, camera: &CameraSnapshot, draws: &[DrawSnapshot], texels: &Texels) -> PickResult {
    let ray = camera.pixel_ray(pixel);
    let hit = ObjectId::from_words(texels.id).map(|id| {
        let [draw_index, instance] = texels.draw_instance;
        let draw = draws.get(draw_index as usize);
        if draw.is_some_and(|d| d.id != id) {
            log::warn!("picking-vk: draw {draw_index} of frame {frame} was recorded with another ID; texels inconsistent");
        }
        let instanced = draw.is_some_and(|d| d.instanced);
        let world = camera.unproject_pixel(pixel, texels.depth);
        let (world, distance) = match world {
            Some(w) => (w, (w - camera.eye).length()),
            None => (DVec3::splat(f64::INFINITY), f64::INFINITY),
        };
        let detail = texels.detail.map(|[face, b0, b1, b2]| {
            let source = draw.map(|d| DetailSource { triangles: d.triangles, geometry: d.geometry.clone(), world: d.world(instance), ray });
            detail::resolve_detail(source.as_ref(), face, [f32::from_bits(b0), f32::from_bits(b1), f32::from_bits(b2)])
        });
        PickHit { id, instance: instanced.then_some(instance), draw_index, depth: texels.depth, world, distance, detail }
    });
    PickResult { frame, pixel, ray, hit, stats: PickStats::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{DepthConvention, Viewport};
    use glam::camera::rh::{proj::vulkan, view::look_at_mat4};
    use glam::Vec3;

    fn snapshot(id: ObjectId, instanced: bool) -> DrawSnapshot {
        DrawSnapshot {
            id,
            instanced,
            model: Mat4::IDENTITY,
            triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 30 },
            geometry: None,
            instance_transforms: None,
        }
    }

    fn camera() -> CameraSnapshot {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 4.0), Vec3::ZERO, Vec3::Y);
        let proj = vulkan::perspective(1.0, 1.0, 0.5, 50.0);
        CameraSnapshot::new(view, proj, Viewport::full(64, 64), DepthConvention::Standard).unwrap()
    }

    #[test]
    fn a_hit_resolves_id_instance_point_and_distance() {
        let cam = camera();
        let id = ObjectId::new(0xFFFF_FFFF_0000_0001).unwrap();
        let draws = [snapshot(ObjectId::new(3).unwrap(), false), snapshot(id, true)];
        // Depth of the plane z = 0 seen from z = 4: project the origin.
        let clip = cam.view_projection * glam::DVec4::new(0.0, 0.0, 0.0, 1.0);
        let depth = (clip.z / clip.w) as f32;
        let texels = Texels { id: id.to_words(), draw_instance: [1, 17], depth, detail: None };
        // Pixel (32, 32) has its centre at NDC (1/64, 1/64): just off the axis.
        let r = resolve(9, UVec2::new(32, 32), &cam, &draws, &texels);
        let hit = r.hit.unwrap();
        assert_eq!((r.frame, hit.id, hit.instance, hit.draw_index), (9, id, Some(17), 1));
        assert!(hit.world.z.abs() < 1e-5, "{:?}", hit.world);
        assert!((hit.distance - hit.world.distance(DVec3::new(0.0, 0.0, 4.0))).abs() < 1e-12);
        assert!((hit.distance - 4.0).abs() < 0.01);
        let ray = r.ray.unwrap();
        let along = (hit.world - ray.origin).normalize();
        assert!(along.dot(ray.direction) > 1.0 - 1e-9, "the hit lies on the pick ray");
    }

    #[test]
    fn a_cleared_texel_is_a_miss_and_non_instanced_has_no_instance() {
        let cam = camera();
        let draws = [snapshot(ObjectId::new(3).unwrap(), false)];
        let miss = resolve(1, UVec2::new(0, 0), &cam, &draws, &Texels { depth: 1.0, ..Default::default() });
        assert!(miss.hit.is_none() && miss.ray.is_some());
        let t = Texels { id: [3, 0], draw_instance: [0, 0], depth: 0.5, detail: Some([4, 0.25f32.to_bits(), 0.5f32.to_bits(), 0.25f32.to_bits()]) };
        let hit = resolve(1, UVec2::new(5, 5), &cam, &draws, &t).hit.unwrap();
        assert_eq!(hit.instance, None);
        let d = hit.detail.unwrap();
        assert_eq!((d.face, d.barycentrics, d.gpu_barycentrics), (4, [0.25, 0.5, 0.25], [0.25, 0.5, 0.25]));
        assert_eq!(d.vertices, Some([12, 13, 14]), "non-indexed: vertices follow from the face");
        assert_eq!(d.surface, None, "no geometry registered");
    }
}
