//! The CPU alternative: a ray cast with parry3d's BVH over the same scene, flat (one BVH of
//! every world-space triangle) and two-level (a BVH of object bounds over one shared per-mesh
//! BVH). Build time, time per ray, and memory (heap bytes the built structures hold).

use crate::scenes::BenchScene;
use glam::DVec3;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::Ray;
use parry3d::shape::{CompositeShapeRef, TriMesh};
use std::time::Instant;

pub struct CpuBvhResult {
    pub name: &'static str,
    pub build_ms: f64,
    pub ray_us: f64,
    pub memory_bytes: u64,
    /// Object hit by each ray (`None`: miss).
    pub hits: Vec<Option<usize>>,
}

fn heap_bytes() -> u64 {
    crate::heap::allocated() as u64
}

fn v(p: glam::Vec3) -> Vector {
    Vector::new(p.x, p.y, p.z)
}

fn mesh_triangles(scene: &BenchScene) -> Vec<[u32; 3]> {
    (0..scene.mesh.triangle_count()).map(|t| scene.mesh.triangle(t)).collect()
}

fn timed_rays(rays: &[(DVec3, DVec3)], cast: impl Fn(&Ray) -> Option<usize>) -> (f64, Vec<Option<usize>>) {
    let t = Instant::now();
    let hits: Vec<Option<usize>> = rays.iter().map(|(o, d)| cast(&Ray::new(v(o.as_vec3()), v(d.as_vec3())))).collect();
    (t.elapsed().as_secs_f64() * 1e6 / rays.len().max(1) as f64, hits)
}

/// One BVH over every world-space triangle.
pub fn flat(scene: &BenchScene, rays: &[(DVec3, DVec3)]) -> Result<CpuBvhResult, String> {
    let tris = mesh_triangles(scene);
    let per = scene.mesh.positions.len() as u32;
    let before = heap_bytes();
    let t = Instant::now();
    let mut vertices = Vec::with_capacity(scene.transforms.len() * per as usize);
    let mut indices = Vec::with_capacity(scene.transforms.len() * tris.len());
    for (k, m) in scene.transforms.iter().enumerate() {
        vertices.extend(scene.mesh.positions.iter().map(|p| v(m.transform_point3(*p))));
        indices.extend(tris.iter().map(|t| t.map(|i| i + k as u32 * per)));
    }
    let mesh = TriMesh::new(vertices, indices).map_err(|e| format!("parry3d trimesh: {e:?}"))?;
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let memory_bytes = heap_bytes().saturating_sub(before);
    let per_object = tris.len();
    let (ray_us, hits) = timed_rays(rays, |r| CompositeShapeRef(&mesh).cast_local_ray(r, f32::MAX, true).map(|(tri, _)| tri as usize / per_object));
    Ok(CpuBvhResult { name: "CPU BVH, flat", build_ms, ray_us, memory_bytes, hits })
}

/// A BVH of object bounds (parry's `Bvh`) over one shared per-mesh BVH (a local `TriMesh`).
pub fn two_level(scene: &BenchScene, rays: &[(DVec3, DVec3)]) -> Result<CpuBvhResult, String> {
    let before = heap_bytes();
    let t = Instant::now();
    let local = TriMesh::new(scene.mesh.positions.iter().map(|p| v(*p)).collect(), mesh_triangles(scene)).map_err(|e| format!("parry3d trimesh: {e:?}"))?;
    let local_box = picking_vk::draw::Aabb::from_points(&scene.mesh.positions).ok_or("empty mesh")?;
    let leaves: Vec<Aabb> = scene
        .transforms
        .iter()
        .map(|m| {
            let b = local_box.transformed(m);
            Aabb::new(v(b.min), v(b.max))
        })
        .collect();
    let top = Bvh::from_leaves(BvhBuildStrategy::default(), &leaves);
    // Rigid transforms: a ray moved into object space keeps its parameter.
    let inverses: Vec<glam::Mat4> = scene.transforms.iter().map(|m| m.inverse()).collect();
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let memory_bytes = heap_bytes().saturating_sub(before);
    let (ray_us, hits) = timed_rays(rays, |r| {
        let o = glam::Vec3::new(r.origin.x, r.origin.y, r.origin.z);
        let d = glam::Vec3::new(r.dir.x, r.dir.y, r.dir.z);
        top.cast_ray(r, f32::MAX, |leaf, best| {
            let inv = &inverses[leaf as usize];
            let local_ray = Ray::new(v(inv.transform_point3(o)), v(inv.transform_vector3(d)));
            CompositeShapeRef(&local).cast_local_ray(&local_ray, best, true).map(|(_, toi)| toi)
        })
        .map(|(leaf, _)| leaf as usize)
    });
    Ok(CpuBvhResult { name: "CPU BVH, two-level", build_ms, ray_us, memory_bytes, hits })
}
