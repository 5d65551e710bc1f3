//! Radius queries under both snapping rules and with draw priorities, against a brute-force
//! search of the full-resolution ID image under the rule `picking_vk::Snap` documents: random
//! scenes of thin rods and small parts in front of a wall that fills the view.

use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::debug::Texels;
use picking_vk::{DepthConvention, ObjectId, PickQuery, PickRequest, PickerConfig, QueryResult, Snap, Viewport};
use picking_vk_tests::harness::{random_scene_camera, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;

/// A wall behind everything, thin rods (a few pixels wide) and small parts in front of it.
fn thin_scene(seed: u64) -> Scene {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut scene = Scene { meshes: vec![Mesh::quad(1.0), Mesh::cuboid(Vec3::ONE)], ..Scene::default() };
    let wall = Mat4::from_scale_rotation_translation(Vec3::splat(30.0), Quat::IDENTITY, Vec3::new(0.0, 0.0, -14.0));
    scene.objects.push(Object::new(1, 0, wall));
    let mut place = |id: u64, size: Vec3| {
        let at = Vec3::new(rng.f32() * 5.0 - 2.5, rng.f32() * 3.6 - 1.8, -4.0 - rng.f32() * 4.0);
        let turn = Quat::from_rotation_z(rng.f32() * 6.3) * Quat::from_rotation_x(rng.f32() - 0.5);
        Object::new(id, 1, Mat4::from_scale_rotation_translation(size, turn, at))
    };
    for k in 0..8 {
        scene.objects.push(place(10 + k, Vec3::new(0.012 + 0.02 * (k % 3) as f32, 1.2, 0.012 + 0.02 * (k % 3) as f32)));
    }
    for k in 0..5 {
        scene.objects.push(place(30 + k, Vec3::splat(0.05 + 0.03 * k as f32)));
    }
    scene
}

/// A hit of a disc: pixel, squared distance to the cursor, depth, object (ID, instance).
type Hit = (UVec2, i64, f32, (u64, u32));

/// Whether `a` comes before `b` (standard depth: smaller is nearer); strictly, so that ties
/// keep the first in row-major order.
fn better(a: &Hit, b: &Hit) -> bool {
    a.1 < b.1 || (a.1 == b.1 && a.2 < b.2)
}

fn nearest_of<'h>(hits: impl Iterator<Item = &'h Hit>) -> Option<&'h Hit> {
    hits.fold(None, |best: Option<&Hit>, h| if best.is_none_or(|b| better(h, b)) { Some(h) } else { best })
}

/// What the rule documented on `Snap` answers for the disc of `radius` around `cursor`:
/// the pixel chosen, from the whole ID image. `priority` gives each object's priority.
fn brute_force(texels: &[Texels], cursor: UVec2, radius: u32, snap: Snap, priority: &impl Fn(u64) -> i16) -> Option<UVec2> {
    // The disc's hits in row-major order: (pixel, squared distance, depth, object key).
    let mut hits: Vec<Hit> = vec![];
    for y in cursor.y.saturating_sub(radius)..(cursor.y + radius + 1).min(H) {
        for x in cursor.x.saturating_sub(radius)..(cursor.x + radius + 1).min(W) {
            let d2 = (i64::from(x) - i64::from(cursor.x)).pow(2) + (i64::from(y) - i64::from(cursor.y)).pow(2);
            let t = &texels[(y * W + x) as usize];
            if let Some(id) = ObjectId::from_words(t.id).filter(|_| d2 <= i64::from(radius).pow(2)) {
                hits.push((UVec2::new(x, y), d2, t.depth, (id.get(), t.draw_instance[1])));
            }
        }
    }
    let top = hits.iter().map(|h| priority(h.3 .0)).max()?;
    hits.retain(|h| priority(h.3 .0) == top);
    match snap {
        Snap::Nearest => nearest_of(hits.iter()).map(|h| h.0),
        Snap::Thin => {
            let mut keys: Vec<(u64, u32)> = vec![];
            for h in &hits {
                if !keys.contains(&h.3) {
                    keys.push(h.3);
                }
            }
            let objects = keys.iter().map(|k| {
                let count = hits.iter().filter(|h| h.3 == *k).count();
                (count, nearest_of(hits.iter().filter(|h| h.3 == *k)).unwrap())
            });
            let fewer = |a: &(usize, &Hit), b: &(usize, &Hit)| a.0 < b.0 || (a.0 == b.0 && better(a.1, b.1));
            objects.fold(None, |best: Option<(usize, _)>, o| if best.as_ref().is_none_or(|b| fewer(&o, b)) { Some(o) } else { best }).map(|o| o.1 .0)
        }
    }
}

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
                    let expected =
                        if prioritized { brute_force(&texels, pixel, radius, snap, &priority) } else { brute_force(&texels, pixel, radius, snap, &plain) };
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
                        .filter(|&&(p, r)| brute_force(&texels, p, r, Snap::Nearest, &priority) != brute_force(&texels, p, r, Snap::Nearest, &plain))
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
