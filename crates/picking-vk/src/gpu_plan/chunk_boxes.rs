//! A table's chunk boxes: for each mesh of many triangles, a local box per
//! [`CHUNK_TRIANGLES`] of its own index order, as the CPU planner cuts a draw
//! (`plan::chunks`). The finishing pass draws a surviving row by the spans of chunks whose
//! boxes meet its pair's region (`shaders/pick_chunks.glsl`), where the CPU planner would cut
//! the draw the same way. Uploaded once with the table, per mesh (rows of one mesh share
//! them), never per draw.

use super::occluders::{mesh_key, MeshKey};
use crate::draw::chunking::{chunkable, CHUNK_TRIANGLES};
use crate::draw::{Aabb, MeshGeometry, PickDraw, Triangles};
use std::collections::HashMap;

/// Words of a chunk's box: min 3, max 3 (f32s).
pub(crate) const CHUNK_WORDS: u32 = 6;
/// The most chunks a table's meshes hold together (24 bytes each: 3 MiB).
pub(crate) const CHUNK_BUDGET: u32 = 1 << 17;

/// Per row, the word of its mesh's first chunk box in `words` plus 1 (0: the row is drawn
/// whole), and the boxes' words.
pub(crate) struct ChunkBoxes {
    pub of_row: Vec<u32>,
    pub words: Vec<u32>,
}

/// The chunk boxes of the table's `rows` (draws of `draws`), once per [`MeshKey`]: each
/// [`chunkable`] draw (discard hooks included: a hooked row's boxes go through its model),
/// while the meshes fit [`CHUNK_BUDGET`]. A mesh whose triangles cannot all be read and
/// bounded gets none.
pub(crate) fn chunk_boxes(draws: &[PickDraw], rows: &[u32]) -> ChunkBoxes {
    let mut meshes: HashMap<MeshKey, u32> = HashMap::new();
    let (mut of_row, mut words) = (Vec::with_capacity(rows.len()), Vec::new());
    for &d in rows {
        let draw = &draws[d as usize];
        let Some(geometry) = draw.geometry.as_ref().filter(|_| chunkable(draw)) else {
            of_row.push(0);
            continue;
        };
        let key = mesh_key(draw, geometry);
        if let Some(&at) = meshes.get(&key) {
            of_row.push(at);
            continue;
        }
        let count = draw.triangles.element_count() / 3;
        let chunks = count.div_ceil(CHUNK_TRIANGLES);
        let fits = words.len() as u32 / CHUNK_WORDS + chunks <= CHUNK_BUDGET;
        let boxes = fits.then(|| (0..chunks).map(|c| chunk_box(geometry, &draw.triangles, c, count)).collect::<Option<Vec<_>>>()).flatten();
        let at = match boxes {
            Some(boxes) => {
                let at = words.len() as u32 + 1;
                words.extend(boxes.iter().flat_map(|b| [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z]).map(f32::to_bits));
                at
            }
            None => 0,
        };
        meshes.insert(key, at);
        of_row.push(at);
    }
    ChunkBoxes { of_row, words }
}

/// The box of chunk `c` of a mesh of `count` triangles (the last may be short).
fn chunk_box(geometry: &MeshGeometry, triangles: &Triangles, c: u32, count: u32) -> Option<Aabb> {
    let first = c * CHUNK_TRIANGLES;
    let mut points = Vec::with_capacity(3 * CHUNK_TRIANGLES as usize);
    for t in first..(first + CHUNK_TRIANGLES).min(count) {
        points.extend_from_slice(&geometry.list_triangle(triangles, t)?);
    }
    // A non-finite vertex (which `Aabb::from_points` would pass over) leaves the mesh whole.
    points.iter().all(|p| p.is_finite()).then(|| Aabb::from_points(&points)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{BufferRange, MeshGeometry, Positions};
    use crate::id::ObjectId;
    use ash::vk;
    use glam::Vec3;
    use std::sync::Arc;

    fn draw(geometry: &Arc<MeshGeometry>, vertex_count: u32) -> PickDraw {
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 12 * geometry.positions.len() as u64 };
        let positions = Positions { range, stride: 12, vertex_count: geometry.positions.len() as u32 };
        PickDraw::new(ObjectId::new(1).unwrap(), positions, Triangles::NonIndexed { first_vertex: 0, vertex_count })
            .with_bounds(Aabb { min: Vec3::ZERO, max: Vec3::splat(1000.0) })
            .with_geometry(geometry.clone())
    }

    #[test]
    fn a_mesh_of_many_triangles_gets_a_box_per_64_triangles_shared_by_its_rows() {
        // 300 triangles along x: triangle t spans x in [t, t + 1].
        let positions: Vec<Vec3> =
            (0..300).flat_map(|t| [Vec3::new(t as f32, 0.0, 0.0), Vec3::new(t as f32 + 1.0, 1.0, 0.0), Vec3::new(t as f32, 0.0, 2.0)]).collect();
        let geometry = Arc::new(MeshGeometry { positions, ..Default::default() });
        let small = draw(&geometry, 3 * 200);
        let draws = vec![draw(&geometry, 900), small, draw(&geometry, 900)];
        let b = chunk_boxes(&draws, &[0, 1, 2]);
        // 200 triangles are under four chunks: drawn whole.
        assert_eq!(b.of_row, vec![1, 0, 1]);
        assert_eq!(b.words.len(), 5 * CHUNK_WORDS as usize, "300 triangles: 4 chunks of 64 and one of 44");
        let floats = |c: usize| b.words[6 * c..6 * c + 6].iter().map(|w| f32::from_bits(*w)).collect::<Vec<_>>();
        assert_eq!(floats(0), vec![0.0, 0.0, 0.0, 64.0, 1.0, 2.0]);
        assert_eq!(floats(4), vec![256.0, 0.0, 0.0, 300.0, 1.0, 2.0]);
    }

    #[test]
    fn an_unreadable_or_non_finite_mesh_gets_no_boxes() {
        let mut positions = vec![Vec3::ONE; 900];
        positions[700] = Vec3::NAN;
        let geometry = Arc::new(MeshGeometry { positions, ..Default::default() });
        // Past the positions (1,200 vertices of 900), and a NaN vertex.
        let b = chunk_boxes(&[draw(&geometry, 1200), draw(&geometry, 900)], &[0, 1]);
        assert_eq!((b.of_row, b.words.len()), (vec![0, 0], 0));
    }
}
