//! The sizes of a slot's results and upload buffers, from the configuration alone, and the
//! word layout both follow (`glsl/pick_results.glsl` documents the results side).

/// Words of the results header.
pub(crate) const HEADER_WORDS: u64 = 8;
/// Words per query: of a hit in the results, of a job in the upload.
pub(crate) const HIT_WORDS: u64 = 8;
pub(crate) const JOB_WORDS: u64 = 16;
/// Words per rectangle entry key (ID low, high, instance, query) and per draw row.
pub(crate) const KEY_WORDS: u64 = 4;
pub(crate) const ROW_WORDS: u64 = 2;
/// The largest pick radius whose disc one workgroup of the compute pass holds (25 x 25).
pub(crate) const MAX_GPU_RADIUS: u32 = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResultsLayout {
    /// Hits the buffer holds: `PickerConfig::max_queries`.
    pub hit_capacity: u32,
    /// Rectangle entries: `PickerConfig::rect_entries` (0 without rectangles).
    pub entry_capacity: u32,
    /// Lookup slots: a power of two at least twice the entries, so a probe ends.
    pub lookup_slots: u32,
    /// Recorded draws of the point and radius queries whose rows the upload holds.
    pub draw_capacity: u32,
}

impl ResultsLayout {
    pub fn new(hit_capacity: u32, entry_capacity: u32, draw_capacity: u32) -> Self {
        let lookup_slots = if entry_capacity == 0 { 1 } else { (2 * u64::from(entry_capacity)).next_power_of_two().min(1 << 31) as u32 };
        ResultsLayout { hit_capacity, entry_capacity, lookup_slots, draw_capacity }
    }

    /// Where the claims start, in words after the header.
    pub fn claims_word(&self) -> u64 {
        HIT_WORDS * u64::from(self.hit_capacity) + KEY_WORDS * u64::from(self.entry_capacity)
    }

    pub fn results_bytes(&self) -> u64 {
        4 * (HEADER_WORDS + self.claims_word() + 2 * u64::from(self.lookup_slots))
    }

    pub fn upload_bytes(&self) -> u64 {
        4 * (JOB_WORDS * u64::from(self.hit_capacity) + ROW_WORDS * u64::from(self.draw_capacity) + KEY_WORDS * u64::from(self.entry_capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_has_room_for_every_entry_twice_over() {
        for entries in [0u32, 1, 3, 4096, 5000] {
            let l = ResultsLayout::new(16, entries, 64);
            assert!(l.lookup_slots.is_power_of_two());
            assert!(u64::from(l.lookup_slots) >= 2 * u64::from(entries));
            assert_eq!(l.results_bytes(), 32 + 32 * 16 + 16 * u64::from(entries) + 8 * u64::from(l.lookup_slots));
            assert_eq!(l.upload_bytes(), 64 * 16 + 8 * 64 + 16 * u64::from(entries));
        }
    }
}
