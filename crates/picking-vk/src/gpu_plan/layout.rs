//! Where a slot's plan buffer keeps what: the jobs the CPU writes while recording, then per
//! pair its counters and fallback command, then the indirect commands the finishing pass
//! writes, then the survivor bits the cull pass writes (a bit per instance a pair tests, a
//! summary bit per 64 instances that have a survivor, and for a walked pair the survivors
//! per summary word). All in 32-bit words; the shaders read the job words named here.

use crate::draw::Culling;
use crate::pass::pipeline_key::ROW_BYTES;
use crate::request::camera::CameraSnapshot;
use ash::vk;

/// Words of one pair's job.
pub(crate) const JOB_WORDS: u32 = 54;
/// Words of one indirect command slot (`VkDrawIndexedIndirectCommand`; a non-indexed
/// command uses the first four).
pub(crate) const COMMAND_WORDS: u32 = 5;
/// Words of a pair's counters: its survivors, the count of a table pair's fallback (its
/// group's own commands, drawn when its runs overflow), the draw count (its runs of
/// survivors), the count of the fallback's draw ([`PlanLayout::fallback_count`]), the
/// survivors a table pair's occlusion dropped, and 1 where a table pair drew its survivors
/// from compacted copies of their rows.
pub(crate) const COUNTER_WORDS: u32 = 6;
/// Words of the frame's view-projection in f64.
pub(crate) const VIEW_PROJECTION_WORDS: u32 = 32;

/// Job words (see the shaders): the draw's model-view-projection (16), its local box (min 3,
/// max 3), the region's first and last pixel centres (4), the padding in pixels, the host's
/// viewport (x, y, width, height), the instance of the pair's first survivor bit and how many
/// bits it has (whole cull workgroups), the word of the pair's counters, the word of its
/// first command, the commands' capacity, the word of the fallback command, the command
/// template (count, first index or vertex, vertex offset, indexed), the word of the pair's
/// first survivor bits and of its first summary word, its first cull workgroup (counted from
/// the draw's first instance), the bit of the range's first instance and how many, and the
/// draw's instance count (a table pair: the table's rows). The draw's words are the same in
/// each of its pairs. A table pair of a point query also has its occlusion words
/// (`shaders/pick_cull_finish_draws.comp`): flags (bit 0 on, bit 1 nearer is larger NDC
/// depth, bits 2-3 the cull mode, bit 4 clockwise front faces), the depth buffer's rounding
/// in NDC depth and the farthest key a sure hit the CPU found leaves (f32, +inf for none);
/// any table pair whose group has chunk boxes also sets [`CHUNKED`] in the flags (and
/// [`HOOKED`] where the group is hooked).
/// Every table pair has the word of the table's occluder directory
/// (`gpu_plan::occluders`), whose spheres the cull pass tests rows with, the row its
/// commands count instances from (its group's first; 0 for instances), and the group's
/// window: where its rows lie in the slot's rows. An instance pair whose survivors the pick
/// pass's vertex shader finds by walking its bits (`shaders/pick_walk.glsl`) has the word of
/// the frame's totals, which the cull pass adds its survivors to; every other pair has 0.
pub(crate) mod job {
    pub const MVP: usize = 0;
    pub const BOX_MIN: usize = 16;
    pub const BOX_MAX: usize = 19;
    pub const REGION: usize = 22;
    pub const PAD: usize = 26;
    pub const VIEWPORT: usize = 27;
    pub const FIRST_INSTANCE: usize = 31;
    pub const INSTANCES: usize = 32;
    pub const COUNTERS: usize = 33;
    pub const COMMANDS_WORD: usize = 34;
    pub const CAPACITY: usize = 35;
    pub const FALLBACK_WORD: usize = 36;
    pub const TEMPLATE: usize = 37;
    pub const BITS_WORD: usize = 41;
    pub const SUMMARY_WORD: usize = 42;
    pub const FIRST_GROUP: usize = 43;
    pub const RANGE_START: usize = 44;
    pub const RANGE_COUNT: usize = 45;
    pub const DRAW_INSTANCES: usize = 46;
    pub const OCCLUSION: usize = 47;
    pub const DEPTH_ROUNDING: usize = 48;
    pub const BOUND: usize = 49;
    pub const OCCLUDERS: usize = 50;
    pub const INSTANCE_BASE: usize = 51;
    pub const ROW_WINDOW: usize = 52;
    pub const WALK_TOTALS: usize = 53;
}

/// The flag (in a table pair's [`job::OCCLUSION`] word) of a group with chunk boxes
/// (`chunk_boxes`): the finishing pass draws its survivors by the chunks that meet the pair's
/// region (`shaders/pick_chunks.glsl`).
pub(crate) const CHUNKED: u32 = 1 << 5;
/// The flag (beside [`CHUNKED`]) of a hooked group: its rows hold the model, so a chunk's box
/// goes through it and then the frame's f32 view-projection, as the cull pass tests the rows.
pub(crate) const HOOKED: u32 = 1 << 6;

/// How the GPU may drop a table group's rows at a point query's pixel
/// (`shaders/pick_occlusion.glsl`): those whose box lies beyond a sure hit it proves among
/// the group's survivors, or beyond `bound`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TableOcclusion {
    /// Nearer is larger NDC depth (keys are NDC depth negated).
    pub larger: bool,
    /// The depth buffer's rounding in NDC depth, rounded up.
    pub rounding: f32,
    /// The farthest key a sure hit of the CPU's draws leaves, rounded up; +inf for none.
    pub bound: f32,
}

impl TableOcclusion {
    /// Writes the occlusion words of a table pair's job `j`, with the group's face culling
    /// as the pass draws it.
    pub fn write_job(&self, j: &mut [u32], culling: Culling) {
        let front_clockwise = u32::from(culling.front_face == vk::FrontFace::CLOCKWISE);
        j[job::OCCLUSION] |= 1 | u32::from(self.larger) << 1 | (culling.mode.as_raw() & 3) << 2 | front_clockwise << 4;
        j[job::DEPTH_ROUNDING] = self.rounding.to_bits();
        j[job::BOUND] = self.bound.to_bits();
    }
}

/// The count the fallback's draw reads on Mesa's software driver (the draw takes its one
/// command): lavapipe (Mesa 25.0) keeps the last count draw's count for later plain indirect
/// draws (batch runs, the host's own), which a count of 0 or 1 would cut short. Elsewhere
/// the count is 1.
pub(crate) const MESA_FALLBACK_COUNT: u32 = 1 << 24;
/// `VK_VENDOR_ID_MESA`: lavapipe's vendor.
pub(crate) const VENDOR_ID_MESA: u32 = 0x10005;

/// The frame's totals over its pairs, from [`PlanLayout::totals_word`]: a few words the host
/// reads wherever the plan buffer lies (device-local memory, where the device allows, costs
/// it a round trip over the bus a word), where reading each pair's counters cost 16 points
/// 0.12 ms of CPU time on an H100's host.
pub(crate) mod total {
    pub const SURVIVORS: u32 = 0;
    pub const DRAWN: u32 = 1;
    pub const OCCLUDED: u32 = 2;
    pub const COMPACTED: u32 = 3;
    pub const FALLBACKS: u32 = 4;
}
/// Words of the frame's totals.
pub(crate) const TOTAL_WORDS: u32 = 5;

/// The counters' words, from a pair's first.
#[allow(dead_code, reason = "the shaders' names, checked against them by the layout test; the host reads the totals")]
pub(crate) mod counter {
    pub const SURVIVORS: u32 = 0;
    pub const TABLE_FALLBACK: u32 = 1;
    pub const DRAWN: u32 = 2;
    pub const ALL: u32 = 3;
    pub const OCCLUDED: u32 = 4;
    pub const COMPACTED: u32 = 5;
}

/// The sizes of a slot's plan buffer, from the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlanLayout {
    /// Pairs one frame may plan (`PickerConfig::gpu_plan_pairs`).
    pub pairs: u32,
    /// Commands the frame's pairs share (`PickerConfig::gpu_plan_commands`).
    pub commands: u32,
    /// What the fallback's count draw reads: 1, or [`MESA_FALLBACK_COUNT`] on lavapipe.
    pub fallback_count: u32,
    /// Words of survivor bits and summaries the frame's pairs share (as many as
    /// `PickerConfig::gpu_plan_instances` instances take): [`bit_words`] each.
    pub bit_words: u32,
    /// Words of a table's ignored-row bits, a bit per row a table may hold
    /// (`PickerConfig::gpu_plan_draws`) where tables are planned, else none: the rows the
    /// frame's ignore rules leave out.
    pub ignored_words: u32,
}

/// The most span rows a slot keeps (5 MiB): commands past them draw their spans from the
/// row's first chunk instead.
pub(crate) const MAX_SPAN_ROWS: u32 = 1 << 16;

/// Where a slot's rows buffer (for shared lists' tables) keeps what, in rows of `ROW_BYTES`
/// and then words: the rows of the groups the frame draws (`PickerConfig::gpu_plan_rows`,
/// each group at its window), a *span row* per command of the frame (at most
/// [`MAX_SPAN_ROWS`]: `shaders/pick_chunks.glsl` draws a span of chunks past a row's first
/// from a copy of the row whose last word is the span's first triangle), as many *compacted
/// rows* as frame rows (`shaders/pick_compact.glsl`: a pair whose runs of survivors pass its
/// commands copies its survivors there, taken by need), then a near key per row
/// (`shaders/pick_occlusion.glsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowsLayout {
    pub frame_rows: u32,
    pub span_rows: u32,
}

impl RowsLayout {
    pub fn new(frame_rows: u32, commands: u32) -> Self {
        RowsLayout { frame_rows, span_rows: commands.min(MAX_SPAN_ROWS) }
    }

    /// The first compacted row (as many as frame rows follow it).
    pub fn compacted_row(&self) -> u32 {
        self.frame_rows + self.span_rows
    }

    /// The word of the first row's near key.
    pub fn keys_word(&self) -> u32 {
        (self.compacted_row() + self.frame_rows) * (ROW_BYTES / 4)
    }

    /// Bytes of one slot's rows buffer: the keys rounded up to 16 bytes, so that the buffer
    /// is the size it asks for where drivers round buffers to 16 bytes (NVIDIA).
    pub fn bytes(&self) -> u64 {
        4 * (u64::from(self.keys_word()) + u64::from(self.frame_rows.next_multiple_of(4)))
    }
}

/// The cull workgroups (64 instances each, counted from the draw's first instance) that
/// instances `start..start + count` of a draw meet: the first and how many.
pub(crate) fn groups(start: u32, count: u32) -> (u32, u32) {
    let first = start / 64;
    (first, (start + count).div_ceil(64) - first)
}

/// Words of survivor bits a pair over `groups` cull workgroups takes: two per workgroup,
/// then a summary bit per workgroup (set when it has a survivor), then per summary word the
/// survivors of its workgroups (counted only for a walked pair: [`job::WALK_TOTALS`]).
pub(crate) fn bit_words(groups: u32) -> u32 {
    groups * 2 + 2 * summary_words(groups)
}

/// Summary words of a pair over `groups` cull workgroups (after its two words a workgroup;
/// as many survivor counts follow them): the CPU clears both while recording, the cull pass
/// sets the summaries' bits and adds to the counts.
pub(crate) fn summary_words(groups: u32) -> u32 {
    groups.div_ceil(32)
}

impl PlanLayout {
    /// The word of pair `p`'s first counter.
    pub fn counters_word(&self, p: u32) -> u32 {
        self.pairs * JOB_WORDS + p * COUNTER_WORDS
    }

    /// The word of pair `p`'s fallback command.
    pub fn fallback_word(&self, p: u32) -> u32 {
        self.pairs * (JOB_WORDS + COUNTER_WORDS) + p * COMMAND_WORDS
    }

    /// The word of command `c` (of all the frame's pairs).
    pub fn command_word(&self, c: u32) -> u32 {
        self.pairs * (JOB_WORDS + COUNTER_WORDS + COMMAND_WORDS) + c * COMMAND_WORDS
    }

    /// The word of survivor bits word `w` (of all the frame's pairs).
    pub fn bits_word(&self, w: u32) -> u32 {
        self.command_word(self.commands) + w
    }

    /// The word of the frame's view-projection in f64 (16 doubles, 8-byte aligned), which
    /// the cull pass of a shared list's draws composes each draw's matrix with.
    pub fn view_projection_word(&self) -> u32 {
        self.bits_word(self.bit_words).next_multiple_of(2)
    }

    /// Writes the frame's view-projection in f64 where the table's cull pass reads it (each
    /// double as its low word, then its high word) into `words`, a slot's plan buffer.
    pub fn write_view_projection(&self, words: &mut [u32], camera: &CameraSnapshot) {
        let at = self.view_projection_word() as usize;
        let doubles = camera.view_projection.to_cols_array().map(f64::to_bits);
        for (k, d) in doubles.into_iter().enumerate() {
            words[at + 2 * k] = d as u32;
            words[at + 2 * k + 1] = (d >> 32) as u32;
        }
    }

    /// The word of the first ignored-row bit word: right after the view-projection, where
    /// the table's cull pass finds it.
    pub fn ignored_word(&self) -> u32 {
        self.view_projection_word() + VIEW_PROJECTION_WORDS
    }

    /// The word that counts the compacted rows the frame's pairs took (the CPU zeroes it
    /// while recording): after the ignored-row bits.
    pub fn compacted_word(&self) -> u32 {
        self.ignored_word() + self.ignored_words
    }

    /// The word of the frame's totals over its pairs ([`total`]), which the finishing passes
    /// add to where they write a pair's counters and the host reads (the CPU zeroes them while
    /// recording): after the compacted rows' count.
    pub fn totals_word(&self) -> u32 {
        self.compacted_word() + 1
    }

    /// Bytes of one slot's buffer, rounded up to 16 bytes (as NVIDIA sizes buffers), so that
    /// the buffer is the size it asks for.
    pub fn bytes(&self) -> u64 {
        (4 * u64::from(self.totals_word() + TOTAL_WORDS)).next_multiple_of(16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_one_another_without_overlap() {
        let l = PlanLayout { pairs: 3, commands: 10, fallback_count: 1, bit_words: 8, ignored_words: 4 };
        assert_eq!(l.counters_word(0), 3 * JOB_WORDS);
        assert_eq!(l.fallback_word(0), l.counters_word(3));
        assert_eq!(l.command_word(0), l.fallback_word(3));
        assert_eq!(l.bits_word(0), l.command_word(10));
        // The view-projection's doubles follow the bits, 8-byte aligned: with 8 bit words they
        // would start at word 253, which is odd, so they start at 254.
        assert_eq!((l.bits_word(8), l.view_projection_word()), (253, 254));
        assert_eq!(PlanLayout { bit_words: 9, ..l }.view_projection_word(), 254);
        assert_eq!(l.ignored_word(), 254 + VIEW_PROJECTION_WORDS);
        assert_eq!(l.compacted_word(), 254 + VIEW_PROJECTION_WORDS + 4);
        assert_eq!(l.totals_word(), l.compacted_word() + 1);
        assert_eq!(l.bytes(), (4 * u64::from(254 + VIEW_PROJECTION_WORDS + 5 + TOTAL_WORDS)).next_multiple_of(16));
        let cull_draws = include_str!("../../../../shaders/pick_cull_draws.comp");
        assert!(cull_draws.contains(&format!("plan.words[pc.pairs.w + {VIEW_PROJECTION_WORDS}u + i / 32u]")));
        assert_eq!((groups(0, 1), groups(0, 64), groups(0, 65), groups(63, 2), groups(130, 10)), ((0, 1), (0, 1), (0, 2), (0, 2), (2, 1)));
        assert_eq!((bit_words(1), bit_words(2), bit_words(33)), (4, 6, 66 + 4));
        // The shader's constants and the job's last word.
        assert!(job::TEMPLATE + 4 <= job::BITS_WORD && job::ROW_WINDOW < JOB_WORDS as usize);
        let cull_draws = include_str!("../../../../shaders/pick_cull_draws.comp");
        assert!(cull_draws.contains(&format!("plan.words[job + {}u] + {}u * (mesh - 1u)", job::OCCLUDERS, super::super::occluders::DIRECTORY_WORDS)));
        assert!(include_str!("../../../../shaders/pick_occlusion.glsl")
            .contains(&format!("const uint DIRECTORY_WORDS = {}u;", super::super::occluders::DIRECTORY_WORDS)));
        // A row's last word is its primitive base (0 in the frame's rows, which the cull pass
        // writes, a span's first triangle in a span row); its near key lies among the keys.
        let last = ROW_BYTES / 4 - 1;
        assert!(cull_draws.contains(&format!("frame.rows[row + {last}u] = 0u;")));
        assert!(cull_draws.contains("frame.rows[KEYS_WORD + row / ROW_WORDS] = key;"));
        assert!(include_str!("../../../../shaders/pick_occlusion.glsl").contains("frame.rows[KEYS_WORD + row + row_delta]"));
        let rows = RowsLayout::new(10, 3);
        assert_eq!(rows.compacted_row(), 13);
        assert_eq!((rows.keys_word(), rows.bytes()), (23 * 20, 4 * (23 * 20 + 12)));
        assert_eq!(RowsLayout::new(1 << 22, 1 << 26).span_rows, MAX_SPAN_ROWS);
        for shader in [include_str!("../../../../shaders/pick_cull.glsl"), include_str!("../../../../shaders/pick_cull_finish.glsl")] {
            assert!(shader.contains(&format!("const uint JOB_WORDS = {JOB_WORDS}u;")));
            assert!(shader.contains(&format!("plan.words[job + {}u]", job::BITS_WORD)));
            assert!(shader.contains(&format!("plan.words[job + {}u]", job::SUMMARY_WORD)));
            assert!(shader.contains(&format!("plan.words[job + {}u]", job::RANGE_COUNT)));
        }
        let finish = include_str!("../../../../shaders/pick_cull_finish.glsl");
        assert!(finish.contains(&format!("const uint SURVIVORS = {}u;", counter::SURVIVORS)));
        assert!(finish.contains(&format!("const uint TABLE_FALLBACK = {}u;", counter::TABLE_FALLBACK)));
        assert!(finish.contains(&format!("const uint DRAWN = {}u;", counter::DRAWN)));
        for (name, word) in [("SURVIVORS", total::SURVIVORS), ("DRAWN", total::DRAWN), ("OCCLUDED", total::OCCLUDED), ("COMPACTED", total::COMPACTED)] {
            assert!(finish.contains(&format!("const uint TOTAL_{name} = {word}u;")));
        }
        assert!(finish.contains(&format!("const uint TOTAL_FALLBACKS = {}u;", total::FALLBACKS)) && total::FALLBACKS + 1 == TOTAL_WORDS);
        assert!(finish.contains("atomicAdd(plan.words[pc.pool.w + total], value)"));
        assert!(finish.contains(&format!("plan.words[job + {}u]", job::COUNTERS)));
        let draws = include_str!("../../../../shaders/pick_cull_finish_draws.comp");
        assert!(draws.contains(&format!("const uint OCCLUDED = {}u;", counter::OCCLUDED)));
        let compact = include_str!("../../../../shaders/pick_compact.glsl");
        assert!(compact.contains(&format!("const uint COMPACTED = {}u;", counter::COMPACTED)));
        let table = include_str!("../../../../shaders/pick_table.glsl");
        assert!(table.contains(&format!("table.words[TABLE_ROW_WORDS * row + {}u]", crate::gpu_plan::table_words::TABLE_ROW_WORDS - 1)));
        assert!(finish.contains(&format!("plan.words[job + {}u]", job::INSTANCE_BASE)));
        let occlusion = include_str!("../../../../shaders/pick_occlusion.glsl");
        assert!(occlusion.contains(&format!("row_delta = plan.words[job + {}u] - plan.words[job + {}u];", job::ROW_WINDOW, job::INSTANCE_BASE)));
        assert!(include_str!("../../../../shaders/pick_table.glsl").contains(&format!("plan.words[job + {}u]", job::DRAW_INSTANCES)));
        let chunks = include_str!("../../../../shaders/pick_chunks.glsl");
        assert!(chunks.contains(&format!("const uint CHUNKED = {CHUNKED}u;")));
        assert!(chunks.contains(&format!("const uint HOOKED = {HOOKED}u;")));
        let occluder_chunks = include_str!("../../../../shaders/pick_occluder_chunks.glsl");
        assert!(occluder_chunks.contains(&format!("const uint CHUNK_WORDS = {}u;", super::super::chunk_boxes::CHUNK_WORDS)));
        assert!(occluder_chunks.contains(&format!("const uint CHUNK_TRIANGLES = {}u;", crate::draw::chunking::CHUNK_TRIANGLES)));
        assert!(occluder_chunks.contains(&format!("plan.words[job + {}u] + chunked - 1u", job::OCCLUDERS)));
        assert!(occluder_chunks.contains(&format!("table.words[run + {}u]", crate::gpu_plan::table_words::RUN_WORDS - 1)));
        assert!(occlusion.contains(&format!("const uint MAX_WHOLE_OCCLUDER = {}u;", super::super::occluders::MAX_OCCLUDER_TRIANGLES)));
        let bit_words = super::super::occluders::MAX_CHUNKED_OCCLUDER_TRIANGLES / crate::draw::chunking::CHUNK_TRIANGLES / 32;
        assert!(occluder_chunks.contains(&format!("const uint CHUNK_BIT_WORDS = {bit_words}u;")));
        assert!(chunks.contains(&format!("plan.words[job + {}u] & CHUNKED", job::OCCLUSION)));
        assert!(chunks.contains(&format!("plan.words[job + {}u] + chunked - 1u", job::OCCLUDERS)));
        assert!(chunks.contains(&format!("table.words[run_word(job, row) + {}u]", crate::gpu_plan::table_words::RUN_WORDS - 1)));
        // Walked pairs: the cull pass counts, the finishing pass skips, the vertex shader walks.
        let walk = include_str!("../../../../shaders/pick_walk.glsl");
        assert!(walk.contains(&format!("const uint WALK_JOB_WORDS = {JOB_WORDS}u;")));
        for word in [job::FIRST_INSTANCE, job::INSTANCES, job::BITS_WORD, job::SUMMARY_WORD] {
            assert!(walk.contains(&format!("plan.words[job + {word}u]")), "job word {word}");
        }
        let cull = include_str!("../../../../shaders/pick_cull.glsl");
        assert!(cull.contains(&format!("plan.words[job + {}u]", job::WALK_TOTALS)) && cull.contains(&format!("plan.words[job + {}u]", job::COMMANDS_WORD)));
        assert!(
            cull.contains(&format!("const uint TOTAL_SURVIVORS = {}u;", total::SURVIVORS))
                && cull.contains(&format!("const uint TOTAL_DRAWN = {}u;", total::DRAWN))
        );
        assert!(include_str!("../../../../shaders/pick_cull_finish.comp").contains(&format!("plan.words[job + {}u] != 0u", job::WALK_TOTALS)));
        for word in [job::OCCLUSION, job::DEPTH_ROUNDING, job::BOUND, job::REGION, job::VIEWPORT] {
            assert!(occlusion.contains(&format!("plan.words[job + {word}u]")), "job word {word}");
        }
    }
}
