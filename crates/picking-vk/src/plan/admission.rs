//! Admission: which draws and instances take part in a request, before any culling. The
//! request's filter and ignore rules are read here and nowhere else.

use crate::draw::PickDraw;
use crate::ignore::Ignore;
use crate::request::PickRequest;

/// Whether a draw takes part at all: it draws something, is pickable, passes the filter, is
/// not ignored as a whole.
pub(crate) fn admits(request: &PickRequest<'_>, draw: &PickDraw) -> bool {
    draws_something(draw) && draw.pickable && !request.ignore.contains(&Ignore::Object(draw.id)) && request.filter.is_none_or(|f| f(draw.id))
}

/// A direct draw of no vertices, indices or instances records nothing: it is left out, as
/// binding its buffers at the end of an empty range would even be invalid
/// (`vkCmdBindIndexBuffer` wants an offset inside the buffer). Indirect draws take their
/// counts from their commands.
fn draws_something(draw: &PickDraw) -> bool {
    draw.indirect.is_some() || (draw.triangles.element_count() > 0 && draw.instance_count() > 0)
}

/// Whether instance `instance` of `draw` is ignored by the request.
pub(crate) fn instance_ignored(draw: &PickDraw, instance: u32, ignore: &[Ignore]) -> bool {
    ignore.iter().any(|rule| matches!(rule, Ignore::Instances { .. }) && rule.covers(draw.id, instance))
}

/// Splits `0..count` into the instance ranges of `draw` that survive the request's instance
/// ignores, calling `emit(start, count)` for each, in order, without allocating.
pub(crate) fn visible_instance_ranges(draw: &PickDraw, count: u32, ignore: &[Ignore], mut emit: impl FnMut(u32, u32)) {
    let mut start = 0u32;
    while start < count {
        // The earliest ignored range that covers or follows `start`.
        let mut next_cut: Option<(u32, u32)> = None;
        for rule in ignore {
            if let Ignore::Instances { id, start: s, count: c } = *rule {
                let end = s.saturating_add(c);
                if id != draw.id || c == 0 || end <= start {
                    continue;
                }
                let s = s.max(start);
                if next_cut.is_none_or(|(ns, _)| s < ns) {
                    next_cut = Some((s, end));
                } else if let Some((ns, ne)) = next_cut {
                    if s == ns && end > ne {
                        next_cut = Some((ns, end));
                    }
                }
            }
        }
        match next_cut {
            Some((s, e)) if s < count => {
                if s > start {
                    emit(start, s - start);
                }
                start = e;
            }
            _ => {
                emit(start, count - start);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{BufferRange, Positions, Triangles};
    use crate::id::ObjectId;
    use ash::vk::{self, Handle};

    fn draw(id: u64) -> PickDraw {
        let range = BufferRange { buffer: vk::Buffer::from_raw(1), offset: 0, size: 36 };
        PickDraw::new(ObjectId::new(id).unwrap(), Positions { range, stride: 12, vertex_count: 3 }, Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 })
    }

    fn ranges(count: u32, ignore: &[Ignore]) -> Vec<(u32, u32)> {
        let mut out = vec![];
        visible_instance_ranges(&draw(5), count, ignore, |s, c| out.push((s, c)));
        // The per-instance rule agrees with the ranges.
        let kept: Vec<u32> = out.iter().flat_map(|&(s, c)| s..s + c).collect();
        let expected: Vec<u32> = (0..count).filter(|&i| !instance_ignored(&draw(5), i, ignore)).collect();
        assert_eq!(kept, expected);
        out
    }

    #[test]
    fn instance_ignores_cut_ranges() {
        let id = ObjectId::new(5).unwrap();
        let other = ObjectId::new(6).unwrap();
        assert_eq!(ranges(10, &[]), vec![(0, 10)]);
        assert_eq!(ranges(10, &[Ignore::instance(id, 0)]), vec![(1, 9)]);
        assert_eq!(ranges(10, &[Ignore::instance(id, 9)]), vec![(0, 9)]);
        assert_eq!(ranges(10, &[Ignore::instance(other, 3)]), vec![(0, 10)]);
        assert_eq!(ranges(10, &[Ignore::Instances { id, start: 6, count: 2 }, Ignore::Instances { id, start: 2, count: 3 }]), vec![(0, 2), (5, 1), (8, 2)]);
        // Overlapping and out-of-range ignores.
        assert_eq!(ranges(10, &[Ignore::Instances { id, start: 2, count: 3 }, Ignore::Instances { id, start: 3, count: 4 }]), vec![(0, 2), (7, 3)]);
        assert_eq!(ranges(4, &[Ignore::Instances { id, start: 2, count: u32::MAX }]), vec![(0, 2)]);
        assert_eq!(ranges(4, &[Ignore::Instances { id, start: 0, count: 4 }]), vec![]);
    }

    #[test]
    fn admission_reads_pickable_filter_and_object_ignores() {
        use crate::request::viewport::Viewport;
        use glam::Mat4;
        let base = PickRequest::new(Viewport::full(4, 4), Mat4::IDENTITY, Mat4::IDENTITY);
        assert!(admits(&base, &draw(5)));
        assert!(!admits(&base, &draw(5).with_pickable(false)));
        let mut empty = draw(5);
        empty.triangles = Triangles::NonIndexed { first_vertex: 0, vertex_count: 0 };
        assert!(!admits(&base, &empty), "a draw of no vertices draws nothing");
        let ignore = [Ignore::Object(ObjectId::new(5).unwrap())];
        assert!(!admits(&base.with_ignore(&ignore), &draw(5)));
        assert!(admits(&base.with_ignore(&ignore), &draw(6)));
        let odd = |id: ObjectId| id.get() % 2 == 1;
        assert!(!admits(&base.with_filter(&odd), &draw(6)));
    }
}
