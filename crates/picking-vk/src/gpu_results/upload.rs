//! What the CPU knows of a frame's GPU results reaches the results buffer through the slot's
//! upload buffer: recording writes it there, and the frame's results pass carries it over (it
//! is recorded before the rectangles, whose spans recording writes only after, so it reads
//! how many there are from the upload's own header). A set of rectangles alone, which has no
//! such pass, copies the regions it may write at the pass's place instead (buffer updates of
//! the same words measured dearer: run Z23, docs/gpu-results-h200.md). So the results
//! buffer changes only on the GPU, after the frame's first barrier, which waits for the host's
//! readers: a host may still be reading the slot's earlier frame while this one is recorded.

use super::kit::{GpuResultsKit, Scratch};
use super::layout::{lookup_buckets, ResultsLayout, HEADER_WORDS, HIT_WORDS, JOB_WORDS, ROW_WORDS, SPAN_WORDS};
use ash::vk;

/// Words one workgroup of the results pass copies of the rectangles' spans and lookup, at
/// least (its 128 threads, 8 words each).
const COPY_GROUP_WORDS: u64 = 1024;
/// The most workgroups that copy them (each loops over the rest).
const MAX_COPY_GROUPS: u64 = 64;

/// What a frame may write: sizes known before the rectangles are recorded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UploadExtent {
    pub queries: u32,
    /// Draw rows, table groups' two each included.
    pub rows: u32,
    /// Rectangle table entries the frame uses; `None` without rectangle queries.
    pub entries: Option<u32>,
}

impl UploadExtent {
    /// The words of spans and bucket starts the frame may write: a span takes one table entry
    /// at least.
    fn lookup_words(self, layout: &ResultsLayout) -> Option<(u64, u64)> {
        let entries = self.entries?;
        Some((SPAN_WORDS * u64::from(entries), u64::from(lookup_buckets(entries, layout.lookup_buckets)) + 1))
    }

    /// The results pass's workgroups past the queries, which copy the spans and lookup.
    pub fn copy_groups(self, layout: &ResultsLayout) -> u32 {
        self.lookup_words(layout).map_or(0, |(spans, starts)| (spans + starts).div_ceil(COPY_GROUP_WORDS).clamp(1, MAX_COPY_GROUPS) as u32)
    }

    /// Sets `regions` to the regions (in bytes) the frame may write, in both buffers: the
    /// header and every hit, the spans and the lookup's bucket starts, the jobs and the rows.
    /// Words the frame leaves unwritten are never read.
    fn regions(self, layout: &ResultsLayout, regions: &mut Vec<vk::BufferCopy>) {
        let region = |offset: u64, size: u64| vk::BufferCopy { src_offset: offset, dst_offset: offset, size };
        let words = |word: u64, words: u64| region(4 * (HEADER_WORDS + word), 4 * words);
        let n = u64::from(self.queries);
        regions.clear();
        regions.push(region(0, 4 * (HEADER_WORDS + HIT_WORDS * n)));
        if let Some((spans, starts)) = self.lookup_words(layout) {
            regions.push(words(layout.spans_word(), spans));
            regions.push(words(layout.starts_word(), starts));
        }
        regions.push(words(layout.jobs_word(), JOB_WORDS * n));
        regions.push(words(layout.rows_word(), ROW_WORDS * u64::from(self.rows)));
        regions.retain(|r| r.size > 0);
    }
}

/// A frame's words being written into the slot's mapped upload buffer, within the regions the
/// frame may write.
pub(crate) struct Upload<'a> {
    bytes: &'a mut [u8],
    regions: &'a [vk::BufferCopy],
}

impl Upload<'_> {
    /// Writes `words` from word `at`; words past the buffer's end are dropped (the sizes were
    /// checked when the frame was prepared).
    pub fn put(&mut self, at: u64, words: &[u32]) {
        let from = bytemuck::cast_slice::<u32, u8>(words);
        let offset = 4 * at;
        debug_assert!(
            words.is_empty() || self.regions.iter().any(|r| r.src_offset <= offset && offset + from.len() as u64 <= r.src_offset + r.size),
            "words {at}.. outside what the frame may write"
        );
        let to = usize::try_from(offset).ok().and_then(|o| self.bytes.get_mut(o..)).unwrap_or_default();
        let n = from.len().min(to.len());
        to[..n].copy_from_slice(&from[..n]);
    }
}

impl GpuResultsKit {
    /// Notes what a frame of `extent` may write (for [`GpuResultsKit::write_upload`] and
    /// [`GpuResultsKit::record_upload_copy`]).
    pub fn plan_upload(&mut self, extent: UploadExtent) {
        extent.regions(&self.layout, &mut self.regions);
        // Regions past the buffer's end are cut to it (the sizes were checked when the frame
        // was prepared, so none is).
        let end = self.layout.bytes();
        self.regions.retain_mut(|r| {
            r.size = r.size.min(end.saturating_sub(r.src_offset));
            r.size > 0
        });
    }

    /// Calls `write` with the planned frame's words (slot `slot`'s upload buffer), within its
    /// regions, scratch lists for the spans and lookup, and the buffer's layout. The slot's
    /// previous frame has completed, so its commands no longer read the upload buffer; the
    /// memory is host-coherent (checked at creation), so the writes reach the device at
    /// submission.
    pub fn write_upload(&mut self, slot: usize, write: impl FnOnce(&mut Upload<'_>, &mut Scratch, &ResultsLayout)) {
        let Some(bytes) = self.slots.get_mut(slot).and_then(|s| s.upload.mapped_mut()) else { return };
        write(&mut Upload { bytes, regions: &self.regions }, &mut self.scratch, &self.layout);
    }

    /// Records the copy of slot `slot`'s upload buffer into its results buffer over what the
    /// planned frame may write (written by [`GpuResultsKit::write_upload`] before the command
    /// buffer is submitted), for a set without a results pass to carry it over.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the frame's first barrier
    /// ([`GpuResultsKit::first_barrier`]) and before its last, which makes the copy visible;
    /// nothing between them writes the results buffer but the rectangle counts' copy.
    pub unsafe fn record_upload_copy(&self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize) {
        let Some(s) = self.slots.get(slot).filter(|_| !self.regions.is_empty()) else { return };
        // SAFETY: the caller's contract; both buffers are the kit's, live for the picker's
        // life, and every region lies inside both (each `layout.bytes()` long).
        unsafe { device.cmd_copy_buffer(cmd, s.upload.buffer, s.results.buffer, &self.regions) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame's regions as (offset, size), each copied to where it was read from.
    fn regions(extent: UploadExtent, layout: &ResultsLayout) -> Vec<(u64, u64)> {
        let mut out = vec![vk::BufferCopy { src_offset: 7, dst_offset: 7, size: 7 }];
        extent.regions(layout, &mut out);
        assert!(out.iter().all(|r| r.src_offset == r.dst_offset), "{out:?}");
        out.iter().map(|r| (r.src_offset, r.size)).collect()
    }

    #[test]
    fn a_frames_regions_cover_what_it_writes_and_lie_in_the_buffer() {
        let layout = ResultsLayout::new(16, 4096, 64);
        // Points only: the header and hits, the jobs, the rows; no spans, no copy groups.
        let points = UploadExtent { queries: 3, rows: 10, entries: None };
        let r = regions(points, &layout);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0], (0, 4 * (8 + 8 * 3)));
        assert_eq!(r[1], (4 * (8 + layout.jobs_word()), 4 * 16 * 3));
        assert_eq!(r[2], (4 * (8 + layout.rows_word()), 4 * 2 * 10));
        assert_eq!(points.copy_groups(&layout), 0);
        // With rectangles: spans (6 words an entry) and bucket starts (buckets + 1) too.
        let rects = UploadExtent { queries: 2, rows: 0, entries: Some(300) };
        let r = regions(rects, &layout);
        assert_eq!(r.len(), 4, "no rows region: {r:?}");
        assert_eq!(r[1], (4 * (8 + layout.spans_word()), 4 * 6 * 300));
        assert_eq!(r[2], (4 * (8 + layout.starts_word()), 4 * (512 + 1)));
        assert_eq!(rects.copy_groups(&layout), (6 * 300 + 513u32).div_ceil(1024));
        // A rectangle over nothing still has its starts (mask 1: three words); the most
        // entries stay within the buffer, and the copy groups within their bound.
        let empty = regions(UploadExtent { queries: 1, rows: 0, entries: Some(0) }, &layout);
        let starts = empty.iter().find(|r| r.0 == 4 * (8 + layout.starts_word()));
        assert_eq!(starts.map(|r| r.1), Some(4 * 3), "{empty:?}");
        let most = UploadExtent { queries: 16, rows: 64, entries: Some(4096) };
        for (offset, size) in regions(most, &layout) {
            assert!(offset + size <= layout.bytes(), "{offset}+{size} past {}", layout.bytes());
        }
        assert_eq!(most.copy_groups(&layout), (6 * 4096 + 4097u32).div_ceil(1024).min(64));
    }
}
