//! What the wgpu bridge's tests share: a wgpu device on lavapipe with the Khronos validation
//! layer (wgpu turns on synchronization validation with it) whose messages fail the test, an
//! offscreen target, and the example's scene for the CPU ray-cast oracle.

#![allow(dead_code)]

pub mod app;
pub mod mover;
#[path = "../../examples/common/scene.rs"]
pub mod scene;

use glam::Mat4;
use picking_vk::{PickQuery, PickRequest};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_wgpu::{PickCommands, PickingDevice, WgpuDraw, WgpuPickError, WgpuPicker};
use std::sync::Mutex;

/// Every warning and error wgpu logged (the validation layer's messages among them).
static MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Recorder;

impl log::Log for Recorder {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = format!("{} {}: {}", record.level(), record.target(), record.args());
            eprintln!("{line}");
            MESSAGES.lock().unwrap_or_else(|e| e.into_inner()).push(line);
        }
    }
    fn flush(&self) {}
}

static RECORDER: Recorder = Recorder;

/// Where the validation layer writes its messages: wgpu hands them to its log only with
/// `InstanceFlags::DEBUG`, which also makes naga emit a WGSL `OpSource` that Debian 12's
/// layer (1.3.239) cannot parse, so the tests run with `VALIDATION` alone and have the layer
/// write its own log: through a settings file (`VK_LAYER_SETTINGS_PATH`, what 1.3.239 reads)
/// and the environment variables newer layers read. `wgpu_validation_canary` proves it works.
fn layer_log() -> &'static std::path::Path {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("picking-vk-wgpu-validation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let log = dir.join("messages.log");
        let _ = std::fs::remove_file(&log);
        let settings = format!(
            "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG\nkhronos_validation.log_filename = {}\nkhronos_validation.report_flags = error,warn,perf\n",
            log.display()
        );
        std::fs::write(dir.join("vk_layer_settings.txt"), settings).expect("the layer settings");
        // Set once, before any instance reads them.
        std::env::set_var("VK_LAYER_SETTINGS_PATH", &dir);
        std::env::set_var("VK_KHRONOS_VALIDATION_LOG_FILENAME", &log);
        std::env::set_var("VK_KHRONOS_VALIDATION_REPORT_FLAGS", "error,warn,perf");
        std::env::set_var("VK_KHRONOS_VALIDATION_DEBUG_ACTION", "VK_DBG_LAYER_ACTION_LOG_MSG");
        log
    })
}

/// Fails the test if the validation layer reported anything, or wgpu logged a warning or an
/// error, so far.
pub fn assert_no_messages() {
    let messages = MESSAGES.lock().unwrap_or_else(|e| e.into_inner());
    assert!(messages.is_empty(), "{} wgpu message(s):\n{}", messages.len(), messages.join("\n"));
    let layer = layer_messages();
    assert!(layer.trim().is_empty(), "validation messages:\n{layer}");
}

/// What the validation layer reported so far in this process.
pub fn layer_messages() -> String {
    std::fs::read_to_string(layer_log()).unwrap_or_default()
}

/// wgpu on the Vulkan adapter, the validation layer on. Panics (fails the test, never skips)
/// when there is no Vulkan device or no validation layer.
pub fn adapter() -> wgpu::Adapter {
    let _ = log::set_logger(&RECORDER).map(|()| log::set_max_level(log::LevelFilter::Warn));
    layer_log();
    // SAFETY: loading the system's Vulkan loader.
    let entry = unsafe { ash::Entry::load() }.expect("a Vulkan loader");
    // SAFETY: plain enumeration.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.expect("instance layers");
    assert!(layers.iter().any(|l| l.layer_name_as_c_str() == Ok(c"VK_LAYER_KHRONOS_validation")), "the Khronos validation layer is not installed");
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    // wgpu turns on synchronization validation with the layer.
    desc.flags = wgpu::InstanceFlags::VALIDATION;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).expect("a Vulkan adapter (lavapipe in CI)")
}

/// The device with every capability the bridge offers on this adapter.
pub fn device(adapter: &wgpu::Adapter) -> PickingDevice {
    let offered = picking_vk_wgpu::offered(adapter).expect("a Vulkan adapter");
    picking_vk_wgpu::request_device(adapter, &wgpu::DeviceDescriptor::default(), offered).expect("the device")
}

/// [`WgpuPicker::record`] under its contract, which these tests keep: none destroys a buffer
/// or texture on another thread while a pick records (the destroyed-buffer tests destroy
/// before the call, or after it).
pub trait RecordPick {
    fn record_pick(&mut self, request: &PickRequest<'_>, queries: &[PickQuery], draws: &[WgpuDraw]) -> Result<PickCommands, WgpuPickError>;
}

impl RecordPick for WgpuPicker {
    fn record_pick(&mut self, request: &PickRequest<'_>, queries: &[PickQuery], draws: &[WgpuDraw]) -> Result<PickCommands, WgpuPickError> {
        // SAFETY: as above.
        unsafe { self.record(request, queries, draws) }
    }
}

pub fn picker(device: &PickingDevice, frames: usize, queries: u32) -> WgpuPicker {
    let config = picking_vk::PickerConfig::default().with_frames_in_flight(frames).with_max_queries(queries);
    WgpuPicker::new(device, config).expect("the picker")
}

/// The scene as the oracle's, with `moved` replacing object `index`'s instance transforms.
pub fn oracle_scene(data: &scene::SceneData, moved: Option<(usize, &[Mat4])>) -> picking_vk_tests::scene::Scene {
    use picking_vk_tests::scene::{Mesh, Object, Scene};
    let meshes = data.meshes.iter().map(|m| Mesh { positions: m.positions.clone(), indices: Some(m.indices.clone()) }).collect();
    let objects = data
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut object = Object::new(o.id, o.mesh, o.model);
            object.instances = match moved {
                Some((m, transforms)) if m == i => Some(transforms.to_vec()),
                _ => o.instances.clone(),
            };
            object
        })
        .collect();
    Scene { meshes, objects }
}

/// The oracle for a wgpu camera over a `width` x `height` target: wgpu's clip space has y up,
/// so the viewport is flipped as the bridge's `viewport` flips it.
pub fn oracle(scene: &picking_vk_tests::scene::Scene, view: Mat4, proj: Mat4, width: u32, height: u32) -> Oracle {
    Oracle::new(scene, OracleCamera::new(view, proj, [0.0, f64::from(height), f64::from(width), -f64::from(height)]))
}
