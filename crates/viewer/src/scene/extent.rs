//! The world-space box of a mesh's points under many node transforms, without visiting every
//! point for every node: the points are grouped in a tree of boxes, and a box whose largest
//! possible value along an axis cannot beat the best point found is skipped. The result is
//! the same f32 values' minimum and maximum as transforming every point, so framing does not
//! depend on how many nodes draw a mesh (a small file can name a mesh of 30 million points
//! from 200,000 nodes). Points that tie along an axis (a flat mesh seen edge-on) defeat the
//! pruning, and every leaf would be opened for every node: the caller gives the searches a
//! budget of leaves (`Scene::bounds`: [`FRAMING_LEAVES`] over all nodes), past which each
//! search settles for what the boxes it has not opened reach (a bound, not the extreme: for
//! tied points at most 1e-6 of the coordinates' size above it).

use glam::{Mat4, Vec3};

/// Points per leaf.
const LEAF: usize = 32;
/// Leaves a scene's framing opens over all its nodes and axes (33 million points, a fraction
/// of a second): pruning opens a few a search where points do not tie.
pub const FRAMING_LEAVES: usize = 1 << 20;

/// A tree node: the box of `points[start..end]`, and its two children's indices, if split.
struct Cell {
    lo: Vec3,
    hi: Vec3,
    start: usize,
    end: usize,
    children: Option<[usize; 2]>,
}

/// A mesh's points grouped into boxes.
pub struct PointTree {
    points: Vec<Vec3>,
    cells: Vec<Cell>,
}

impl PointTree {
    pub fn new(mut points: Vec<Vec3>) -> Option<Self> {
        if points.is_empty() {
            return None;
        }
        let mut cells = vec![];
        let mut pending = vec![(0, points.len(), None::<(usize, usize)>)];
        while let Some((start, end, parent)) = pending.pop() {
            let slice = &mut points[start..end];
            let (lo, hi) = slice.iter().fold((slice[0], slice[0]), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
            let index = cells.len();
            cells.push(Cell { lo, hi, start, end, children: None });
            if let Some((parent, side)) = parent {
                let children = cells[parent].children.get_or_insert([0; 2]);
                children[side] = index;
            }
            if slice.len() > LEAF {
                // Split at the median along the box's longest side.
                let axis = (hi - lo).max_position();
                let middle = slice.len() / 2;
                slice.select_nth_unstable_by(middle, |a, b| a[axis].total_cmp(&b[axis]));
                pending.push((start + middle, end, Some((index, 1))));
                pending.push((start, start + middle, Some((index, 0))));
            }
        }
        Some(PointTree { points, cells })
    }

    /// The box of every point transformed by `world` (as `Mat4::transform_point3` does),
    /// opening at most `leaves` leaves (taken from it); past them, a box that holds it.
    pub fn bounds(&self, world: &Mat4, leaves: &mut usize) -> (Vec3, Vec3) {
        let mut lo = Vec3::ZERO;
        let mut hi = Vec3::ZERO;
        for axis in 0..3 {
            hi[axis] = self.extreme(world, axis, 1.0, leaves);
            lo[axis] = -self.extreme(world, axis, -1.0, leaves);
        }
        (lo, hi)
    }

    /// The largest `sign` x the `axis` coordinate of a transformed point, opening at most
    /// `leaves` leaves; once they are spent, a bound on it from the boxes not opened.
    fn extreme(&self, world: &Mat4, axis: usize, sign: f32, leaves: &mut usize) -> f32 {
        let row = world.row(axis).as_dvec4();
        let (row3, offset) = (row.truncate(), row.w);
        // What a box's points can reach at most, in f64, with room for f32 rounding (four
        // roundings of terms at most as large as their absolute sum).
        let reach = |c: &Cell| {
            let (lo, hi) = (c.lo.as_dvec3(), c.hi.as_dvec3());
            let (centre, half) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
            let value = f64::from(sign) * (row3.dot(centre) + offset) + row3.abs().dot(half);
            let size = row3.abs().dot(centre.abs() + half) + offset.abs();
            value + 1e-6 * size + f64::from(f32::MIN_POSITIVE)
        };
        let mut best = f32::NEG_INFINITY;
        // Cells to visit, each with its reach.
        let mut stack = vec![(0, reach(&self.cells[0]))];
        while let Some((i, cell_reach)) = stack.pop() {
            let cell = &self.cells[i];
            if cell_reach <= f64::from(best) {
                continue;
            }
            // Points all alike (a sparse accessor's zeros): one stands for them.
            if cell.lo == cell.hi {
                best = best.max(sign * world.transform_point3(cell.lo)[axis]);
                continue;
            }
            match cell.children {
                Some([a, b]) => {
                    // The more promising child is taken first (pushed last).
                    let (a, b) = ((a, reach(&self.cells[a])), (b, reach(&self.cells[b])));
                    let (first, second) = if a.1 >= b.1 { (a, b) } else { (b, a) };
                    stack.extend([second, first]);
                }
                None if *leaves == 0 => {
                    // The budget is spent: what the boxes not opened reach bounds the rest.
                    let rest = stack.iter().map(|&(_, r)| r).fold(cell_reach, f64::max);
                    let bound = rest as f32;
                    let bound = if f64::from(bound) < rest { bound.next_up() } else { bound };
                    return best.max(bound);
                }
                None => {
                    *leaves -= 1;
                    for p in &self.points[cell.start..cell.end] {
                        best = best.max(sign * world.transform_point3(*p)[axis]);
                    }
                }
            }
        }
        best
    }
}

/// Whether `points` under `nodes` transforms are cheaper to bound with a [`PointTree`].
pub fn worth_a_tree(points: usize, nodes: usize) -> bool {
    nodes > 1 && points.saturating_mul(nodes) > 1 << 20
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_bounds_exactly_what_every_point_bounds() {
        // Points on a warped sphere, many repeated, under rotations, scales and mirrors.
        let mut points: Vec<Vec3> = (0..5000)
            .map(|i| {
                let (a, b) = (i as f32 * 0.37, i as f32 * 0.11);
                Vec3::new(a.cos() * b.sin() * 3.0, a.sin() * b.sin(), b.cos() * 0.5) + Vec3::splat(1e3)
            })
            .collect();
        points.extend(vec![Vec3::ZERO; 3000]);
        let tree = PointTree::new(points.clone()).unwrap();
        let worlds = [
            Mat4::IDENTITY,
            Mat4::from_scale_rotation_translation(
                Vec3::new(2.0, -0.5, 3.0),
                glam::Quat::from_euler(glam::EulerRot::XYZ, 0.3, 1.1, -2.0),
                Vec3::new(1e4, -5.0, 0.25),
            ),
            Mat4::from_rotation_y(0.7) * Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
            Mat4::from_cols_array(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1.0]),
        ];
        for world in worlds {
            let every = points.iter().map(|p| world.transform_point3(*p)).fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), w| (lo.min(w), hi.max(w)));
            let mut leaves = FRAMING_LEAVES;
            assert_eq!(tree.bounds(&world, &mut leaves), every, "{world:?}");
        }
    }

    #[test]
    fn a_flat_mesh_seen_edge_on_settles_for_its_boxes_bound() {
        // 200,000 points in the plane z = 5: along z every box reaches 5 plus its rounding
        // room, so none can be pruned, and every leaf was opened for every node drawing them.
        let points: Vec<Vec3> = (0..200_000).map(|i| Vec3::new((i % 449) as f32 * 0.37, (i / 449) as f32 * 0.21, 5.0)).collect();
        let tree = PointTree::new(points).unwrap();
        let world = Mat4::from_rotation_z(0.4);
        let mut leaves = 100;
        let z = tree.extreme(&world, 2, 1.0, &mut leaves);
        assert_eq!(leaves, 0, "the tied search spends the budget (of 6,250 leaves)");
        assert!((5.0..5.0 + 1e-3).contains(&z), "the bound {z} holds the plane, within rounding room");
        // Off the tied axis the search prunes and is exact, with a few leaves.
        let mut leaves = 100;
        let x = tree.extreme(&world, 0, 1.0, &mut leaves);
        let exact = tree.points.iter().map(|p| world.transform_point3(*p).x).fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(x, exact);
        assert!(leaves > 90, "{} leaves opened", 100 - leaves);
        // With no budget left, a box that holds every point.
        let (lo, hi) = tree.bounds(&world, &mut 0);
        assert!(tree.points.iter().map(|p| world.transform_point3(*p)).all(|w| w.cmpge(lo).all() && w.cmple(hi).all()), "{lo} {hi}");
    }
}
