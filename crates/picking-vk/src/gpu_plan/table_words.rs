//! The words of a table's static buffer (`gpu_plan::table`) that the GPU planner's shaders
//! read per row and per run (`shaders/pick_cull_draws.comp`,
//! `shaders/pick_cull_finish_draws.comp`): the rows, their run-start bits and the runs. The
//! occluder meshes (`gpu_plan::occluders`) and the chunk boxes (`gpu_plan::chunk_boxes`)
//! follow them.

use crate::draw::{PickDraw, Triangles};

/// Words of a table row: the model's first three rows (its columns' x, y and z: the last row
/// of a table draw's model is (0, 0, 0, 1)), the ID (2) and the row's run.
pub(crate) const TABLE_ROW_WORDS: u32 = 15;
/// Words of a run: its command (`VkDrawIndexedIndirectCommand`, or the non-indexed one and a
/// word unused) drawing all its rows, the rows' local box (min 3, max 3), their occluder
/// mesh (`occluders`: index + 1, 0 for none) and their chunk boxes (`chunk_boxes`: the first
/// box's word from the occluder directory's, plus 1; 0 for none). Drawn whole, a group's
/// runs are its commands, [`RUN_WORDS`] apart.
pub(crate) const RUN_WORDS: u32 = 13;
/// A command over a draw's triangles drawing one instance, `row`.
fn command(triangles: Triangles, row: u32) -> [u32; 5] {
    match triangles {
        Triangles::NonIndexed { first_vertex, vertex_count } => [vertex_count, 1, first_vertex, row, 0],
        Triangles::Indexed { first_index, index_count, vertex_offset, .. } => [index_count, 1, first_index, vertex_offset as u32, row],
    }
}

/// What a row shares with the other rows of its run: what it draws besides its instances
/// (`Triangles::template`), its local box (bit for bit), its occluder mesh and its chunk
/// boxes.
type RunKey = ((u32, u32, i32), [u32; 6], u32, u32);

fn run_key(draw: &PickDraw, occluder: u32, chunks: u32) -> RunKey {
    // Every table draw has a culling box.
    let (min, max) = draw.culling_bounds().map_or((glam::Vec3::ZERO, glam::Vec3::ZERO), |b| (b.min, b.max));
    (draw.triangles.template(), [min.x, min.y, min.z, max.x, max.y, max.z].map(f32::to_bits), occluder, chunks)
}

/// Per row its occluder mesh (`occluders`) and its chunk boxes' word (`chunk_boxes`, counted
/// from the occluder directory's word), 0 for none; rows past them have neither.
#[derive(Clone, Copy, Default)]
pub(super) struct RowMeshes<'a> {
    pub occluders: &'a [u32],
    pub chunks: &'a [u32],
}

/// Per row its run, the runs' words ([`RUN_WORDS`] each) and per group its runs' count:
/// consecutive rows of a group (`groups`: first row and rows) with one [`RunKey`] (`meshes`:
/// their occluder meshes and chunk boxes) share a run, whose command draws them all as its instances. Runs
/// never cross a group: drawing a group whole takes a command a run (one for a group of one
/// mesh, however many rows: a count draw's cost follows its most commands on some drivers).
pub(super) fn runs(draws: &[PickDraw], rows: &[u32], meshes: RowMeshes<'_>, groups: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let of = |m: &[u32], r: usize| m.get(r).copied().unwrap_or(0);
    let key = |r: usize| run_key(&draws[rows[r] as usize], of(meshes.occluders, r), of(meshes.chunks, r));
    let (mut run_of, mut words, mut counts) = (vec![0; rows.len()], vec![], vec![]);
    let mut runs = 0;
    for &(first_row, count) in groups {
        let first_run = runs;
        let (mut start, end) = (first_row as usize, (first_row + count) as usize);
        while start < end {
            let k = key(start);
            let stop = (start + 1..end).find(|&r| key(r) != k).unwrap_or(end);
            // Its instances count from the group's first row: the pick pass binds the
            // group's rows there.
            let mut c = command(draws[rows[start] as usize].triangles, start as u32 - first_row);
            c[1] = (stop - start) as u32;
            words.extend(c);
            words.extend(k.1);
            words.extend([k.2, k.3]);
            run_of[start..stop].fill(runs);
            runs += 1;
            start = stop;
        }
        counts.push(runs - first_run);
    }
    (run_of, words, counts)
}

/// The rows' words: per row its model's first three rows, its ID and its run (`run_of`);
/// then a bit per row set where its run differs from the row before it's (a run of
/// survivors ends there).
pub(super) fn row_words(draws: &[PickDraw], rows: &[u32], run_of: &[u32]) -> Vec<u32> {
    let n = rows.len();
    let mut words = Vec::with_capacity(n * TABLE_ROW_WORDS as usize + n.div_ceil(32));
    for (&d, &run) in rows.iter().zip(run_of) {
        let draw = &draws[d as usize];
        let columns = draw.model.to_cols_array();
        words.extend(columns.chunks(4).flat_map(|c| c[..3].iter().map(|v| v.to_bits())));
        words.extend(draw.id.to_words());
        words.push(run);
    }
    let mut starts = vec![0u32; n.div_ceil(32)];
    for r in 0..n {
        if r == 0 || run_of[r] != run_of[r - 1] {
            starts[r / 32] |= 1 << (r % 32);
        }
    }
    words.extend(starts);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shaders_read_rows_and_runs_as_the_table_lays_them_out() {
        let table = include_str!("../../../../shaders/pick_table.glsl");
        assert!(table.contains(&format!("const uint TABLE_ROW_WORDS = {TABLE_ROW_WORDS}u;")));
        assert!(table.contains(&format!("const uint RUN_WORDS = {RUN_WORDS}u;")));
        for shader in [include_str!("../../../../shaders/pick_cull_draws.comp"), include_str!("../../../../shaders/pick_cull_finish_draws.comp")] {
            assert!(shader.contains("#include \"pick_table.glsl\""));
        }
    }
}
