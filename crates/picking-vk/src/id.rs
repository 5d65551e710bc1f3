//! 64-bit object IDs and their two-word encoding in the R32G32_UINT attachment.

use crate::error::PickError;
use std::num::NonZeroU64;

/// A host-chosen 64-bit object identity. Zero is reserved for "nothing picked", so an
/// `ObjectId` is never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(NonZeroU64);

impl ObjectId {
    /// Wraps a raw ID; 0 is refused with [`PickError::ZeroId`].
    pub fn new(raw: u64) -> Result<Self, PickError> {
        NonZeroU64::new(raw).map(ObjectId).ok_or(PickError::ZeroId)
    }

    /// The raw 64-bit value.
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// The (low, high) 32-bit words written by the fragment shader.
    pub fn to_words(self) -> [u32; 2] {
        encode_words(self.get())
    }

    /// Decodes the words of an ID texel; `None` for the cleared value 0.
    pub fn from_words(words: [u32; 2]) -> Option<Self> {
        NonZeroU64::new(decode_words(words)).map(ObjectId)
    }
}

impl TryFrom<u64> for ObjectId {
    type Error = PickError;
    fn try_from(raw: u64) -> Result<Self, PickError> {
        ObjectId::new(raw)
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

fn encode_words(raw: u64) -> [u32; 2] {
    [raw as u32, (raw >> 32) as u32]
}

fn decode_words([low, high]: [u32; 2]) -> u64 {
    (u64::from(high) << 32) | u64::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_high_bits() {
        for raw in [1, 0xFFFF_FFFF, 0x1_0000_0000, 0x8000_0000_0000_0001, u64::MAX, u64::MAX - 1, 0xDEAD_BEEF_CAFE_F00D] {
            let id = ObjectId::new(raw).unwrap();
            let words = id.to_words();
            assert_eq!(ObjectId::from_words(words), Some(id), "raw {raw:#x}");
        }
        assert_eq!(ObjectId::new(0x1234_5678_9ABC_DEF0).unwrap().to_words(), [0x9ABC_DEF0, 0x1234_5678]);
    }

    #[test]
    fn zero_is_refused_and_decodes_to_nothing() {
        assert!(matches!(ObjectId::new(0), Err(PickError::ZeroId)));
        assert_eq!(ObjectId::from_words([0, 0]), None);
    }
}
