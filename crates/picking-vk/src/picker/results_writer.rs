//! What recording writes into a slot's GPU results upload (`gpu_results::Upload`), which the
//! frame's commands carry over into the results buffer: the header, for rectangles their (empty) hits, a span
//! per recorded draw (object, query, its instances and table entries) and the lookup over the
//! spans by (query, object); and the results pass's input: a job per query (where its texels
//! lie in the attachments, its pixel or disc, its rule) and the rows of the draws the point
//! and radius queries recorded (draw index, instancing, priority).

use super::frame_layout::{FrameLayout, QueryLayout};
use crate::gpu_plan::table::DrawTable;
use crate::gpu_results::layout::{lookup_buckets, lookup_hash, ResultsLayout, HEADER_WORDS, HIT_WORDS, JOB_WORDS, ROW_WORDS, SPAN_WORDS};
use crate::gpu_results::{Scratch, Upload};
use crate::handoff::{DrawSnapshot, EntrySpan, TABLE_SNAPSHOT_BASE};
use crate::plan::PlanEntry;
use crate::readback::{RegionBlock, HEADER_BYTES};
use crate::request::camera::{CameraSnapshot, DepthConvention};
use crate::request::query::Snap;

/// A non-instanced object's instance in the GPU results (`PICK_NO_INSTANCE`).
const NO_INSTANCE: u32 = u32::MAX;

/// The job of a query: (kind, snap), where its region lies in the hit pass's attachments,
/// the region in the view (first pixel, size), the cursor, the radius, how depth compares, the
/// clear depth, and where its texels go in the staging slot (block start in words after the
/// slot's header, block pixels, the region's first pixel in the block). A point's region is
/// its one pixel at its texel of row 0 (pixel `texel` of the points' block); a rectangle's job
/// is kind 0 (no hit).
fn job(query: &QueryLayout, points: &RegionBlock, camera: &CameraSnapshot) -> [u32; JOB_WORDS as usize] {
    let reverse = u32::from(camera.depth == DepthConvention::Reverse);
    let clear = camera.clear_depth().to_bits();
    // The pass binds the slot's texels, which start after its header.
    let at = |b: &RegionBlock| [((b.offset - HEADER_BYTES) / 4) as u32, b.pixels as u32];
    match query {
        QueryLayout::Point { pixel, texel, .. } => {
            let [block, pixels] = at(points);
            [1, 0, *texel, 0, pixel.x, pixel.y, 1, 1, pixel.x, pixel.y, 0, reverse, clear, block, pixels, *texel]
        }
        QueryLayout::Radius { pixel, radius, snap, region, cell, block, .. } => {
            let size = region.size();
            let thin = u32::from(*snap == Snap::Thin);
            let [block, pixels] = at(block);
            [2, thin, cell.x, cell.y, region.min.x, region.min.y, size.x, size.y, pixel.x, pixel.y, *radius, reverse, clear, block, pixels, 0]
        }
        QueryLayout::Rect { .. } => [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, reverse, clear, 0, 0, 0],
    }
}

/// The frame whose results are written.
pub(super) struct ResultsFrame<'a> {
    pub frame: u64,
    pub layout: &'a FrameLayout,
    /// Every draw the frame recorded; the first are the point and radius queries'.
    pub draws: &'a [DrawSnapshot],
    /// Rows to write: the point and radius queries' draws, at most the configured capacity.
    pub rows: usize,
    pub spans: &'a [EntrySpan],
    pub camera: &'a CameraSnapshot,
    /// The shared list's table the frame planned with: its groups' rows and snapshots.
    pub table: Option<&'a DrawTable>,
}

/// The table group entries of the frame's point and radius plans: after the draw rows, the
/// results pass finds a table row's draw in one of them (a group may appear more than once).
pub(super) fn group_entries(layout: &FrameLayout) -> impl Iterator<Item = &PlanEntry> {
    layout.queries.iter().flat_map(move |query| {
        let plan = match query {
            QueryLayout::Point { plan: Some(plan), .. } | QueryLayout::Radius { plan, .. } => plan.clone(),
            _ => 0..0,
        };
        layout.plans.entries[plan].iter().filter(|e| e.table)
    })
}

/// Writes what the CPU knows of the frame's results into `up` (laid out by `results`),
/// building the spans and the lookup in `scratch`.
pub(super) fn write_results(up: &mut Upload<'_>, frame: &ResultsFrame<'_>, scratch: &mut Scratch, results: &ResultsLayout) {
    let layout = frame.layout;
    let word = |w: u64| HEADER_WORDS + w;
    let clear = frame.camera.clear_depth().to_bits();
    for (q, query) in layout.queries.iter().enumerate() {
        up.put(word(results.jobs_word() + JOB_WORDS * q as u64), &job(query, &layout.points_block, frame.camera));
        if let QueryLayout::Rect { .. } = query {
            // A rectangle has no hit; the pass writes the others'.
            up.put(word(HIT_WORDS * q as u64), &[0, 0, NO_INSTANCE, u32::MAX, 0, 0, clear, 0]);
        }
    }
    let rows = frame.rows.min(frame.draws.len());
    for (r, d) in frame.draws[..rows].iter().enumerate() {
        up.put(word(results.rows_word() + ROW_WORDS * r as u64), &[d.draw_index, row_flags(d)]);
    }
    // Then per table group a point or radius query met: its rows, its first draw's index and
    // flags (a group's draws are consecutive in the list and share their priority).
    let mut at = results.rows_word() + ROW_WORDS * rows as u64;
    for (entry, table) in frame.table.into_iter().flat_map(|t| group_entries(frame.layout).map(move |e| (e, t))) {
        let group = table.index.group_of(entry.draw).map(|g| table.index.groups[g]);
        // (A group not found holds no rows: the pass skips it.)
        let words = group.and_then(|g| Some([g.first_row, g.rows, g.draw, row_flags(table.snapshots.get(g.first_row as usize)?)]));
        up.put(word(at), &words.unwrap_or_default());
        at += 2 * ROW_WORDS;
    }
    let mask = write_spans(up, frame, scratch, results);
    let [lo, hi] = [frame.frame as u32, (frame.frame >> 32) as u32];
    let queries = layout.queries.len() as u32;
    let entries = layout.table_used as u32;
    up.put(0, &[lo, hi, queries, results.hit_capacity, mask, entries, results.entry_capacity, results.counts_word() as u32]);
}

/// A draw row's flags: bit 0 instanced, bits 16-31 the priority + 32768.
fn row_flags(d: &DrawSnapshot) -> u32 {
    u32::from(d.instanced) | ((i32::from(d.priority) + 32768) as u32) << 16
}

/// Writes the spans of the frame's rectangles and the lookup over them; returns the lookup
/// mask (0 without rectangles). A table group's span becomes a span per row (its own draw).
fn write_spans(up: &mut Upload<'_>, frame: &ResultsFrame<'_>, scratch: &mut Scratch, results: &ResultsLayout) -> u32 {
    let rect_spans = || {
        frame.layout.queries.iter().enumerate().filter_map(|(q, query)| match query {
            QueryLayout::Rect { spans, .. } => Some((q as u32, &frame.spans[spans.clone()])),
            _ => None,
        })
    };
    if rect_spans().next().is_none() {
        return 0;
    }
    // At most this many spans (a span whose draw is missing is skipped).
    let most: usize = rect_spans().flat_map(|(_, spans)| spans).map(|s| if s.snapshot >= TABLE_SNAPSHOT_BASE { s.count as usize } else { 1 }).sum();
    let mask = lookup_buckets(most as u32, results.lookup_buckets) - 1;
    let Scratch { spans: words, buckets, starts } = scratch;
    words.clear();
    buckets.clear();
    // Counts at b + 2: see `place_spans`.
    starts.clear();
    starts.resize(mask as usize + 3, 0);
    let snapshots = crate::handoff::Snapshots { recorded: frame.draws, table: frame.table.map_or(&[][..], |t| &t.snapshots[..]) };
    for (q, spans) in rect_spans() {
        for span in spans {
            // A table group's rows are a span of one entry each; any other draw's instances one.
            let rows = span.snapshot >= TABLE_SNAPSHOT_BASE;
            for k in 0..if rows { span.count } else { 1 } {
                let Some((d, _)) = span.entry(snapshots, k) else { continue };
                let id = d.id.to_words();
                let first = if d.instanced { span.first_instance } else { NO_INSTANCE };
                let (count, first_entry) = if rows { (1, span.first_entry + k) } else { (span.count, span.first_entry) };
                let span: [u32; SPAN_WORDS as usize] = [id[0], id[1], q, first, count, first_entry];
                words.extend_from_slice(&span);
                let bucket = lookup_hash(q, id) & mask;
                buckets.push(bucket);
                starts[bucket as usize + 2] += 1;
            }
        }
    }
    let placed = place_spans(words, buckets, starts);
    up.put(HEADER_WORDS + results.spans_word(), placed);
    up.put(HEADER_WORDS + results.starts_word(), &starts[..mask as usize + 2]);
    mask
}

/// Orders the spans `words` by their buckets (`buckets`, a word per span: the key's
/// `pick_lookup_hash(query, id) & mask`), given in `starts[b + 2]` how many spans bucket `b`
/// has: returns them ordered, and leaves `starts[b]..starts[b + 1]` the spans of bucket `b`. A
/// counting sort: no probing, so no branch on what the hash gives, and every span of one key
/// (an instanced draw's ranges) lands in one bucket.
fn place_spans<'w>(words: &'w mut Vec<u32>, buckets: &[u32], starts: &mut [u32]) -> &'w [u32] {
    const W: usize = SPAN_WORDS as usize;
    // Summed, `starts[b + 1]` is where bucket b starts: the cursor while placing, which ends
    // where the bucket ends, the start of the next.
    for b in 2..starts.len() {
        starts[b] += starts[b - 1];
    }
    let n = buckets.len();
    words.resize(2 * n * W, 0);
    let (from, to) = words.split_at_mut(n * W);
    for (span, &b) in from.chunks_exact(W).zip(buckets) {
        let at = starts[b as usize + 1] as usize;
        starts[b as usize + 1] += 1;
        to[at * W..][..W].copy_from_slice(span);
    }
    &words[n * W..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_span_lies_in_its_keys_bucket_once() {
        let mut rng_state = 7u32;
        let mut next = move || {
            rng_state ^= rng_state << 13;
            rng_state ^= rng_state >> 17;
            rng_state ^= rng_state << 5;
            rng_state
        };
        let (mut buckets, mut starts) = (vec![], vec![]);
        for round in 0..50 {
            let spans = next() % 300;
            let mask = lookup_buckets(spans, u32::MAX) - 1;
            let mut words = vec![];
            let mut key = (0u32, [1u32, 0u32]);
            for n in 0..spans {
                // Runs of one key (a draw's ranges), keys that come back later, and few keys.
                if next() % 4 == 0 {
                    key = (next() % 3, [next() % (2 + round), next() % 2]);
                }
                words.extend_from_slice(&[key.1[0], key.1[1], key.0, 0, 1, n]);
            }
            let original = words.clone();
            buckets.clear();
            starts.clear();
            starts.resize(mask as usize + 3, 0);
            for span in original.chunks_exact(6) {
                let b = lookup_hash(span[2], [span[0], span[1]]) & mask;
                buckets.push(b);
                starts[b as usize + 2] += 1;
            }
            let sorted = place_spans(&mut words, &buckets, &mut starts).to_vec();
            assert_eq!(starts[0], 0);
            assert_eq!(starts[mask as usize + 1], spans, "round {round}: the last bucket ends at the last span");
            let mut seen = vec![false; spans as usize];
            for b in 0..=mask as usize {
                assert!(starts[b] <= starts[b + 1]);
                for s in starts[b]..starts[b + 1] {
                    let span = &sorted[6 * s as usize..][..6];
                    assert_eq!(lookup_hash(span[2], [span[0], span[1]]) & mask, b as u32, "round {round}");
                    assert_eq!(span[..5], original[6 * span[5] as usize..][..5], "a span moves whole");
                    assert!(!std::mem::replace(&mut seen[span[5] as usize], true), "round {round}: span {} twice", span[5]);
                }
            }
            assert!(seen.iter().all(|&s| s), "round {round}: every span placed");
        }
    }
}
