//! Node transforms as the file writes them, in f64. The glTF crate reads `matrix`,
//! `translation`, `rotation` and `scale` as f32, which at 5e6 units moves a node by up to a
//! quarter of a unit before the loader's f64 composition ever sees it (a box 0.2 wide went
//! missing from under the camera). JSON numbers are decimal: read as f64 they keep what a
//! georeferenced file means to 1e-9 at 1e6.

use crate::animation::NodeTransform;
use glam::{DMat4, DQuat, DVec3};
use serde::Deserialize;

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
    /// what it leaves out), as the glTF crate chooses between them.
    fn transform(&self) -> NodeTransform {
        match self.matrix {
            Some(m) => NodeTransform::Matrix(DMat4::from_cols_array(&m)),
            None => NodeTransform::Trs {
                translation: self.translation.map_or(DVec3::ZERO, DVec3::from),
                rotation: self.rotation.map_or(DQuat::IDENTITY, DQuat::from_array),
                scale: self.scale.map_or(DVec3::ONE, DVec3::from),
            },
        }
    }
}

/// Every node's transform, in the document's node order, from the file's JSON (already
/// checked to be a glTF document by the glTF reader's own pass over the same bytes).
pub fn node_transforms(json: &[u8]) -> Result<Vec<NodeTransform>, serde_json::Error> {
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
        let transforms = node_transforms(json).unwrap();
        let NodeTransform::Trs { translation, .. } = transforms[0] else { panic!("TRS expected") };
        assert_eq!(translation, DVec3::new(5000000.26, -1234567.3, 0.5));
        assert_ne!(f64::from(5000000.26f64 as f32), 5000000.26, "the test must need f64");
        assert_eq!(transforms[1].matrix().w_axis.x, 765432.1);
        assert_eq!(transforms[2], NodeTransform::Trs { translation: DVec3::ZERO, rotation: DQuat::IDENTITY, scale: DVec3::ONE });
    }
}
