//! Support for picking-vk's GPU integration tests: scenes built on the CPU and uploaded as the
//! host would, an independent CPU ray oracle, and a harness that fails loudly without a GPU.

pub mod harness;
pub mod oracle;
pub mod results_reader;
pub mod scene;
pub mod snap_oracle;
