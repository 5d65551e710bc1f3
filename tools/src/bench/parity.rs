//! Parity: every approach's IDs against the full-resolution ID image, at random pixels.

use crate::scenes::BenchScene;
use glam::UVec2;
use picking_vk::debug::{IdCopy, IdImage, Texels};
use picking_vk::{ObjectId, PickQuery, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::CameraMatrices;

const BATCH: usize = 64;

/// The full-resolution ID image of the view.
pub fn full_image(ctx: &VulkanContext, scene: &BenchScene, cam: &CameraMatrices, (w, h): (u32, u32)) -> Result<Vec<Texels>, String> {
    // SAFETY: the context outlives the image.
    let mut img = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|e| e.to_string())?;
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    // SAFETY: recording outside a render pass; buffers outlive the wait.
    ctx.run_once(|cmd| unsafe { img.record(cmd, &request, &scene.gpu.pick_draws, None, IdCopy::Whole) })
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    // SAFETY: `run_once` waited.
    unsafe { img.read() }.map_err(|e| e.to_string())
}

/// The object a texel names.
pub fn object_of_texel(scene: &BenchScene, t: &Texels) -> Option<usize> {
    scene.object_of(ObjectId::from_words(t.id), Some(t.draw_instance[1]))
}

/// Picks `pixels` with a picker (culling on or off); counts agreement with the full image.
pub fn picker(
    ctx: &VulkanContext,
    scene: &BenchScene,
    cam: &CameraMatrices,
    (w, h): (u32, u32),
    culling: bool,
    pixels: &[UVec2],
    full: &[Texels],
) -> Result<(usize, usize), String> {
    // SAFETY: the context outlives the picker.
    let mut picker =
        unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(BATCH).with_culling(culling)) }.map_err(|e| e.to_string())?;
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    let mut matches = 0;
    for chunk in pixels.chunks(BATCH) {
        ctx.run_once(|cmd| -> Result<(), String> {
            for (slot, &p) in chunk.iter().enumerate() {
                // SAFETY: as above.
                unsafe {
                    if culling {
                        picker.record(cmd, slot, &request, &[PickQuery::Point(p)], &scene.gpu.pick_draws)
                    } else {
                        picker.record(cmd, slot, &request, &[PickQuery::Point(p)], &scene.gpu.pick_draws[..])
                    }
                }
                .map_err(|e| e.to_string())?;
            }
            Ok(())
        })
        .map_err(|e| e.to_string())??;
        for (slot, &p) in chunk.iter().enumerate() {
            // SAFETY: `run_once` waited.
            let results = unsafe { picker.take_results(slot) }.map_err(|e| e.to_string())?.ok_or("no results")?;
            let r = results.pick(0).ok_or("no result")?;
            let got = scene.object_of(r.id(), r.hit.as_ref().and_then(|h| h.instance));
            let want = object_of_texel(scene, &full[(p.y * w + p.x) as usize]);
            matches += usize::from(got == want);
        }
    }
    Ok((matches, pixels.len()))
}

/// The classic approach: a full-size target scissored to the pixel, one texel read back.
pub fn scissored(
    ctx: &VulkanContext,
    scene: &BenchScene,
    cam: &CameraMatrices,
    (w, h): (u32, u32),
    pixels: &[UVec2],
    full: &[Texels],
) -> Result<(usize, usize), String> {
    // SAFETY: the context outlives the image.
    let mut img = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|e| e.to_string())?;
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    let mut matches = 0;
    for &p in pixels {
        // SAFETY: as above.
        ctx.run_once(|cmd| unsafe { img.record(cmd, &request, &scene.gpu.pick_draws, Some(p), IdCopy::Pixel(p)) })
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        // SAFETY: `run_once` waited.
        let t = unsafe { img.read_pixel() }.map_err(|e| e.to_string())?;
        matches += usize::from(object_of_texel(scene, &t) == object_of_texel(scene, &full[(p.y * w + p.x) as usize]));
    }
    Ok((matches, pixels.len()))
}
