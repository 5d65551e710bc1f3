//! A table's occluder meshes: the triangles that let the finishing pass prove a sure hit on
//! the GPU (`shaders/pick_occlusion.glsl`), as the CPU planner does with a draw's registered
//! geometry (`plan::sure_hit`), and a sphere around them that the cull pass tests rows with
//! (tighter than their boxes for round meshes). Uploaded once with the table, per mesh (the
//! geometry and the triangles a draw takes of it), never per draw: rows of one mesh share it.

use crate::draw::chunking::chunkable;
use crate::draw::{MeshGeometry, PickDraw, Triangles};
use std::collections::HashMap;
use std::sync::Arc;

/// The most triangles of one occluder mesh tried whole: every thread of the finishing
/// workgroup tests a share of them (`MAX_WHOLE_OCCLUDER` in the shader).
pub(crate) const MAX_OCCLUDER_TRIANGLES: u32 = 4096;
/// The most triangles of a [`chunkable`] mesh's occluder: the pass tests only the triangles
/// of the chunks whose boxes come near the pixel (`shaders/pick_occluder_chunks.glsl`).
pub(crate) const MAX_CHUNKED_OCCLUDER_TRIANGLES: u32 = 1 << 16;
/// The most triangles a table's occluders hold together (36 bytes each: 9 MiB).
pub(crate) const OCCLUDER_TRIANGLE_BUDGET: u32 = 1 << 18;
/// Words of one triangle: three positions of three f32s.
const TRIANGLE_WORDS: u32 = 9;
/// Words of a mesh's directory entry: its first triangle's word (from the directory's
/// first), its triangle count, and its bounding sphere (centre, radius: f32s).
pub(crate) const DIRECTORY_WORDS: u32 = 6;
/// The sphere's radius grows by this much of itself: the f64 distances rounded to f32.
const SPHERE_SLACK: f64 = 1e-6;

/// Per row, its occluder mesh (index + 1; 0: the row proves nothing), and the words of the
/// meshes: a directory (per mesh [`DIRECTORY_WORDS`]), then the triangles.
pub(crate) struct Occluders {
    pub of_row: Vec<u32>,
    pub words: Vec<u32>,
}

/// What rows share a mesh by (its occluder mesh, its chunk boxes): the geometry, whether it
/// is read through its indices, and the template (count, first, vertex offset). An indexed
/// and a non-indexed draw with equal templates read different triangles.
pub(super) type MeshKey = (usize, bool, (u32, u32, i32));

/// The [`MeshKey`] of `draw`, whose registered geometry is `geometry`.
pub(super) fn mesh_key(draw: &PickDraw, geometry: &Arc<MeshGeometry>) -> MeshKey {
    (Arc::as_ptr(geometry) as usize, matches!(draw.triangles, Triangles::Indexed { .. }), draw.triangles.template())
}

/// The occluder meshes of the table's `rows` (draws of `draws`): each draw that can prove a
/// hit (`PickDraw::proves_hits`) with at most [`MAX_OCCLUDER_TRIANGLES`] (a [`chunkable`]
/// one: [`MAX_CHUNKED_OCCLUDER_TRIANGLES`]), while the meshes fit
/// [`OCCLUDER_TRIANGLE_BUDGET`].
pub(crate) fn occluders(draws: &[PickDraw], rows: &[u32]) -> Occluders {
    let mut meshes: HashMap<MeshKey, u32> = HashMap::new();
    let mut soups: Vec<Vec<u32>> = vec![];
    let mut total = 0;
    let mut of_row = Vec::with_capacity(rows.len());
    for &d in rows {
        let draw = &draws[d as usize];
        let Some(geometry) = draw.geometry.as_ref().filter(|_| draw.proves_hits()) else {
            of_row.push(0);
            continue;
        };
        let key = mesh_key(draw, geometry);
        if let Some(&mesh) = meshes.get(&key) {
            of_row.push(mesh + 1);
            continue;
        }
        let count = draw.triangles.element_count() / 3;
        let most = if chunkable(draw) { MAX_CHUNKED_OCCLUDER_TRIANGLES } else { MAX_OCCLUDER_TRIANGLES };
        let triangles: Option<Vec<u32>> = (count <= most && total + count <= OCCLUDER_TRIANGLE_BUDGET)
            .then(|| (0..count).map(|t| geometry.list_triangle(&draw.triangles, t)).collect::<Option<Vec<_>>>())
            .flatten()
            .map(|ts| ts.iter().flatten().flat_map(|p| p.to_array().map(f32::to_bits)).collect());
        // A mesh that cannot be read whole (or would pass the budget) proves nothing.
        let Some(soup) = triangles.filter(|s| s.iter().all(|w| f32::from_bits(*w).is_finite())) else {
            of_row.push(0);
            continue;
        };
        total += count;
        meshes.insert(key, soups.len() as u32);
        of_row.push(soups.len() as u32 + 1);
        soups.push(soup);
    }
    let mut words = Vec::with_capacity((DIRECTORY_WORDS as usize) * soups.len() + (TRIANGLE_WORDS * total) as usize);
    let mut first = DIRECTORY_WORDS * soups.len() as u32;
    for soup in &soups {
        words.extend([first, soup.len() as u32 / TRIANGLE_WORDS]);
        words.extend(bounding_sphere(soup).map(f32::to_bits));
        first += soup.len() as u32;
    }
    words.extend(soups.into_iter().flatten());
    Occluders { of_row, words }
}

/// A sphere around a mesh's triangles (`soup`: f32 positions): centred in their box, its
/// radius the farthest vertex, computed in f64 and rounded up.
fn bounding_sphere(soup: &[u32]) -> [f32; 4] {
    let points = || soup.chunks_exact(3).map(|p| glam::DVec3::new(f32::from_bits(p[0]).into(), f32::from_bits(p[1]).into(), f32::from_bits(p[2]).into()));
    let (lo, hi) = points().fold((glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY), |(lo, hi), p| (lo.min(p), hi.max(p)));
    let centre = ((lo + hi) * 0.5).as_vec3();
    let radius = points().map(|p| (p - centre.as_dvec3()).length()).fold(0.0, f64::max) * (1.0 + SPHERE_SLACK);
    let up = radius as f32;
    [centre.x, centre.y, centre.z, if f64::from(up) < radius { up.next_up() } else { up }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{Aabb, BufferRange, MeshGeometry, Positions, Triangles};
    use crate::id::ObjectId;
    use ash::vk;
    use glam::Vec3;

    fn draw(geometry: &Arc<MeshGeometry>, first_vertex: u32, vertex_count: u32) -> PickDraw {
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1200 };
        let positions = Positions { range, stride: 12, vertex_count: 100 };
        let bounds = Aabb { min: Vec3::ZERO, max: Vec3::ONE };
        PickDraw::new(ObjectId::new(1).unwrap(), positions, Triangles::NonIndexed { first_vertex, vertex_count })
            .with_bounds(bounds)
            .with_geometry(geometry.clone())
    }

    #[test]
    fn rows_of_one_mesh_share_its_triangles_and_unreadable_meshes_prove_nothing() {
        let positions: Vec<Vec3> = (0..6).map(|k| Vec3::splat(k as f32)).collect();
        let geometry = Arc::new(MeshGeometry { positions, ..Default::default() });
        let other = Arc::new(MeshGeometry { positions: vec![Vec3::ONE; 3], ..Default::default() });
        let mut no_geometry = draw(&geometry, 0, 3);
        no_geometry.geometry = None;
        // Rows: the first triangle, both, the first again, past the positions, another mesh.
        let draws = vec![draw(&geometry, 0, 3), draw(&geometry, 0, 6), draw(&geometry, 0, 3), draw(&geometry, 3, 6), draw(&other, 0, 3), no_geometry];
        let o = occluders(&draws, &[0, 1, 2, 3, 4, 5]);
        assert_eq!(o.of_row, vec![1, 2, 1, 0, 3, 0]);
        // Directory: three meshes of 1, 2 and 1 triangles, their words after it.
        let entry = |m: usize| [o.words[6 * m], o.words[6 * m + 1]];
        assert_eq!([entry(0), entry(1), entry(2)], [[18, 1], [27, 2], [45, 1]]);
        assert_eq!(o.words.len(), 18 + 9 * 4);
        let floats: Vec<f32> = o.words[27..45].iter().map(|w| f32::from_bits(*w)).collect();
        assert_eq!(floats, (0..6).flat_map(|k| [k as f32; 3]).collect::<Vec<_>>(), "the second mesh: vertices 0 to 5");
        // Its sphere: centred at (2.5, 2.5, 2.5), through (0, 0, 0) and (5, 5, 5).
        let sphere: Vec<f32> = o.words[8..12].iter().map(|w| f32::from_bits(*w)).collect();
        assert_eq!(&sphere[..3], &[2.5; 3]);
        let reach = 2.5 * 3f64.sqrt();
        assert!(f64::from(sphere[3]) >= reach && f64::from(sphere[3]) < reach * (1.0 + 1e-5), "{sphere:?}");
    }

    #[test]
    fn a_mesh_past_the_whole_limit_is_an_occluder_only_where_it_can_be_chunked() {
        let count = MAX_OCCLUDER_TRIANGLES + 904;
        let positions: Vec<Vec3> = (0..3 * count).map(|k| Vec3::new(k as f32, (k % 3) as f32, 0.0)).collect();
        let geometry = Arc::new(MeshGeometry { positions, ..Default::default() });
        let chunked = draw(&geometry, 0, 3 * count);
        // A projective model: drawn whole, never chunked.
        let mut projective = chunked.clone();
        projective.model.x_axis.w = 0.5;
        assert_eq!(occluders(&[projective], &[0]).of_row, vec![0]);
        let o = occluders(&[chunked, draw(&geometry, 0, 3 * MAX_OCCLUDER_TRIANGLES)], &[0, 1]);
        assert_eq!(o.of_row, vec![1, 2]);
        assert_eq!([o.words[1], o.words[7]], [count, MAX_OCCLUDER_TRIANGLES]);
    }

    #[test]
    fn an_indexed_and_a_non_indexed_row_of_one_geometry_get_their_own_meshes() {
        let positions: Vec<Vec3> = (0..6).map(|k| Vec3::splat(k as f32)).collect();
        let geometry = Arc::new(MeshGeometry { positions, indices: Some(vec![3, 4, 5]), ..Default::default() });
        let mut indexed = draw(&geometry, 0, 3);
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 12 };
        // The same template (3 elements from 0, offset 0), read through the indices.
        indexed.triangles = Triangles::Indexed { range, width: crate::draw::IndexWidth::U32, first_index: 0, index_count: 3, vertex_offset: 0 };
        let o = occluders(&[draw(&geometry, 0, 3), indexed], &[0, 1]);
        assert_eq!(o.of_row, vec![1, 2]);
        let floats = |m: usize| o.words[o.words[6 * m] as usize..o.words[6 * m] as usize + 9].iter().map(|w| f32::from_bits(*w)).collect::<Vec<_>>();
        assert_eq!((floats(0)[0], floats(1)[0]), (0.0, 3.0), "the non-indexed row's first vertex is 0, the indexed row's 3");
    }
}
