//! All of the example's picking: opening the device, the picker, and each frame's query set
//! (the hover point, the dragged rubber band, a click) turned into what the renderer tints.

use crate::scene::{Highlight, SceneRenderer};
use glam::{DVec2, Mat4, UVec2};
use picking_vk_wgpu::picking_vk::{cursor_to_pixel, FrameResults, PickQuery, PickRequest, PickerConfig, PixelRect, RectMode, ViewPlacement};
use picking_vk_wgpu::{PickingDevice, WgpuDraw, WgpuPickError, WgpuPicker};
use std::time::Duration;

/// What the mouse did this frame, in window pixels.
#[derive(Clone, Copy, Debug, Default)]
pub struct MouseInput {
    pub cursor: Option<DVec2>,
    /// Where a shift-drag started, while it lasts.
    pub band_from: Option<DVec2>,
    /// A click (press and release without a drag) at the cursor.
    pub clicked: bool,
    /// A rubber band released this frame: select its set.
    pub band_released: bool,
}

/// Opens `adapter`'s device with everything the bridge can enable for picking.
pub fn open_device(adapter: &wgpu::Adapter) -> Result<PickingDevice, WgpuPickError> {
    picking_vk_wgpu::request_device(adapter, &wgpu::DeviceDescriptor::default(), picking_vk_wgpu::offered(adapter)?)
}

pub struct Picking {
    picker: WgpuPicker,
    draws: Vec<WgpuDraw>,
    /// What the renderer tints: hover, selection, the band's live set.
    pub highlight: Highlight,
}

impl Picking {
    pub fn new(device: &PickingDevice, renderer: &SceneRenderer) -> Result<Self, WgpuPickError> {
        let config = PickerConfig::default().with_frames_in_flight(2);
        Ok(Picking { picker: WgpuPicker::new(device, config)?, draws: renderer.pick_draws(), highlight: Highlight::default() })
    }

    /// Picks what `input` asks in this frame's view and updates [`Picking::highlight`] before
    /// the frame is rendered: the pick goes in a submission of its own, first, and the frame
    /// waits for it (a bounded wait; the same-frame path), so the tint is this frame's.
    pub fn frame(&mut self, input: &MouseInput, view: Mat4, proj: Mat4, size: UVec2) -> Result<(), WgpuPickError> {
        let placement = ViewPlacement::whole_window(size);
        let pixel = |p: DVec2| cursor_to_pixel(p, 1.0, placement).ok().and_then(|c| c.inside());
        let mut queries = vec![];
        let hover = input.cursor.and_then(pixel);
        if let Some(p) = hover {
            queries.push(PickQuery::Point(p));
        }
        let band = match (input.band_from.and_then(pixel), hover) {
            (Some(a), Some(b)) if a != b => Some(PixelRect::spanning(a, b)),
            _ => None,
        };
        if let Some(rect) = band {
            queries.push(PickQuery::Rect { rect, mode: RectMode::Visible });
        }
        if queries.is_empty() {
            self.highlight.hovered = None;
            self.highlight.band.clear();
            return Ok(());
        }
        let request = PickRequest::new(picking_vk_wgpu::viewport(size.x, size.y), view, proj);
        // SAFETY: the app destroys no buffer (it drops them, which the draws' clones outlive).
        let commands = unsafe { self.picker.record(&request, &queries, &self.draws) }?;
        let ticket = commands.ticket();
        commands.submit([], [])?;
        match self.picker.wait_results(&ticket, Duration::from_millis(250)) {
            Ok(results) => self.apply(&results, hover.is_some(), band.is_some(), input),
            // A slow frame keeps the last highlight; the late result is dropped below.
            Err(WgpuPickError::Timeout) => {}
            Err(e) => return Err(e),
        }
        // Results of picks that timed out, now complete: stale, not shown.
        self.picker.poll_results()?;
        Ok(())
    }

    fn apply(&mut self, results: &FrameResults, hovered: bool, banded: bool, input: &MouseInput) {
        let hit = hovered.then(|| results.pick(0).and_then(|p| p.hit.as_ref())).flatten();
        self.highlight.hovered = hit.map(|h| (h.id.get(), h.instance));
        if input.clicked {
            self.highlight.selected = self.highlight.hovered.into_iter().collect();
        }
        self.highlight.band = match banded.then(|| results.results.last()).flatten() {
            Some(picking_vk_wgpu::picking_vk::QueryResult::Rect(set)) => set.objects.iter().map(|o| (o.id.get(), o.instance)).collect(),
            _ => vec![],
        };
        if input.band_released {
            self.highlight.selected = std::mem::take(&mut self.highlight.band);
        }
    }

    /// The picker's memory, for the window title.
    pub fn memory_bytes(&self) -> u64 {
        self.picker.picker().memory().total()
    }
}
