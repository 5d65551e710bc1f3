//! Benchmark scenes: N objects of one mesh, each its own draw with its own transform (as
//! engines without instancing submit them), or one instanced field.

use glam::{Mat4, Quat, Vec3};
use picking_vk::{draw::Aabb, ObjectId, PickDraw};
use picking_vk_context::{ContextError, VulkanContext};
use picking_vk_host::{shapes, GpuPrimitive, GpuScene, Primitive, RenderDraw};
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
pub struct SceneSpec {
    pub name: &'static str,
    pub objects: usize,
    pub instanced: bool,
    /// Sphere rings x segments (2 * rings * segments triangles), or a 12-triangle box.
    pub mesh: MeshSpec,
}

#[derive(Clone, Copy, Debug)]
pub enum MeshSpec {
    Sphere { rings: u32, segments: u32 },
    Box,
}

impl MeshSpec {
    pub fn primitive(self) -> Primitive {
        match self {
            MeshSpec::Sphere { rings, segments } => shapes::sphere(1.2, rings, segments, [0.6, 0.7, 0.9, 1.0]),
            MeshSpec::Box => shapes::cuboid(Vec3::splat(0.2), [0.8, 0.6, 0.4, 1.0]),
        }
    }
}

/// A scene on the GPU, with CPU copies of what the CPU ray-cast baseline needs.
pub struct BenchScene {
    pub spec: SceneSpec,
    pub gpu: GpuScene,
    pub mesh: Primitive,
    /// Rigid transforms (rotation + translation), so the CPU baseline can use them as poses.
    pub transforms: Vec<Mat4>,
    pub triangles_per_object: usize,
}

impl BenchScene {
    pub fn build(ctx: &VulkanContext, spec: SceneSpec, seed: u64) -> Result<Self, ContextError> {
        let mesh = spec.mesh.primitive();
        let mut rng = fastrand::Rng::with_seed(seed);
        let transforms: Vec<Mat4> = if spec.instanced {
            // A square field on the ground in front of the camera.
            let side = (spec.objects as f32).sqrt().ceil() as usize;
            (0..spec.objects)
                .map(|i| {
                    let (x, z) = ((i % side) as f32, (i / side) as f32);
                    Mat4::from_rotation_translation(Quat::from_rotation_y(rng.f32() * 6.0), Vec3::new((x - side as f32 * 0.5) * 0.5, -2.0, -3.0 - z * 0.5))
                })
                .collect()
        } else {
            // A volume filling the view: depth 8..60, spread with the frustum.
            (0..spec.objects)
                .map(|_| {
                    let z = 8.0 + rng.f32() * 52.0;
                    let p = Vec3::new((rng.f32() - 0.5) * z * 1.1, (rng.f32() - 0.5) * z * 0.6, -z);
                    let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
                    Mat4::from_rotation_translation(Quat::from_axis_angle(axis, rng.f32() * 6.0), p)
                })
                .collect()
        };
        let mut gpu = GpuScene::new(ctx, vec![GpuPrimitive::upload(ctx, &mesh)?], &transforms, &[])?;
        let bounds = Aabb::from_points(&mesh.positions);
        let mut pick_draws = vec![];
        let prim = &gpu.primitives[0];
        // CPU geometry registered, as the viewer does for detail: culling also proves hits with it.
        let base = PickDraw::new(ObjectId::new(1).unwrap_or_else(|_| unreachable!()), prim.positions(), prim.triangles()).with_geometry(prim.geometry.clone());
        let with_bounds = |d: PickDraw| match bounds {
            Some(b) => d.with_bounds(b),
            None => d,
        };
        if spec.instanced {
            let arc: Arc<[Mat4]> = transforms.clone().into();
            let count = transforms.len() as u32;
            pick_draws.push(with_bounds(base.clone()).with_instances(gpu.instances(0, 0, count)).with_instance_transforms(arc));
            gpu.render_draws.push(RenderDraw { primitive: 0, first_slot: 0, slot_count: count, mirrored: false, skin: None, weights: None });
        } else {
            for (i, m) in transforms.iter().enumerate() {
                let mut d = with_bounds(base.clone()).with_model(*m);
                d.id = ObjectId::new(i as u64 + 1).unwrap_or_else(|_| unreachable!());
                pick_draws.push(d);
                gpu.render_draws.push(RenderDraw { primitive: 0, first_slot: i as u32, slot_count: 1, mirrored: false, skin: None, weights: None });
            }
        }
        gpu.pick_draws = pick_draws.into();
        Ok(BenchScene { spec, gpu, triangles_per_object: mesh.triangle_count(), mesh, transforms })
    }

    /// The object hit by a pick: its draw index for separate draws, the instance for the field.
    pub fn object_of(&self, id: Option<ObjectId>, instance: Option<u32>) -> Option<usize> {
        let id = id?;
        if self.spec.instanced {
            instance.map(|i| i as usize)
        } else {
            Some(id.get() as usize - 1)
        }
    }
}
