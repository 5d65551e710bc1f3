//! The example's scene and its own wgpu renderer (nothing here is picking but
//! `SceneRenderer::pick_draws`, which describes the same buffers to the picker). Shared by
//! the windowed example, the headless tests and the benchmark.

#![allow(dead_code)]

use glam::{Mat4, Quat, Vec3};
use picking_vk_wgpu::picking_vk::ObjectId;
use picking_vk_wgpu::{InstanceTransforms, VertexPositions, WgpuDraw};
use std::sync::Arc;
use wgpu::util::DeviceExt;

pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// A mesh on the CPU: triangles of `positions` by `indices`.
pub struct MeshData {
    pub positions: Vec<Vec3>,
    pub indices: Vec<u32>,
    /// Stored as position + normal (24-byte vertices) rather than positions alone.
    pub interleaved: bool,
    /// Stored with 16-bit indices.
    pub short_indices: bool,
}

/// An object: a mesh placed by `model`, and for an instanced object each instance by
/// `model * instances[i]`.
pub struct ObjectData {
    pub id: u64,
    pub mesh: usize,
    pub model: Mat4,
    pub instances: Option<Vec<Mat4>>,
    pub color: [f32; 3],
}

pub struct SceneData {
    pub meshes: Vec<MeshData>,
    pub objects: Vec<ObjectData>,
}

fn cuboid(h: Vec3) -> MeshData {
    let p = |x: f32, y: f32, z: f32| Vec3::new(x * h.x, y * h.y, z * h.z);
    let positions = vec![p(-1., -1., -1.), p(1., -1., -1.), p(1., 1., -1.), p(-1., 1., -1.), p(-1., -1., 1.), p(1., -1., 1.), p(1., 1., 1.), p(-1., 1., 1.)];
    let indices = vec![0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4, 3, 6, 2, 3, 7, 6, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5];
    MeshData { positions, indices, interleaved: false, short_indices: false }
}

fn sphere(rings: u32, segments: u32) -> MeshData {
    let mut positions = vec![];
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
            positions.push(Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()));
        }
    }
    let row = segments + 1;
    let mut indices = vec![];
    for r in 0..rings {
        for s in 0..segments {
            let (a, b, c, d) = (r * row + s, r * row + s + 1, (r + 1) * row + s, (r + 1) * row + s + 1);
            indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    MeshData { positions, indices, interleaved: true, short_indices: true }
}

fn ground(n: u32, h: f32) -> MeshData {
    let mut positions = vec![];
    for j in 0..=n {
        for i in 0..=n {
            positions.push(Vec3::new(-h + 2.0 * h * i as f32 / n as f32, 0.0, -h + 2.0 * h * j as f32 / n as f32));
        }
    }
    let mut indices = vec![];
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            indices.extend([a, a + n + 2, a + 1, a, a + n + 1, a + n + 2]);
        }
    }
    MeshData { positions, indices, interleaved: false, short_indices: false }
}

/// The example's scene: a ground, a box, a sphere, a thin rod and a field of 16 instanced
/// cubes.
pub fn example_scene() -> SceneData {
    let meshes = vec![ground(8, 4.0), cuboid(Vec3::splat(0.5)), sphere(16, 24), cuboid(Vec3::new(0.03, 1.0, 0.03)), cuboid(Vec3::splat(0.18))];
    let field = (0..16)
        .map(|i| Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32 * 0.4), Vec3::new((i % 4) as f32 * 0.6, 0.18, (i / 4) as f32 * 0.6)))
        .collect();
    let objects = vec![
        ObjectData { id: 1, mesh: 0, model: Mat4::IDENTITY, instances: None, color: [0.45, 0.5, 0.42] },
        ObjectData { id: 2, mesh: 1, model: Mat4::from_translation(Vec3::new(-1.6, 0.5, -0.8)), instances: None, color: [0.8, 0.3, 0.3] },
        ObjectData {
            id: 3,
            mesh: 2,
            model: Mat4::from_scale_rotation_translation(Vec3::splat(0.7), Quat::IDENTITY, Vec3::new(-0.2, 0.7, -1.8)),
            instances: None,
            color: [0.3, 0.5, 0.85],
        },
        ObjectData { id: 4, mesh: 3, model: Mat4::from_translation(Vec3::new(-0.7, 1.0, 0.6)), instances: None, color: [0.9, 0.9, 0.9] },
        ObjectData { id: 5, mesh: 4, model: Mat4::from_translation(Vec3::new(0.6, 0.0, 0.3)), instances: Some(field), color: [0.85, 0.7, 0.3] },
    ];
    SceneData { meshes, objects }
}

/// An orbiting camera: view and projection (wgpu's clip space, depth 0..1).
pub fn orbit_camera(angle: f32, aspect: f32) -> (Mat4, Mat4) {
    let eye = Vec3::new(angle.cos() * 6.5, 3.2, angle.sin() * 6.5);
    // wgpu's clip space is Direct3D's: y up, depth 0..1.
    (glam::camera::rh::view::look_at_mat4(eye, Vec3::new(0.0, 0.4, 0.0), Vec3::Y), glam::camera::rh::proj::directx::perspective(0.8, aspect, 0.1, 50.0))
}

/// What the renderer tints, per object: hovered (the whole object or one instance), in the
/// selection, in the rubber band's set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Highlight {
    pub hovered: Option<(u64, Option<u32>)>,
    pub selected: Vec<(u64, Option<u32>)>,
    pub band: Vec<(u64, Option<u32>)>,
}

struct GpuMesh {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    interleaved: bool,
    short_indices: bool,
}

struct GpuObject {
    id: u64,
    mesh: usize,
    model: Mat4,
    color: [f32; 3],
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    instance_count: u32,
    instanced: bool,
    /// The instance transforms on the CPU for the picker's culling; `None` once the GPU
    /// writes them.
    cpu_transforms: Option<Arc<[Mat4]>>,
}

/// The scene's buffers and the app's pipeline.
pub struct SceneRenderer {
    meshes: Vec<GpuMesh>,
    objects: Vec<GpuObject>,
    camera: wgpu::Buffer,
    camera_group: wgpu::BindGroup,
    pipelines: [wgpu::RenderPipeline; 2],
}

fn bytes_of_mat4s(m: &[Mat4]) -> Vec<u8> {
    m.iter().flat_map(|m| m.to_cols_array()).flat_map(f32::to_le_bytes).collect()
}

impl SceneRenderer {
    pub fn new(device: &wgpu::Device, scene: &SceneData, color_format: wgpu::TextureFormat) -> Self {
        let meshes = scene.meshes.iter().map(|m| upload_mesh(device, m)).collect();
        let camera = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("camera"),
            size: 64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let uniform_layout = |label| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries: &[wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
                    count: None,
                }],
            })
        };
        let (camera_layout, object_layout) = (uniform_layout("camera"), uniform_layout("object"));
        let group = |layout: &wgpu::BindGroupLayout, buffer: &wgpu::Buffer| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout,
                entries: &[wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }],
            })
        };
        let camera_group = group(&camera_layout, &camera);
        let objects = scene
            .objects
            .iter()
            .map(|o| {
                let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("object"),
                    size: 112,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let transforms = o.instances.clone().unwrap_or_else(|| vec![Mat4::IDENTITY]);
                // STORAGE too: the tests' compute pass moves instances on the GPU.
                let usage = wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
                let instances =
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("instances"), contents: &bytes_of_mat4s(&transforms), usage });
                let bind_group = group(&object_layout, &uniform);
                let cpu_transforms = o.instances.as_ref().map(|t| Arc::from(t.as_slice()));
                let instanced = o.instances.is_some();
                GpuObject {
                    id: o.id,
                    mesh: o.mesh,
                    model: o.model,
                    color: o.color,
                    uniform,
                    bind_group,
                    instance_count: transforms.len() as u32,
                    instances,
                    instanced,
                    cpu_transforms,
                }
            })
            .collect();
        let pipelines = create_pipelines(device, &[Some(&camera_layout), Some(&object_layout)], color_format);
        SceneRenderer { meshes, objects, camera, camera_group, pipelines }
    }

    /// Writes the camera and every object's uniform (model, colour, what to tint).
    pub fn update(&self, queue: &wgpu::Queue, view_proj: Mat4, highlight: &Highlight) {
        queue.write_buffer(&self.camera, 0, &bytes_of_mat4s(&[view_proj]));
        for o in &self.objects {
            let mask = |set: &[(u64, Option<u32>)]| {
                let whole = set.iter().any(|&(id, i)| id == o.id && i.is_none()) as u32;
                let bits = set.iter().filter(|&&(id, _)| id == o.id).filter_map(|&(_, i)| i).filter(|&i| i < 32).fold(0u32, |m, i| m | 1 << i);
                (whole, bits)
            };
            let hovered = match highlight.hovered {
                Some((id, None)) if id == o.id => 1,
                Some((id, Some(i))) if id == o.id => i + 2,
                _ => 0,
            };
            let (sel_whole, sel_bits) = mask(&highlight.selected);
            let (band_whole, band_bits) = mask(&highlight.band);
            let mut bytes = bytes_of_mat4s(&[o.model]);
            bytes.extend(o.color.iter().chain(&[1.0]).flat_map(|c| c.to_le_bytes()));
            bytes.extend([hovered, sel_whole, sel_bits, band_whole, band_bits, 0, 0, 0].iter().flat_map(|v| v.to_le_bytes()));
            queue.write_buffer(&o.uniform, 0, &bytes);
        }
    }

    /// Draws the scene into `color` (cleared) with `depth`.
    pub fn render(&self, encoder: &mut wgpu::CommandEncoder, color: &wgpu::TextureView, depth: &wgpu::TextureView) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: color,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.08, g: 0.09, b: 0.11, a: 1.0 }), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_bind_group(0, &self.camera_group, &[]);
        for o in &self.objects {
            let mesh = &self.meshes[o.mesh];
            pass.set_pipeline(&self.pipelines[usize::from(mesh.interleaved)]);
            pass.set_bind_group(1, &o.bind_group, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_vertex_buffer(1, o.instances.slice(..));
            let format = if mesh.short_indices { wgpu::IndexFormat::Uint16 } else { wgpu::IndexFormat::Uint32 };
            pass.set_index_buffer(mesh.indices.slice(..), format);
            pass.draw_indexed(0..mesh.index_count, 0, 0..o.instance_count);
        }
    }

    /// The same draws for the picker: the same buffers, layouts and ranges.
    pub fn pick_draws(&self) -> Vec<WgpuDraw> {
        self.objects.iter().map(|o| self.pick_draw(o).expect("the scene's buffers have the usages a pick reads")).collect()
    }

    fn pick_draw(&self, o: &GpuObject) -> Result<WgpuDraw, picking_vk_wgpu::WgpuPickError> {
        let mesh = &self.meshes[o.mesh];
        let stride = if mesh.interleaved { 24 } else { 12 };
        let positions = VertexPositions { array_stride: stride, ..VertexPositions::tight(&mesh.vertices) };
        let format = if mesh.short_indices { wgpu::IndexFormat::Uint16 } else { wgpu::IndexFormat::Uint32 };
        let draw = WgpuDraw::indexed(ObjectId::new(o.id)?, positions, &mesh.indices, 0, format, 0..mesh.index_count, 0)?.with_model(o.model);
        if !o.instanced {
            return Ok(draw);
        }
        let instances = InstanceTransforms { buffer: &o.instances, offset: 0, array_stride: 64, format: Default::default() };
        let draw = draw.with_instances(instances, 0..o.instance_count)?;
        Ok(match &o.cpu_transforms {
            Some(transforms) => draw.with_instance_transforms(Arc::clone(transforms)),
            None => draw,
        })
    }

    /// The instance buffer of object `index`, which from now on the GPU writes (the tests'
    /// compute pass): the picker gets no CPU copy of its transforms.
    pub fn gpu_written_instances(&mut self, index: usize) -> &wgpu::Buffer {
        self.objects[index].cpu_transforms = None;
        &self.objects[index].instances
    }
}

fn upload_mesh(device: &wgpu::Device, m: &MeshData) -> GpuMesh {
    let vertex_bytes: Vec<u8> = if m.interleaved {
        m.positions.iter().flat_map(|p| [p.to_array(), p.normalize_or(Vec3::Y).to_array()].concat()).flat_map(f32::to_le_bytes).collect()
    } else {
        m.positions.iter().flat_map(|p| p.to_array()).flat_map(f32::to_le_bytes).collect()
    };
    let mut index_bytes: Vec<u8> = if m.short_indices {
        m.indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
    } else {
        m.indices.iter().flat_map(|i| i.to_le_bytes()).collect()
    };
    // wgpu copies whole words.
    index_bytes.resize(index_bytes.len().next_multiple_of(4), 0);
    let vertices =
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("vertices"), contents: &vertex_bytes, usage: wgpu::BufferUsages::VERTEX });
    let indices =
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("indices"), contents: &index_bytes, usage: wgpu::BufferUsages::INDEX });
    GpuMesh { vertices, indices, index_count: m.indices.len() as u32, interleaved: m.interleaved, short_indices: m.short_indices }
}

/// The pipelines for tight (12-byte) and interleaved (24-byte) vertices.
fn create_pipelines(device: &wgpu::Device, layouts: &[Option<&wgpu::BindGroupLayout>], color_format: wgpu::TextureFormat) -> [wgpu::RenderPipeline; 2] {
    let shader = device.create_shader_module(wgpu::include_wgsl!("scene.wgsl"));
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some("scene"), bind_group_layouts: layouts, ..Default::default() });
    let instance_attributes = wgpu::vertex_attr_array![1 => Float32x4, 2 => Float32x4, 3 => Float32x4, 4 => Float32x4];
    let position = [wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 0, shader_location: 0 }];
    let pipeline_for = |stride| {
        let buffers = [
            Some(wgpu::VertexBufferLayout { array_stride: stride, step_mode: wgpu::VertexStepMode::Vertex, attributes: &position }),
            Some(wgpu::VertexBufferLayout { array_stride: 64, step_mode: wgpu::VertexStepMode::Instance, attributes: &instance_attributes }),
        ];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("scene"),
            layout: Some(&layout),
            vertex: wgpu::VertexState { module: &shader, entry_point: Some("vs"), compilation_options: Default::default(), buffers: &buffers },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(color_format.into())],
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    [pipeline_for(12), pipeline_for(24)]
}

/// Finishes `encoder` with a copy of `texture` (4 bytes a texel) and returns its rows, tight.
pub fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    texture: &wgpu::Texture,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let (width, height) = (texture.width(), texture.height());
    let row = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read back"),
        size: u64::from(row * height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo { buffer: &buffer, layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: None } },
        texture.size(),
    );
    queue.submit([encoder.finish()]);
    buffer.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let mapped = buffer.slice(..).get_mapped_range()?;
    Ok(mapped.chunks(row as usize).flat_map(|r| &r[..width as usize * 4]).copied().collect())
}

/// A colour and depth target of `size` to render into offscreen.
pub struct Offscreen {
    pub color_texture: wgpu::Texture,
    pub color: wgpu::TextureView,
    pub depth: wgpu::TextureView,
}

pub fn offscreen(device: &wgpu::Device, size: glam::UVec2) -> Offscreen {
    let texture = |format, label| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d { width: size.x, height: size.y, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
    };
    let color_texture = texture(COLOR_FORMAT, "color");
    let color = color_texture.create_view(&Default::default());
    let depth = texture(DEPTH_FORMAT, "depth").create_view(&Default::default());
    Offscreen { color_texture, color, depth }
}
