//! The smallest complete integration: an engine with its own instance and device (the
//! validation layer on), one mesh in an interleaved vertex buffer, two frames in flight, and
//! a cursor hovering across the view. Each frame takes the result of the frame that last used
//! its slot, then records this frame's pick; nothing waits on the GPU but the host's own
//! fence. Exits with 1 if a pick disagrees with a ray cast or validation reported anything.
//!
//! `cargo run -p picking-vk --example hover` (the test command runs it on lavapipe).

use ash::vk;
use glam::{DVec2, Mat4, UVec2, Vec3};
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};
use gpu_allocator::MemoryLocation;
use picking_vk::draw::{BufferRange, IndexWidth, IndexedMesh};
use picking_vk::*;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const SIZE: UVec2 = UVec2::new(320, 240);
const FRAMES_IN_FLIGHT: usize = 2;
const FRAMES: usize = 48;
/// The Vulkan version the instance asks for.
const API_VERSION: u32 = vk::API_VERSION_1_1;
static VALIDATION_MESSAGES: AtomicUsize = AtomicUsize::new(0);

fn main() {
    match run() {
        Ok(0) => println!("hover: every pick agreed with the ray cast; 0 validation messages"),
        Ok(wrong) => {
            eprintln!("hover: {wrong} pick(s) disagreed with the ray cast");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("hover: {e}");
            std::process::exit(1);
        }
    }
    let messages = VALIDATION_MESSAGES.load(Ordering::SeqCst);
    if messages > 0 {
        eprintln!("hover: {messages} validation message(s)");
        std::process::exit(1);
    }
}

/// The engine side: instance, device, one mesh, frames in flight. Returns the wrong picks.
fn run() -> Result<usize, Box<dyn std::error::Error>> {
    // SAFETY: loads the system Vulkan loader, trusted to be what it says.
    let entry = unsafe { ash::Entry::load() }?;
    let instance = create_instance(&entry)?;
    let utils = ash::ext::debug_utils::Instance::new(&entry, &instance);
    // SAFETY: the callback is a plain function; the messenger is destroyed before the instance.
    let messenger = unsafe { utils.create_debug_utils_messenger(&messenger_info(), None) }?;
    // SAFETY: plain enumeration on a live instance.
    let (physical_device, queue_family) = unsafe { instance.enumerate_physical_devices() }?
        .into_iter()
        .find_map(|pd| {
            // SAFETY: `pd` was just enumerated from `instance`.
            let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS)).map(|f| (pd, f as u32))
        })
        .ok_or("no device with a graphics queue")?;

    // 1. Device creation: ask what the device offers for picking and add it.
    // SAFETY: the physical device was enumerated from this live instance.
    let support = unsafe { PickSupport::query(&instance, API_VERSION, physical_device) };
    let mut picking = support.device_features(support.offered())?;
    let picking_features = picking.features();
    let extensions: Vec<_> = picking.extension_names().iter().map(|e| e.as_ptr()).collect();
    let queue_info = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&[1.0])];
    let info = picking.add_to_device_create(vk::DeviceCreateInfo::default().queue_create_infos(&queue_info).enabled_extension_names(&extensions));
    // SAFETY: every pointer in `info` refers to values alive for the call.
    let device = unsafe { instance.create_device(physical_device, &info, None) }?;
    // SAFETY: the family and index 0 were requested above.
    let queue = unsafe { device.get_device_queue(queue_family, 0) };
    let allocator = Arc::new(Mutex::new(Allocator::new(&AllocatorCreateDesc {
        instance: instance.clone(),
        device: device.clone(),
        physical_device,
        debug_settings: Default::default(),
        buffer_device_address: false,
        allocation_sizes: Default::default(),
    })?));

    // The engine's mesh: a unit quad, position + normal interleaved, 16-bit indices.
    let vertices: Vec<f32> = [[-0.5f32, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]].iter().flat_map(|&[x, y]| [x, y, 0.0, 0.0, 0.0, 1.0]).collect();
    let indices: [u16; 6] = [0, 1, 2, 0, 2, 3];
    let (vertex_buffer, vertex_memory) = upload(&device, &allocator, &vertices, vk::BufferUsageFlags::VERTEX_BUFFER)?;
    let (index_buffer, index_memory) = upload(&device, &allocator, &indices, vk::BufferUsageFlags::INDEX_BUFFER)?;
    let mesh = IndexedMesh {
        vertices: BufferRange { buffer: vertex_buffer, offset: 0, size: 4 * vertices.len() as u64 },
        stride: 24,
        position_offset: 0,
        indices: BufferRange { buffer: index_buffer, offset: 0, size: 12 },
        index_width: IndexWidth::U16,
    };
    let model = Mat4::from_rotation_y(0.4);
    let draws = [mesh.draw(ObjectId::new(42)?, 0, 6, 0).with_model(model)];

    // 2. The picker on the engine's device, sharing its allocator.
    let host = HostDevice::new(&instance, API_VERSION, &device, physical_device, queue_family)
        .with_allocator(allocator.clone())
        .with_features(picking_features)
        .with_debug_utils(true);
    let config = PickerConfig::default().with_frames_in_flight(FRAMES_IN_FLIGHT);
    // SAFETY: the handles belong together, the features were enabled above, and the picker
    // is dropped below after the device is idle and before it is destroyed.
    let mut picker = unsafe { Picker::new(host, config) }?;

    // The engine's frame loop: a command buffer and a fence per frame in flight.
    let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(queue_family).flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create info on a live device.
    let pool = unsafe { device.create_command_pool(&pool_info, None) }?;
    let alloc_info = vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(FRAMES_IN_FLIGHT as u32);
    // SAFETY: the pool belongs to this device.
    let cmds = unsafe { device.allocate_command_buffers(&alloc_info) }?;
    let signalled = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
    // SAFETY: valid create info on a live device.
    let fences: Vec<vk::Fence> = (0..FRAMES_IN_FLIGHT).map(|_| unsafe { device.create_fence(&signalled, None) }).collect::<Result<_, _>>()?;

    let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.0, 0.0, 2.0), Vec3::ZERO, Vec3::Y);
    let projection = glam::camera::rh::proj::vulkan::perspective_infinite_reverse(0.9, SIZE.x as f32 / SIZE.y as f32, 0.1);
    let viewport = vk::Viewport { x: 0.0, y: 0.0, width: SIZE.x as f32, height: SIZE.y as f32, min_depth: 0.0, max_depth: 1.0 };
    let placement = ViewPlacement::whole_window(SIZE);
    let request = PickRequest::new(viewport, view, projection);
    let mut recorded: Vec<Option<UVec2>> = vec![None; FRAMES_IN_FLIGHT];
    let (mut wrong, mut hits) = (0, 0);
    // 3. Once the frame that last used a slot is done, its results are ready.
    let mut take = |picker: &mut Picker, slot: usize, pixel: Option<UVec2>| -> Result<(), PickError> {
        // SAFETY: the caller waited on the fence of the frame that last recorded into `slot`.
        let (Some(results), Some(pixel)) = (unsafe { picker.take_results(slot) }?, pixel) else { return Ok(()) };
        let Some(result) = results.pick(0) else { return Ok(()) };
        let expected = ray_cast(&request, pixel, model)?;
        hits += usize::from(result.hit.is_some());
        if expected.is_some_and(|near_edge| !near_edge) && result.id() != Some(ObjectId::new(42)?) || expected.is_none() && result.hit.is_some() {
            eprintln!("pixel {pixel}: picked {:?}, ray cast {:?}", result.id(), expected);
            wrong += 1;
        }
        Ok(())
    };
    for frame in 0..FRAMES {
        let slot = frame % FRAMES_IN_FLIGHT;
        // SAFETY: the fence belongs to this device.
        unsafe { device.wait_for_fences(&[fences[slot]], true, u64::MAX) }?;
        take(&mut picker, slot, recorded[slot])?;
        // SAFETY: the fence is signalled and no longer in use.
        unsafe { device.reset_fences(&[fences[slot]]) }?;
        let cmd = cmds[slot];
        // SAFETY: the command buffer's previous submission completed (fence waited).
        unsafe { device.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default()) }?;
        // 4. The cursor sweeps the view from left to right along a slightly rising line.
        let cursor = DVec2::new((frame as f64 + 0.5) / FRAMES as f64 * f64::from(SIZE.x), 0.55 * f64::from(SIZE.y) - frame as f64);
        recorded[slot] = cursor_to_pixel(cursor, 1.0, placement)?.inside();
        if let Some(pixel) = recorded[slot] {
            // SAFETY: `cmd` is recording outside a render pass; the mesh buffers live until
            // after the device is idle.
            unsafe { picker.record(cmd, slot, &request, &[PickQuery::Point(pixel)], &draws) }?;
        }
        // SAFETY: `cmd` is recording; queue and fence belong to this device.
        unsafe {
            device.end_command_buffer(cmd)?;
            device.queue_submit(queue, &[vk::SubmitInfo::default().command_buffers(&[cmd])], fences[slot])?;
        }
    }
    // Shut down: the last frames' results, then everything in reverse order.
    // SAFETY: plain waits on this device's fences.
    unsafe { device.wait_for_fences(&fences, true, u64::MAX) }?;
    for (slot, &pixel) in recorded.iter().enumerate() {
        take(&mut picker, slot, pixel)?;
    }
    println!("hover: {FRAMES} frames, {hits} hits on the quad, {} bytes of pick memory", picker.memory().total());
    if hits < FRAMES / 4 {
        wrong += 1;
        eprintln!("hover: the sweep should cross the quad");
    }
    drop(picker);
    // SAFETY: the device is idle (fences waited); each object is destroyed once, children first.
    unsafe {
        for fence in fences {
            device.destroy_fence(fence, None);
        }
        device.destroy_command_pool(pool, None);
        for (buffer, memory) in [(vertex_buffer, vertex_memory), (index_buffer, index_memory)] {
            device.destroy_buffer(buffer, None);
            allocator.lock().map_err(|_| "allocator poisoned")?.free(memory)?;
        }
        drop(allocator);
        device.destroy_device(None);
        utils.destroy_debug_utils_messenger(messenger, None);
        instance.destroy_instance(None);
    }
    Ok(wrong)
}

/// Where the pick ray meets the quad's plane: `None` off the quad, `Some(near_edge)` on it
/// (a pixel whose ray passes within a pixel's width of an edge may go either way).
fn ray_cast(request: &PickRequest<'_>, pixel: UVec2, model: Mat4) -> Result<Option<bool>, PickError> {
    let Some(ray) = request.ray(pixel)? else { return Ok(None) };
    let to_local = model.as_dmat4().inverse();
    let (origin, direction) = (to_local.transform_point3(ray.origin), to_local.transform_vector3(ray.direction));
    let t = -origin.z / direction.z;
    let p = origin + direction * t;
    let margin = 0.01;
    let inside = t > 0.0 && p.x.abs() <= 0.5 + margin && p.y.abs() <= 0.5 + margin;
    Ok(inside.then(|| p.x.abs() > 0.5 - margin || p.y.abs() > 0.5 - margin))
}

fn create_instance(entry: &ash::Entry) -> Result<ash::Instance, vk::Result> {
    let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
    let extensions = [ash::ext::debug_utils::NAME.as_ptr(), ash::ext::validation_features::NAME.as_ptr()];
    let app = vk::ApplicationInfo::default().application_name(c"picking-vk hover example").api_version(API_VERSION);
    let sync_validation = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&sync_validation);
    let mut messenger = messenger_info();
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions)
        .push_next(&mut features)
        .push_next(&mut messenger);
    // SAFETY: every pointer in `info` refers to values alive for the call.
    unsafe { entry.create_instance(&info, None) }
}

fn messenger_info() -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message))
}

unsafe extern "system" fn on_message(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    VALIDATION_MESSAGES.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the layer passes valid callback data with a NUL-terminated message.
    let message = unsafe { data.as_ref().and_then(|d| d.message_as_c_str()) }.map(CStr::to_string_lossy);
    eprintln!("validation: {}", message.unwrap_or_default());
    vk::FALSE
}

/// A host-visible buffer holding `data` (the engine's own upload path, kept short here).
fn upload<T: Copy>(
    device: &ash::Device,
    allocator: &Mutex<Allocator>,
    data: &[T],
    usage: vk::BufferUsageFlags,
) -> Result<(vk::Buffer, Allocation), Box<dyn std::error::Error>> {
    let bytes = std::mem::size_of_val(data);
    let info = vk::BufferCreateInfo::default().size(bytes as u64).usage(usage);
    // SAFETY: valid create info on a live device.
    let buffer = unsafe { device.create_buffer(&info, None) }?;
    // SAFETY: `buffer` is live.
    let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
    let desc = AllocationCreateDesc {
        name: "mesh",
        requirements,
        location: MemoryLocation::CpuToGpu,
        linear: true,
        allocation_scheme: AllocationScheme::GpuAllocatorManaged,
    };
    let mut memory = allocator.lock().map_err(|_| "allocator poisoned")?.allocate(&desc)?;
    let mapped = memory.mapped_slice_mut().ok_or("mesh memory is not mapped")?;
    // SAFETY: `data` is `bytes` long and plain `Copy` data.
    mapped[..bytes].copy_from_slice(unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), bytes) });
    // SAFETY: fresh allocation sized for this unbound buffer; CpuToGpu memory is coherent.
    unsafe { device.bind_buffer_memory(buffer, memory.memory(), memory.offset()) }?;
    Ok((buffer, memory))
}
