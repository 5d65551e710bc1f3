//! Textures as a scene holds them on the CPU (decoded RGBA8 and their glTF sampler), and the
//! sampler each becomes. The lit pass and the pick hooks sample the same image through the
//! same sampler, so a masked surface has its holes in the same places in both.

use ash::vk;

/// How a texture coordinate outside 0..1 wraps (glTF `wrapS` / `wrapT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wrap {
    #[default]
    Repeat,
    ClampToEdge,
    MirroredRepeat,
}

impl Wrap {
    fn vk(self) -> vk::SamplerAddressMode {
        match self {
            Wrap::Repeat => vk::SamplerAddressMode::REPEAT,
            Wrap::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            Wrap::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
        }
    }
}

/// A glTF sampler: linear or nearest filtering (one level: no mipmaps), and wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerDesc {
    pub linear_mag: bool,
    pub linear_min: bool,
    pub wrap_s: Wrap,
    pub wrap_t: Wrap,
}

impl Default for SamplerDesc {
    /// glTF leaves filtering to the viewer when unset: linear; wrapping repeats.
    fn default() -> Self {
        SamplerDesc { linear_mag: true, linear_min: true, wrap_s: Wrap::Repeat, wrap_t: Wrap::Repeat }
    }
}

impl SamplerDesc {
    pub fn create_info(&self) -> vk::SamplerCreateInfo<'static> {
        let filter = |linear| if linear { vk::Filter::LINEAR } else { vk::Filter::NEAREST };
        vk::SamplerCreateInfo::default()
            .mag_filter(filter(self.linear_mag))
            .min_filter(filter(self.linear_min))
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(self.wrap_s.vk())
            .address_mode_v(self.wrap_t.vk())
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(0.0)
    }
}

/// A decoded texture: `width` x `height` RGBA8 texels (sRGB colour, linear alpha), rows top
/// to bottom (texture coordinate v = 0 at the top row, as glTF and Vulkan have it).
#[derive(Clone, Debug, PartialEq)]
pub struct TextureData {
    /// Shared by the textures of one image.
    pub rgba: std::sync::Arc<[u8]>,
    pub width: u32,
    pub height: u32,
    pub sampler: SamplerDesc,
}

impl TextureData {
    /// The texel a nearest-filtered lookup of `uv` reads, as its (x, y) and RGBA.
    pub fn nearest(&self, uv: glam::Vec2) -> ([u32; 2], [u8; 4]) {
        let wrap = |t: f32, size: u32, mode: Wrap| -> u32 {
            let s = size as f32;
            let x = match mode {
                Wrap::Repeat => (t - t.floor()) * s,
                Wrap::ClampToEdge => t.clamp(0.0, 1.0) * s,
                Wrap::MirroredRepeat => {
                    let period = t.rem_euclid(2.0);
                    (if period > 1.0 { 2.0 - period } else { period }) * s
                }
            };
            (x.floor().max(0.0) as u32).min(size - 1)
        };
        let x = wrap(uv.x, self.width, self.sampler.wrap_s);
        let y = wrap(uv.y, self.height, self.sampler.wrap_t);
        let at = ((y * self.width + x) * 4) as usize;
        let texel = self.rgba.get(at..at + 4).map_or([0; 4], |t| [t[0], t[1], t[2], t[3]]);
        ([x, y], texel)
    }
}

impl TextureData {
    /// The alpha a lookup of `uv` reads, filtered as the sampler's magnification filter says
    /// (bilinear between texel centres, or nearest), and how far `uv` lies from a place where
    /// the answer jumps (a texel edge, for nearest), in texels: for CPU oracles.
    pub fn alpha(&self, uv: glam::Vec2) -> (f32, f32) {
        let a = |x: u32, y: u32| f32::from(self.rgba.get(((y * self.width + x) * 4 + 3) as usize).copied().unwrap_or(0)) / 255.0;
        if !self.sampler.linear_mag {
            let s = uv * glam::Vec2::new(self.width as f32, self.height as f32);
            let edge = |v: f32| (v - v.round()).abs();
            let ([x, y], _) = self.nearest(uv);
            return (a(x, y), edge(s.x).min(edge(s.y)));
        }
        // Bilinear: the four texel centres around `uv` (repeat or clamp as the sampler wraps).
        let pos = uv * glam::Vec2::new(self.width as f32, self.height as f32) - 0.5;
        let (fx, fy) = (pos.x - pos.x.floor(), pos.y - pos.y.floor());
        let texel = |dx: f32, dy: f32| {
            let t = glam::Vec2::new((pos.x.floor() + dx + 0.5) / self.width as f32, (pos.y.floor() + dy + 0.5) / self.height as f32);
            let ([x, y], _) = self.nearest(t);
            a(x, y)
        };
        let top = texel(0.0, 0.0) * (1.0 - fx) + texel(1.0, 0.0) * fx;
        let bottom = texel(0.0, 1.0) * (1.0 - fx) + texel(1.0, 1.0) * fx;
        (top * (1.0 - fy) + bottom * fy, f32::INFINITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec2;

    #[test]
    fn nearest_lookup_wraps_as_the_sampler_says() {
        let rgba: Vec<u8> = (0..4u8).flat_map(|i| [i, 0, 0, 255]).collect();
        let mut t = TextureData { rgba: rgba.into(), width: 2, height: 2, sampler: SamplerDesc::default() };
        assert_eq!(t.nearest(Vec2::new(0.75, 0.25)).0, [1, 0]);
        assert_eq!(t.nearest(Vec2::new(1.25, -0.25)).0, [0, 1], "repeat");
        t.sampler.wrap_s = Wrap::ClampToEdge;
        assert_eq!(t.nearest(Vec2::new(1.25, 0.6)), ([1, 1], [3, 0, 0, 255]));
        t.sampler.wrap_s = Wrap::MirroredRepeat;
        assert_eq!(t.nearest(Vec2::new(1.25, 0.1)).0, [1, 0], "mirrored: 1.25 reads 0.75");
    }
}
