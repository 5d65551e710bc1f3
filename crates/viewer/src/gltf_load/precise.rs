//! Node transforms as the file writes them, in f64. The glTF crate reads `matrix`,
//! `translation`, `rotation` and `scale` as f32, which at 5e6 units moves a node by up to a
//! quarter of a unit before the loader's f64 composition ever sees it (a box 0.2 wide went
//! missing from under the camera). JSON numbers are decimal: read as f64 they keep what a
//! georeferenced file means to 1e-9 at 1e6.

use crate::scene::NodeTransform;
use glam::{DMat4, DQuat, DVec3};
use serde::Deserialize;

/// How far a node matrix's last row may lie from (0, 0, 0, 1), each element.
pub(super) const AFFINE_NOISE: f64 = 1e-5;

#[derive(Deserialize)]
struct Nodes {
    #[serde(default)]
    nodes: Vec<PreciseNode>,
}

/// The transform fields of one node; everything else in the file is skipped unread.
#[derive(Deserialize)]
struct PreciseNode {
    matrix: Option<[f64; 16]>,
    translation: Option<[f64; 3]>,
    rotation: Option<[f64; 4]>,
    scale: Option<[f64; 3]>,
}

impl PreciseNode {
    /// The node's transform: its matrix when it has one, else its TRS (glTF's defaults for
    /// what it leaves out). glTF allows one or the other, and only matrices that decompose
    /// into TRS: an affine one (an identity matrix beside a TRS is let through, as harmless).
    fn transform(&self) -> Result<NodeTransform, String> {
        let trs = NodeTransform::Trs {
            translation: self.translation.map_or(DVec3::ZERO, DVec3::from),
            rotation: self.rotation.map_or(DQuat::IDENTITY, DQuat::from_array),
            scale: self.scale.map_or(DVec3::ONE, DVec3::from),
        };
        let Some(m) = self.matrix.map(|m| DMat4::from_cols_array(&m)) else { return Ok(trs) };
        let has_trs = self.translation.is_some() || self.rotation.is_some() || self.scale.is_some();
        if has_trs && m.abs_diff_eq(DMat4::IDENTITY, AFFINE_NOISE) {
            return Ok(trs);
        }
        if has_trs {
            return Err("it has both a matrix and translation, rotation or scale; glTF allows one or the other".into());
        }
        // Exporters' matrices carry float noise there (an inverse's 0.99999988): a last row
        // within AFFINE_NOISE of (0, 0, 0, 1) is taken as exactly that.
        if !m.row(3).abs_diff_eq(glam::DVec4::W, AFFINE_NOISE) {
            return Err(format!("its matrix's last row is {:?}, not (0, 0, 0, 1): glTF node matrices are affine", m.row(3).to_array()));
        }
        let mut m = m;
        m.x_axis.w = 0.0;
        m.y_axis.w = 0.0;
        m.z_axis.w = 0.0;
        m.w_axis.w = 1.0;
        Ok(NodeTransform::Matrix(m))
    }
}

/// Bytes one node's precise transform takes while the file loads (`node_transforms`' parse
/// and result), for the budget checked before it is parsed.
pub const BYTES_PER_NODE_TRANSFORM: usize = std::mem::size_of::<PreciseNode>() + std::mem::size_of::<Result<NodeTransform, String>>();

/// Every node's transform (or why it is not one glTF allows), in the document's node order,
/// from the file's JSON (already checked to be a glTF document by the glTF reader's own pass
/// over the same bytes).
pub fn node_transforms(json: &[u8]) -> Result<Vec<Result<NodeTransform, String>>, serde_json::Error> {
    let nodes: Nodes = serde_json::from_slice(json)?;
    Ok(nodes.nodes.iter().map(PreciseNode::transform).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translations_keep_the_digits_an_f32_drops() {
        let json = br#"{"asset":{"version":"2.0"},"nodes":[{"translation":[5000000.26,-1234567.3,0.5],"name":"far"},
            {"matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 765432.1,0,0,1]},{}]}"#;
        let transforms: Vec<NodeTransform> = node_transforms(json).unwrap().into_iter().map(Result::unwrap).collect();
        let NodeTransform::Trs { translation, .. } = transforms[0] else { panic!("TRS expected") };
        assert_eq!(translation, DVec3::new(5000000.26, -1234567.3, 0.5));
        assert_ne!(f64::from(5000000.26f64 as f32), 5000000.26, "the test must need f64");
        assert_eq!(transforms[1].matrix().w_axis.x, 765432.1);
        assert_eq!(transforms[2], NodeTransform::Trs { translation: DVec3::ZERO, rotation: DQuat::IDENTITY, scale: DVec3::ONE });
    }

    #[test]
    fn matrices_beside_trs_or_not_affine_are_refused() {
        let json = br#"{"nodes":[{"matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1],"translation":[1,2,3]},
            {"matrix":[2,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1],"scale":[1,1,2]},
            {"matrix":[1,0,0,0.5, 0,1,0,0, 0,0,1,0, 0,0,0,1]},{"matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,0]},
            {"matrix":[1,0,0,0, 0,1,0,-1e-8, 0,0,1,0, 3,0,0,0.99999988]}]}"#;
        let transforms = node_transforms(json).unwrap();
        assert!(matches!(transforms[0], Ok(NodeTransform::Trs { translation, .. }) if translation == DVec3::new(1.0, 2.0, 3.0)));
        assert!(transforms[1].as_ref().unwrap_err().contains("both a matrix and"));
        for t in &transforms[2..4] {
            assert!(t.as_ref().unwrap_err().contains("affine"), "{t:?}");
        }
        // Float noise in the last row is taken as the affine row it approximates.
        let snapped = transforms[4].as_ref().unwrap().matrix();
        assert_eq!(snapped.row(3), glam::DVec4::W);
        assert_eq!(snapped.w_axis.x, 3.0);
    }
}
