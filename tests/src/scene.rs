//! Test scenes: meshes and objects described on the CPU, uploaded into host buffers, and
//! turned into the `PickDraw`s a host engine would pass.

use ash::vk;
use glam::{Mat4, Quat, Vec3};
use picking_vk::{draw::BufferRange, draw::IndexWidth, draw::Instances, draw::MeshGeometry, draw::Positions, draw::Triangles, ObjectId, PickDraw};
use picking_vk_context::{HostBuffer, VulkanContext};
use std::sync::Arc;

/// Triangle-list geometry.
#[derive(Clone, Debug)]
pub struct Mesh {
    pub positions: Vec<Vec3>,
    /// `None` for a non-indexed mesh (every three positions form a triangle).
    pub indices: Option<Vec<u32>>,
}

/// Test vertex normals: arbitrary but deterministic per-vertex data (the direction from the
/// origin), enough to check interpolation and the normal transform.
pub fn vertex_normal(p: Vec3) -> Vec3 {
    p.normalize_or(Vec3::Y)
}

impl Mesh {
    pub fn triangle_count(&self) -> usize {
        self.indices.as_ref().map_or(self.positions.len(), Vec::len) / 3
    }

    /// The three vertex positions of triangle `t`.
    pub fn triangle(&self, t: usize) -> [Vec3; 3] {
        match &self.indices {
            Some(ix) => [0, 1, 2].map(|k| self.positions[ix[3 * t + k] as usize]),
            None => [0, 1, 2].map(|k| self.positions[3 * t + k]),
        }
    }

    /// An axis-aligned box of half-size `h`, 12 triangles.
    pub fn cuboid(h: Vec3) -> Mesh {
        let p = |x: f32, y: f32, z: f32| Vec3::new(x * h.x, y * h.y, z * h.z);
        let positions =
            vec![p(-1., -1., -1.), p(1., -1., -1.), p(1., 1., -1.), p(-1., 1., -1.), p(-1., -1., 1.), p(1., -1., 1.), p(1., 1., 1.), p(-1., 1., 1.)];
        let indices = vec![0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4, 3, 6, 2, 3, 7, 6, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5];
        Mesh { positions, indices: Some(indices) }
    }

    /// A unit-radius UV sphere with `rings` x `segments` quads.
    pub fn sphere(rings: u32, segments: u32) -> Mesh {
        let mut positions = vec![];
        for r in 0..=rings {
            let theta = std::f32::consts::PI * r as f32 / rings as f32;
            for s in 0..=segments {
                let phi = std::f32::consts::TAU * s as f32 / segments as f32;
                positions.push(Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()));
            }
        }
        let mut indices = vec![];
        let row = segments + 1;
        for r in 0..rings {
            for s in 0..segments {
                let (a, b, c, d) = (r * row + s, r * row + s + 1, (r + 1) * row + s, (r + 1) * row + s + 1);
                indices.extend_from_slice(&[a, c, b, b, c, d]);
            }
        }
        Mesh { positions, indices: Some(indices) }
    }

    /// A grid of `n` x `n` quads over [-h, h]² in the XY plane, indexed.
    pub fn grid(n: u32, h: f32) -> Mesh {
        let mut positions = vec![];
        for j in 0..=n {
            for i in 0..=n {
                positions.push(Vec3::new(-h + 2.0 * h * i as f32 / n as f32, -h + 2.0 * h * j as f32 / n as f32, 0.0));
            }
        }
        let mut indices = vec![];
        for j in 0..n {
            for i in 0..n {
                let a = j * (n + 1) + i;
                indices.extend([a, a + 1, a + n + 2, a, a + n + 2, a + n + 1]);
            }
        }
        Mesh { positions, indices: Some(indices) }
    }

    /// A square in the XY plane of half-size `h` facing +Z, as two non-indexed triangles.
    pub fn quad(h: f32) -> Mesh {
        let (a, b, c, d) = (Vec3::new(-h, -h, 0.0), Vec3::new(h, -h, 0.0), Vec3::new(h, h, 0.0), Vec3::new(-h, h, 0.0));
        Mesh { positions: vec![a, b, c, a, c, d], indices: None }
    }

    /// `count` random triangles inside a unit cube: thin slivers and overlaps included.
    pub fn random_soup(rng: &mut fastrand::Rng, count: usize) -> Mesh {
        let mut r = || rng.f32() * 2.0 - 1.0;
        let positions = (0..count * 3).map(|_| Vec3::new(r(), r(), r())).collect();
        Mesh { positions, indices: None }
    }

    /// The same triangles without an index buffer.
    pub fn unindexed(&self) -> Mesh {
        let positions = (0..self.triangle_count()).flat_map(|t| self.triangle(t)).collect();
        Mesh { positions, indices: None }
    }
}

/// How an object's positions sit in its vertex buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VertexLayout {
    Tight,
    /// Interleaved with other attributes: `stride` bytes per vertex, position at `offset`.
    Interleaved {
        stride: u32,
        offset: u32,
    },
}

/// One pickable thing in a test scene.
#[derive(Clone, Debug)]
pub struct Object {
    pub id: u64,
    pub mesh: usize,
    pub model: Mat4,
    pub instances: Option<Vec<Mat4>>,
    pub index_width: IndexWidth,
    pub layout: VertexLayout,
    pub pickable: bool,
    /// Put the geometry after unrelated vertices and indices, drawn with a non-zero first
    /// index / vertex offset (or first vertex), as engines that pack meshes do.
    pub packed: bool,
    /// How the draw is rasterized (culling; triangle lists only here).
    pub raster: picking_vk::draw::RasterState,
}

impl Object {
    pub fn new(id: u64, mesh: usize, model: Mat4) -> Self {
        Object {
            id,
            mesh,
            model,
            instances: None,
            index_width: IndexWidth::U32,
            layout: VertexLayout::Tight,
            pickable: true,
            packed: false,
            raster: picking_vk::draw::RasterState::default(),
        }
    }

    /// World transform of instance `i` (the model alone when not instanced).
    pub fn world(&self, instance: Option<usize>) -> Mat4 {
        match (&self.instances, instance) {
            (Some(list), Some(i)) => self.model * list[i],
            _ => self.model,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub meshes: Vec<Mesh>,
    pub objects: Vec<Object>,
}

/// A scene's buffers on the GPU and the draws that name them.
pub struct GpuScene {
    pub draws: Vec<PickDraw>,
    _buffers: Vec<HostBuffer>,
}

impl Scene {
    /// Uploads each object's geometry in the layout it asks for, registering CPU geometry
    /// (shared per buffer layout) and instance transforms for detail results.
    pub fn upload(&self, ctx: &VulkanContext) -> GpuScene {
        const PAD_VERTICES: usize = 5;
        const PAD_INDICES: usize = 6;
        let mut buffers = vec![];
        let mut draws = vec![];
        for obj in &self.objects {
            let mesh = &self.meshes[obj.mesh];
            let pad_v = if obj.packed { PAD_VERTICES } else { 0 };
            let pad_i = if obj.packed && mesh.indices.is_some() { PAD_INDICES } else { 0 };
            // Unrelated vertices first (far away, so drawing them by mistake would show).
            let mut positions: Vec<Vec3> = (0..pad_v).map(|i| Vec3::new(100.0 + i as f32, 0.0, 0.0)).collect();
            positions.extend_from_slice(&mesh.positions);
            let (stride, offset) = match obj.layout {
                VertexLayout::Tight => (12u32, 0u32),
                VertexLayout::Interleaved { stride, offset } => (stride, offset),
            };
            // Fill the padding with NaN: reading the wrong bytes would show.
            let mut words = vec![f32::NAN; (positions.len() * stride as usize + offset as usize) / 4 + 3];
            for (i, p) in positions.iter().enumerate() {
                let at = (i * stride as usize + offset as usize) / 4;
                words[at..at + 3].copy_from_slice(&p.to_array());
            }
            let vb = ctx.upload(&words, vk::BufferUsageFlags::VERTEX_BUFFER).expect("vertex buffer");
            let range = BufferRange { buffer: vb.buffer, offset: u64::from(offset), size: vb.size - u64::from(offset) };
            let positions_desc = Positions { range, stride, vertex_count: positions.len() as u32 };
            let mut all_indices = None;
            let triangles = match &mesh.indices {
                None => Triangles::NonIndexed { first_vertex: pad_v as u32, vertex_count: mesh.positions.len() as u32 },
                Some(ix) => {
                    let mut packed: Vec<u32> = vec![0; pad_i];
                    packed.extend_from_slice(ix);
                    let ib = match obj.index_width {
                        IndexWidth::U16 => ctx.upload(&packed.iter().map(|&i| i as u16).collect::<Vec<_>>(), vk::BufferUsageFlags::INDEX_BUFFER),
                        IndexWidth::U32 => ctx.upload(&packed, vk::BufferUsageFlags::INDEX_BUFFER),
                    }
                    .expect("index buffer");
                    let t = Triangles::Indexed {
                        range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
                        width: obj.index_width,
                        first_index: pad_i as u32,
                        index_count: ix.len() as u32,
                        vertex_offset: pad_v as i32,
                    };
                    all_indices = Some(packed);
                    buffers.push(ib);
                    t
                }
            };
            buffers.push(vb);
            let geometry = MeshGeometry {
                normals: Some(positions.iter().map(|p| vertex_normal(*p)).collect()),
                positions,
                uvs: None,
                indices: all_indices,
                ..Default::default()
            };
            geometry.validate().expect("test geometry is consistent");
            let mut draw = PickDraw::new(ObjectId::new(obj.id).expect("test IDs are non-zero"), positions_desc, triangles)
                .with_model(obj.model)
                .with_pickable(obj.pickable)
                .with_raster(obj.raster)
                .with_geometry(Arc::new(geometry));
            if let Some(list) = &obj.instances {
                let cols: Vec<[f32; 16]> = list.iter().map(|m| m.to_cols_array()).collect();
                // Readable as storage too: a test may bind the instances either way.
                let ib = ctx.upload(&cols, vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER).expect("instance buffer");
                draw = draw
                    .with_instances(Instances {
                        range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
                        stride: 64,
                        first: 0,
                        count: list.len() as u32,
                    })
                    .with_instance_transforms(list.clone().into());
                buffers.push(ib);
            }
            draws.push(draw);
        }
        GpuScene { draws, _buffers: buffers }
    }

    /// A random scene in front of a camera at the origin looking down -Z: boxes, spheres,
    /// triangle soups and an instanced field, with random (non-uniform) scales, u16/u32 indices,
    /// non-indexed meshes and interleaved vertex layouts.
    pub fn random(seed: u64) -> Scene {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut scene = Scene::default();
        scene.meshes.push(Mesh::cuboid(Vec3::new(0.5, 0.4, 0.3)));
        scene.meshes.push(Mesh::sphere(8, 12));
        scene.meshes.push(Mesh::random_soup(&mut rng, 24));
        scene.meshes.push(Mesh::sphere(6, 8).unindexed());
        let mut next_id = 1u64 + (rng.u64(..) >> 1); // large IDs, high bits set
        let random_pose = |rng: &mut fastrand::Rng| {
            let t = Vec3::new(rng.f32() * 5.0 - 2.5, rng.f32() * 3.6 - 1.8, -4.0 - rng.f32() * 6.0);
            let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
            let scale = Vec3::new(0.5 + rng.f32() * 1.5, 0.5 + rng.f32() * 1.5, 0.5 + rng.f32() * 1.5);
            Mat4::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis, rng.f32() * 6.0), t)
        };
        for k in 0..16 {
            let mut obj = Object::new(next_id, rng.usize(..scene.meshes.len()), random_pose(&mut rng));
            next_id = next_id.wrapping_add(1 + rng.u64(..1000)).max(1);
            obj.index_width = if k % 2 == 0 { IndexWidth::U16 } else { IndexWidth::U32 };
            if k % 3 == 0 {
                obj.layout = VertexLayout::Interleaved { stride: 32, offset: 8 };
            }
            obj.packed = k % 4 == 1;
            scene.objects.push(obj);
        }
        let mut field = Object::new(next_id, 0, random_pose(&mut rng));
        field.packed = true;
        field.instances = Some(
            (0..12)
                .map(|i| {
                    Mat4::from_scale_rotation_translation(
                        Vec3::splat(0.4 + 0.1 * (i % 3) as f32),
                        Quat::from_rotation_z(i as f32),
                        Vec3::new((i % 4) as f32 * 1.1 - 1.6, (i / 4) as f32 * 1.1 - 1.1, 0.0),
                    )
                })
                .collect(),
        );
        scene.objects.push(field);
        scene
    }
}
