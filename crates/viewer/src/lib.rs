//! The picking-vk viewer: a desktop app that drives the picker from the mouse, and a
//! headless mode for scripts, tests and screenshots. Also the reference integration of
//! `picking-vk` into a frame loop (see `app/picking.rs`). The host-side rendering it shares
//! with the benchmark (lit pass, offscreen target, mesh upload, shapes) is `picking-vk-host`.

pub mod animation;
pub mod app;
pub mod camera;
pub mod capped_read;
pub mod default_scene;
pub mod gltf_load;
pub mod gltf_write;
pub mod headless;
pub mod id_view;
pub mod objects;
pub mod outputs;
pub mod pick_file;
pub mod pick_report;
pub mod rect_report;
pub mod replay;
pub mod scene;
pub mod scene_upload;
pub mod surface;
pub mod swapchain;

use picking_vk_context::ContextError;

/// Everything the viewer reports to the user instead of panicking.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    #[error("{0}")]
    Scene(#[from] gltf_load::SceneError),
    #[error("Vulkan: {0}")]
    Vulkan(#[from] ContextError),
    #[error("picking: {0}")]
    Pick(#[from] picking_vk::PickError),
    #[error("{0}")]
    Input(String),
    #[error("could not write {0}")]
    Output(String),
    #[error("window: {0}")]
    Window(String),
}

/// Loads a scene file, or the built-in scene when `path` is `None`.
pub fn load_scene(path: Option<&std::path::Path>) -> Result<scene::Scene, ViewerError> {
    load_scene_with(path, &gltf_load::LoadOptions::default())
}

/// As [`load_scene`], with what loading may read and hold.
pub fn load_scene_with(path: Option<&std::path::Path>, options: &gltf_load::LoadOptions) -> Result<scene::Scene, ViewerError> {
    Ok(match path {
        Some(p) => gltf_load::load_path_with(p, options)?,
        None => gltf_load::load_bytes(default_scene::DEFAULT_SCENE_GLB, None)?,
    })
}
