//! The side panel (egui): the device, whether detail picking is on, the pick latency, the
//! hovered object, every field of the selected one, and the ID buffer view.

use super::input::PANEL_WIDTH;
use super::picking::Picking;
use crate::pick_report::PickReport;
use picking_vk::DetailStatus;
use winit::event::WindowEvent;
use winit::window::Window;

/// egui's context and window state, and the ID view's texture.
pub(super) struct Panel {
    ctx: egui::Context,
    state: egui_winit::State,
    id_texture: Option<egui::TextureHandle>,
    /// A new ID view, shown from the next frame on.
    pending_id_image: Option<egui::ColorImage>,
}

/// What the panel shows this frame.
pub(super) struct PanelData<'a> {
    pub device: &'a str,
    pub detail: &'a DetailStatus,
    pub hovered: Option<&'a PickReport>,
    pub selected: Option<&'a PickReport>,
    /// Frames and milliseconds from a pick's recording to its result.
    pub latency: Option<(u64, f64)>,
}

impl<'a> PanelData<'a> {
    pub fn new(device: &'a str, picking: &'a Picking) -> Self {
        PanelData { device, detail: picking.detail_status(), hovered: picking.hovered.as_ref(), selected: picking.selected.as_ref(), latency: picking.latency }
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
        Panel { ctx, state, id_texture: None, pending_id_image: None }
    }

    /// Feeds a window event to egui; true when the panel used it (the 3D view must not).
    pub fn on_window_event(&mut self, window: &Window, event: &WindowEvent) -> bool {
        self.state.on_window_event(window, event).consumed
    }

    pub fn set_id_image(&mut self, image: egui::ColorImage) {
        self.pending_id_image = Some(image);
    }

    /// Runs the UI for this frame; `show_ids` is the ID view toggle (its checkbox).
    pub fn run(&mut self, window: &Window, data: &PanelData<'_>, show_ids: &mut bool) -> PanelFrame {
        let raw_input = self.state.take_egui_input(window);
        if let Some(img) = self.pending_id_image.take() {
            match &mut self.id_texture {
                Some(t) => t.set(img, egui::TextureOptions::NEAREST),
                None => self.id_texture = Some(self.ctx.load_texture("id-view", img, egui::TextureOptions::NEAREST)),
            }
        }
        let id_texture = self.id_texture.as_ref();
        let full = self.ctx.run_ui(raw_input, |ui| panel_ui(ui, data, id_texture, show_ids));
        self.state.handle_platform_output(window, full.platform_output);
        let primitives = self.ctx.tessellate(full.shapes, full.pixels_per_point);
        PanelFrame { primitives, pixels_per_point: full.pixels_per_point, textures: full.textures_delta }
    }
}

fn panel_ui(ui: &mut egui::Ui, p: &PanelData<'_>, id_texture: Option<&egui::TextureHandle>, show_ids: &mut bool) {
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
            ui.label(format!("Pick latency: {frames} frames ({ms:.1} ms), no CPU stall"));
        }
        ui.separator();
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
        ui.checkbox(show_ids, "ID buffer view (D)");
        if *show_ids {
            if let Some(t) = id_texture {
                let size = t.size_vec2();
                let w = ui.available_width();
                ui.image((t.id(), egui::vec2(w, w * size.y / size.x.max(1.0))));
            }
        }
        ui.separator();
        ui.small("Drag: orbit · right-drag: pan · wheel: zoom · click: select · D: ID view · Esc: quit");
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
            if let Some(uv) = d.surface.and_then(|s| s.uv) {
                row("UV", format!("({:.4}, {:.4})", uv.x, uv.y));
            }
        }
    });
}
