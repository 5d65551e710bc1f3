//! The crate's one error type, by kind: bad input ([`Input`]: which, and why), capacity
//! ([`Limit`]: which limit, its configured value, what was asked), device shortfalls
//! ([`Requirement`]), recoverable frame events, device failures and internal invariants.

use ash::vk;
use std::ffi::CStr;

/// Everything that can go wrong in `picking-vk`. The library never panics on bad input or a
/// Vulkan failure; it returns one of these and leaves its state as it was.
///
/// | kind | variants | what the host does |
/// |---|---|---|
/// | bad input | [`InvalidInput`](PickError::InvalidInput), [`InvalidDraw`](PickError::InvalidDraw), [`InvalidGeometry`](PickError::InvalidGeometry), [`ZeroId`](PickError::ZeroId), [`OutsideView`](PickError::OutsideView), [`InvalidSlot`](PickError::InvalidSlot), [`HookCompile`](PickError::HookCompile) | fix the input; nothing was recorded |
/// | capacity | [`Capacity`](PickError::Capacity) | ask for less, or configure more |
/// | device shortfall | [`Unsupported`](PickError::Unsupported) | enable the named features, or do without |
/// | frame events | [`SlotPending`](PickError::SlotPending), [`StaleResult`](PickError::StaleResult), [`TimedOut`](PickError::TimedOut) | take, wait again or cancel the slot; an aborted frame's pick is lost |
/// | device failure | [`Vulkan`](PickError::Vulkan), [`Alloc`](PickError::Alloc), [`AllocatorPoisoned`](PickError::AllocatorPoisoned), [`DeviceLost`](PickError::DeviceLost) | stop or recreate the picker |
/// | internal | [`Internal`](PickError::Internal) | a picking-vk bug: report it |
///
/// [`PickError::is_recoverable`] is true for every kind above the device failures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PickError {
    /// A Vulkan call failed (other than device loss).
    #[error("Vulkan call failed: {0}")]
    Vulkan(vk::Result),
    /// The device was lost; the picker and every pending result are unusable.
    #[error("the Vulkan device was lost")]
    DeviceLost,
    /// gpu-allocator could not provide memory.
    #[error("GPU memory allocation failed: {0}")]
    Alloc(#[from] gpu_allocator::AllocationError),
    /// The device, or what the host enabled on it, cannot run what was asked. Lists every
    /// unmet requirement.
    #[error("unsupported: {}", list(missing))]
    Unsupported {
        /// Every unmet requirement, each naming an extension, feature, limit or format.
        missing: Vec<Requirement>,
    },
    /// Object ID 0 is reserved for "nothing under the cursor".
    #[error("object ID 0 is reserved for 'nothing picked'")]
    ZeroId,
    /// A draw description is inconsistent (counts out of range, bad stride, non-finite matrix...).
    #[error("draw #{index}: {reason}")]
    InvalidDraw {
        /// Position of the draw in the list handed to the picker.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// An input other than a draw is unusable: which one, and why (non-finite or singular
    /// matrices, an empty viewport, a depth convention the projection contradicts, an empty
    /// rectangle, overlapping contributor IDs, a configuration value out of range...).
    #[error("invalid {input}: {reason}")]
    InvalidInput {
        /// Which input.
        input: Input,
        /// What is wrong with it.
        reason: String,
    },
    /// What was asked exceeds a limit the configuration (or the picker's design) sets.
    #[error("{limit}: {asked} asked for, {configured} allowed")]
    Capacity {
        /// Which limit.
        limit: Limit,
        /// The limit's value in this picker.
        configured: u64,
        /// What the call needed.
        asked: u64,
    },
    /// An internal invariant failed: a bug in picking-vk, never the host's input. Nothing was
    /// recorded.
    #[error("internal error in picking-vk (please report it): {0}")]
    Internal(&'static str),
    /// Registered CPU geometry is inconsistent (see [`crate::draw::MeshGeometry::validate`]).
    #[error("mesh geometry: {0}")]
    InvalidGeometry(String),
    /// The requested pixel does not lie inside the view: the first refused query's pixel (a
    /// point's, a radius query's cursor), or for a rectangle that misses the view entirely
    /// its `min` corner. Queries are checked in order, so it names the first query outside.
    #[error("pixel ({x}, {y}) lies outside the view")]
    OutsideView {
        /// Column of the pixel.
        x: i64,
        /// Row of the pixel.
        y: i64,
    },
    /// A frame slot index past the number of frames in flight the picker was made for.
    #[error("frame slot {slot} does not exist: the picker has {frames_in_flight} slots")]
    InvalidSlot {
        /// The slot asked for.
        slot: usize,
        /// How many slots the picker has.
        frames_in_flight: usize,
    },
    /// A frame slot still holds a pick that was neither taken nor cancelled: recording over
    /// it would rewrite what that frame's GPU work may still read.
    #[error("frame slot {slot} still holds frame {frame}'s pick: take its result (after its fence) or cancel it first")]
    SlotPending {
        /// The slot.
        slot: usize,
        /// The frame recorded there.
        frame: u64,
    },
    /// The texels read for a slot carry another frame's stamp: the frame recorded there did
    /// not run (its command buffer was dropped instead of submitted). Nothing is reported
    /// from them, and the slot is free again.
    #[error("frame slot {slot}: expected frame {expected}'s texels, but the GPU last wrote {}", found.map_or("none".to_string(), |f| format!("frame {f}'s")))]
    StaleResult {
        /// The slot.
        slot: usize,
        /// The frame recorded into it.
        expected: u64,
        /// The frame whose texels it holds, if any.
        found: Option<u64>,
    },
    /// [`Picker::wait_results`](crate::Picker::wait_results): the host's signal did not
    /// come within the timeout. The frame stays pending: wait again, or cancel the slot if
    /// its submission was dropped.
    #[error("frame slot {slot}: frame {frame}'s pick was not done within {timeout:?}; wait again, or cancel the slot if its submission was dropped")]
    TimedOut {
        /// The slot.
        slot: usize,
        /// The frame recorded into it.
        frame: u64,
        /// How long the picker waited.
        timeout: std::time::Duration,
    },
    /// The shared allocator's mutex was poisoned by a panic elsewhere in the host.
    #[error("the shared gpu-allocator mutex is poisoned")]
    AllocatorPoisoned,
    /// A hook program did not compile (or the crate was built without the `hooks` feature).
    /// Lines in the message are the hook's own: `discard hook, line 3: ...`.
    #[error("hook program {program:?}: {message}")]
    HookCompile {
        /// The program's [`crate::hooks::HookSource::name`].
        program: String,
        /// The compiler's message.
        message: String,
    },
}

impl PickError {
    /// Whether the picker carries on unharmed: the error concerns this call alone, and the
    /// next frame records and takes as usual. True for refusals of bad input or of what the
    /// device or configuration cannot do (nothing was recorded, every slot is as it was), for
    /// [`PickError::StaleResult`] (a frame that never completed: its pick is lost and the
    /// slot is free) and for [`PickError::TimedOut`] (the frame stays pending). A frame loop
    /// logs these and goes on. False for a failed Vulkan call, a failed allocation, a lost
    /// device and a poisoned allocator: the host stops or recreates the picker (and, for a
    /// lost device, the device).
    pub fn is_recoverable(&self) -> bool {
        !matches!(self, PickError::Vulkan(_) | PickError::DeviceLost | PickError::Alloc(_) | PickError::AllocatorPoisoned)
    }
}

/// Which input an [`PickError::InvalidInput`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Input {
    /// The request's view and projection matrices, or its stated depth convention.
    Camera,
    /// The request's viewport.
    Viewport,
    /// The request's [`HostWrites`](crate::request::HostWrites) masks.
    HostWrites,
    /// The request's [`ResultReaders`](crate::gpu_results::ResultReaders) masks.
    ResultReaders,
    /// Contributor `n` of the request.
    Contributor(usize),
    /// Query `n` of the query set, or the set as a whole (`None`: an empty set).
    Query(Option<usize>),
    /// The cursor position or scale handed to [`crate::cursor_to_pixel`].
    Cursor,
    /// The [`ViewPlacement`](crate::ViewPlacement) handed to [`crate::cursor_to_pixel`].
    ViewPlacement,
    /// A [`PickerConfig`](crate::PickerConfig) field, by name.
    Config(&'static str),
    /// The size of a [`debug::IdImage`](crate::debug::IdImage).
    ImageSize,
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Camera => write!(f, "camera"),
            Input::Viewport => write!(f, "viewport"),
            Input::HostWrites => write!(f, "host writes"),
            Input::ResultReaders => write!(f, "result readers"),
            Input::Contributor(n) => write!(f, "contributor {n}"),
            Input::Query(Some(n)) => write!(f, "query {n}"),
            Input::Query(None) => write!(f, "query set"),
            Input::Cursor => write!(f, "cursor"),
            Input::ViewPlacement => write!(f, "view placement"),
            Input::Config(field) => write!(f, "PickerConfig::{field}"),
            Input::ImageSize => write!(f, "ID image size"),
        }
    }
}

/// Which limit a [`PickError::Capacity`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// Queries in one set ([`PickerConfig::max_queries`](crate::PickerConfig::max_queries)).
    Queries,
    /// A query's pick radius ([`PickerConfig::max_radius`](crate::PickerConfig::max_radius)).
    Radius,
    /// Rectangle tiles one set plans ([`MAX_RECT_TILES`](crate::config::MAX_RECT_TILES), at
    /// [`PickerConfig::rect_tile`](crate::PickerConfig::rect_tile) pixels a tile).
    RectTiles,
    /// Objects and instances the rectangle table holds
    /// ([`PickerConfig::rect_entries`](crate::PickerConfig::rect_entries); 0 turns rectangles off).
    RectEntries,
    /// Combinations of storage buffers (instances, deformation) in use by frames in flight.
    StorageBufferSets,
    /// Draws the point and radius queries of a set may record with GPU results on
    /// ([`PickerConfig::gpu_result_draws`](crate::PickerConfig::gpu_result_draws)).
    GpuResultDraws,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Limit::Queries => "queries in a set (PickerConfig::max_queries)",
            Limit::Radius => "pick radius (PickerConfig::max_radius)",
            Limit::RectTiles => "rectangle tiles in a set (MAX_RECT_TILES; PickerConfig::rect_tile sets their size)",
            Limit::RectEntries => "rectangle table entries (PickerConfig::rect_entries)",
            Limit::StorageBufferSets => "storage buffer combinations in flight",
            Limit::GpuResultDraws => "draws the point and radius queries record with GPU results (PickerConfig::gpu_result_draws)",
        })
    }
}

fn list(missing: &[Requirement]) -> String {
    missing.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

impl From<vk::Result> for PickError {
    fn from(result: vk::Result) -> Self {
        if result == vk::Result::ERROR_DEVICE_LOST {
            PickError::DeviceLost
        } else {
            PickError::Vulkan(result)
        }
    }
}

/// One thing a device (or the host's device creation) must provide, named as the Vulkan
/// specification names it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Requirement {
    /// A device extension that is not offered, or was not enabled.
    Extension(&'static CStr),
    /// A feature (`VkPhysicalDevice*Features` member) that is not offered, or was not enabled.
    Feature(&'static str),
    /// A core Vulkan version the device must report, e.g. `(1, 1)`.
    ApiVersion(u32, u32),
    /// A device limit too small for what was asked.
    Limit {
        /// The `VkPhysicalDeviceLimits` member.
        name: &'static str,
        /// What the request needs, in words.
        needed: String,
    },
    /// A format without the tiling features the pick pass needs.
    Format {
        /// The format.
        format: vk::Format,
        /// The optimal-tiling features it lacks.
        features: vk::FormatFeatureFlags,
    },
    /// A queue family with a capability (graphics, timestamps).
    QueueFamily {
        /// The family index the host gave.
        index: u32,
        /// What it lacks.
        capability: &'static str,
    },
    /// Memory of a kind the picker needs (host-visible staging, for example).
    Memory(&'static str),
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Requirement::Extension(name) => write!(f, "device extension {}", name.to_string_lossy()),
            Requirement::Feature(name) => write!(f, "feature {name}"),
            Requirement::ApiVersion(major, minor) => write!(f, "Vulkan {major}.{minor}"),
            Requirement::Limit { name, needed } => write!(f, "limit {name}: {needed}"),
            Requirement::Format { format, features } => write!(f, "format {format:?} with optimal tiling features {features:?}"),
            Requirement::QueueFamily { index, capability } => write!(f, "queue family {index} with {capability}"),
            Requirement::Memory(what) => write!(f, "{what}"),
        }
    }
}

#[cfg(test)]
mod recoverable_tests {
    use super::*;

    #[test]
    fn refusals_and_stale_frames_are_recoverable_and_device_failures_are_not() {
        let stale = PickError::StaleResult { slot: 1, expected: 5, found: Some(3) };
        for e in [
            stale,
            PickError::ZeroId,
            PickError::InvalidInput { input: Input::Viewport, reason: "x".into() },
            PickError::Capacity { limit: Limit::Queries, configured: 16, asked: 17 },
            PickError::OutsideView { x: -1, y: 0 },
            PickError::SlotPending { slot: 0, frame: 2 },
            PickError::TimedOut { slot: 0, frame: 2, timeout: std::time::Duration::from_millis(5) },
        ] {
            assert!(e.is_recoverable(), "{e}");
        }
        for e in [PickError::DeviceLost, PickError::Vulkan(vk::Result::ERROR_OUT_OF_HOST_MEMORY), PickError::AllocatorPoisoned] {
            assert!(!e.is_recoverable(), "{e}");
        }
    }
}
