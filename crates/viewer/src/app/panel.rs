//! The side panel (egui): the device, whether detail picking is on, the pick latency, the
//! hover radius, the hovered object, every field of the last clicked one, the selection's
//! list, and the ID buffer view. Also the rubber band drawn over the 3D view while dragged.

use super::band::{self, BandQuery};
use super::id_buffer::IdBufferView;
use super::picking::{Picking, MAX_HOVER_RADIUS};
use super::selection::Selection;
use super::settings::Settings;
use super::view_rect::PANEL_WIDTH;
use crate::pick_report::PickReport;
use picking_vk::config::DetailStatus;
use winit::event::WindowEvent;
use winit::window::Window;

/// egui's context and window state.
pub(super) struct Panel {
    ctx: egui::Context,
    state: egui_winit::State,
}

/// What the panel shows this frame.
pub(super) struct PanelData<'a> {
    pub device: &'a str,
    pub detail: &'a DetailStatus,
    pub hovered: Option<&'a PickReport>,
    /// The last clicked hit, while its object is selected.
    pub selected: Option<&'a PickReport>,
    pub selection: &'a Selection,
    /// The rubber band being dragged, to draw over the view.
    pub band: Option<BandQuery>,
    /// Frames and milliseconds from a pick's recording to its result.
    pub latency: Option<(u64, f64)>,
    /// The latest pick error and ID view error, while they last.
    pub pick_error: Option<&'a str>,
    /// Why the last rubber band selected nothing, until one succeeds.
    pub band_error: Option<&'a str>,
    pub id_error: Option<&'a str>,
    /// The ID view's texture (the viewer's own, see `id_texture`) and its size.
    pub id_texture: Option<(egui::TextureId, [usize; 2])>,
}

impl<'a> PanelData<'a> {
    pub fn new(device: &'a str, picking: &'a Picking, ids: &'a IdBufferView, band: Option<BandQuery>) -> Self {
        PanelData {
            device,
            detail: picking.detail_status(),
            hovered: picking.hovered.as_ref(),
            selected: picking.selection.clicked.as_ref(),
            selection: &picking.selection,
            band,
            latency: picking.latency,
            pick_error: picking.error.as_deref(),
            band_error: picking.band_error.as_deref(),
            id_error: ids.error.as_deref(),
            id_texture: ids.texture.shown(),
        }
    }
}

/// The panel's frame: what to draw, and the textures to update first.
pub(super) struct PanelFrame {
    pub primitives: Vec<egui::ClippedPrimitive>,
    pub pixels_per_point: f32,
    pub textures: egui::TexturesDelta,
}

impl Panel {
    pub fn new(window: &Window) -> Self {
        let ctx = egui::Context::default();
        let state = egui_winit::State::new(ctx.clone(), egui::ViewportId::ROOT, window, Some(window.scale_factor() as f32), None, None);
        Panel { ctx, state }
    }

    /// Feeds a window event to egui; true when the panel used it (the 3D view must not).
    pub fn on_window_event(&mut self, window: &Window, event: &WindowEvent) -> bool {
        self.state.on_window_event(window, event).consumed
    }

    /// Runs the UI for this frame; `settings` are what its controls change.
    pub fn run(&mut self, window: &Window, data: &PanelData<'_>, settings: &mut Settings) -> PanelFrame {
        let raw_input = self.state.take_egui_input(window);
        let full = self.ctx.run_ui(raw_input, |ui| {
            panel_ui(ui, data, settings);
            if let Some(b) = &data.band {
                band::paint(ui.ctx(), b);
            }
        });
        self.state.handle_platform_output(window, full.platform_output);
        let primitives = self.ctx.tessellate(full.shapes, full.pixels_per_point);
        PanelFrame { primitives, pixels_per_point: full.pixels_per_point, textures: full.textures_delta }
    }
}

fn panel_ui(ui: &mut egui::Ui, p: &PanelData<'_>, settings: &mut Settings) {
    egui::Panel::left("picking").exact_size(PANEL_WIDTH as f32).resizable(false).show(ui, |ui| {
        ui.heading("picking-vk");
        ui.label(format!("Device: {}", p.device));
        match p.detail {
            DetailStatus::Active => ui.label("Detail picking: active (face, barycentrics, normal, UV)"),
            DetailStatus::NotRequested => ui.label("Detail picking: off"),
            DetailStatus::Unavailable { missing } => {
                ui.label(format!("Detail picking: unavailable ({})", missing.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))
            }
        };
        if let Some((frames, ms)) = p.latency {
            let how = if frames == 0 { "same frame: its own submission, waited for alone" } else { "ring: no CPU wait" };
            ui.label(format!("Pick latency: {frames} frames ({ms:.2} ms), {how}"));
        }
        if let Some(e) = p.pick_error {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("Pick error: {e}"));
        }
        if let Some(e) = p.band_error {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("Box select error: {e}"));
        }
        ui.separator();
        // Thin objects (a pole a few pixels wide) are hovered from this far away, where
        // nothing else is nearer; 0 hovers exactly the pixel under the cursor.
        ui.add(egui::Slider::new(&mut settings.hover_radius, 0..=MAX_HOVER_RADIUS).text("Hover radius (px)"));
        // Off: the ring path (results a round later), to see the lag the same-frame path removes.
        ui.checkbox(&mut settings.same_frame, "Same-frame picking (GPU highlight)");
        if let Some(p) = settings.playback.as_mut() {
            // Picks see the pose drawn in the same frame.
            ui.horizontal(|ui| {
                ui.checkbox(&mut p.playing, "Play (Space)");
                ui.add(egui::Slider::new(&mut p.time, 0.0..=p.duration.max(1e-3)).text("Time (s)"));
            });
        }
        ui.label(egui::RichText::new("Hovered").strong());
        match p.hovered.and_then(|r| r.hit.as_ref()) {
            Some(h) => ui.label(format!("{} (id {})", h.node_name.as_deref().unwrap_or("unnamed"), h.id)),
            None => ui.label("nothing"),
        };
        ui.separator();
        ui.label(egui::RichText::new("Selected (click)").strong());
        match p.selected {
            Some(r) => report_grid(ui, r),
            None => {
                ui.label("nothing: click an object");
            }
        }
        ui.separator();
        selection_list(ui, p.selection);
        ui.separator();
        ui.checkbox(&mut settings.show_ids, "ID buffer view (D)");
        if let (true, Some(e)) = (settings.show_ids, p.id_error) {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("ID view error: {e}"));
        }
        if settings.show_ids {
            if let Some((id, [tw, th])) = p.id_texture {
                let w = ui.available_width();
                ui.image((id, egui::vec2(w, w * th as f32 / (tw as f32).max(1.0))));
            }
        }
        ui.separator();
        ui.small(
            "Drag: orbit · right-drag: pan · wheel: zoom · click: select · Ctrl+click: add/remove · Shift+drag: box select (Alt: through, Ctrl: add) · D: ID view · R/Home: reset view · Esc: quit",
        );
    });
}

/// The selection: its count, then per object its ID, glTF node (index and name) and
/// instance. Scrolls, so a band over thousands of objects keeps the panel in the window.
fn selection_list(ui: &mut egui::Ui, selection: &Selection) {
    ui.label(egui::RichText::new(format!("Selection: {} objects", selection.len())).strong());
    if selection.is_empty() {
        return;
    }
    egui::ScrollArea::vertical().max_height(140.0).auto_shrink([false, true]).show(ui, |ui| {
        egui::Grid::new("selection").num_columns(3).striped(true).show(ui, |ui| {
            for s in selection.entries() {
                ui.label(format!("id {}", s.id));
                // The label falls back to "node N" for an unnamed node: say it once.
                ui.label(match (s.node, &s.name) {
                    (Some(n), Some(_)) => format!("node {n} {}", s.label()),
                    _ => s.label(),
                });
                ui.label(s.instance.map_or(String::new(), |i| format!("instance {i}")));
                ui.end_row();
            }
        });
    });
}

fn report_grid(ui: &mut egui::Ui, r: &PickReport) {
    let Some(h) = &r.hit else { return };
    let v3 = |v: glam::DVec3| format!("({:.3}, {:.3}, {:.3})", v.x, v.y, v.z);
    egui::Grid::new("selected").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row("ID", h.id.to_string());
        row("Object", h.node_name.clone().unwrap_or_else(|| "unnamed".into()));
        row("glTF node", h.node.map_or("-".into(), |n| n.to_string()));
        row("Instance", h.instance.map_or("-".into(), |i| i.to_string()));
        if let Some(k) = h.gpu_instance {
            row("Node instance", k.to_string());
        }
        if let Some(k) = h.mesh_primitive {
            row("Mesh primitive", k.to_string());
        }
        row("Pixel", format!("({}, {})", r.x, r.y));
        row("Depth", format!("{:.6}", h.depth));
        row("World", v3(h.world));
        row("Distance", format!("{:.4}", h.distance));
        if let Some(d) = h.detail {
            row("Face", d.face.to_string());
            row("Barycentrics", format!("({:.4}, {:.4}, {:.4})", d.barycentrics[0], d.barycentrics[1], d.barycentrics[2]));
            if let Some(n) = h.normal() {
                row("Normal", v3(n));
            }
        }
        if let Some(uv) = h.uv {
            row("UV", format!("({:.4}, {:.4})", uv.x, uv.y));
        }
        if let Some(t) = h.texel {
            let [r, g, b, a] = t.rgba;
            row("Texel", format!("texture {} ({}, {}): rgba {r} {g} {b} {a}", t.texture, t.xy[0], t.xy[1]));
        }
    });
}
