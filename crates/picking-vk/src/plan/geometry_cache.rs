//! What planning derives from a draw's registered geometry (its chunk index),
//! built on first use and kept while the geometry lives and is used.

use crate::draw::{MeshGeometry, Triangles};
use foldhash::HashMap;
use std::sync::{Arc, Weak};

/// Which part of a shared geometry a draw reads: (geometry, first, count, vertex offset, indexed).
type GeometryKey = (usize, u32, u32, i32, bool);

struct Cached<T> {
    geometry: Weak<MeshGeometry>,
    value: Option<T>,
    last_used: u64,
}

/// One derived value per (geometry, draw range); `None` where it could not be built.
pub(crate) struct GeometryCache<T> {
    entries: HashMap<GeometryKey, Cached<T>>,
}

impl<T> Default for GeometryCache<T> {
    fn default() -> Self {
        GeometryCache { entries: HashMap::default() }
    }
}

impl<T> GeometryCache<T> {
    /// The value for `triangles` of `geometry`, built by `build` the first time (and again
    /// if a new geometry took the old one's address).
    pub fn get(&mut self, geometry: &Arc<MeshGeometry>, triangles: &Triangles, frame: u64, build: impl FnOnce() -> Option<T>) -> Option<&T> {
        let (indexed, first, vertex_offset) = match *triangles {
            Triangles::NonIndexed { first_vertex, .. } => (false, first_vertex, 0),
            Triangles::Indexed { first_index, vertex_offset, .. } => (true, first_index, vertex_offset),
        };
        let key = (Arc::as_ptr(geometry) as usize, first, triangles.element_count(), vertex_offset, indexed);
        // The key holds the address: an entry is stale only if its geometry died and a new
        // one took the address (a live one cannot share it).
        let stale = self.entries.get(&key).is_none_or(|c| c.geometry.strong_count() == 0);
        if stale {
            if self.entries.len() > 256 {
                self.entries.retain(|_, c| c.geometry.strong_count() > 0 && frame.saturating_sub(c.last_used) < 600);
            }
            self.entries.insert(key, Cached { geometry: Arc::downgrade(geometry), value: build(), last_used: frame });
        }
        let cached = self.entries.get_mut(&key)?;
        cached.last_used = frame;
        cached.value.as_ref()
    }
}
