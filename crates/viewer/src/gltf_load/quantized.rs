//! Vertex data as glTF's KHR_mesh_quantization stores it: positions, texture coordinates and
//! morph target offsets as 8- or 16-bit integers, normalized or not, and normals as normalized
//! integers (what `gltfpack` writes). Read here into the f32s every later step uses; the node
//! transforms that undo the quantization are the file's own. Which types each attribute may
//! have is checked in [`super::validate`] first.

use gltf::accessor::{DataType, Item, Iter};

/// The extension's name, as `extensionsUsed` and `extensionsRequired` give it.
pub const EXTENSION: &str = "KHR_mesh_quantization";

/// An accessor's `N`-component elements as f32: floats as stored, integers as their values or,
/// when normalized, as glTF 2.0 maps them (3.11: signed ones clamped at -1). `None` for 32-bit
/// integers, which no vertex attribute may be, or data that cannot be read.
pub fn read_floats<'a, 's, const N: usize>(accessor: gltf::Accessor<'a>, data: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>) -> Option<Vec<[f32; N]>>
where
    [f32; N]: Item,
    [i8; N]: Item,
    [u8; N]: Item,
    [i16; N]: Item,
    [u16; N]: Item,
{
    fn convert<T: Copy, const N: usize>(items: impl Iterator<Item = [T; N]>, f: impl Fn(T) -> f32) -> Vec<[f32; N]> {
        items.map(|v| v.map(&f)).collect()
    }
    let normalized = accessor.normalized();
    let signed = |v: f32, max: f32| if normalized { (v / max).max(-1.0) } else { v };
    let unsigned = |v: f32, max: f32| if normalized { v / max } else { v };
    Some(match accessor.data_type() {
        DataType::F32 => Iter::<[f32; N]>::new(accessor, data)?.collect(),
        DataType::I8 => convert(Iter::<[i8; N]>::new(accessor, data)?, |c| signed(f32::from(c), 127.0)),
        DataType::U8 => convert(Iter::<[u8; N]>::new(accessor, data)?, |c| unsigned(f32::from(c), 255.0)),
        DataType::I16 => convert(Iter::<[i16; N]>::new(accessor, data)?, |c| signed(f32::from(c), 32767.0)),
        DataType::U16 => convert(Iter::<[u16; N]>::new(accessor, data)?, |c| unsigned(f32::from(c), 65535.0)),
        DataType::U32 => return None,
    })
}
