//! Device loss. Once the device is lost, every Vulkan call made with it may return
//! `ERROR_DEVICE_LOST` and the picker returns `PickError::DeviceLost`. The viewer then drops
//! everything made from the device (the context, surface, swapchain, scene upload, picker,
//! frames and egui renderer), makes them again for the same window, scene and camera, and
//! carries on; the selection survives. Other errors stay what they were.
//!
//! For tests, the environment variable [`INJECT_DEVICE_LOSS_ENV`] lists frame numbers (comma
//! separated) at which the frame loop behaves as if its fence wait returned
//! `ERROR_DEVICE_LOST`, and [`INJECT_PICK_ERROR_ENV`] frame numbers from which the next pick
//! is handed a non-finite view matrix (the picker refuses it: a pick error the panel shows
//! while the viewer carries on).

use super::panel::Panel;
use super::{AppOptions, Gpu, Running};
use crate::ViewerError;
use ash::vk;
use picking_vk::PickError;
use picking_vk_context::{ContextError, ValidationLog, VulkanContext};
use std::time::Duration;

/// Frame numbers (comma separated) at which to inject a device loss: `PICKING_VK_VIEWER_DEVICE_LOSS_AT=300,900`.
pub const INJECT_DEVICE_LOSS_ENV: &str = "PICKING_VK_VIEWER_DEVICE_LOSS_AT";

/// Frame numbers (comma separated) from which the next pick gets an invalid request:
/// `PICKING_VK_VIEWER_PICK_ERROR_AT=40`.
pub const INJECT_PICK_ERROR_ENV: &str = "PICKING_VK_VIEWER_PICK_ERROR_AT";

/// How often making the GPU side again is tried before giving up.
const ATTEMPTS: u32 = 3;

/// Device losses so far, the injected ones to come, and the validation logs of every context
/// the window had (readable after their context is gone: teardown counts too).
pub(super) struct Recovery {
    inject_at: Vec<u64>,
    pick_error_at: Vec<u64>,
    pub losses: u32,
    logs: Vec<ValidationLog>,
}

impl Recovery {
    pub fn from_env() -> Result<Self, ViewerError> {
        Ok(Recovery { inject_at: frames_from_env(INJECT_DEVICE_LOSS_ENV)?, pick_error_at: frames_from_env(INJECT_PICK_ERROR_ENV)?, losses: 0, logs: vec![] })
    }

    /// Keeps `ctx`'s validation log, to count its messages at exit.
    pub fn track(&mut self, ctx: &VulkanContext) {
        self.logs.extend(ctx.validation_log());
    }

    /// Every validation message of every context so far (taken out of their logs).
    pub fn validation_messages(&self) -> Vec<String> {
        self.logs.iter().flat_map(ValidationLog::take).collect()
    }

    /// Whether the pick recorded at `frame` is to be made invalid: once per listed frame, at
    /// the first pick on or after it.
    pub fn pick_error_now(&mut self, frame: u64) -> bool {
        let due = self.pick_error_at.iter().position(|&f| f <= frame);
        due.map(|i| self.pick_error_at.remove(i)).is_some()
    }

    /// Whether a device loss is to be injected at `frame` (each listed frame once).
    pub fn inject_now(&mut self, frame: u64) -> bool {
        let before = self.inject_at.len();
        self.inject_at.retain(|&f| f != frame);
        self.inject_at.len() != before
    }
}

/// Frame numbers listed in the environment variable `name` (comma separated).
fn frames_from_env(name: &str) -> Result<Vec<u64>, ViewerError> {
    let Ok(list) = std::env::var(name) else { return Ok(vec![]) };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| item.parse().map_err(|_| ViewerError::Input(format!("{name}: {item:?} is not a frame number"))))
        .collect()
}

/// The error a lost device gives (for injection).
pub(super) fn device_lost() -> ViewerError {
    ViewerError::Vulkan(ContextError::Vulkan(vk::Result::ERROR_DEVICE_LOST))
}

pub(super) fn is_device_lost(e: &ViewerError) -> bool {
    matches!(e, ViewerError::Pick(PickError::DeviceLost) | ViewerError::Vulkan(ContextError::Vulkan(vk::Result::ERROR_DEVICE_LOST)))
}

impl Running {
    /// Makes the GPU side again after `cause` (a device loss); the window, scene, camera,
    /// input and selection stay.
    pub(super) fn recover(&mut self, cause: &ViewerError, options: &AppOptions) -> Result<(), ViewerError> {
        self.recovery.losses += 1;
        println!("device lost: frame={} ({cause}); making the Vulkan context again", self.frame_index);
        let selection = self.gpu.as_mut().and_then(|g| g.gfx.as_mut()).map(|g| std::mem::take(&mut g.picking.selection));
        // Everything made from the lost device goes, the surface and context last.
        self.gpu = None;
        let mut attempt = 0;
        let gpu = loop {
            attempt += 1;
            match Gpu::new(&self.window, &self.view, options) {
                Ok(gpu) => break gpu,
                Err(e) if is_device_lost(&e) && attempt < ATTEMPTS => {
                    println!("device lost again while recovering ({e}); retrying");
                    std::thread::sleep(Duration::from_millis(250 * u64::from(attempt)));
                }
                Err(e) => return Err(e),
            }
        };
        self.recovery.track(&gpu.ctx);
        // The new egui renderer has no textures: a new egui context sends them all again.
        self.panel = Panel::new(&self.window);
        self.gpu = Some(gpu);
        if let (Some(gfx), Some(selection)) = (self.gpu.as_mut().and_then(|g| g.gfx.as_mut()), selection) {
            gfx.picking.selection = selection;
        }
        println!("recovered: frame={} device_losses={}", self.frame_index, self.recovery.losses);
        Ok(())
    }
}
