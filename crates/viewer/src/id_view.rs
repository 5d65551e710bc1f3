//! The debug view: the ID buffer of the whole view in false colour, to see what the picker
//! sees. Each (object, instance) gets a stable colour; nothing is black.

use picking_vk::debug::Texels;

/// A stable, well-spread colour for an ID texel (black for "nothing").
pub fn false_colour(t: &Texels) -> [u8; 4] {
    if t.id == [0, 0] {
        return [0, 0, 0, 255];
    }
    // splitmix64 of (id, instance): neighbours get unrelated colours.
    let mut z = (u64::from(t.id[1]) << 32 | u64::from(t.id[0])) ^ (u64::from(t.draw_instance[1]) << 17).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let c = |shift: u32| 64 + ((z >> shift) & 0xBF) as u8;
    [c(0), c(8), c(16), 255]
}

/// The whole image, row by row.
pub fn image(texels: &[Texels], width: u32, height: u32) -> Option<image::RgbaImage> {
    let bytes: Vec<u8> = texels.iter().flat_map(false_colour).collect();
    image::RgbaImage::from_raw(width, height, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_is_black_and_ids_are_told_apart() {
        let t = |id: u32, inst: u32| Texels { id: [id, 0], draw_instance: [0, inst], depth: 0.5, detail: None };
        assert_eq!(false_colour(&Texels::default()), [0, 0, 0, 255]);
        assert_ne!(false_colour(&t(1, 0)), false_colour(&t(2, 0)));
        assert_ne!(false_colour(&t(1, 0)), false_colour(&t(1, 1)));
        assert!(false_colour(&t(7, 3))[..3].iter().all(|&c| c >= 64), "never black");
    }
}
