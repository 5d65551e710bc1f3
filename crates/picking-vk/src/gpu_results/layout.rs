//! The size of a slot's results buffer, from the configuration alone, and its word layout
//! (`glsl/pick_results.glsl` documents what the host reads; the jobs and draw rows after it
//! are the results pass's own input).

/// Words of the results header.
pub(crate) const HEADER_WORDS: u64 = 8;
/// Words per query: of a hit, of a job.
pub(crate) const HIT_WORDS: u64 = 8;
pub(crate) const JOB_WORDS: u64 = 16;
/// Words per rectangle span (ID low, high, query, first instance or `PICK_NO_INSTANCE`,
/// instances, first entry) and per draw row.
pub(crate) const SPAN_WORDS: u64 = 6;
pub(crate) const ROW_WORDS: u64 = 2;
/// The largest pick radius whose disc one workgroup of the compute pass holds (25 x 25).
pub(crate) const MAX_GPU_RADIUS: u32 = 12;

/// Shared memory of the compute pass (`shaders/pick_results.comp`): seven words per pixel of the
/// largest disc, two per slot of its 1024-slot grouping table, and the four winner words.
pub(crate) const RESULTS_SHARED_BYTES: u32 = 4 * (7 * 625 + 2 * 1024 + 4);

/// The compute pass's workgroup size for discs of `max_radius`: a thread per disc pixel (in
/// whole waves of 64) where the device's limits allow it, so each thread reads its texels
/// once; else as many as they allow, at least the 128 every device has.
pub(crate) fn results_group(max_radius: u32, max_invocations: u32, max_width: u32) -> u32 {
    let side = 2 * max_radius.min(MAX_GPU_RADIUS) + 1;
    let wanted = (side * side).div_ceil(64) * 64;
    let allowed = (max_invocations.min(max_width) / 64 * 64).max(128);
    wanted.clamp(128, allowed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResultsLayout {
    /// Hits the buffer holds: `PickerConfig::max_queries`.
    pub hit_capacity: u32,
    /// Rectangle entries (and so spans at most): `PickerConfig::rect_entries` (0 without
    /// rectangles).
    pub entry_capacity: u32,
    /// Lookup buckets at most: a power of two at least as many as the entries (a span has
    /// one entry at least).
    pub lookup_buckets: u32,
    /// Recorded draws of the point and radius queries whose rows the buffer holds.
    pub draw_capacity: u32,
}

impl ResultsLayout {
    pub fn new(hit_capacity: u32, entry_capacity: u32, draw_capacity: u32) -> Self {
        ResultsLayout { hit_capacity, entry_capacity, lookup_buckets: lookup_buckets(entry_capacity, u32::MAX), draw_capacity }
    }

    /// Where the spans start, in words after the header.
    pub fn spans_word(&self) -> u64 {
        HIT_WORDS * u64::from(self.hit_capacity)
    }

    /// Where the lookup's bucket starts begin, in words after the header.
    pub fn starts_word(&self) -> u64 {
        self.spans_word() + SPAN_WORDS * u64::from(self.entry_capacity)
    }

    /// Where the entries' pixel counts start, in words after the header.
    pub fn counts_word(&self) -> u64 {
        self.starts_word() + u64::from(self.lookup_buckets) + 1
    }

    /// Where the jobs start, in words after the header.
    pub fn jobs_word(&self) -> u64 {
        self.counts_word() + u64::from(self.entry_capacity)
    }

    /// Where the draw rows start, in words after the header (then, two rows each, the GPU
    /// plan table groups the point and radius queries met).
    pub fn rows_word(&self) -> u64 {
        self.jobs_word() + JOB_WORDS * u64::from(self.hit_capacity)
    }

    pub fn bytes(&self) -> u64 {
        4 * (HEADER_WORDS + self.rows_word() + ROW_WORDS * u64::from(self.draw_capacity))
    }
}

/// Lookup buckets for `spans` spans: a power of two at least as many (2 at least, so the
/// mask is never 0), at most `most`.
pub(crate) fn lookup_buckets(spans: u32, most: u32) -> u32 {
    u64::from(spans).next_power_of_two().clamp(2, 1 << 31).min(u64::from(most)) as u32
}

/// The lookup's hash of (query, ID): the include's `pick_lookup_hash`.
pub(crate) fn lookup_hash(query: u32, id: [u32; 2]) -> u32 {
    let mut h = query.wrapping_mul(0x9E37_79B1);
    h = (h ^ id[0]).wrapping_mul(0x85EB_CA77);
    h = (h ^ id[1]).wrapping_mul(0xC2B2_AE3D);
    h ^ (h >> 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_has_a_bucket_for_every_span() {
        for entries in [0u32, 1, 3, 4096, 5000] {
            let l = ResultsLayout::new(16, entries, 64);
            assert!(l.lookup_buckets.is_power_of_two() && l.lookup_buckets >= 2);
            assert!(u64::from(l.lookup_buckets) >= u64::from(entries));
            let starts = u64::from(l.lookup_buckets) + 1;
            assert_eq!(l.bytes(), 32 + 32 * 16 + 24 * u64::from(entries) + 4 * starts + 4 * u64::from(entries) + 64 * 16 + 8 * 64);
            for spans in [0, 1, entries / 2, entries] {
                assert!(lookup_buckets(spans, l.lookup_buckets) <= l.lookup_buckets);
            }
        }
    }

    #[test]
    fn the_results_group_holds_a_disc_where_the_device_allows() {
        // radius 8: 289 pixels in 5 waves of 64; radius 12: 625 in 10.
        assert_eq!(results_group(8, 1024, 1024), 320);
        assert_eq!(results_group(12, 1024, 1024), 640);
        assert_eq!(results_group(1, 1024, 1024), 128);
        assert_eq!(results_group(12, 256, 1024), 256);
        assert_eq!(results_group(12, 1024, 200), 192);
        assert_eq!(results_group(12, 100, 100), 128);
    }
}
