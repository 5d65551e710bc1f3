//! Procedural meshes (the viewer's built-in scene, the benchmark's objects, the lit pass's
//! markers): flat-shaded boxes, smooth spheres, cylinders, tori and planes, with normals and UVs.

use crate::mesh::Primitive;
use glam::{Vec2, Vec3};
use std::f32::consts::{PI, TAU};

/// Two triangles per cell of a (rows x cols) grid of vertices laid out row by row with
/// `cols + 1` per row; `flip` reverses the winding.
fn grid_indices(rows: u32, cols: u32, flip: bool) -> Vec<u32> {
    let row = cols + 1;
    let mut ix = Vec::with_capacity((rows * cols * 6) as usize);
    for i in 0..rows {
        for j in 0..cols {
            let (a, b, c, d) = (i * row + j, i * row + j + 1, (i + 1) * row + j, (i + 1) * row + j + 1);
            if flip {
                ix.extend_from_slice(&[a, c, b, b, c, d]);
            } else {
                ix.extend_from_slice(&[a, b, c, b, d, c]);
            }
        }
    }
    ix
}

fn primitive(positions: Vec<Vec3>, normals: Vec<Vec3>, uvs: Vec<Vec2>, indices: Vec<u32>, color: [f32; 4]) -> Primitive {
    Primitive { positions, normals, uvs: Some(uvs), indices: Some(indices), color, ..Default::default() }
}

/// A box of half-extents `h`, 24 vertices so each face is flat.
pub fn cuboid(h: Vec3, color: [f32; 4]) -> Primitive {
    let (mut p, mut n, mut uv, mut ix) = (vec![], vec![], vec![], vec![]);
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let normal = Vec3::AXES[axis] * sign;
            let u = Vec3::AXES[(axis + 1) % 3] * sign;
            let v = Vec3::AXES[(axis + 2) % 3];
            let base = p.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                p.push((normal + u * a + v * b) * h);
                n.push(normal);
                uv.push(Vec2::new((a + 1.0) * 0.5, (b + 1.0) * 0.5));
            }
            ix.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    primitive(p, n, uv, ix, color)
}

/// A UV sphere of radius `r`.
pub fn sphere(r: f32, rings: u32, segments: u32, color: [f32; 4]) -> Primitive {
    let (mut p, mut n, mut uv) = (vec![], vec![], vec![]);
    for i in 0..=rings {
        let theta = PI * i as f32 / rings as f32;
        for j in 0..=segments {
            let phi = TAU * j as f32 / segments as f32;
            let d = Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
            p.push(d * r);
            n.push(d);
            uv.push(Vec2::new(j as f32 / segments as f32, i as f32 / rings as f32));
        }
    }
    primitive(p, n, uv, grid_indices(rings, segments, false), color)
}

/// An open tube of radius `r` along +Y from 0 to `height`: `rings` + 1 rings of `segments`
/// vertices (ring after ring, normals outward), indexed, without caps or UVs. Skinned shapes
/// weight its vertices by their height.
pub fn tube(r: f32, height: f32, rings: u32, segments: u32, color: [f32; 4]) -> Primitive {
    let mut p = Primitive { color, ..Default::default() };
    for j in 0..=rings {
        let y = height * j as f32 / rings as f32;
        for i in 0..segments {
            let a = TAU * i as f32 / segments as f32;
            p.positions.push(Vec3::new(r * a.cos(), y, r * a.sin()));
            p.normals.push(Vec3::new(a.cos(), 0.0, a.sin()));
        }
    }
    let mut indices = vec![];
    for j in 0..rings {
        for i in 0..segments {
            let (a, b) = (j * segments + i, j * segments + (i + 1) % segments);
            indices.extend([a, a + segments, b, b, a + segments, b + segments]);
        }
    }
    p.indices = Some(indices);
    p
}

/// A capped cylinder along +Y from 0 to `height`.
pub fn cylinder(r: f32, height: f32, segments: u32, color: [f32; 4]) -> Primitive {
    let (mut p, mut n, mut uv, mut ix) = (vec![], vec![], vec![], vec![]);
    for j in 0..=segments {
        let phi = TAU * j as f32 / segments as f32;
        let d = Vec3::new(phi.cos(), 0.0, phi.sin());
        for (k, y) in [0.0, height].into_iter().enumerate() {
            p.push(d * r + Vec3::Y * y);
            n.push(d);
            uv.push(Vec2::new(j as f32 / segments as f32, k as f32));
        }
    }
    for j in 0..segments {
        let (a, b, c, d) = (2 * j, 2 * j + 1, 2 * j + 2, 2 * j + 3);
        ix.extend_from_slice(&[a, b, c, b, d, c]);
    }
    for (y, normal) in [(0.0, -Vec3::Y), (height, Vec3::Y)] {
        let centre = p.len() as u32;
        p.push(Vec3::Y * y);
        n.push(normal);
        uv.push(Vec2::splat(0.5));
        for j in 0..=segments {
            let phi = TAU * j as f32 / segments as f32;
            p.push(Vec3::new(phi.cos() * r, y, phi.sin() * r));
            n.push(normal);
            uv.push(Vec2::new(0.5 + 0.5 * phi.cos(), 0.5 + 0.5 * phi.sin()));
        }
        for j in 0..segments {
            let (a, b) = (centre + 1 + j, centre + 2 + j);
            if normal.y > 0.0 {
                ix.extend_from_slice(&[centre, b, a]);
            } else {
                ix.extend_from_slice(&[centre, a, b]);
            }
        }
    }
    primitive(p, n, uv, ix, color)
}

/// A torus around +Y.
pub fn torus(major: f32, minor: f32, rings: u32, segments: u32, color: [f32; 4]) -> Primitive {
    let (mut p, mut n, mut uv) = (vec![], vec![], vec![]);
    for i in 0..=rings {
        let a = TAU * i as f32 / rings as f32;
        let centre = Vec3::new(a.cos(), 0.0, a.sin()) * major;
        for j in 0..=segments {
            let b = TAU * j as f32 / segments as f32;
            let d = Vec3::new(a.cos() * b.cos(), b.sin(), a.sin() * b.cos());
            p.push(centre + d * minor);
            n.push(d);
            uv.push(Vec2::new(i as f32 / rings as f32, j as f32 / segments as f32));
        }
    }
    primitive(p, n, uv, grid_indices(rings, segments, true), color)
}

/// A square in the XZ plane facing +Y, non-indexed (two triangles).
pub fn plane(h: f32, color: [f32; 4]) -> Primitive {
    let c = [Vec3::new(-h, 0.0, -h), Vec3::new(h, 0.0, -h), Vec3::new(h, 0.0, h), Vec3::new(-h, 0.0, h)];
    let t = [Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)];
    let order = [0, 2, 1, 0, 3, 2];
    Primitive {
        positions: order.iter().map(|&i| c[i]).collect(),
        normals: vec![Vec3::Y; 6],
        uvs: Some(order.iter().map(|&i| t[i]).collect()),
        indices: None,
        color,
        ..Default::default()
    }
}
