//! The push constant words of the pick shaders beyond `PickPush`: deformed draws' and
//! storage-buffer instances'.

use crate::draw::PickDraw;
use crate::pass::pipeline_key::{PickPush, DEFORM_PUSH_SIZE, RECT_PUSH_SIZE};

/// The push constants of a deformed draw: `push`, the rectangle words, the deformation's.
pub(crate) fn deform_push(draw: &PickDraw, push: &PickPush, rect_words: [u32; 8]) -> [u8; DEFORM_PUSH_SIZE as usize] {
    let mut bytes = [0u8; DEFORM_PUSH_SIZE as usize];
    bytes[..PickPush::SIZE as usize].copy_from_slice(&push.to_bytes());
    words_to_bytes(rect_words, &mut bytes[PickPush::SIZE as usize..]);
    if let Some(d) = &draw.deformation {
        words_to_bytes(d.push_words(draw.positions.vertex_count), &mut bytes[RECT_PUSH_SIZE as usize..]);
    }
    bytes
}

/// The words `shaders/pick_instanced_storage.vert` reads after the rectangle words: the first
/// element's word, the stride in words, whether elements are 3x4 rows.
pub(crate) fn storage_words(draw: &PickDraw) -> [u32; 4] {
    let Some(i) = draw.instances else { return [0; 4] };
    let rows = u32::from(draw.instance_format == crate::draw::InstanceFormat::Rows3x4);
    [(i.range.offset / 4) as u32, i.stride / 4, rows, 0]
}

/// `words` in native byte order into `out` (as many as fit).
pub(crate) fn words_to_bytes(words: impl IntoIterator<Item = u32>, out: &mut [u8]) {
    for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
}
