//! Planning a frame's query set into its [`FrameLayout`]: each point and radius query in
//! its cell, each rectangle over its whole area (for its table entries) and then tile by
//! tile. A shared list's table may take the groups of any of them ([`TableUse`]).

use super::frame_layout::{LayoutLimits, QueryLayout};
use super::Picker;
use crate::draw::PickDraw;
use crate::error::PickError;
use crate::plan::{PixelRay, Plan, PointTarget};
use crate::record::rect::entries_needed;
use crate::request::camera::CameraSnapshot;
use crate::request::query::{view_pixels, PickQuery, PixelRect};
use crate::request::PickRequest;
use glam::UVec2;

/// How a query's plan may leave a shared list's table groups to the GPU plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TableUse {
    /// Not at all: the CPU plans every draw.
    No,
    /// Where the frame's GPU plan bounds still hold the plan's groups (claimed, query by
    /// query); else not at all.
    Claimed,
    /// A rectangle's plan: as `Claimed`, where the bounds hold its groups' pairs once per
    /// tile (each tile takes a pair per group it meets, at most the rectangle's).
    Rect { tiles: u32 },
    /// A rectangle's tile: the groups its rectangle's plan took (and claimed for it), only
    /// those.
    Tile,
}

/// A query's planner: the plan, the ray over its region (none: unculled), the pixel whose
/// nearest surface ends it (occlusion), and how it may use a table.
pub(super) type PlanFrame<'f> = dyn FnMut(&mut Plan, Option<&PixelRay>, Option<PointTarget<'_>>, TableUse) -> Result<(), PickError> + 'f;

impl Picker {
    /// Checks the viewport as a pass shifts it so that framebuffer pixel `first` lands on
    /// texel `at` of its target, against the device's viewport limits.
    fn check_shift(&self, request: &PickRequest<'_>, first: UVec2, at: UVec2) -> Result<(), PickError> {
        let dx = f64::from(at.x) - f64::from(first.x);
        let dy = f64::from(at.y) - f64::from(first.y);
        self.viewport_limits.check(&request.viewport, dx, dy)
    }

    fn layout_limits(&self) -> LayoutLimits {
        LayoutLimits {
            max_queries: self.max_queries,
            max_radius: self.max_radius,
            cell: self.cell,
            rect_tile: self.rect.as_ref().map(|kit| kit.tile),
            select_through: self.select_through,
            detail: self.kit.layout.detail,
        }
    }

    /// Lays the queries out and plans each query and tile into the layout.
    pub(super) fn plan_layout(
        &mut self,
        request: &PickRequest<'_>,
        camera: &CameraSnapshot,
        queries: &[PickQuery],
        draws: &[PickDraw],
        plan_frame: &mut PlanFrame<'_>,
    ) -> Result<(), PickError> {
        let limits = self.layout_limits();
        self.layout.lay_out(queries, &view_pixels(&request.viewport), &limits)?;
        let culling = self.culling;
        let ray_over = |region: &PixelRect| if culling { PixelRay::covering(camera, region) } else { None };
        for i in 0..self.layout.queries.len() {
            let (region, at, point) = match &self.layout.queries[i] {
                QueryLayout::Point { plan: None, .. } => continue,
                QueryLayout::Point { pixel, texel, .. } => (PixelRect { min: *pixel, max: *pixel + UVec2::ONE }, UVec2::new(*texel, 0), true),
                QueryLayout::Radius { region, cell, .. } => (*region, *cell, false),
                QueryLayout::Rect { .. } => {
                    self.plan_rect(i, request, &ray_over, plan_frame)?;
                    continue;
                }
            };
            self.check_shift(request, region.min, at)?;
            let ray = ray_over(&region);
            // A single pixel ends with its nearest surface: what lies surely behind it cannot
            // change the result. Contributors draw what planning cannot see.
            let occluded = point && request.contributors.is_empty();
            plan_frame(&mut self.plan, ray.as_ref(), occluded.then_some(PointTarget { camera, pixel: region.min }), TableUse::Claimed)?;
            if let (Some(ray), true) = (ray.as_ref(), occluded) {
                self.plan.occlude(draws, camera, region.min, ray);
            }
            if let Some(ray) = ray.as_ref() {
                self.plan.cut_to_chunks(draws, ray);
            }
            let span = self.layout.plans.take(&self.plan);
            set_plan(&mut self.layout.queries[i], span);
        }
        Ok(())
    }

    /// Plans rectangle `i` over its whole area (its table entries), then tile by tile. Its
    /// plan may leave a shared list's table groups to the GPU plan, claimed with it; its tiles
    /// then take those groups, and no others (what the rectangle's plan culled covers none of
    /// its pixels: a tile draws nothing else).
    fn plan_rect(
        &mut self,
        i: usize,
        request: &PickRequest<'_>,
        ray_over: &dyn Fn(&PixelRect) -> Option<PixelRay>,
        plan_frame: &mut PlanFrame<'_>,
    ) -> Result<(), PickError> {
        let QueryLayout::Rect { rect, tiles, .. } = &self.layout.queries[i] else { return Ok(()) };
        let (rect, tiles) = (*rect, tiles.clone());
        plan_frame(&mut self.plan, ray_over(&rect).as_ref(), None, TableUse::Rect { tiles: tiles.len() as u32 })?;
        // A group takes an entry per row: where that passes the rectangle table, the CPU
        // plans the rectangle, whose draws that meet it may fit (the rows stay claimed).
        let capacity = self.rect.as_ref().map_or(0, |r| r.capacity);
        if self.plan.entries.iter().any(|e| e.table) && entries_needed(&self.plan.entries, &self.plan.ranges) > u64::from(capacity) {
            plan_frame(&mut self.plan, ray_over(&rect).as_ref(), None, TableUse::No)?;
        }
        let span = self.layout.plans.take(&self.plan);
        let groups = self.layout.plans.entries[span.clone()].iter().any(|e| e.table);
        set_plan(&mut self.layout.queries[i], span.clone());
        for t in tiles {
            let tile = &self.layout.tiles[t];
            let region = PixelRect { min: tile.first, max: tile.first + tile.size };
            self.check_shift(request, tile.first, UVec2::ZERO)?;
            plan_frame(&mut self.plan, ray_over(&region).as_ref(), None, if groups { TableUse::Tile } else { TableUse::No })?;
            let held = &self.layout.plans.entries[span.clone()];
            self.plan.entries.retain(|e| !e.table || held.iter().any(|h| h.table && h.draw == e.draw));
            self.layout.tiles[t].plan = self.layout.plans.take(&self.plan);
        }
        Ok(())
    }
}

/// Sets the plan span of a point, radius or rectangle query.
fn set_plan(query: &mut QueryLayout, span: std::ops::Range<usize>) {
    match query {
        QueryLayout::Point { plan, .. } => *plan = Some(span),
        QueryLayout::Radius { plan, .. } | QueryLayout::Rect { plan, .. } => *plan = span,
    }
}
