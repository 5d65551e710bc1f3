//! The world-space box of a mesh's points under many node transforms, without visiting every
//! point for every node: the points are grouped in a tree of boxes, and a box whose largest
//! possible value along an axis cannot beat the best point found is skipped. The result is
//! the same f32 values' minimum and maximum as transforming every point, so framing does not
//! depend on how many nodes draw a mesh (a small file can name a mesh of 30 million points
//! from 200,000 nodes).

use glam::{Mat4, Vec3};

/// Points per leaf.
const LEAF: usize = 32;

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

    /// The box of every point transformed by `world` (as `Mat4::transform_point3` does).
    pub fn bounds(&self, world: &Mat4) -> (Vec3, Vec3) {
        let mut lo = Vec3::ZERO;
        let mut hi = Vec3::ZERO;
        for axis in 0..3 {
            hi[axis] = self.extreme(world, axis, 1.0);
            lo[axis] = -self.extreme(world, axis, -1.0);
        }
        (lo, hi)
    }

    /// The largest `sign` x the `axis` coordinate of a transformed point.
    fn extreme(&self, world: &Mat4, axis: usize, sign: f32) -> f32 {
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
                None => {
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
            assert_eq!(tree.bounds(&world), every, "{world:?}");
        }
    }
}
