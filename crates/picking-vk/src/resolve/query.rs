//! Resolving a query set: points as single picks, radius queries by their snapping rule,
//! rectangles from the GPU table (merged across tiles and across the draws of one object).

use super::resolve;
use crate::gpu::word_at;
use crate::handoff::{EntrySpan, Snapshots, Texels};
use crate::id::ObjectId;
use crate::readback::RegionBlock;
use crate::request::camera::{CameraSnapshot, DepthConvention};
use crate::request::query::{PixelRect, QueryTicket, RectMode, Snap};
use crate::resolve::result::{PickResult, PickStats};
use glam::UVec2;

/// One object (and instance) a rectangle query found.
#[derive(Clone, Debug, PartialEq)]
pub struct RectObject {
    /// The object.
    pub id: ObjectId,
    /// Instance index within its draw, for instanced draws.
    pub instance: Option<u32>,
    /// The lowest host draw index among the object's draws that showed pixels here.
    pub draw_index: u32,
    /// That draw's [`crate::PickDraw::tag`].
    pub tag: u64,
    /// `Visible`: pixels where the object is the nearest surface. `All`: fragments its
    /// triangles produced in the rectangle (a closed mesh covers a pixel twice, front and back).
    pub pixels: u64,
    /// Framebuffer depth of its nearest fragment in the rectangle, within [0, 1].
    pub depth: f32,
    /// A representative pixel: its first in row-major order.
    pub pixel: UVec2,
}

/// What a rectangle query found.
#[derive(Clone, Debug, PartialEq)]
pub struct RectResult {
    /// The rectangle, clipped to the view.
    pub rect: PixelRect,
    /// The query's mode.
    pub mode: RectMode,
    /// Every object and instance found, in order of [`ObjectId`] then instance.
    pub objects: Vec<RectObject>,
}

/// The answer to one query.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    /// A point query: what lies under its pixel.
    Point(PickResult),
    /// A radius query: the hit at `hit_pixel` (the result's `pixel`), or a miss.
    Radius {
        /// The pick at the chosen pixel (`pixel` and `ray` are that pixel's; on a miss, the
        /// cursor's). The disc is clipped to the view.
        result: PickResult,
        /// The radius asked for.
        radius: u32,
        /// The rule that chose the hit (the query's).
        snap: Snap,
        /// The pixel that was hit, `None` for a miss.
        hit_pixel: Option<UVec2>,
    },
    /// A rectangle query.
    Rect(RectResult),
}

impl QueryResult {
    /// The pick of a point or radius query; `None` for a rectangle.
    pub fn pick(&self) -> Option<&PickResult> {
        match self {
            QueryResult::Point(result) | QueryResult::Radius { result, .. } => Some(result),
            QueryResult::Rect(_) => None,
        }
    }
}

/// The results of one frame's query set, in the order the queries were given.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameResults {
    /// The frame the set was recorded in.
    pub frame: u64,
    /// What the frame's passes did; `gpu_time_ns` covers all of them.
    pub stats: PickStats,
    /// One result per query.
    pub results: Vec<QueryResult>,
}

impl FrameResults {
    /// The pick of query `index` when it is a point or radius query (a one-query set's is
    /// `pick(0)`); `None` for a rectangle or an index past the set.
    pub fn pick(&self, index: usize) -> Option<&PickResult> {
        self.results.get(index).and_then(QueryResult::pick)
    }

    /// The result of the query `ticket` names, if it belongs to this frame.
    pub fn get(&self, ticket: QueryTicket) -> Option<&QueryResult> {
        let index = usize::try_from(ticket.index).ok().filter(|_| ticket.frame == self.frame)?;
        self.results.get(index)
    }
}

/// Whether depth `a` is nearer than `b` under `depth`.
fn nearer(a: f32, b: f32, depth: DepthConvention) -> bool {
    match depth {
        DepthConvention::Standard => a < b,
        DepthConvention::Reverse => a > b,
    }
}

/// A radius query's disc: the pixels of `region` whose centres lie within `radius` of the
/// cursor's `pixel`, read from `block`.
pub(crate) struct Disc<'a> {
    pub pixel: UVec2,
    pub radius: u32,
    pub region: &'a PixelRect,
    pub block: &'a RegionBlock,
    pub bytes: &'a [u8],
}

/// One hit pixel of a disc: its index in the region, squared distance to the cursor, texels.
struct DiscHit {
    index: u64,
    d2: u64,
    texels: Texels,
}

impl Disc<'_> {
    fn pixel_at(&self, index: u64) -> UVec2 {
        let width = u64::from(self.region.size().x);
        self.region.min + UVec2::new((index % width) as u32, (index / width) as u32)
    }

    /// The pixels that hit something, in row-major order.
    fn hits(&self) -> impl Iterator<Item = DiscHit> + '_ {
        let r2 = u64::from(self.radius) * u64::from(self.radius);
        let size = self.region.size();
        (0..u64::from(size.x) * u64::from(size.y)).filter_map(move |index| {
            let d = self.pixel_at(index).as_i64vec2() - self.pixel.as_i64vec2();
            let d2 = (d.x * d.x + d.y * d.y) as u64;
            let texels = (d2 <= r2).then(|| self.block.texels(self.bytes, index))?;
            ObjectId::from_words(texels.id).is_some().then_some(DiscHit { index, d2, texels })
        })
    }
}

/// The pick a radius query answers with under `snap` (see [`Snap`]), and the pixel hit.
/// Two passes over the disc, O(disc) with one entry per object found under `Snap::Thin`.
pub(crate) fn resolve_radius(frame: u64, disc: &Disc<'_>, snap: Snap, camera: &CameraSnapshot, draws: Snapshots<'_>) -> (PickResult, Option<UVec2>) {
    let priority = |h: &DiscHit| draws.get(h.texels.draw_instance[0] as usize).map_or(0, |d| d.priority);
    let top = disc.hits().map(|h| priority(&h)).max();
    let ranked = disc.hits().filter(|h| Some(priority(h)) == top);
    // Whether `a` comes before `b` among one object's pixels (or under `Snap::Nearest`).
    let before = |a: &DiscHit, b: &DiscHit| a.d2 < b.d2 || (a.d2 == b.d2 && nearer(a.texels.depth, b.texels.depth, camera.depth));
    let chosen = match snap {
        Snap::Nearest => ranked.fold(None, |best: Option<DiscHit>, h| if best.as_ref().is_none_or(|b| before(&h, b)) { Some(h) } else { best }),
        Snap::Thin => {
            // Per object (ID, instance): its pixel count and its pixel nearest the cursor.
            let mut objects: Vec<([u32; 2], u32, u64, DiscHit)> = vec![];
            for h in ranked {
                let key = (h.texels.id, h.texels.draw_instance[1]);
                match objects.iter_mut().find(|o| (o.0, o.1) == key) {
                    Some(o) => {
                        o.2 += 1;
                        if before(&h, &o.3) {
                            o.3 = h;
                        }
                    }
                    None => objects.push((key.0, key.1, 1, h)),
                }
            }
            let fewer = |a: &(_, _, u64, DiscHit), b: &(_, _, u64, DiscHit)| a.2 < b.2 || (a.2 == b.2 && before(&a.3, &b.3));
            objects
                .into_iter()
                .fold(None, |best: Option<(_, _, u64, DiscHit)>, o| if best.as_ref().is_none_or(|b| fewer(&o, b)) { Some(o) } else { best })
                .map(|o| o.3)
        }
    };
    match chosen {
        Some(h) => {
            let hit_pixel = disc.pixel_at(h.index);
            (resolve(frame, hit_pixel, camera, draws, &h.texels), Some(hit_pixel))
        }
        None => {
            let miss = Texels { depth: camera.clear_depth(), ..Default::default() };
            (resolve(frame, disc.pixel, camera, draws, &miss), None)
        }
    }
}

/// Where one tile's part of the table lies in the slot: `used` entries copied as three
/// arrays (counts, depth keys, first pixels) from `offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableCopy {
    pub offset: u64,
    pub used: u64,
}

/// Reads a rectangle's objects from the table: per entry with a count, the object, its
/// count, nearest depth and first pixel; the entries of one object's draws merged.
pub(crate) fn resolve_rect(
    rect: PixelRect,
    mode: RectMode,
    spans: &[EntrySpan],
    table: TableCopy,
    bytes: &[u8],
    depth: DepthConvention,
    draws: Snapshots<'_>,
) -> RectResult {
    let word = |array: u64, entry: u32| word_at(bytes, (table.offset + 4 * (array * table.used + u64::from(entry))) as usize);
    let mut objects: Vec<RectObject> = vec![];
    let width = rect.size().x.max(1);
    for span in spans {
        for k in 0..span.count {
            let entry = span.first_entry + k;
            let count = word(0, entry);
            let Some((draw, instance)) = span.entry(draws, k).filter(|_| count > 0) else { continue };
            let key = word(1, entry);
            let bits = if depth == DepthConvention::Reverse { !key } else { key };
            let code = word(2, entry);
            objects.push(RectObject {
                id: draw.id,
                instance,
                draw_index: draw.draw_index,
                tag: draw.tag,
                pixels: u64::from(count),
                depth: crate::readback::window_depth(f32::from_bits(bits), depth.far_depth()),
                pixel: rect.min + UVec2::new(code % width, code / width),
            });
        }
    }
    objects.sort_by_key(|o| (o.id.get(), o.instance, o.draw_index));
    let mut merged: Vec<RectObject> = Vec::with_capacity(objects.len());
    for o in objects {
        match merged.last_mut() {
            Some(m) if m.id == o.id && m.instance == o.instance => {
                m.pixels += o.pixels;
                if nearer(o.depth, m.depth, depth) {
                    m.depth = o.depth;
                }
                if (o.pixel.y, o.pixel.x) < (m.pixel.y, m.pixel.x) {
                    m.pixel = o.pixel;
                }
            }
            _ => merged.push(o),
        }
    }
    RectResult { rect, mode, objects: merged }
}
