//! [`FrameLayout`]: one frame's query set laid out once. Per query, in the host's order: its
//! checked region, where the pass draws it (a texel of the points row, a cell, or its
//! rectangle's tiles), its plan and its staging block. Laying out checks the queries and
//! places them; planning fills the plan ranges; recording walks the layout once; the slot
//! keeps it until the frame is taken; resolving reads it. Nothing is matched up by position
//! later.

use crate::error::{Input, Limit, PickError};
use crate::handoff::PassStats;
use crate::host::config::MAX_RECT_TILES;
use crate::plan::{Plan, PlanEntry, Planned};
use crate::readback::{RegionBlock, HEADER_BYTES};
use crate::request::query::{CheckedQuery, PickQuery, PixelRect, RectMode, Snap};
use crate::resolve::query::TableCopy;
use ash::vk;
use glam::UVec2;
use std::ops::Range;

/// How one query is drawn, copied and read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum QueryLayout {
    /// A point: texel `texel` of the points row (which the points block holds). `plan` is
    /// `None` when an earlier query of the set asked for the same pixel: that query plans and
    /// draws it, and both read the one texel.
    Point { pixel: UVec2, texel: u32, plan: Option<Range<usize>> },
    /// A radius query: `region` (the disc's square, clipped to the view) drawn into the cell
    /// starting at `cell`, copied into `block`.
    Radius { pixel: UVec2, radius: u32, snap: Snap, region: PixelRect, cell: UVec2, block: RegionBlock, plan: Range<usize> },
    /// A rectangle (clipped to the view): its plan over the whole rectangle gives the table
    /// entries; `tiles` index [`FrameLayout::tiles`]; `spans` index the slot's entry spans,
    /// filled when it is recorded.
    Rect { rect: PixelRect, mode: RectMode, plan: Range<usize>, tiles: Range<usize>, spans: Range<usize> },
}

/// One tile of a rectangle: `size` pixels from framebuffer pixel `first`, drawn at the
/// rectangle target's origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TileLayout {
    pub first: UVec2,
    pub size: UVec2,
    pub plan: Range<usize>,
}

/// The plans of a frame's queries and tiles, appended one after another (ranges and triangle
/// runs re-based), with their statistics.
#[derive(Default)]
pub(crate) struct PlanLists {
    pub entries: Vec<PlanEntry>,
    pub ranges: Vec<(u32, u32)>,
    pub runs: Vec<(u32, u32)>,
    pub stats: PassStats,
}

impl PlanLists {
    /// Appends `plan`'s entries and statistics; returns their span.
    pub fn take(&mut self, plan: &Plan) -> Range<usize> {
        let start = self.entries.len();
        let (base, run_base) = (self.ranges.len() as u32, self.runs.len() as u32);
        self.ranges.extend_from_slice(&plan.ranges);
        self.runs.extend_from_slice(&plan.runs);
        self.entries.extend(plan.entries.iter().map(|e| PlanEntry { first_range: e.first_range + base, first_run: e.first_run + run_base, ..*e }));
        self.stats.add(&plan.stats);
        start..self.entries.len()
    }

    /// The plan of `span`.
    pub fn planned(&self, span: Range<usize>) -> Planned<'_> {
        Planned { entries: &self.entries[span], ranges: &self.ranges, runs: &self.runs }
    }
}

/// What a layout is bounded by: the picker's configuration and targets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayoutLimits {
    pub max_queries: u32,
    pub max_radius: u32,
    /// Side of a radius query's cell: `2 * max_radius + 1`.
    pub cell: u32,
    /// The rectangle tile, when rectangle queries are on.
    pub rect_tile: Option<vk::Extent2D>,
    pub select_through: bool,
    /// Whether staging blocks carry the detail attachment.
    pub detail: bool,
}

/// A frame's query set, laid out. Reused from frame to frame (its vectors keep their
/// capacity), so laying out allocates nothing once warm.
#[derive(Default)]
pub(crate) struct FrameLayout {
    pub queries: Vec<QueryLayout>,
    pub tiles: Vec<TileLayout>,
    /// Distinct point pixels: texels `0..points` of the points row, copied as one block.
    pub points: u32,
    pub points_block: RegionBlock,
    /// Where the rectangle table's used entries are copied (three arrays of `table_used`
    /// words), after every region block.
    pub table_offset: u64,
    /// Table entries the rectangles use; set once they are planned.
    pub table_used: u64,
    pub plans: PlanLists,
    /// Scratch: the set's distinct point pixels and their texels.
    point_texels: foldhash::HashMap<[u32; 2], u32>,
}

impl FrameLayout {
    /// Checks `queries` against the view and `limits` and places them: points on texels of
    /// the points row (a pixel asked for twice shares one), radius queries in cells after it,
    /// rectangles in tiles; staging blocks in that order, the table last. Plans are left
    /// empty. On an error the layout is empty.
    pub fn lay_out(&mut self, queries: &[PickQuery], view: &PixelRect, limits: &LayoutLimits) -> Result<(), PickError> {
        self.clear();
        let laid = self.place(queries, view, limits);
        if laid.is_err() {
            self.clear();
        }
        laid
    }

    fn clear(&mut self) {
        self.queries.clear();
        self.tiles.clear();
        self.points = 0;
        self.points_block = RegionBlock::default();
        self.table_offset = HEADER_BYTES;
        self.table_used = 0;
        self.plans.entries.clear();
        self.plans.ranges.clear();
        self.plans.runs.clear();
        self.plans.stats = PassStats::default();
        self.point_texels.clear();
    }

    fn place(&mut self, queries: &[PickQuery], view: &PixelRect, limits: &LayoutLimits) -> Result<(), PickError> {
        if queries.is_empty() {
            return Err(PickError::InvalidInput { input: Input::Query(None), reason: "a query set holds at least one query".into() });
        }
        if queries.len() > limits.max_queries as usize {
            return Err(PickError::Capacity { limit: Limit::Queries, configured: limits.max_queries.into(), asked: queries.len() as u64 });
        }
        let mut tile_count = 0u64;
        let mut cells = 0u32;
        for (index, query) in queries.iter().enumerate() {
            let layout = match query.check(index, view, limits.max_radius, limits.select_through)? {
                CheckedQuery::Hit { pixel, radius: None, .. } => {
                    let next = self.point_texels.len() as u32;
                    let texel = *self.point_texels.entry(pixel.to_array()).or_insert(next);
                    QueryLayout::Point { pixel, texel, plan: (texel == next).then_some(0..0) }
                }
                CheckedQuery::Hit { pixel, radius: Some((radius, snap)), region } => {
                    let cell = UVec2::new(limits.max_queries + cells * limits.cell, 0);
                    cells += 1;
                    QueryLayout::Radius { pixel, radius, snap, region, cell, block: RegionBlock::default(), plan: 0..0 }
                }
                CheckedQuery::Rect { rect, mode } => {
                    let Some(tile) = limits.rect_tile else {
                        return Err(PickError::Capacity { limit: Limit::RectEntries, configured: 0, asked: 1 });
                    };
                    tile_count = tile_count.saturating_add(tiles_of(&rect, tile));
                    if tile_count > MAX_RECT_TILES {
                        // Counted before one is laid out: a huge rectangle costs nothing. The
                        // viewport's limits are checked later, so counts may pass u64: saturate.
                        let earlier = tile_count.saturating_sub(tiles_of(&rect, tile));
                        let asked = queries[index..].iter().filter_map(|q| rect_tiles(q, view, tile)).fold(earlier, u64::saturating_add);
                        return Err(PickError::Capacity { limit: Limit::RectTiles, configured: MAX_RECT_TILES, asked });
                    }
                    let first_tile = self.tiles.len();
                    for y in (rect.min.y..rect.max.y).step_by(tile.height as usize) {
                        for x in (rect.min.x..rect.max.x).step_by(tile.width as usize) {
                            let first = UVec2::new(x, y);
                            let end = first.saturating_add(UVec2::new(tile.width, tile.height)).min(rect.max);
                            self.tiles.push(TileLayout { first, size: end - first, plan: 0..0 });
                        }
                    }
                    QueryLayout::Rect { rect, mode, plan: 0..0, tiles: first_tile..self.tiles.len(), spans: 0..0 }
                }
            };
            self.queries.push(layout);
        }
        self.points = self.point_texels.len() as u32;
        let detail = limits.detail;
        self.points_block = RegionBlock { offset: HEADER_BYTES, pixels: u64::from(self.points), detail };
        let mut offset = HEADER_BYTES + if self.points > 0 { RegionBlock::bytes(u64::from(self.points), detail) } else { 0 };
        for query in &mut self.queries {
            if let QueryLayout::Radius { region, block, .. } = query {
                *block = RegionBlock { offset, pixels: region.area(), detail };
                offset += RegionBlock::bytes(block.pixels, detail);
            }
        }
        self.table_offset = offset;
        Ok(())
    }

    /// Bytes of the slot the frame writes: header, region blocks and the used table entries.
    pub fn used_bytes(&self) -> u64 {
        self.table_offset + 12 * self.table_used
    }

    /// Where the rectangle table's used entries lie in the slot.
    pub fn table(&self) -> TableCopy {
        TableCopy { offset: self.table_offset, used: self.table_used }
    }

    /// Whether any query is drawn in the pick pass (a point or a radius query).
    pub fn has_hits(&self) -> bool {
        self.queries.iter().any(|q| !matches!(q, QueryLayout::Rect { .. }))
    }

    /// Whether any query is a rectangle.
    pub fn has_rects(&self) -> bool {
        self.queries.iter().any(|q| matches!(q, QueryLayout::Rect { .. }))
    }
}

/// Tiles `rect` is drawn in.
fn tiles_of(rect: &PixelRect, tile: vk::Extent2D) -> u64 {
    let s = rect.size();
    u64::from(s.x).div_ceil(u64::from(tile.width.max(1))) * u64::from(s.y).div_ceil(u64::from(tile.height.max(1)))
}

/// The tiles a query needs, if it is a rectangle inside the view (for the refusal's count).
fn rect_tiles(query: &PickQuery, view: &PixelRect, tile: vk::Extent2D) -> Option<u64> {
    match query {
        PickQuery::Rect { rect, .. } => Some(tiles_of(&rect.intersection(view), tile)),
        PickQuery::Point(_) | PickQuery::Radius { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIEW: PixelRect = PixelRect { min: UVec2::ZERO, max: UVec2::new(640, 480) };

    fn limits() -> LayoutLimits {
        LayoutLimits { max_queries: 8, max_radius: 4, cell: 9, rect_tile: Some(vk::Extent2D { width: 256, height: 128 }), select_through: false, detail: false }
    }

    fn laid(queries: &[PickQuery], limits: &LayoutLimits) -> Result<FrameLayout, PickError> {
        let mut layout = FrameLayout::default();
        layout.lay_out(queries, &VIEW, limits).map(|()| layout)
    }

    #[test]
    fn points_share_texels_and_radius_queries_take_cells_after_the_points_row() {
        let (a, b) = (UVec2::new(10, 20), UVec2::new(30, 40));
        let set = [
            PickQuery::Point(a),
            PickQuery::Radius { pixel: a, radius: 2, snap: Snap::Nearest },
            PickQuery::Point(b),
            PickQuery::Point(a),
            PickQuery::Radius { pixel: b, radius: 4, snap: Snap::Nearest },
        ];
        let l = laid(&set, &limits()).unwrap();
        assert_eq!(l.points, 2);
        assert_eq!(l.queries[0], QueryLayout::Point { pixel: a, texel: 0, plan: Some(0..0) });
        assert_eq!(l.queries[2], QueryLayout::Point { pixel: b, texel: 1, plan: Some(0..0) });
        assert_eq!(l.queries[3], QueryLayout::Point { pixel: a, texel: 0, plan: None }, "a pixel asked for twice is drawn once");
        let QueryLayout::Radius { region, cell, block, .. } = &l.queries[1] else { panic!("{:?}", l.queries[1]) };
        assert_eq!((*region, *cell), (PixelRect::new(UVec2::new(8, 18), UVec2::new(13, 23)), UVec2::new(8, 0)));
        // Staging: the points row, then each radius query's region, then the table.
        assert_eq!(l.points_block, RegionBlock { offset: HEADER_BYTES, pixels: 2, detail: false });
        assert_eq!(block.offset, HEADER_BYTES + RegionBlock::bytes(2, false));
        assert_eq!(block.pixels, 25);
        let QueryLayout::Radius { cell: second_cell, block: second, .. } = &l.queries[4] else { panic!() };
        assert_eq!(*second_cell, UVec2::new(8 + 9, 0));
        assert_eq!(second.offset, block.offset + RegionBlock::bytes(25, false));
        assert_eq!(l.table_offset, second.offset + RegionBlock::bytes(81, false));
        assert_eq!(l.used_bytes(), l.table_offset, "no table entries yet");
        assert!(l.has_hits() && l.tiles.is_empty());
    }

    #[test]
    fn radius_regions_are_clipped_to_the_view_and_detail_widens_blocks() {
        let l = laid(&[PickQuery::Radius { pixel: UVec2::new(1, 479), radius: 4, snap: Snap::Nearest }], &LayoutLimits { detail: true, ..limits() }).unwrap();
        let QueryLayout::Radius { region, block, .. } = &l.queries[0] else { panic!() };
        assert_eq!(*region, PixelRect::new(UVec2::new(0, 475), UVec2::new(6, 480)));
        assert_eq!(*block, RegionBlock { offset: HEADER_BYTES, pixels: 30, detail: true }, "no points: the first block starts after the header");
        assert_eq!(l.table_offset, HEADER_BYTES + RegionBlock::bytes(30, true));
    }

    #[test]
    fn rectangles_are_clipped_and_cut_into_row_major_tiles() {
        let band = PickQuery::Rect { rect: PixelRect::new(UVec2::new(500, 100), UVec2::new(900, 300)), mode: RectMode::Visible };
        let small = PickQuery::Rect { rect: PixelRect::spanning(UVec2::new(3, 4), UVec2::new(3, 4)), mode: RectMode::Visible };
        let l = laid(&[PickQuery::Point(UVec2::ONE), band, small], &limits()).unwrap();
        let QueryLayout::Rect { rect, tiles, .. } = &l.queries[1] else { panic!() };
        assert_eq!(*rect, PixelRect::new(UVec2::new(500, 100), UVec2::new(640, 300)), "clipped to the view");
        let firsts: Vec<_> = l.tiles[tiles.clone()].iter().map(|t| (t.first, t.size)).collect();
        assert_eq!(firsts, [(UVec2::new(500, 100), UVec2::new(140, 128)), (UVec2::new(500, 228), UVec2::new(140, 72))]);
        let QueryLayout::Rect { tiles: one, .. } = &l.queries[2] else { panic!() };
        assert_eq!(l.tiles[one.clone()], [TileLayout { first: UVec2::new(3, 4), size: UVec2::ONE, plan: 0..0 }]);
        assert_eq!(one.start, tiles.end, "each rectangle's tiles follow the last one's");
        assert_eq!(l.table_offset, HEADER_BYTES + RegionBlock::bytes(1, false));
    }

    #[test]
    fn capacity_edges_are_refused_by_name_and_leave_the_layout_empty() {
        let p = PickQuery::Point(UVec2::ONE);
        let mut l = FrameLayout::default();
        assert!(l.lay_out(&[p; 8], &VIEW, &limits()).is_ok(), "exactly max_queries");
        let too_many = l.lay_out(&[p; 9], &VIEW, &limits());
        assert!(matches!(too_many, Err(PickError::Capacity { limit: Limit::Queries, configured: 8, asked: 9 })), "{too_many:?}");
        assert!(l.queries.is_empty() && l.points == 0);
        assert!(matches!(l.lay_out(&[], &VIEW, &limits()), Err(PickError::InvalidInput { input: Input::Query(None), .. })));
        let edge = PickQuery::Radius { pixel: UVec2::ONE, radius: 4, snap: Snap::Nearest };
        assert!(l.lay_out(&[edge], &VIEW, &limits()).is_ok(), "exactly max_radius");
        let wide = l.lay_out(&[PickQuery::Radius { pixel: UVec2::ONE, radius: 5, snap: Snap::Nearest }], &VIEW, &limits());
        assert!(matches!(wide, Err(PickError::Capacity { limit: Limit::Radius, configured: 4, asked: 5 })), "{wide:?}");
        let rect = PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(640, 480)), mode: RectMode::Visible };
        let off = l.lay_out(&[rect], &VIEW, &LayoutLimits { rect_tile: None, ..limits() });
        assert!(matches!(off, Err(PickError::Capacity { limit: Limit::RectEntries, configured: 0, .. })), "{off:?}");
        // 640 x 480 one-pixel tiles are 307,200 a rectangle: past the cap before any is laid out.
        let tiny = LayoutLimits { rect_tile: Some(vk::Extent2D { width: 1, height: 1 }), ..limits() };
        let huge = l.lay_out(&[rect, p, rect], &VIEW, &tiny);
        assert!(matches!(huge, Err(PickError::Capacity { limit: Limit::RectTiles, configured: MAX_RECT_TILES, asked: 614_400 })), "{huge:?}");
        assert!(l.tiles.is_empty());
        let empty = l.lay_out(&[p, PickQuery::Rect { rect: PixelRect::new(UVec2::ONE, UVec2::new(1, 9)), mode: RectMode::Visible }], &VIEW, &limits());
        assert!(matches!(empty, Err(PickError::InvalidInput { input: Input::Query(Some(1)), .. })), "{empty:?}");
        let outside = l.lay_out(&[PickQuery::Point(UVec2::new(640, 0))], &VIEW, &limits());
        assert!(matches!(outside, Err(PickError::OutsideView { x: 640, y: 0 })), "{outside:?}");
    }
}
