//! Turning the texels read back for one frame into a [`PickResult`], using the snapshot taken
//! when that frame was recorded (so later scene changes cannot remap it).

pub(crate) mod detail;
pub(crate) mod query;
pub(crate) mod result;

use crate::draw::ContributorHit;
use crate::handoff::{Snapshots, Texels};
use crate::id::ObjectId;
use crate::request::camera::CameraSnapshot;
use detail::DetailSource;
use glam::{DVec3, UVec2};
use result::{PickHit, PickResult, PickStats};

/// Builds the result from the frame's snapshot and texels.
pub(crate) fn resolve(frame: u64, pixel: UVec2, camera: &CameraSnapshot, draws: Snapshots<'_>, texels: &Texels) -> PickResult {
    let ray = camera.pixel_ray(pixel);
    let hit = ObjectId::from_words(texels.id).map(|id| {
        let [recorded, instance] = texels.draw_instance;
        let draw = draws.get(recorded as usize);
        let contributor = draw.and_then(|d| d.contributor.clone());
        let consistent = match &contributor {
            Some((_, ids)) => ids.contains(&id.get()),
            None => draw.is_some_and(|d| d.id == id),
        };
        if !consistent {
            log::warn!("picking-vk: recorded draw {recorded} of frame {frame} does not carry ID {id}; texels inconsistent");
        }
        let instanced = draw.is_some_and(|d| d.instanced);
        let depth = crate::readback::window_depth(texels.depth, camera.clear_depth());
        let world = camera.unproject_pixel(pixel, depth);
        let (world, distance) = match world {
            Some(w) => (w, (w - camera.eye).length()),
            None => (DVec3::splat(f64::INFINITY), f64::INFINITY),
        };
        // Contributors write a sentinel face: their hits carry no detail.
        let detail = texels.detail.filter(|t| t[0] != u32::MAX || contributor.is_none()).map(|[face, b0, b1, b2]| {
            // Which elements an indirect command drew is the GPU's to know: the face only.
            let source = draw.filter(|d| !d.indirect).map(|d| DetailSource {
                triangles: d.triangles,
                topology: d.topology,
                restart: d.restart,
                geometry: d.geometry.clone(),
                world: d.world(instance),
                ray,
                pixel_world: world,
                moved: d.world_adjusted || d.deform.as_ref().is_some_and(|(pose, _)| pose.is_none()),
                // A world-adjust hook moved the deformed vertices: the CPU pose no longer says where.
                deform: d.deform.as_ref().filter(|_| !d.world_adjusted).and_then(|(pose, skinned)| Some((pose.clone()?, *skinned))),
            });
            // The face within the draw: a chunk-culled recording's primitives count from its run.
            let face = face.wrapping_add(draw.map_or(0, |d| d.primitive_base));
            let mut detail = detail::resolve_detail(source.as_ref(), face, [f32::from_bits(b0), f32::from_bits(b1), f32::from_bits(b2)]);
            // An indirect draw's topology is known where the elements it drew are not.
            if let Some(d) = draw {
                detail.primitive = d.topology.primitive();
            }
            detail
        });
        PickHit {
            id,
            instance: instanced.then_some(instance),
            draw_index: draw.map_or(u32::MAX, |d| d.draw_index),
            tag: draw.map_or(0, |d| d.tag),
            depth,
            world,
            distance,
            detail,
            contributor: contributor
                .filter(|(_, ids)| ids.contains(&id.get()))
                .map(|(index, ids)| ContributorHit { contributor: index, local: id.get() - ids.start }),
        }
    });
    PickResult { frame, pixel, ray, hit, stats: PickStats::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::Triangles;
    use crate::handoff::DrawSnapshot;
    use crate::request::viewport::Viewport;
    use glam::camera::rh::{proj::vulkan, view::look_at_mat4};
    use glam::Mat4;
    use glam::Vec3;

    fn snapshot(id: ObjectId, instanced: bool) -> DrawSnapshot {
        DrawSnapshot {
            id,
            draw_index: 40 + u32::from(instanced),
            tag: 7,
            priority: 0,
            instanced,
            model: Mat4::IDENTITY,
            triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 30 },
            topology: crate::draw::Topology::TriangleList,
            restart: false,
            geometry: None,
            instance_transforms: None,
            world_adjusted: false,
            indirect: false,
            deform: None,
            contributor: None,
            primitive_base: 0,
        }
    }

    fn camera() -> CameraSnapshot {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 4.0), Vec3::ZERO, Vec3::Y);
        let proj = vulkan::perspective(1.0, 1.0, 0.5, 50.0);
        CameraSnapshot::new(view, proj, Viewport::full(64, 64), None).unwrap()
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
        let r = resolve(9, UVec2::new(32, 32), &cam, Snapshots::recorded(&draws), &texels);
        let hit = r.hit.unwrap();
        assert_eq!((r.frame, hit.id, hit.instance), (9, id, Some(17)));
        assert_eq!((hit.draw_index, hit.tag), (41, 7), "the host's index and tag, not the recorded position");
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
        let miss = resolve(1, UVec2::new(0, 0), &cam, Snapshots::recorded(&draws), &Texels { depth: 1.0, ..Default::default() });
        assert!(miss.hit.is_none() && miss.ray.is_some());
        let t = Texels { id: [3, 0], draw_instance: [0, 0], depth: 0.5, detail: Some([4, 0.25f32.to_bits(), 0.5f32.to_bits(), 0.25f32.to_bits()]) };
        let hit = resolve(1, UVec2::new(5, 5), &cam, Snapshots::recorded(&draws), &t).hit.unwrap();
        assert_eq!(hit.instance, None);
        let d = hit.detail.unwrap();
        assert_eq!((d.face, d.barycentrics, d.gpu_barycentrics), (4, [0.25, 0.5, 0.25], [0.25, 0.5, 0.25]));
        assert_eq!(d.vertices, Some([12, 13, 14]), "non-indexed: vertices follow from the face");
        assert_eq!(d.surface, None, "no geometry registered");
        // A recording of the draw's triangles from 3 on: the GPU counts faces from there.
        let run = [snapshot(ObjectId::new(3).unwrap(), false).starting_at(3)];
        let t = Texels { detail: Some([1, 0.25f32.to_bits(), 0.5f32.to_bits(), 0.25f32.to_bits()]), ..t };
        let d = resolve(1, UVec2::new(5, 5), &cam, Snapshots::recorded(&run), &t).hit.unwrap().detail.unwrap();
        assert_eq!((d.face, d.vertices), (4, Some([12, 13, 14])), "the face within the draw");
    }
}
