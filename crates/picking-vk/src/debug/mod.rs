//! Debugging and benchmark tools, never needed to pick: [`IdImage`] renders the same pass at
//! full size (false-colour ID views, parity checks, the benchmark's comparison approaches),
//! and [`Texels`] are the raw values read back for a pixel.

mod id_image;

pub use crate::handoff::Texels;
pub use id_image::{IdCopy, IdImage};
