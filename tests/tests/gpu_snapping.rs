//! Radius queries under both snapping rules and with draw priorities, against a brute-force
//! search of the full-resolution ID image under the rule `picking_vk::Snap` documents: random
//! scenes of thin rods and small parts in front of a wall that fills the view.

use glam::UVec2;
use picking_vk::{DepthConvention, ObjectId, PickQuery, PickRequest, PickerConfig, QueryResult, Snap, Viewport};
use picking_vk_tests::harness::{random_scene_camera, Gpu};
use picking_vk_tests::snap_oracle::{brute_force, thin_scene};

const W: u32 = 160;
const H: u32 = 120;
const SIZE: UVec2 = UVec2::new(W, H);

#[test]
fn thin_snapping_and_priorities_answer_as_a_brute_force_search_of_the_id_image() {
    let gpu = Gpu::new();
    let (mut compared, mut thin_differs, mut priority_decides) = (0, 0, 0);
    for seed in [51, 52, 53] {
        let scene = thin_scene(seed);
        let mut gs = scene.upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        // The small parts are "gizmos": they outrank rods and wall wherever they show.
        let priority = |id: u64| if id >= 30 { 1 } else { 0 };
        let plain = |_: u64| 0i16;
        let texels = gpu.id_image(&request, &gs.draws, W, H);
        let mut picker = gpu.picker(PickerConfig::default().with_max_radius(12));
        let mut rng = fastrand::Rng::with_seed(seed);
        // Cursors near the rods and parts, where the rules disagree: pixels of theirs, moved.
        let near: Vec<UVec2> = (0..W * H).filter(|&i| texels[i as usize].id[0] >= 10).map(|i| UVec2::new(i % W, i / W)).collect();
        assert!(near.len() > 40, "seed {seed}: the rods and parts show");
        for prioritized in [false, true] {
            for draw in &mut gs.draws {
                draw.priority = if prioritized { priority(draw.id.get()) } else { 0 };
            }
            for _ in 0..6 {
                let cursors: Vec<(UVec2, u32)> = (0..8)
                    .map(|_| {
                        let p = near[rng.usize(..near.len())].as_ivec2() + glam::IVec2::new(rng.i32(-6..=6), rng.i32(-6..=6));
                        (p.clamp(glam::IVec2::ZERO, glam::IVec2::new(W as i32 - 1, H as i32 - 1)).as_uvec2(), [2, 5, 8, 12][rng.usize(..4)])
                    })
                    .collect();
                let queries: Vec<PickQuery> =
                    cursors.iter().flat_map(|&(pixel, radius)| [Snap::Nearest, Snap::Thin].map(|snap| PickQuery::Radius { pixel, radius, snap })).collect();
                let set = gpu.run_queries(&mut picker, &request, &queries, &gs.draws);
                for (q, r) in queries.iter().zip(&set.results) {
                    let PickQuery::Radius { pixel, radius, snap } = *q else { unreachable!() };
                    let QueryResult::Radius { result, hit_pixel, snap: answered, .. } = r else { panic!("a radius result") };
                    assert_eq!(*answered, snap, "the result names its rule");
                    let expected = if prioritized {
                        brute_force(&texels, SIZE, pixel, radius, snap, &priority)
                    } else {
                        brute_force(&texels, SIZE, pixel, radius, snap, &plain)
                    };
                    assert_eq!(*hit_pixel, expected, "seed {seed} cursor {pixel} radius {radius} {snap:?} priorities {prioritized}");
                    let want_id = expected.and_then(|p| ObjectId::from_words(texels[(p.y * W + p.x) as usize].id));
                    assert_eq!(result.id(), want_id, "seed {seed} cursor {pixel}");
                    compared += 1;
                }
                for pair in set.results.chunks(2) {
                    let ids = pair.iter().map(|r| r.pick().and_then(|p| p.id())).collect::<Vec<_>>();
                    thin_differs += usize::from(!prioritized && ids[0] != ids[1]);
                }
                if prioritized {
                    priority_decides += cursors
                        .iter()
                        .filter(|&&(p, r)| {
                            brute_force(&texels, SIZE, p, r, Snap::Nearest, &priority) != brute_force(&texels, SIZE, p, r, Snap::Nearest, &plain)
                        })
                        .count();
                }
            }
        }
        drop((picker, gs));
    }
    assert!(compared >= 500, "{compared} queries compared");
    assert!(thin_differs > 15, "thin snapping chose another object than the nearest pixel in {thin_differs} discs");
    assert!(priority_decides > 5, "priorities changed the answer in {priority_decides} discs");
    gpu.assert_no_validation_messages();
}
