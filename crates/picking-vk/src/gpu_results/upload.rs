//! What the CPU knows of a frame's GPU results reaches the results buffer through the slot's
//! upload buffer: the frame copies it over, and recording fills it in. So the results buffer
//! changes only on the GPU, after the frame's first barrier, which waits for the host's
//! readers: a host may still be reading the slot's earlier frame while this one is recorded.
//!
//! The copy is recorded before the results pass, so that pass's barrier also orders it (the
//! pass binds the whole buffer), while the spans are known only once the rectangles are
//! recorded: the regions are what the frame's layout allows, and the words are written after.

use super::kit::{GpuResultsKit, Scratch};
use super::layout::{lookup_buckets, ResultsLayout, HEADER_WORDS, HIT_WORDS, JOB_WORDS, ROW_WORDS, SPAN_WORDS};
use ash::vk;

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
    /// The regions (in bytes) the frame may write, in both buffers: the header and every hit,
    /// the spans and the lookup's bucket starts (a span takes one table entry at least), the
    /// jobs and the rows. Words the frame leaves unwritten are never read.
    fn regions(self, layout: &ResultsLayout) -> Vec<vk::BufferCopy> {
        let region = |word: u64, words: u64| {
            let offset = 4 * (HEADER_WORDS + word);
            vk::BufferCopy { src_offset: offset, dst_offset: offset, size: 4 * words }
        };
        let n = u64::from(self.queries);
        let mut regions = vec![vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 4 * (HEADER_WORDS + HIT_WORDS * n) }];
        if let Some(entries) = self.entries {
            regions.push(region(layout.spans_word(), SPAN_WORDS * u64::from(entries)));
            regions.push(region(layout.starts_word(), u64::from(lookup_buckets(entries, layout.lookup_buckets)) + 1));
        }
        regions.push(region(layout.jobs_word(), JOB_WORDS * n));
        regions.push(region(layout.rows_word(), ROW_WORDS * u64::from(self.rows)));
        regions.retain(|r| r.size > 0);
        regions
    }
}

/// A slot's mapped upload buffer being written, within the regions its frame copies.
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
            "words {at}.. outside what the frame copies"
        );
        let to = usize::try_from(offset).ok().and_then(|o| self.bytes.get_mut(o..)).unwrap_or_default();
        let n = from.len().min(to.len());
        to[..n].copy_from_slice(&from[..n]);
    }
}

impl GpuResultsKit {
    /// Records the copy of slot `slot`'s upload buffer into its results buffer over what a
    /// frame of `extent` may write; [`GpuResultsKit::write_upload`] then writes it.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the frame's first barrier
    /// ([`GpuResultsKit::first_barrier`]) and before the results pass's barrier (or, without a
    /// results pass, the frame's last barrier), which makes the copy visible.
    pub unsafe fn record_upload(&mut self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize, extent: UploadExtent) {
        self.regions = extent.regions(&self.layout);
        let Some(s) = self.slots.get(slot) else { return };
        // Regions past the buffer's end are cut to it (the sizes were checked when the frame
        // was prepared, so none is).
        let end = s.results.bytes().min(s.upload.bytes());
        self.regions.retain_mut(|r| {
            r.size = r.size.min(end.saturating_sub(r.src_offset));
            r.size > 0
        });
        // SAFETY: the caller's contract; both buffers are the kit's, live for the picker's
        // life, and every region lies inside both.
        unsafe { device.cmd_copy_buffer(cmd, s.upload.buffer, s.results.buffer, &self.regions) };
    }

    /// Calls `write` with slot `slot`'s upload buffer (within the regions of the last
    /// [`GpuResultsKit::record_upload`]), scratch lists for the spans and lookup, and the
    /// buffer's layout. The slot's previous frame has completed, so its copy no longer reads
    /// the buffer; the memory is host-coherent (checked at creation), so the writes reach the
    /// device at submission.
    pub fn write_upload(&mut self, slot: usize, write: impl FnOnce(&mut Upload<'_>, &mut Scratch, &ResultsLayout)) {
        let Some(bytes) = self.slots.get_mut(slot).and_then(|s| s.upload.mapped_mut()) else { return };
        write(&mut Upload { bytes, regions: &self.regions }, &mut self.scratch, &self.layout);
    }
}
