use super::*;
use crate::draw::{BufferRange, Positions};
use crate::gpu_plan::table_words::RUN_WORDS;
use crate::id::ObjectId;
use ash::vk::Handle;
use glam::Vec3;

fn draw(buffer: u64, first_vertex: u32) -> PickDraw {
    let range = BufferRange { buffer: vk::Buffer::from_raw(buffer), offset: 0, size: 1200 };
    let positions = Positions { range, stride: 12, vertex_count: 100 };
    let bounds = Aabb { min: Vec3::ZERO, max: Vec3::ONE };
    PickDraw::new(ObjectId::new(1).unwrap(), positions, Triangles::NonIndexed { first_vertex, vertex_count: 3 }).with_bounds(bounds)
}

/// 40 draws of buffer 1 whose first vertices alternate, an unpickable one, 10 more, 20 of
/// buffer 2, a projective one and 5 more.
fn mixed_draws() -> Vec<PickDraw> {
    let mut draws: Vec<PickDraw> = (0..40).map(|k| draw(1, 3 * (k % 2))).collect();
    let mut hidden = draw(1, 0);
    hidden.pickable = false;
    draws.push(hidden);
    draws.extend((0..10).map(|_| draw(1, 0)));
    draws.extend((0..20).map(|_| draw(2, 0)));
    let projective = draw(2, 0).with_model(glam::Mat4::from_cols(glam::Vec4::X, glam::Vec4::Y, glam::Vec4::Z, glam::Vec4::new(0.0, 0.0, 1.0, 0.5)));
    draws.push(projective);
    draws.extend((0..5).map(|_| draw(2, 0)));
    draws
}

#[test]
fn groups_are_runs_of_plain_draws_sharing_bindings_and_small_ones_stay_on_the_cpu() {
    let draws = mixed_draws();
    let (index, rows) = TableIndex::of(&draws, 16);
    // 40 draws of buffer 1 in groups of at most 16 (the last, 8, stays on the CPU); the
    // unpickable draw breaks the run, and the 10 after it are too few; buffer 2's 20 make
    // one group of 16 and four left over; a projective model and the five after it too.
    let groups: Vec<(u32, u32, u32)> = index.groups.iter().map(|g| (g.draw, g.first_row, g.rows)).collect();
    assert_eq!(groups, vec![(0, 0, 16), (16, 16, 16), (51, 32, 16)]);
    assert_eq!(rows, (0..32).chain(51..67).collect::<Vec<u32>>());
    assert_eq!(index.rows(), 48);
    let in_table: Vec<usize> = (0..draws.len()).filter(|&i| index.in_table[i]).collect();
    assert_eq!(in_table, (0..32).chain(51..67).collect::<Vec<usize>>());
}

#[test]
fn a_groups_rows_that_draw_the_same_share_a_run_and_rows_keep_their_model_id_and_run() {
    let draws = mixed_draws();
    let (index, rows) = TableIndex::of(&draws, 16);
    // Runs: rows of a group that draw the same (every row of the alternating groups, one
    // for buffer 2's), each run drawing its rows as instances.
    let mut groups = index.groups.clone();
    let (run_of, runs) = place_runs(&mut groups, &draws, &rows, RowMeshes::default());
    assert_eq!(groups.iter().map(|g| (g.first_run, g.runs)).collect::<Vec<_>>(), vec![(0, 16), (16, 16), (32, 1)]);
    assert_eq!(run_of, (0..32).chain([32; 16]).collect::<Vec<u32>>());
    assert_eq!(runs.len(), 33 * RUN_WORDS as usize);
    let one = 1f32.to_bits();
    assert_eq!(
        &runs[32 * RUN_WORDS as usize..],
        &[3, 16, 0, 0, 0, 0, 0, 0, one, one, one, 0, 0],
        "three vertices, 16 instances from the group's first row, the box, no occluder or chunks"
    );
    let second = 17 * RUN_WORDS as usize;
    assert_eq!(&runs[second..second + 5], &[3, 1, 3, 1, 0], "the second group's second row");
    // Run starts: where a row's run differs from the row before's.
    let words = row_words(&draws, &rows, &run_of);
    let starts = words[rows.len() * TABLE_ROW_WORDS as usize..].to_vec();
    assert_eq!(starts, vec![u32::MAX, 1]);
    // A row: its model's first three rows (the identity), its ID and its run.
    let at = 33 * TABLE_ROW_WORDS as usize;
    assert_eq!(&words[at..at + 15], &[one, 0, 0, 0, one, 0, 0, 0, one, 0, 0, 0, 1, 0, 32]);
}

#[test]
fn a_run_ends_where_the_box_or_the_occluder_changes_and_at_a_group_boundary() {
    let mut draws: Vec<PickDraw> = (0..40).map(|_| draw(1, 0)).collect();
    draws[5] = draws[5].clone().with_bounds(Aabb { min: Vec3::ZERO, max: Vec3::splat(2.0) });
    let (index, rows) = TableIndex::of(&draws, 20);
    let mut of_row = vec![0; rows.len()];
    of_row[10..20].fill(1);
    let mut groups = index.groups.clone();
    let (run_of, _) = place_runs(&mut groups, &draws, &rows, RowMeshes { occluders: &of_row, chunks: &[] });
    // Rows 0-4, row 5 (its box), rows 6-9, then 10-19 (an occluder mesh); the second
    // group's rows are one run of their own, and have no occluder mesh.
    let expected: Vec<u32> = [0; 5].into_iter().chain([1]).chain([2; 4]).chain([3; 10]).chain([4; 20]).collect();
    assert_eq!(run_of, expected);
    assert_eq!(groups.iter().map(|g| (g.first_run, g.runs, g.occluders)).collect::<Vec<_>>(), vec![(0, 4, true), (4, 1, false)]);
}

#[test]
fn a_table_of_one_mesh_keeps_60_bytes_and_a_bit_a_draw() {
    let draws: Vec<PickDraw> = (0..1000).map(|k| draw(1, 0).with_model(glam::Mat4::from_translation(Vec3::X * k as f32))).collect();
    let (mut index, rows) = TableIndex::of(&draws, 1000);
    let (run_of, runs) = place_runs(&mut index.groups, &draws, &rows, RowMeshes::default());
    let words = row_words(&draws, &rows, &run_of).len() + runs.len();
    // Rows, run-start bits, one run.
    assert_eq!(words, 1000 * 15 + 32 + RUN_WORDS as usize);
    assert!(4.0 * words as f64 / 1000.0 < 61.0);
}

#[test]
fn a_draw_naming_its_culling_never_groups_with_one_leaving_it_to_the_request() {
    let mut draws: Vec<PickDraw> = (0..32).map(|_| draw(1, 0)).collect();
    for d in &mut draws[16..] {
        // Culling nothing, as the first 16 do under a request that culls nothing.
        d.raster.culling = Some(Culling::NONE);
    }
    let (index, _) = TableIndex::of(&draws, 1000);
    let groups: Vec<(u32, u32)> = index.groups.iter().map(|g| (g.draw, g.rows)).collect();
    assert_eq!(groups, vec![(0, 16), (16, 16)]);
}
