//! The snapping oracle: what the rule documented on `picking_vk::Snap` answers, searched by
//! brute force over a full-resolution ID image, and a scene of thin rods and small parts in
//! front of a wall where the rules disagree.

use crate::scene::{Mesh, Object, Scene};
use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::debug::Texels;
use picking_vk::{ObjectId, Snap};

/// A wall behind everything, thin rods (a few pixels wide) and small parts in front of it.
pub fn thin_scene(seed: u64) -> Scene {
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
pub type Hit = (UVec2, i64, f32, (u64, u32));

/// Whether `a` comes before `b` (standard depth: smaller is nearer); strictly, so that ties
/// keep the first in row-major order.
fn better(a: &Hit, b: &Hit) -> bool {
    a.1 < b.1 || (a.1 == b.1 && a.2 < b.2)
}

fn nearest_of<'h>(hits: impl Iterator<Item = &'h Hit>) -> Option<&'h Hit> {
    hits.fold(None, |best: Option<&Hit>, h| if best.is_none_or(|b| better(h, b)) { Some(h) } else { best })
}

/// What the rule documented on `Snap` answers for the disc of `radius` around `cursor`:
/// the pixel chosen, from the whole ID image of `size` pixels. `priority` gives each object's priority.
pub fn brute_force(texels: &[Texels], size: UVec2, cursor: UVec2, radius: u32, snap: Snap, priority: &impl Fn(u64) -> i16) -> Option<UVec2> {
    // The disc's hits in row-major order: (pixel, squared distance, depth, object key).
    let mut hits: Vec<Hit> = vec![];
    for y in cursor.y.saturating_sub(radius)..(cursor.y + radius + 1).min(size.y) {
        for x in cursor.x.saturating_sub(radius)..(cursor.x + radius + 1).min(size.x) {
            let d2 = (i64::from(x) - i64::from(cursor.x)).pow(2) + (i64::from(y) - i64::from(cursor.y)).pow(2);
            let t = &texels[(y * size.x + x) as usize];
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
