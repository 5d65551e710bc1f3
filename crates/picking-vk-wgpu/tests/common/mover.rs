//! The app's compute pass that writes an instance buffer on the GPU each frame: every
//! transform is the base one moved by an offset.

use glam::{Mat4, Vec3};

const SHADER: &str = r"
struct Move { offset: vec4<f32>, count: u32 };
@group(0) @binding(0) var<storage, read> base: array<mat4x4<f32>>;
@group(0) @binding(1) var<storage, read_write> instances: array<mat4x4<f32>>;
@group(0) @binding(2) var<uniform> motion: Move;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < motion.count {
        var m = base[id.x];
        m[3] = m[3] + vec4<f32>(motion.offset.xyz, 0.0);
        instances[id.x] = m;
    }
}
";

pub struct InstanceMover {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    base: wgpu::Buffer,
    motion: wgpu::Buffer,
    count: u32,
}

impl InstanceMover {
    pub fn new(device: &wgpu::Device, instances: &wgpu::Buffer, count: u32) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("mover"), source: wgpu::ShaderSource::Wgsl(SHADER.into()) });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("mover"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let buffer = |size, usage| device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage, mapped_at_creation: false });
        let base = buffer(u64::from(count) * 64, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let motion = buffer(32, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: base.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: instances.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: motion.as_entire_binding() },
            ],
        });
        InstanceMover { pipeline, group, base, motion, count }
    }

    /// The compute pass that writes `base` moved by `offset` into the instance buffer.
    pub fn record(&self, device: &wgpu::Device, queue: &wgpu::Queue, base: &[Mat4], offset: Vec3) -> wgpu::CommandBuffer {
        let bytes: Vec<u8> = base.iter().flat_map(|m| m.to_cols_array()).flat_map(f32::to_le_bytes).collect();
        queue.write_buffer(&self.base, 0, &bytes);
        let mut motion: Vec<u8> = offset.extend(0.0).to_array().iter().flat_map(|f| f.to_le_bytes()).collect();
        motion.extend(self.count.to_le_bytes());
        motion.resize(32, 0);
        queue.write_buffer(&self.motion, 0, &motion);
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.group, &[]);
            pass.dispatch_workgroups(self.count.div_ceil(64), 1, 1);
        }
        encoder.finish()
    }
}
