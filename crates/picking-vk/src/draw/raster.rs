//! How a draw is rasterized, as in the host's own pass: face culling, the depth test and
//! depth bias, the topology (triangles, lines, points) with line width and point size. The
//! pick pass draws each draw with the state the host draws it with, so a pick names what is
//! on screen: no back face the host culls, the winner of coplanar draws under the host's
//! compare op, a decal pulled forward by its bias, a line as wide as it is drawn.

use ash::vk;

/// Primitive topologies: triangles, line segments, points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Topology {
    /// Three vertices (or indices) per triangle.
    #[default]
    TriangleList,
    /// Each vertex after the second makes a triangle with the two before it.
    TriangleStrip,
    /// Each vertex after the second makes a triangle with the one before it and the first.
    TriangleFan,
    /// Two vertices per segment ([`RasterState::line_width`] wide).
    LineList,
    /// Each vertex after the first makes a segment with the one before it.
    LineStrip,
    /// One point per vertex ([`RasterState::point_size`] pixels square).
    PointList,
}

impl Topology {
    pub(crate) fn vk(self) -> vk::PrimitiveTopology {
        match self {
            Topology::TriangleList => vk::PrimitiveTopology::TRIANGLE_LIST,
            Topology::TriangleStrip => vk::PrimitiveTopology::TRIANGLE_STRIP,
            Topology::TriangleFan => vk::PrimitiveTopology::TRIANGLE_FAN,
            Topology::LineList => vk::PrimitiveTopology::LINE_LIST,
            Topology::LineStrip => vk::PrimitiveTopology::LINE_STRIP,
            Topology::PointList => vk::PrimitiveTopology::POINT_LIST,
        }
    }

    /// What one primitive of this topology is.
    pub fn primitive(self) -> PrimitiveKind {
        match self {
            Topology::TriangleList | Topology::TriangleStrip | Topology::TriangleFan => PrimitiveKind::Triangle,
            Topology::LineList | Topology::LineStrip => PrimitiveKind::Segment,
            Topology::PointList => PrimitiveKind::Point,
        }
    }

    /// List topologies restart only with `primitiveTopologyListRestart`, which picking does
    /// not enable.
    pub(crate) fn is_list(self) -> bool {
        matches!(self, Topology::TriangleList | Topology::LineList | Topology::PointList)
    }
}

/// The kind of primitive a hit lies on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// A triangle: three vertices, barycentric weights.
    #[default]
    Triangle,
    /// A line segment: two vertices; the weights are `(1 - t, t, 0)` for the parameter `t`
    /// from the first vertex to the second.
    Segment,
    /// A point: one vertex, weight `(1, 0, 0)`.
    Point,
}

/// `vkCmdSetDepthBias` values, as the host's pipeline sets them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthBias {
    /// `depthBiasConstantFactor`.
    pub constant: f32,
    /// `depthBiasClamp`: must be 0 (a clamp needs the `depthBiasClamp` feature, which
    /// picking does not enable).
    pub clamp: f32,
    /// `depthBiasSlopeFactor`.
    pub slope: f32,
}

/// Which faces the host culls, and which winding faces front, judged in the host's viewport
/// (a negative height flips winding there as it does in the host's pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Culling {
    /// Faces culled (`VkCullModeFlags`).
    pub mode: vk::CullModeFlags,
    /// Which winding faces front.
    pub front_face: vk::FrontFace,
}

impl Culling {
    /// Both faces drawn (counter-clockwise front, which then changes nothing).
    pub const NONE: Culling = Culling { mode: vk::CullModeFlags::NONE, front_face: vk::FrontFace::COUNTER_CLOCKWISE };

    /// Culls `mode` with `front_face` facing front.
    pub fn new(mode: vk::CullModeFlags, front_face: vk::FrontFace) -> Self {
        Culling { mode, front_face }
    }

    /// Whether both values are ones Vulkan defines.
    pub(crate) fn is_known(&self) -> bool {
        vk::CullModeFlags::FRONT_AND_BACK.contains(self.mode) && [vk::FrontFace::COUNTER_CLOCKWISE, vk::FrontFace::CLOCKWISE].contains(&self.front_face)
    }
}

impl Default for Culling {
    fn default() -> Self {
        Culling::NONE
    }
}

/// The host's rasterization state for a draw. The default is what picking did before it
/// could be told: the request's culling (none unless [`PickRequest::with_culling`](crate::PickRequest::with_culling)
/// says otherwise), the depth convention's strict test (LESS, or GREATER for reverse-Z), no
/// bias, triangle lists, 1-pixel lines and points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterState {
    /// Faces culled and the front face; `None` takes the request's
    /// ([`PickRequest::culling`](crate::PickRequest::culling)), so an engine that culls
    /// back faces everywhere says so once per request and overrides only the draws that
    /// differ (double-sided materials: `Some(Culling::NONE)`).
    pub culling: Option<Culling>,
    /// The host's depth compare op; `None`: LESS, or GREATER under reverse-Z.
    pub depth_compare: Option<vk::CompareOp>,
    /// The host's depth bias, if its pipeline enables one. A bias that carries a fragment's
    /// depth outside [0, 1] leaves it undefined (Vulkan); such a hit reports depth 0 or 1.
    pub depth_bias: Option<DepthBias>,
    /// How the draw's vertices (or indices) form triangles.
    pub topology: Topology,
    /// Primitive restart (indexed strips and fans): the index of all ones starts a new strip.
    pub primitive_restart: bool,
    /// Line width in pixels, as the host's pipeline sets it. Widths other than 1 are drawn
    /// with [`crate::PickFeatures::WIDE_LINES`] (clamped to `lineWidthRange`), else at 1:
    /// pick thin lines with a radius query.
    pub line_width: f32,
    /// Point size in pixels, as the host's vertex shader writes it; sizes other than 1 need
    /// [`crate::PickFeatures::WIDE_LINES`] (clamped to `pointSizeRange`), else 1.
    pub point_size: f32,
}

impl Default for RasterState {
    fn default() -> Self {
        RasterState {
            culling: None,
            depth_compare: None,
            depth_bias: None,
            topology: Topology::TriangleList,
            primitive_restart: false,
            line_width: 1.0,
            point_size: 1.0,
        }
    }
}

impl RasterState {
    /// Line width and point size, in pixels.
    pub fn with_thickness(mut self, line_width: f32, point_size: f32) -> Self {
        self.line_width = line_width;
        self.point_size = point_size;
        self
    }

    /// Faces culled and the front face for this draw, whatever the request's default.
    pub fn with_culling(mut self, cull_mode: vk::CullModeFlags, front_face: vk::FrontFace) -> Self {
        self.culling = Some(Culling::new(cull_mode, front_face));
        self
    }

    /// The culling this draw is drawn with under a request whose default is `default`.
    pub(crate) fn culling_or(&self, default: Culling) -> Culling {
        self.culling.unwrap_or(default)
    }

    /// The host's depth compare op.
    pub fn with_depth_compare(mut self, op: vk::CompareOp) -> Self {
        self.depth_compare = Some(op);
        self
    }

    /// The host's depth bias.
    pub fn with_depth_bias(mut self, bias: DepthBias) -> Self {
        self.depth_bias = Some(bias);
        self
    }

    /// The topology, and whether primitive restart is on.
    pub fn with_topology(mut self, topology: Topology, primitive_restart: bool) -> Self {
        self.topology = topology;
        self.primitive_restart = primitive_restart;
        self
    }

    /// What pipelines are told apart by (floats by their bits), with the request's default
    /// culling where the draw states none.
    pub(crate) fn key(&self, default_culling: Culling) -> RasterKey {
        let culling = self.culling_or(default_culling);
        RasterKey {
            cull_mode: culling.mode.as_raw(),
            front_face: culling.front_face.as_raw(),
            depth_compare: self.depth_compare.map(|op| op.as_raw()),
            depth_bias: self.depth_bias.map(|b| [b.constant, b.clamp, b.slope].map(f32::to_bits)),
            topology: self.topology,
            primitive_restart: self.primitive_restart,
            // Only the topology that uses it tells pipelines apart.
            line_width: if self.topology.primitive() == PrimitiveKind::Segment { self.line_width.to_bits() } else { 1f32.to_bits() },
            point_size: if self.topology == Topology::PointList { self.point_size.to_bits() } else { 1f32.to_bits() },
        }
    }
}

/// [`RasterState`] as a pipeline key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct RasterKey {
    pub cull_mode: u32,
    pub front_face: i32,
    pub depth_compare: Option<i32>,
    pub depth_bias: Option<[u32; 3]>,
    pub topology: Topology,
    pub primitive_restart: bool,
    pub line_width: u32,
    pub point_size: u32,
}

impl RasterKey {
    pub fn state(&self) -> RasterState {
        RasterState {
            culling: Some(Culling::new(vk::CullModeFlags::from_raw(self.cull_mode), vk::FrontFace::from_raw(self.front_face))),
            depth_compare: self.depth_compare.map(vk::CompareOp::from_raw),
            depth_bias: self.depth_bias.map(|[c, k, s]| DepthBias { constant: f32::from_bits(c), clamp: f32::from_bits(k), slope: f32::from_bits(s) }),
            topology: self.topology,
            primitive_restart: self.primitive_restart,
            line_width: f32::from_bits(self.line_width),
            point_size: f32::from_bits(self.point_size),
        }
    }
}

/// The primitives a draw of `count` vertices (or indices) makes with `topology` (ignoring
/// restarts), and whether `count` is a valid length for it.
pub(crate) fn primitive_count(topology: Topology, count: u32) -> (u32, bool) {
    match topology {
        Topology::TriangleList => (count / 3, count.is_multiple_of(3)),
        Topology::TriangleStrip | Topology::TriangleFan => (count.saturating_sub(2), true),
        Topology::LineList => (count / 2, count.is_multiple_of(2)),
        Topology::LineStrip => (count.saturating_sub(1), true),
        Topology::PointList => (count, true),
    }
}

/// The vertex positions (into the draw's element list) of primitive `face`, in the order the
/// rasterizer gives barycentrics (Vulkan's topology vertex ordering): a triangle's three, a
/// segment's two then the second again, a point's one three times. `is_restart(i)` says a
/// restart index sits at element `i`. O(elements) for strips and fans with restart (they are
/// scanned to the face), O(1) otherwise.
pub(crate) fn face_elements(topology: Topology, restart: bool, count: u32, face: u32, is_restart: impl Fn(u32) -> bool) -> Option<[u32; 3]> {
    let face = u64::from(face);
    let count = u64::from(count);
    let within = |v: [u64; 3]| v.iter().all(|&x| x < count).then(|| v.map(|x| x as u32));
    match topology {
        Topology::PointList => return within([face; 3]),
        Topology::LineList => return within([2 * face, 2 * face + 1, 2 * face + 1]),
        Topology::LineStrip if !restart => return within([face, face + 1, face + 1]),
        Topology::LineStrip => {
            // Runs of n elements between restarts make n - 1 segments.
            let (mut seen, mut start) = (0u64, 0u64);
            for i in 0..=count {
                if i == count || is_restart(i as u32) {
                    let made = (i - start).saturating_sub(1);
                    if face < seen + made {
                        let a = start + (face - seen);
                        return within([a, a + 1, a + 1]);
                    }
                    seen += made;
                    start = i + 1;
                }
            }
            return None;
        }
        _ => {}
    }
    let in_strip = |i: u64, start: u64| -> [u64; 3] {
        match topology {
            // Odd triangles swap their last two vertices, so every triangle keeps the winding.
            Topology::TriangleStrip => {
                let k = i - start;
                [i, i + 1 + k % 2, i + 2 - k % 2]
            }
            Topology::TriangleFan => [i + 1, i + 2, start],
            _ => [i, i + 1, i + 2],
        }
    };
    let out = |v: [u64; 3]| v.iter().all(|&x| x < count).then(|| v.map(|x| x as u32));
    match topology {
        Topology::TriangleList => out([3 * face, 3 * face + 1, 3 * face + 2]),
        _ if !restart => out(in_strip(face, 0)),
        _ => {
            // Walk the strips: each run of n elements between restarts makes n - 2 triangles.
            let mut seen = 0u64;
            let mut start = 0u64;
            let mut i = 0u64;
            while i <= count {
                if i == count || is_restart(i as u32) {
                    let n = i - start;
                    let made = n.saturating_sub(2);
                    if face < seen + made {
                        let first = start + (face - seen);
                        return match topology {
                            Topology::TriangleFan => {
                                let k = face - seen;
                                out([start + k + 1, start + k + 2, start])
                            }
                            _ => out(in_strip(first, start)),
                        };
                    }
                    seen += made;
                    start = i + 1;
                }
                i += 1;
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_and_fan_faces_follow_vulkans_vertex_order() {
        let none = |_| false;
        assert_eq!(face_elements(Topology::TriangleList, false, 9, 2, none), Some([6, 7, 8]));
        assert_eq!(face_elements(Topology::TriangleList, false, 9, 3, none), None);
        // Strip triangle i: (i, i+1, i+2) for even i, (i, i+2, i+1) for odd i.
        assert_eq!(face_elements(Topology::TriangleStrip, false, 5, 0, none), Some([0, 1, 2]));
        assert_eq!(face_elements(Topology::TriangleStrip, false, 5, 1, none), Some([1, 3, 2]));
        assert_eq!(face_elements(Topology::TriangleStrip, false, 5, 2, none), Some([2, 3, 4]));
        assert_eq!(face_elements(Topology::TriangleStrip, false, 5, 3, none), None);
        // Fan triangle i: (i+1, i+2, 0).
        assert_eq!(face_elements(Topology::TriangleFan, false, 5, 2, none), Some([3, 4, 0]));
        // Restart at element 4: strips 0..4 (2 triangles) and 5..9 (2 triangles).
        let restart = |i| i == 4;
        assert_eq!(face_elements(Topology::TriangleStrip, true, 9, 1, restart), Some([1, 3, 2]));
        assert_eq!(face_elements(Topology::TriangleStrip, true, 9, 2, restart), Some([5, 6, 7]));
        assert_eq!(face_elements(Topology::TriangleStrip, true, 9, 3, restart), Some([6, 8, 7]));
        assert_eq!(face_elements(Topology::TriangleFan, true, 9, 3, restart), Some([7, 8, 5]));
        assert_eq!(face_elements(Topology::TriangleStrip, true, 9, 4, restart), None);
        assert_eq!(primitive_count(Topology::TriangleList, 7), (2, false));
        assert_eq!(primitive_count(Topology::TriangleStrip, 7), (5, true));
    }

    #[test]
    fn segments_and_points_name_their_vertices() {
        let none = |_| false;
        assert_eq!(face_elements(Topology::LineList, false, 6, 2, none), Some([4, 5, 5]));
        assert_eq!(face_elements(Topology::LineList, false, 6, 3, none), None);
        assert_eq!(face_elements(Topology::LineStrip, false, 4, 2, none), Some([2, 3, 3]));
        assert_eq!(face_elements(Topology::LineStrip, false, 4, 3, none), None);
        // Restart at element 3: strips 0..3 (2 segments) and 4..7 (2 segments).
        let restart = |i| i == 3;
        assert_eq!(face_elements(Topology::LineStrip, true, 7, 1, restart), Some([1, 2, 2]));
        assert_eq!(face_elements(Topology::LineStrip, true, 7, 2, restart), Some([4, 5, 5]));
        assert_eq!(face_elements(Topology::LineStrip, true, 7, 4, restart), None);
        assert_eq!(face_elements(Topology::PointList, false, 5, 4, none), Some([4, 4, 4]));
        assert_eq!(primitive_count(Topology::LineList, 5), (2, false));
        assert_eq!(primitive_count(Topology::LineStrip, 5), (4, true));
        assert_eq!(primitive_count(Topology::PointList, 5), (5, true));
    }

    #[test]
    fn keys_round_trip() {
        let s = RasterState::default()
            .with_culling(vk::CullModeFlags::BACK, vk::FrontFace::CLOCKWISE)
            .with_depth_compare(vk::CompareOp::LESS_OR_EQUAL)
            .with_depth_bias(DepthBias { constant: -2.0, clamp: 0.0, slope: -1.5 })
            .with_topology(Topology::TriangleFan, true);
        assert_eq!(s.key(Culling::NONE).state(), s);
        assert_ne!(s.key(Culling::NONE), RasterState::default().key(Culling::NONE));
        let wide = RasterState::default().with_topology(Topology::LineStrip, false).with_thickness(3.0, 1.0);
        assert_eq!(wide.key(Culling::NONE).state(), RasterState { culling: Some(Culling::NONE), ..wide });
        // A point size on triangles draws nothing different: the same pipeline.
        assert_eq!(RasterState::default().with_thickness(1.0, 5.0).key(Culling::NONE), RasterState::default().key(Culling::NONE));
    }

    #[test]
    fn a_draw_without_culling_takes_the_requests_and_one_with_culling_keeps_its_own() {
        let back = Culling::new(vk::CullModeFlags::BACK, vk::FrontFace::CLOCKWISE);
        let unset = RasterState::default();
        assert_eq!(unset.key(back).state().culling, Some(back));
        assert_eq!(unset.key(Culling::NONE).state().culling, Some(Culling::NONE));
        let double_sided = RasterState { culling: Some(Culling::NONE), ..unset };
        assert_eq!(double_sided.key(back).state().culling, Some(Culling::NONE), "an explicit NONE is not the request's");
        let front = RasterState::default().with_culling(vk::CullModeFlags::FRONT, vk::FrontFace::COUNTER_CLOCKWISE);
        assert_eq!(front.key(back), front.key(Culling::NONE));
    }
}
