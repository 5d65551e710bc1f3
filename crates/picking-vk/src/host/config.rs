//! How a picker is set up, chosen once at creation.

use crate::error::Requirement;
use crate::host::features::{detail_requirements, PickFeatures, PickSupport};

/// Whether the picker should add the detail attachment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DetailMode {
    /// Basic picking only.
    #[default]
    Off,
    /// Add the detail attachment when the host enabled [`crate::PickFeatures::DETAIL`];
    /// [`crate::Picker::detail_status`] says why not otherwise.
    IfEnabled,
    /// Add the detail attachment, or fail creation with [`crate::PickError::Unsupported`].
    Required,
}

/// Whether detail picking runs, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DetailStatus {
    /// Results carry [`crate::HitDetail`].
    Active,
    /// The configuration asked for basic picking.
    NotRequested,
    /// Asked for, but the device or the host's device creation lacks these.
    Unavailable {
        /// Every unmet requirement.
        missing: Vec<Requirement>,
    },
}

impl DetailStatus {
    /// Whether detail picking runs, from the configuration and what the host enabled.
    pub(crate) fn resolve(mode: DetailMode, support: &PickSupport, enabled: PickFeatures) -> DetailStatus {
        if mode == DetailMode::Off {
            return DetailStatus::NotRequested;
        }
        let offered = support.missing(PickFeatures::DETAIL);
        if !offered.is_empty() {
            return DetailStatus::Unavailable { missing: offered };
        }
        if !enabled.contains(PickFeatures::DETAIL) {
            // Offered but not enabled: name what the host's device creation must add.
            return DetailStatus::Unavailable { missing: detail_requirements() };
        }
        DetailStatus::Active
    }
}

/// How the picker is set up. Build it from `Default` with the `with_*` setters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PickerConfig {
    /// Frames the host records ahead of the GPU: one readback slot each (default 2).
    pub frames_in_flight: usize,
    /// Whether to add the detail attachment (default off).
    pub detail: DetailMode,
    /// Skip draws and instances whose bounds the pick ray misses (on by default; results are
    /// identical either way, only the cost differs).
    pub culling: bool,
    /// Measure the pick pass with timestamp queries (`PickResult::stats.gpu_time_ns`).
    pub timestamps: bool,
    /// Rows of per-draw data each slot holds for batched recording, when the host enabled
    /// [`crate::PickFeatures::BATCHING`]: runs of non-instanced draws that share their buffers
    /// become one indirect draw. Draws past this many in a pick are recorded one by one; 0
    /// turns batching off. Results are identical either way. Each row takes 100 bytes per slot.
    pub batch_rows: u32,
}

impl Default for PickerConfig {
    fn default() -> Self {
        PickerConfig { frames_in_flight: 2, detail: DetailMode::Off, culling: true, timestamps: false, batch_rows: 32 }
    }
}

impl PickerConfig {
    /// Sets [`PickerConfig::frames_in_flight`].
    pub fn with_frames_in_flight(mut self, frames: usize) -> Self {
        self.frames_in_flight = frames;
        self
    }

    /// Sets [`PickerConfig::detail`].
    pub fn with_detail(mut self, detail: DetailMode) -> Self {
        self.detail = detail;
        self
    }

    /// Sets [`PickerConfig::culling`].
    pub fn with_culling(mut self, culling: bool) -> Self {
        self.culling = culling;
        self
    }

    /// Sets [`PickerConfig::timestamps`].
    pub fn with_timestamps(mut self, timestamps: bool) -> Self {
        self.timestamps = timestamps;
        self
    }

    /// Sets [`PickerConfig::batch_rows`].
    pub fn with_batch_rows(mut self, rows: u32) -> Self {
        self.batch_rows = rows;
        self
    }
}
