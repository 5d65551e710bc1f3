//! The CPU oracle: a ray through the pixel centre against every triangle of every object and
//! instance, in f64, written independently of the picker's own camera code. It also says when
//! a pixel is too close to an edge or a depth tie for any rasterizer to be held to it.

use crate::scene::Scene;
use glam::{DMat4, DVec2, DVec3, DVec4, Mat4, UVec2};

/// An object and, for instanced objects, the instance.
pub type ObjectKey = (u64, Option<u32>);

/// The camera and viewport the oracle shoots rays through (Vulkan conventions).
#[derive(Clone, Copy, Debug)]
pub struct OracleCamera {
    pub view_projection: DMat4,
    pub eye: DVec3,
    /// (x, y, width, height) of the viewport in pixels.
    pub viewport: [f64; 4],
    /// Parallel rays (clip w does not depend on the point), from the near plane.
    pub orthographic: bool,
}

impl OracleCamera {
    pub fn new(view: Mat4, projection: Mat4, viewport: [f64; 4]) -> Self {
        let view = view.as_dmat4();
        let orthographic = projection.row(3) == glam::Vec4::W;
        OracleCamera { view_projection: projection.as_dmat4() * view, eye: view.inverse().transform_point3(DVec3::ZERO), viewport, orthographic }
    }

    /// Screen position (pixels) and clip w of a world point.
    fn project(&self, p: DVec3) -> (DVec2, f64) {
        let c = self.view_projection * DVec4::new(p.x, p.y, p.z, 1.0);
        let [x, y, w, h] = self.viewport;
        (DVec2::new(x + (c.x / c.w + 1.0) * 0.5 * w, y + (c.y / c.w + 1.0) * 0.5 * h), c.w)
    }

    /// World-space ray (origin, unit direction) through a pixel centre: from the eye through
    /// any point the pixel centre unprojects to (perspective cameras), or, orthographic, from
    /// where it unprojects on the plane of NDC depth 0 through where it does on depth 1.
    fn ray(&self, pixel: UVec2) -> (DVec3, DVec3) {
        let [x, y, w, h] = self.viewport;
        let nx = (f64::from(pixel.x) + 0.5 - x) / w * 2.0 - 1.0;
        let ny = (f64::from(pixel.y) + 0.5 - y) / h * 2.0 - 1.0;
        let unproject = |z: f64| {
            let p = self.view_projection.inverse() * DVec4::new(nx, ny, z, 1.0);
            p.truncate() / p.w
        };
        if self.orthographic {
            let origin = unproject(0.0);
            return (origin, (unproject(1.0) - origin).normalize());
        }
        (self.eye, (unproject(0.5) - self.eye).normalize())
    }
}

/// The nearest surface along a pixel's ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OracleHit {
    pub id: u64,
    pub instance: Option<u32>,
    pub object: usize,
    pub triangle: usize,
    /// Distance from the eye.
    pub distance: f64,
    pub point: DVec3,
    /// Barycentric weights of the triangle's three vertices.
    pub barycentrics: [f64; 3],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OracleAnswer {
    pub hit: Option<OracleHit>,
    /// An edge or silhouette lies within a pixel, or two surfaces tie in depth: the GPU may
    /// legitimately differ here.
    pub ambiguous: bool,
}

#[derive(Clone)]
struct WorldTriangle {
    v: [DVec3; 3],
    screen: Option<[DVec2; 3]>,
    nearest_w: f64,
    id: u64,
    instance: Option<u32>,
    object: usize,
    triangle: usize,
    /// Culled by the object's raster state (judged on its framebuffer winding).
    culled: bool,
}

/// All world-space triangles of a scene, prepared once for many rays.
pub struct Oracle {
    camera: OracleCamera,
    triangles: Vec<WorldTriangle>,
}

fn ray_triangle(origin: DVec3, dir: DVec3, v: &[DVec3; 3]) -> Option<(f64, [f64; 3])> {
    // Möller–Trumbore, double-sided.
    let e1 = v[1] - v[0];
    let e2 = v[2] - v[0];
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-14 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - v[0];
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let w = dir.dot(q) * inv;
    if u < 0.0 || w < 0.0 || u + w > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t > 0.0).then_some((t, [1.0 - u - w, u, w]))
}

/// Whether a triangle at framebuffer positions `s` (y down) is culled by `raster`, as Vulkan
/// decides: the signed area `a = -1/2 * sum(x_i * y_(i+1) - x_(i+1) * y_i)` is positive for a
/// counter-clockwise triangle. (Triangles crossing the eye plane are not judged here.)
fn culled_by(raster: &picking_vk::draw::RasterState, s: &[DVec2; 3]) -> bool {
    use ash::vk::{CullModeFlags, FrontFace};
    let a: f64 = -0.5 * (0..3).map(|i| s[i].x * s[(i + 1) % 3].y - s[(i + 1) % 3].x * s[i].y).sum::<f64>();
    let culling = raster.culling.unwrap_or_default();
    let front = if culling.front_face == FrontFace::CLOCKWISE { a < 0.0 } else { a > 0.0 };
    let cull = culling.mode;
    (cull.contains(CullModeFlags::BACK) && !front) || (cull.contains(CullModeFlags::FRONT) && front)
}

fn segment_distance(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-300)).clamp(0.0, 1.0);
    (a + ab * t - p).length()
}

fn edge_distance(p: DVec2, s: &[DVec2; 3]) -> f64 {
    segment_distance(p, s[0], s[1]).min(segment_distance(p, s[1], s[2])).min(segment_distance(p, s[2], s[0]))
}

impl Oracle {
    pub fn new(scene: &Scene, camera: OracleCamera) -> Self {
        let mut triangles = vec![];
        for (oi, obj) in scene.objects.iter().enumerate() {
            if !obj.pickable {
                continue;
            }
            let mesh = &scene.meshes[obj.mesh];
            let instances: Vec<Option<usize>> = match &obj.instances {
                Some(list) => (0..list.len()).map(Some).collect(),
                None => vec![None],
            };
            for inst in instances {
                let world = obj.world(inst).as_dmat4();
                for t in 0..mesh.triangle_count() {
                    let v = mesh.triangle(t).map(|p| world.transform_point3(p.as_dvec3()));
                    let projected = v.map(|p| camera.project(p));
                    let nearest_w = projected.iter().map(|(_, w)| *w).fold(f64::INFINITY, f64::min);
                    let screen = (nearest_w > 1e-6).then(|| projected.map(|(s, _)| s));
                    let culled = screen.is_some_and(|s| culled_by(&obj.raster, &s));
                    triangles.push(WorldTriangle { v, screen, nearest_w, id: obj.id, instance: inst.map(|i| i as u32), object: oi, triangle: t, culled });
                }
            }
        }
        Oracle { camera, triangles }
    }

    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// Every object and instance the pixel's ray meets, occluded or not ("select through"):
    /// `(sure, maybe)`, where `maybe` holds those whose triangles pass within a pixel of the
    /// centre (hit or missed) or cross the eye plane, so no rasterizer can be held to them.
    pub fn all_hits(&self, pixel: UVec2) -> (Vec<ObjectKey>, Vec<ObjectKey>) {
        let (origin, dir) = self.camera.ray(pixel);
        let centre = DVec2::new(f64::from(pixel.x) + 0.5, f64::from(pixel.y) + 0.5);
        let (mut sure, mut maybe) = (vec![], vec![]);
        for tri in self.triangles.iter().filter(|t| !t.culled) {
            let key = (tri.id, tri.instance);
            let hit = ray_triangle(origin, dir, &tri.v).is_some();
            let near_edge = match tri.screen {
                Some(s) => edge_distance(centre, &s) < 1.0,
                None => true,
            };
            if near_edge {
                if hit || tri.screen.is_some() {
                    maybe.push(key);
                }
            } else if hit {
                sure.push(key);
            }
        }
        for list in [&mut sure, &mut maybe] {
            list.sort_unstable();
            list.dedup();
        }
        (sure, maybe)
    }

    /// The hit on triangle `i` at ray parameter `t`.
    fn hit_at(&self, origin: DVec3, dir: DVec3, t: f64, i: usize, barycentrics: [f64; 3]) -> OracleHit {
        let tri = &self.triangles[i];
        let point = origin + dir * t;
        OracleHit {
            id: tri.id,
            instance: tri.instance,
            object: tri.object,
            triangle: tri.triangle,
            distance: (point - self.camera.eye).length(),
            point,
            barycentrics,
        }
    }

    /// Casts the pixel's ray against every triangle, as [`Oracle::pick`], skipping hits that
    /// `discard` drops (an alpha test): `Some(true)` drops the hit and the ray goes on,
    /// `Some(false)` keeps it, `None` says the hit lies too close to the test's threshold to
    /// tell (the answer is then ambiguous).
    pub fn pick_through(&self, pixel: UVec2, discard: impl Fn(&OracleHit) -> Option<bool>) -> OracleAnswer {
        let (origin, dir) = self.camera.ray(pixel);
        let mut hits: Vec<(f64, usize, [f64; 3])> = self
            .triangles
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.culled)
            .filter_map(|(i, tri)| ray_triangle(origin, dir, &tri.v).map(|(t, bary)| (t, i, bary)))
            .collect();
        hits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut unsure = false;
        // The triangles the ray passes before the kept hit are left out, so `pick`'s edge and
        // tie checks apply to what remains.
        let mut dropped = vec![false; self.triangles.len()];
        for &(t, i, barycentrics) in &hits {
            match discard(&self.hit_at(origin, dir, t, i, barycentrics)) {
                Some(true) => dropped[i] = true,
                Some(false) => break,
                None => {
                    unsure = true;
                    break;
                }
            }
        }
        let kept = Oracle { camera: self.camera, triangles: self.triangles.iter().zip(&dropped).filter(|(_, d)| !**d).map(|(t, _)| t.clone()).collect() };
        let mut answer = kept.pick(pixel);
        answer.ambiguous |= unsure;
        answer
    }

    /// Casts the pixel's ray against every triangle.
    pub fn pick(&self, pixel: UVec2) -> OracleAnswer {
        let (origin, dir) = self.camera.ray(pixel);
        let centre = DVec2::new(f64::from(pixel.x) + 0.5, f64::from(pixel.y) + 0.5);
        let mut best: Option<(f64, usize, [f64; 3])> = None;
        let mut second: Option<(f64, usize)> = None;
        for (i, tri) in self.triangles.iter().enumerate().filter(|(_, t)| !t.culled) {
            if let Some((t, bary)) = ray_triangle(origin, dir, &tri.v) {
                match best {
                    Some((bt, _, _)) if t >= bt => {
                        if second.is_none_or(|(st, _)| t < st) {
                            second = Some((t, i));
                        }
                    }
                    _ => {
                        second = best.map(|(bt, bi, _)| (bt, bi));
                        best = Some((t, i, bary));
                    }
                }
            }
        }
        let hit = best.map(|(t, i, barycentrics)| self.hit_at(origin, dir, t, i, barycentrics));
        let mut ambiguous = false;
        if let Some((t, i, _)) = best {
            let tri = &self.triangles[i];
            // Near the hit triangle's own edges, or a near-tie with another surface.
            ambiguous |= tri.screen.is_none_or(|s| edge_distance(centre, &s) < 1.0);
            if let Some((t2, j)) = second {
                let other = &self.triangles[j];
                ambiguous |= (t2 - t) < 1e-4 * t && (other.id, other.instance) != (tri.id, tri.instance);
            }
        }
        // A nearer triangle whose silhouette passes within a pixel could cover the centre.
        let hit_w = best.map(|(t, i, _)| {
            let p = origin + dir * t;
            let _ = i;
            (self.camera.view_projection * DVec4::new(p.x, p.y, p.z, 1.0)).w
        });
        for tri in &self.triangles {
            if ambiguous {
                break;
            }
            if hit_w.is_some_and(|hw| tri.nearest_w > hw) {
                continue;
            }
            match tri.screen {
                Some(s) => ambiguous |= edge_distance(centre, &s) < 1.0,
                None => ambiguous |= tri.nearest_w > -1e-6 && hit_w.is_none(), // crosses the eye plane
            }
        }
        OracleAnswer { hit, ambiguous }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Mesh, Object};
    use glam::Vec3;

    #[test]
    fn oracle_hits_a_quad_head_on() {
        let scene = Scene { meshes: vec![Mesh::quad(1.0)], objects: vec![Object::new(42, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0)))] };
        let proj = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let oracle = Oracle::new(&scene, OracleCamera::new(Mat4::IDENTITY, proj, [0.0, 0.0, 64.0, 64.0]));
        // The view centre lies on the quad's diagonal edge: ambiguous by rule.
        assert!(oracle.pick(UVec2::new(31, 31)).ambiguous);
        let a = oracle.pick(UVec2::new(40, 40));
        let hit = a.hit.unwrap();
        assert_eq!(hit.id, 42);
        assert!(!a.ambiguous);
        assert!((hit.distance - hit.point.length()).abs() < 1e-9 && hit.distance > 5.0 && hit.distance < 5.2, "{}", hit.distance);
        assert!((hit.point.z + 5.0).abs() < 1e-9);
        assert!(oracle.pick(UVec2::new(0, 0)).hit.is_none());
    }
}
