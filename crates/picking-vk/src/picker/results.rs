//! Taking a slot's results once its frame completed: reading only the bytes the frame
//! wrote, checking the GPU's stamp, and resolving each recorded query.

use super::frame_layout::QueryLayout;
use super::{Pending, Picker, Slot};
use crate::error::PickError;
use crate::handoff::Snapshots;
use crate::readback::stamp_of;
use crate::resolve;
use crate::resolve::query::{resolve_radius, resolve_rect, Disc, FrameResults, QueryResult};
use crate::resolve::result::PickStats;

impl Picker {
    /// Resolves the query set recorded into `slot`, or `None` if none is pending there. Never
    /// waits. It fits the usual frame loop in any order: wait on the slot's fence, reset it,
    /// take the results, record the next set (it never looks at the fence). The slot's bytes
    /// must carry the stamp of the frame recorded into it; otherwise (a command buffer that
    /// was dropped instead of submitted) the result is [`PickError::StaleResult`] and the
    /// slot is free. Reading costs O(query areas + rectangle table entries used).
    ///
    /// # Safety
    /// The GPU work of the command buffer that last recorded into `slot` has completed, or
    /// that command buffer will never be submitted.
    pub unsafe fn take_results(&mut self, slot: usize) -> Result<Option<FrameResults>, PickError> {
        // SAFETY: the caller's contract is `take_bytes`'.
        let Some((pending, stats, bytes)) = (unsafe { self.take_bytes(slot) })? else { return Ok(None) };
        let s = &self.slots[slot];
        let results = s.layout.queries.iter().map(|q| resolve_query(q, s, &pending, stats, &bytes)).collect();
        self.read_buffer = bytes;
        Ok(Some(FrameResults { frame: pending.frame, stats, results }))
    }

    /// Takes `slot`'s pending frame and reads its bytes (into the reused read buffer), checking
    /// the stamp; `None` when nothing is pending.
    ///
    /// # Safety
    /// As [`Picker::take_results`].
    unsafe fn take_bytes(&mut self, slot: usize) -> Result<Option<(Pending, PickStats, Vec<u8>)>, PickError> {
        let frames_in_flight = self.slots.len();
        if slot >= frames_in_flight {
            return Err(PickError::InvalidSlot { slot, frames_in_flight });
        }
        if self.device_lost {
            // Nothing a lost device wrote is read; the slot is forgotten.
            self.slots[slot].pending = None;
            return Err(PickError::DeviceLost);
        }
        let mut bytes = std::mem::take(&mut self.read_buffer);
        let (staging, timestamps) = (&self.staging, self.timestamps.is_some());
        // The frame stays pending until its bytes were read: a failed read (an invalidate
        // that ran out of host memory) can be retried.
        let s = &mut self.slots[slot];
        let used_bytes = s.layout.used_bytes();
        let taken = take_after_read(&mut s.pending, |_| {
            // SAFETY: the caller guarantees the copies into this slot have completed.
            unsafe { staging.read(slot, used_bytes, timestamps, &mut bytes) }
        });
        let (pending, header) = match self.note_loss(taken) {
            Ok(Some(taken)) => taken,
            Ok(None) => {
                self.read_buffer = bytes;
                return Ok(None);
            }
            Err(e) => {
                self.read_buffer = bytes;
                return Err(e);
            }
        };
        if header.stamp != stamp_of(pending.frame) {
            self.read_buffer = bytes;
            // Another frame's texels (or none): the frame recorded here never completed.
            return Err(PickError::StaleResult { slot, expected: pending.frame, found: header.stamp.checked_sub(1) });
        }
        let gpu_plan = self.slots[slot].gpu_plan.map(|g| match self.gpu_plan.as_mut() {
            // SAFETY: the slot's frame completed (its stamp was read above).
            Some(kit) => unsafe { kit.read_back(slot, g) },
            None => g,
        });
        let mut stats = PickStats { pass: self.slots[slot].stats, gpu_time_ns: None, gpu_plan, gpu_plan_time_ns: None };
        if let (Some(ts), Some([start, end, planned])) = (&self.timestamps, header.timestamps) {
            let ns = |to: u64| (to.wrapping_sub(start) & ts.mask) as f64 * ts.period_ns;
            stats.gpu_time_ns = Some(ns(end));
            stats.gpu_plan_time_ns = gpu_plan.map(|_| ns(planned));
        }
        Ok(Some((pending, stats, bytes)))
    }
}

/// Reads what `pending` names and only then takes it: on an error it stays pending.
fn take_after_read<P, R, E>(pending: &mut Option<P>, read: impl FnOnce(&P) -> Result<R, E>) -> Result<Option<(P, R)>, E> {
    let Some(p) = pending.as_ref() else { return Ok(None) };
    let read = read(p)?;
    Ok(pending.take().map(|p| (p, read)))
}

/// The result of one query of a slot's layout, from the slot's bytes.
fn resolve_query(q: &QueryLayout, s: &Slot, pending: &Pending, stats: PickStats, bytes: &[u8]) -> QueryResult {
    let (frame, camera) = (pending.frame, &pending.camera);
    let draws = Snapshots { recorded: &s.draws, table: s.table.as_ref().map_or(&[][..], |t| &t.snapshots[..]) };
    match q {
        QueryLayout::Point { pixel, texel, .. } => {
            let mut result = resolve::resolve(frame, *pixel, camera, draws, &s.layout.points_block.texels(bytes, u64::from(*texel)));
            result.stats = stats;
            QueryResult::Point(result)
        }
        QueryLayout::Radius { pixel, radius, snap, region, block, .. } => {
            let disc = Disc { pixel: *pixel, radius: *radius, region, block, bytes };
            let (mut result, hit_pixel) = resolve_radius(frame, &disc, *snap, camera, draws);
            result.stats = stats;
            QueryResult::Radius { result, radius: *radius, snap: *snap, hit_pixel }
        }
        QueryLayout::Rect { rect, mode, spans, .. } => {
            QueryResult::Rect(resolve_rect(*rect, *mode, &s.spans[spans.clone()], s.layout.table(), bytes, camera.depth, draws))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::take_after_read;

    #[test]
    fn a_failed_read_keeps_the_frame_pending() {
        let mut pending = Some(41u64);
        let failed: Result<Option<(u64, ())>, &str> = take_after_read(&mut pending, |_| Err("out of host memory"));
        assert_eq!(failed, Err("out of host memory"));
        assert_eq!(pending, Some(41), "the retry must still find the frame");
        assert_eq!(take_after_read(&mut pending, |f| Ok::<_, &str>(*f + 1)), Ok(Some((41, 42))));
        assert_eq!(pending, None);
        assert_eq!(take_after_read(&mut pending, |f| Ok::<_, &str>(*f)), Ok(None));
    }
}
