//! From the detail texel (primitive index + barycentrics) to a surface description: which
//! vertices, the interpolated point, normals and UV, in local and world space. No triangle
//! search: the GPU already said which triangle won.

use crate::draw::deform::{DeformPose, SkinReads};
use crate::draw::raster::face_elements;
use crate::draw::{IndexWidth, MeshGeometry, PrimitiveKind, Topology, Triangles};
use crate::request::camera::Ray;
use glam::{DMat3, DMat4, DVec3, Mat4, Vec2};
use std::sync::Arc;

/// Where the winning fragment lies on its primitive: a triangle, or for line and point
/// topologies a segment or a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HitDetail {
    /// What `face` counts: triangles, segments or points.
    pub primitive: PrimitiveKind,
    /// Primitive index within the draw (counted from its first index or first vertex): the
    /// triangle, the segment or the point.
    pub face: u32,
    /// Barycentric weights of `vertices`, in that order: the order Vulkan draws the triangle
    /// in (index-buffer order for lists; a strip's odd triangles swap their last two
    /// vertices, a fan's triangle `i` is `i + 1, i + 2`, then the fan's first vertex). With
    /// registered geometry these are exact: the pick ray intersected with the plane of the one
    /// triangle the GPU identified (no search, no clamping: a hit at an edge may carry a
    /// weight a rounding error below 0). Otherwise, for draws a world-adjust hook moved (the
    /// CPU does not know where it put the triangle) and for instances whose transform the CPU
    /// does not know, they are the GPU's values. A segment's are `[1 - t, t, 0]` at parameter
    /// `t` along it; a point's `[1, 0, 0]`.
    pub barycentrics: [f32; 3],
    /// The weights as the GPU interpolated them at the pixel centre, after the rasterizer's
    /// sub-pixel snapping of vertex positions (off by ~1e-4 on small triangles).
    pub gpu_barycentrics: [f32; 3],
    /// The triangle's vertex indices (into the position buffer), when they can be known:
    /// always for non-indexed draws, with registered geometry for indexed ones; never for
    /// draws with host indirect commands (which elements they drew is the GPU's to know: their
    /// hits carry `primitive` and `face` only). A segment's two vertices then the second
    /// again; a point's vertex three times.
    pub vertices: Option<[u32; 3]>,
    /// Interpolated surface data, with registered geometry.
    pub surface: Option<SurfaceDetail>,
}

/// Surface data interpolated from registered geometry. For a draw a world-adjust hook moved,
/// the local point is the rest-space point, the world point the moved one (from depth), and
/// normals are unavailable (`None`): the CPU knows only the geometry before the hook.
///
/// For a deformed draw (skin, morph targets) with its CPU pose ([`crate::deform::Deformation::pose`])
/// and per-vertex data registered, the CPU deforms the hit triangle's three vertices only:
/// barycentrics are the ray's on that deformed triangle, the world point lies on it, the
/// local point is interpolated in rest space, and the world face normal is the deformed
/// triangle's (the local one the rest triangle's). Vertex normals are skinned with each
/// vertex's blended joint matrix (inverse transpose) and then interpolated, as engines shade
/// them; with a non-zero morph weight they are `None` (morph targets carry no normal deltas
/// here, so a skinned normal could not be exact). Without the CPU pose, deformed hits are
/// reported as hooked ones are.
///
/// For an instance whose transform the CPU does not know (an instanced draw without
/// `instance_transforms`: GPU-written instances), the local point, local normals and UV are
/// interpolated at the GPU's barycentrics, the world point is the hit's from depth (as
/// [`crate::PickHit::world`]), and the world normals are `None`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceDetail {
    /// The hit point in the mesh's own space (the positions' space, before the model matrix
    /// and instance transform), at `barycentrics`.
    pub local_point: DVec3,
    /// The hit point in world space: `local_point` under the draw's model matrix (times the
    /// instance's transform), in f64. It lies on the triangle, so it differs from
    /// [`crate::PickHit::world`] (the pixel centre at the depth buffer's f32 depth) by the
    /// depth's rounding.
    pub world_point: DVec3,
    /// Geometric normal of the triangle, unit length: `(v1 - v0) x (v2 - v0)` of the
    /// positions of `vertices` in that order, normalized. It follows the winding, not the
    /// viewer: a back face's normal points away from the eye. `None` for a degenerate
    /// triangle, and for segments and points.
    pub face_normal_local: Option<DVec3>,
    /// The geometric normal in world space, unit length: the local one under the inverse
    /// transpose of the world matrix (so a mirroring matrix keeps a closed mesh's normals
    /// pointing out); for a deformed draw, the deformed world triangle's own
    /// `(v1 - v0) x (v2 - v0)`, negated where the model matrix times the first vertex's
    /// blended skin matrix mirrors (the same rule).
    pub face_normal_world: Option<DVec3>,
    /// Interpolated vertex normal (unit length), when the geometry has normals.
    pub normal_local: Option<DVec3>,
    /// The interpolated vertex normal in world space (inverse transpose, unit length).
    pub normal_world: Option<DVec3>,
    /// The interpolated texture coordinate, when the geometry has them (as registered, no
    /// flip).
    pub uv: Option<Vec2>,
}

/// What the resolver needs of a draw to interpret its detail texel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DetailSource {
    pub triangles: Triangles,
    /// How the draw's elements form triangles, and whether primitive restart is on.
    pub topology: Topology,
    pub restart: bool,
    pub geometry: Option<Arc<MeshGeometry>>,
    /// Object-to-world of the draw (model x instance transform); `None` for an instance
    /// whose transform only the GPU knows (an instanced draw without `instance_transforms`).
    pub world: Option<Mat4>,
    /// The pick ray (world space), to refine barycentrics on the identified triangle.
    pub ray: Option<Ray>,
    /// The hit's world point from depth (the pixel centre unprojected): the world point of
    /// what the CPU cannot place itself.
    pub pixel_world: DVec3,
    /// A world-adjust hook (or a deformation without CPU pose) moved the draw's vertices.
    pub moved: bool,
    /// For a deformed draw with its CPU pose: the pose, and what its skin reads.
    pub deform: Option<(Arc<DeformPose>, SkinReads)>,
}

/// Barycentric interpolation of three values.
pub(crate) fn interpolate<T>(values: [T; 3], weights: [f64; 3]) -> T
where
    T: std::ops::Mul<f64, Output = T> + std::ops::Add<Output = T> + Copy,
{
    values[0] * weights[0] + values[1] * weights[1] + values[2] * weights[2]
}

/// The matrix that maps local normals to world normals under `world` (inverse transpose).
pub(crate) fn normal_matrix(world: DMat4) -> Option<DMat3> {
    let m = DMat3::from_mat4(world);
    let det = m.determinant();
    (det.is_finite() && det.abs() > 1e-300).then(|| m.inverse().transpose())
}

/// The vertex indices of triangle `face` (`gl_PrimitiveID`) of a draw, in the order the
/// rasterizer gives barycentrics.
pub(crate) fn triangle_vertices(s: &DetailSource, geometry: Option<&MeshGeometry>, face: u32) -> Option<[u32; 3]> {
    match s.triangles {
        Triangles::NonIndexed { first_vertex, vertex_count } => {
            let e = face_elements(s.topology, false, vertex_count, face, |_| false)?;
            Some(e.map(|k| first_vertex.checked_add(k)).into_iter().collect::<Option<Vec<u32>>>()?.try_into().ok()?)
        }
        Triangles::Indexed { first_index, index_count, vertex_offset, width, .. } => {
            let indices = geometry?.indices.as_ref()?;
            let own = indices.get(first_index as usize..(first_index as usize).checked_add(index_count as usize)?)?;
            let restart_value = match width {
                IndexWidth::U16 => u32::from(u16::MAX),
                IndexWidth::U32 => u32::MAX,
            };
            let e = face_elements(s.topology, s.restart, index_count, face, |i| own.get(i as usize) == Some(&restart_value))?;
            let v = |k: u32| own.get(k as usize).and_then(|&i| u32::try_from(i64::from(i) + i64::from(vertex_offset)).ok());
            Some([v(e[0])?, v(e[1])?, v(e[2])?])
        }
    }
}

pub(crate) fn resolve_detail(source: Option<&DetailSource>, face: u32, gpu_barycentrics: [f32; 3]) -> HitDetail {
    let geometry = source.and_then(|s| s.geometry.as_deref());
    let vertices = source.and_then(|s| triangle_vertices(s, geometry, face));
    let mut barycentrics = gpu_barycentrics;
    let primitive = source.map_or(PrimitiveKind::Triangle, |s| s.topology.primitive());
    let surface = match (source, geometry, vertices) {
        (Some(s), Some(g), Some(v)) if primitive != PrimitiveKind::Triangle => line_or_point(s, g, v, primitive, &mut barycentrics),
        (Some(s), Some(g), Some(v)) if s.deform.is_some() => deformed_surface(s, g, v, &mut barycentrics),
        // Moved by a hook: the GPU's weights on the rest-space triangle, the moved point.
        (Some(s), Some(g), Some(v)) if s.moved => surface(g, v, barycentrics, s.world).map(|rest| SurfaceDetail {
            world_point: s.pixel_world,
            face_normal_local: None,
            face_normal_world: None,
            normal_local: None,
            normal_world: None,
            ..rest
        }),
        (Some(s), Some(g), Some(v)) => {
            if let Some(exact) = s.ray.zip(s.world).and_then(|(ray, world)| ray_barycentrics(g, v, world, ray)) {
                barycentrics = exact;
            }
            surface(g, v, barycentrics, s.world).map(|local| unplaced(s, local))
        }
        _ => None,
    };
    HitDetail { primitive, face, barycentrics, gpu_barycentrics, vertices, surface }
}

/// Where the CPU does not know the instance's transform, only what needs no world matrix: the
/// local point, normals and UV at the GPU's weights, the world point from depth, no world
/// normals.
fn unplaced(s: &DetailSource, local: SurfaceDetail) -> SurfaceDetail {
    match s.world {
        Some(_) => local,
        None => SurfaceDetail { world_point: s.pixel_world, face_normal_world: None, normal_world: None, ..local },
    }
}

/// The surface of a segment or point hit: for a segment, the parameter where the pick ray
/// passes nearest to it (the GPU's when there is no ray), the point there, and UVs; no
/// normals (a line has none).
fn line_or_point(s: &DetailSource, g: &MeshGeometry, v: [u32; 3], primitive: PrimitiveKind, bary: &mut [f32; 3]) -> Option<SurfaceDetail> {
    let (a, b) = (g.positions.get(v[0] as usize)?.as_dvec3(), g.positions.get(v[1] as usize)?.as_dvec3());
    // Where the CPU cannot place the segment (an unknown instance, a hook moved it): the
    // GPU's parameter, the world point from depth.
    let placed = s.world.filter(|_| !s.moved).map(|w| w.as_dmat4());
    let t = match primitive {
        PrimitiveKind::Point => 0.0,
        _ => {
            let gpu = f64::from(bary[1]).clamp(0.0, 1.0);
            let nearest = |w: glam::DMat4| segment_parameter(w.transform_point3(a), w.transform_point3(b), s.ray?);
            placed.and_then(nearest).unwrap_or(gpu)
        }
    };
    *bary = [(1.0 - t) as f32, t as f32, 0.0];
    let local_point = a + (b - a) * t;
    let uv = g.uvs.as_ref().and_then(|uvs| Some(uvs.get(v[0] as usize)?.lerp(*uvs.get(v[1] as usize)?, t as f32)));
    Some(SurfaceDetail {
        local_point,
        world_point: placed.map_or(s.pixel_world, |w| w.transform_point3(local_point)),
        face_normal_local: None,
        face_normal_world: None,
        normal_local: None,
        normal_world: None,
        uv,
    })
}

/// The parameter along the segment `a`..`b` nearest to `ray` (clamped to the segment).
fn segment_parameter(a: DVec3, b: DVec3, ray: Ray) -> Option<f64> {
    let d = b - a;
    let w = a - ray.origin;
    let (dd, de, ee) = (d.dot(d), d.dot(ray.direction), ray.direction.dot(ray.direction));
    let denom = dd * ee - de * de;
    if dd < 1e-300 || denom.abs() < 1e-18 * dd * ee {
        return None;
    }
    let t = (de * ray.direction.dot(w) - ee * d.dot(w)) / denom;
    t.is_finite().then(|| t.clamp(0.0, 1.0))
}

/// Barycentrics of where `ray` meets the plane of one known triangle (world space, f64).
/// `None` when the ray runs parallel to it or the triangle is degenerate.
pub(crate) fn ray_barycentrics(g: &MeshGeometry, v: [u32; 3], world: Mat4, ray: Ray) -> Option<[f32; 3]> {
    let world = world.as_dmat4();
    let p = [0, 1, 2].map(|k| g.positions.get(v[k] as usize).map(|p| world.transform_point3(p.as_dvec3())));
    plane_barycentrics([p[0]?, p[1]?, p[2]?], ray)
}

/// Barycentrics of where `ray` meets the plane of the world-space triangle `[a, b, c]`.
fn plane_barycentrics([a, b, c]: [DVec3; 3], ray: Ray) -> Option<[f32; 3]> {
    let (e1, e2) = (b - a, c - a);
    let n = e1.cross(e2);
    let denom = n.dot(ray.direction);
    if n.length_squared() < 1e-300 || denom.abs() < 1e-12 * n.length() {
        return None;
    }
    let t = n.dot(a - ray.origin) / denom;
    let q = ray.origin + ray.direction * t - a;
    // Solve q = u e1 + w e2 in the triangle's plane.
    let (d11, d12, d22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
    let (q1, q2) = (q.dot(e1), q.dot(e2));
    let det = d11 * d22 - d12 * d12;
    let u = (d22 * q1 - d12 * q2) / det;
    let w = (d11 * q2 - d12 * q1) / det;
    let out = [1.0 - u - w, u, w].map(|x| x as f32);
    out.iter().all(|x| x.is_finite()).then_some(out)
}

/// The surface of a deformed draw's hit triangle, its three vertices deformed on the CPU
/// (see [`SurfaceDetail`]); refines `bary` with the ray.
fn deformed_surface(s: &DetailSource, g: &MeshGeometry, v: [u32; 3], bary: &mut [f32; 3]) -> Option<SurfaceDetail> {
    let (pose, reads) = s.deform.as_ref()?;
    // The CPU blends the sets the GPU reads: fewer registered leave it without joints the GPU
    // moved the vertex by.
    let skin = g.skin.get(..reads.sets)?;
    let joints = (reads.sets > 0).then_some(reads.joints as usize);
    let model = s.world.unwrap_or(Mat4::IDENTITY).as_dmat4();
    let rest = [0, 1, 2].map(|k| g.positions.get(v[k] as usize).copied());
    let rest = [rest[0]?, rest[1]?, rest[2]?];
    let deformed = [0, 1, 2].map(|k| pose.deform_within(rest[k], v[k] as usize, &g.morph_targets, skin, joints));
    let deformed = [deformed[0]?, deformed[1]?, deformed[2]?];
    let world = deformed.map(|(p, _)| model.transform_point3(p));
    if let Some(exact) = s.ray.and_then(|ray| plane_barycentrics(world, ray)) {
        *bary = exact;
    }
    let w = bary.map(f64::from);
    let rest = rest.map(|p| p.as_dvec3());
    let morphed = pose.morph_weights.iter().take(g.morph_targets.len()).any(|w| *w != 0.0);
    let normals = g.normals.as_ref().map(|ns| [0, 1, 2].map(|k| ns.get(v[k] as usize).map(|n| n.as_dvec3())));
    let normal_local = normals.and_then(|n| interpolate([n[0]?, n[1]?, n[2]?], w).try_normalize());
    // Each vertex normal under its own blended matrix, then interpolated.
    let normal_world = normals.filter(|_| !morphed).and_then(|n| {
        let skinned_normal = |k: usize| {
            let m = match deformed[k].1 {
                Some(skin) => model * skin,
                None => model,
            };
            (normal_matrix(m)? * n[k]?).try_normalize()
        };
        interpolate([skinned_normal(0)?, skinned_normal(1)?, skinned_normal(2)?], w).try_normalize()
    });
    let uv = g.uvs.as_ref().and_then(|uvs| {
        let t = [0, 1, 2].map(|k| uvs.get(v[k] as usize).map(|t| t.as_dvec2()));
        Some(interpolate([t[0]?, t[1]?, t[2]?], w).as_vec2())
    });
    Some(SurfaceDetail {
        local_point: interpolate(rest, w),
        world_point: interpolate(world, w),
        face_normal_local: (rest[1] - rest[0]).cross(rest[2] - rest[0]).try_normalize(),
        // Signed as the inverse transpose signs a rigid draw's: a mirroring model (or blended
        // skin) matrix keeps the normal on the side the rest-space winding gives it.
        face_normal_world: ((world[1] - world[0]).cross(world[2] - world[0]) * mirrored_sign(model, deformed[0].1)).try_normalize(),
        normal_local: normal_local.filter(|_| !morphed),
        normal_world,
        uv,
    })
}

/// -1 where the matrix that places a deformed vertex (`model` times its blended skin matrix)
/// mirrors, else 1: the cross product of mirrored edges points the other way than the
/// inverse transpose carries a normal.
fn mirrored_sign(model: DMat4, skin: Option<DMat4>) -> f64 {
    if skin.map_or(model, |skin| model * skin).determinant() < 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn surface(g: &MeshGeometry, v: [u32; 3], bary: [f32; 3], world: Option<Mat4>) -> Option<SurfaceDetail> {
    let w = bary.map(f64::from);
    let p = [0, 1, 2].map(|k| g.positions.get(v[k] as usize).map(|p| p.as_dvec3()));
    let p = [p[0]?, p[1]?, p[2]?];
    let world = world.unwrap_or(Mat4::IDENTITY).as_dmat4();
    // A singular matrix (a decal flattened to a plane) has no inverse transpose: no world
    // normals, the rest of the surface still.
    let nm = normal_matrix(world);
    let local_point = interpolate(p, w);
    // A degenerate triangle (or a singular matrix's image of a normal) has no normal: `None`.
    let face_normal_local = (p[1] - p[0]).cross(p[2] - p[0]).try_normalize();
    let to_world_normal = |n: DVec3| nm.and_then(|nm| (nm * n).try_normalize());
    let normal_local = g.normals.as_ref().and_then(|ns| {
        let n = [0, 1, 2].map(|k| ns.get(v[k] as usize).map(|n| n.as_dvec3()));
        interpolate([n[0]?, n[1]?, n[2]?], w).try_normalize()
    });
    let uv = g.uvs.as_ref().and_then(|uvs| {
        let t = [0, 1, 2].map(|k| uvs.get(v[k] as usize).map(|t| t.as_dvec2()));
        Some(interpolate([t[0]?, t[1]?, t[2]?], w).as_vec2())
    });
    Some(SurfaceDetail {
        local_point,
        world_point: world.transform_point3(local_point),
        face_normal_local,
        face_normal_world: face_normal_local.and_then(to_world_normal),
        normal_local,
        normal_world: normal_local.and_then(to_world_normal),
        uv,
    })
}

#[cfg(test)]
mod tests;
