//! Chunk culling: a planned draw of a large mesh draws only the runs of its triangles the
//! pick ray can meet. A mesh's triangles, in the host's own index order, are cut into chunks
//! of [`CHUNK_TRIANGLES`], each bounded by a model-space box from the registered geometry;
//! chunks are tested like draws (padded by two pixel footprints), so what is left out could
//! not have covered a queried pixel and results are identical. Drawing a subset of a draw's
//! triangles in their order keeps every depth tie as it was.

use super::bvh::{BoxBvh, BvhScratch};
use super::geometry_cache::GeometryCache;
use super::ray::{stretch_bound, PadLine, Padding, PixelRay, SlabRay};
pub(crate) use crate::draw::chunking::chunkable;
use crate::draw::chunking::{CHUNK_TRIANGLES, MIN_CHUNKS};
use crate::draw::{Aabb, MeshGeometry, PickDraw, Triangles};
use std::sync::Arc;

/// Triangles per group of the finer index the sure-hit search walks: it tests every triangle
/// of each group the ray meets, so groups stay small (one box per 8 triangles).
pub(crate) const GROUP_TRIANGLES: u32 = 8;
/// Meshes of fewer groups are searched whole.
const MIN_GROUPS: u32 = 4;

/// What the ray leaves of a draw.
#[derive(Debug, PartialEq)]
pub(crate) enum Cut {
    /// Every chunk: draw it whole.
    Whole,
    /// This many runs of triangles, pushed onto the runs list.
    Runs(u32),
    /// No chunk: the draw is culled.
    Nothing,
}

/// A hierarchy over the boxes of `size`-triangle runs of a mesh, in index order.
fn build_runs(g: &MeshGeometry, triangles: &Triangles, size: u32) -> Option<BoxBvh> {
    let count = triangles.element_count() / 3;
    let mut points = Vec::with_capacity(3 * size as usize);
    let boxes = (0..count.div_ceil(size)).map(|c| {
        let first = c * size;
        points.clear();
        for t in first..(first + size).min(count) {
            points.extend_from_slice(&g.list_triangle(triangles, t)?);
        }
        Aabb::from_points(&points)
    });
    // A chunk that cannot be read or bounded leaves the draw whole.
    BoxBvh::of_boxes(&boxes.collect::<Option<Vec<_>>>()?)
}

/// Chunk and group indices per draw geometry, and the queries' scratch space.
#[derive(Default)]
pub(crate) struct Chunks {
    index: GeometryCache<BoxBvh>,
    groups: GeometryCache<BoxBvh>,
    scratch: BvhScratch,
    found: Vec<u32>,
}

/// The index of a mesh's `size`-triangle runs (built on first use); `None` for meshes of
/// fewer than `min` runs.
fn run_index<'c>(
    cache: &'c mut GeometryCache<BoxBvh>,
    geometry: &Arc<MeshGeometry>,
    triangles: &Triangles,
    size: u32,
    min: u32,
    frame: u64,
) -> Option<&'c BoxBvh> {
    if triangles.element_count() / 3 < min * size {
        return None;
    }
    cache.get(geometry, triangles, frame, || build_runs(geometry, triangles, size))
}

impl Chunks {
    /// Pushes the groups of [`GROUP_TRIANGLES`] whose boxes `ray` (in model space, unpadded)
    /// meets onto `out` as `(entry, group)`, in the order the ray enters them; `false` when
    /// the mesh has no group index.
    pub fn groups_along_ray(&mut self, geometry: &Arc<MeshGeometry>, triangles: &Triangles, ray: &SlabRay, frame: u64, out: &mut Vec<(f32, u32)>) -> bool {
        let Some(bvh) = run_index(&mut self.groups, geometry, triangles, GROUP_TRIANGLES, MIN_GROUPS, frame) else { return false };
        let none = PadLine { base: 0.0, slope: 0.0 };
        bvh.query_entries(ray, Padding { by_reach: none, along_ray: none }, &mut self.scratch, out);
        out.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        true
    }

    /// The runs of `draw`'s triangles (first, count) whose chunks the ray can meet, adjacent
    /// chunks merged, pushed onto `runs`. `draw` is [`chunkable`].
    pub fn cut(&mut self, draw: &PickDraw, ray: &PixelRay, frame: u64, runs: &mut Vec<(u32, u32)>) -> Cut {
        let Some(geometry) = draw.geometry.as_ref() else { return Cut::Whole };
        let inverse = draw.model.inverse();
        if !inverse.is_finite() {
            return Cut::Whole;
        }
        let Some(bvh) = run_index(&mut self.index, geometry, &draw.triangles, CHUNK_TRIANGLES, MIN_CHUNKS, frame) else { return Cut::Whole };
        let pad = ray.padding_in_space(stretch_bound(&draw.model), stretch_bound(&inverse));
        self.found.clear();
        bvh.query(&ray.transformed(&inverse), pad, &mut self.scratch, &mut self.found);
        let count = draw.triangles.element_count() / 3;
        let chunks = count.div_ceil(CHUNK_TRIANGLES);
        if self.found.is_empty() {
            return Cut::Nothing;
        }
        if self.found.len() as u32 >= chunks {
            return Cut::Whole;
        }
        self.found.sort_unstable();
        let before = runs.len();
        let mut run: Option<(u32, u32)> = None;
        for &c in &self.found {
            run = match run {
                Some((first, end)) if end == c => Some((first, c + 1)),
                Some(r) => {
                    runs.push(r);
                    Some((c, c + 1))
                }
                None => Some((c, c + 1)),
            };
        }
        runs.extend(run);
        // Chunk runs to triangle runs; the last chunk may be short.
        for run in &mut runs[before..] {
            let (first, end) = (run.0 * CHUNK_TRIANGLES, (run.1 * CHUNK_TRIANGLES).min(count));
            *run = (first, end - first);
        }
        Cut::Runs((runs.len() - before) as u32)
    }
}

/// `triangles` narrowed to `count` triangles from triangle `first` (a triangle list).
pub(crate) fn run_of(triangles: Triangles, (first, count): (u32, u32)) -> Triangles {
    match triangles {
        Triangles::NonIndexed { first_vertex, .. } => Triangles::NonIndexed { first_vertex: first_vertex + 3 * first, vertex_count: 3 * count },
        Triangles::Indexed { range, width, first_index, vertex_offset, .. } => {
            Triangles::Indexed { range, width, first_index: first_index + 3 * first, index_count: 3 * count, vertex_offset }
        }
    }
}
