//! No import circle in any crate of the workspace, at any level of its modules, counting paths
//! through crate-root re-exports (the checker is the library's: `crates/picking-vk/tests/
//! support/module_graph.rs`).

#[path = "../../crates/picking-vk/tests/support/module_graph.rs"]
mod module_graph;
#[path = "../../crates/picking-vk/tests/support/source_sizes.rs"]
#[allow(dead_code)] // the file-size half is what this crate checks
mod source_sizes;

use module_graph::ModuleGraph;
use std::path::Path;

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = ["crates/picking-vk", "crates/picking-vk-wgpu", "crates/context", "crates/host", "crates/viewer", "tools", "tests"];
    let mut found = vec![];
    for krate in crates {
        let graph = ModuleGraph::read(&root.join(krate).join("src"));
        assert!(graph.uses.len() > 1, "{krate}: no modules read");
        found.extend(graph.circles().into_iter().map(|c| format!("{krate}: {c}")));
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// No source file over 450 lines outside test files, in any crate of the workspace.
#[test]
fn no_source_file_of_the_workspace_is_over_450_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = vec![];
    for krate in ["crates/picking-vk", "crates/picking-vk-wgpu", "crates/context", "crates/host", "crates/viewer", "tools", "tests"] {
        for path in source_sizes::rust_files(&root.join(krate).join("src")) {
            let lines = source_sizes::line_count(&std::fs::read_to_string(&path).unwrap());
            if lines > 450 {
                long.push(format!("{}: {lines} lines", path.display()));
            }
        }
    }
    assert!(long.is_empty(), "files over 450 lines:\n{}", long.join("\n"));
}
