//! The library's modules follow the data (host -> request -> plan -> record -> staging ->
//! resolve) with no import circles: a module may use the stages before it, never one that
//! uses it back. Read from the sources, so a new `use` that closes a circle fails here.

#[path = "support/module_graph.rs"]
mod module_graph;
#[path = "support/source_sizes.rs"]
mod source_sizes;

use module_graph::ModuleGraph;
use std::path::Path;

#[test]
fn no_import_circles_at_any_level_of_the_librarys_modules() {
    let graph = ModuleGraph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let top: Vec<String> = graph.uses.keys().filter(|m| m.len() == 1).map(|m| m[0].clone()).collect();
    for expected in ["host", "request", "draw", "plan", "pass", "record", "readback", "handoff", "resolve", "picker", "debug"] {
        assert!(top.iter().any(|m| m == expected), "module {expected} is missing from {top:?}");
    }
    let circles = graph.circles();
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
    // The hand-off is the only thing record and resolve share.
    let edges = graph.sibling_edges();
    let root = &edges[&vec![]];
    let uses = |a: &str, b: &str| root.get(a).is_some_and(|s| s.contains(b));
    assert!(!uses("record", "resolve") && !uses("resolve", "record"));
}

/// Writes `files` (path under `src`, text) into a fresh folder and reads its graph.
fn graph_of(name: &str, files: &[(&str, &str)]) -> ModuleGraph {
    let src = std::env::temp_dir().join(format!("picking-vk-module-graph-{name}-{}", std::process::id())).join("src");
    let _ = std::fs::remove_dir_all(&src);
    for (path, text) in files {
        let at = src.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    let graph = ModuleGraph::read(&src);
    std::fs::remove_dir_all(src.parent().unwrap()).unwrap();
    graph
}

/// The checker sees the circles a reading of `crate::x` alone missed: through the crate root's
/// re-exports (as `request/viewport.rs` once named `crate::PickSupport`: request -> host ->
/// pass -> request) and between submodules (`super::`), in `use` trees and in code, and not
/// in comments or unit tests.
#[test]
fn the_checker_finds_circles_through_re_exports_and_between_submodules() {
    let through_root = graph_of(
        "root",
        &[
            ("lib.rs", "mod host;\nmod pass;\nmod request;\npub use host::features::{Other, PickSupport};\n"),
            ("host/mod.rs", "pub(crate) mod features;\nuse crate::pass::Pass;\n"),
            ("host/features.rs", "pub struct PickSupport;\npub struct Other;\n"),
            ("pass.rs", "use crate::{request::viewport::Viewport};\n"),
            ("request/mod.rs", "pub(crate) mod viewport;\n"),
            ("request/viewport.rs", "pub struct Viewport;\nfn of(_: &crate::PickSupport) {}\n"),
        ],
    );
    assert_eq!(through_root.circles(), vec!["crate: {host, pass, request}: host -> pass -> request -> host".to_string()]);
    let siblings = graph_of(
        "siblings",
        &[
            ("lib.rs", "mod plan;\n"),
            ("plan/mod.rs", "mod chunks;\nmod sure_hit;\nmod ray;\nuse chunks::Chunks;\n"),
            ("plan/chunks.rs", "use super::{ray::Ray, sure_hit::triangle};\npub struct Chunks;\n"),
            ("plan/sure_hit.rs", "pub fn triangle() { let _ = super::chunks::Chunks; }\n"),
            // Comments and unit tests name anything without making a circle.
            ("plan/ray.rs", "// super::chunks\npub struct Ray;\n#[cfg(test)]\nmod tests { use super::super::chunks::Chunks; }\n"),
        ],
    );
    assert_eq!(siblings.circles(), vec!["plan: {chunks, sure_hit}: chunks -> sure_hit -> chunks".to_string()]);
    // A parent's use of its children and the children's use of their parent are no circle.
    let family =
        graph_of("family", &[("lib.rs", "mod a;\n"), ("a/mod.rs", "mod b;\npub struct T;\nuse b::U;\n"), ("a/b.rs", "use super::T;\npub struct U;\n")]);
    assert!(family.circles().is_empty());
}

/// Every Rust block README.md shows compiles: its lines are the visible lines of a `no_run`
/// doctest in the library's sources or the wgpu bridge's crate docs, which `cargo test` builds.
#[test]
fn every_readme_rust_block_is_a_compiled_doctest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The workspace's README, or the copy `cargo package` puts beside the manifest.
    let readme = std::fs::read_to_string(root.join("../../README.md")).or_else(|_| std::fs::read_to_string(root.join("README.md"))).expect("README.md");
    let sources = source_sizes::rust_files(&root.join("src")).into_iter().chain([root.join("../picking-vk-wgpu/src/lib.rs")]);
    let doctests: Vec<Vec<String>> = sources.flat_map(|path| doctest_blocks(&std::fs::read_to_string(&path).unwrap())).collect();
    let blocks = readme_rust_blocks(&readme);
    assert!(blocks.len() >= 3, "README's Rust blocks: the integration path, GPU results, wgpu; found {}", blocks.len());
    for block in blocks {
        assert!(doctests.contains(&block), "README's block is no doctest of the sources (fence `no_run`, hidden set-up lines `# `):\n{}", block.join("\n"));
    }
}

/// The non-blank lines of each fenced block whose fence starts with "```rust", without the
/// fence's indentation (a block inside a list item is indented).
fn readme_rust_blocks(readme: &str) -> Vec<Vec<String>> {
    let mut blocks = vec![];
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let indent = line.len() - line.trim_start().len();
        if !line.trim_start().starts_with("```rust") {
            continue;
        }
        let block = lines.by_ref().take_while(|l| !l.trim_start().starts_with("```"));
        blocks.push(block.filter(|l| !l.trim().is_empty()).map(|l| l.get(indent..).unwrap_or(l.trim_start()).to_string()).collect());
    }
    blocks
}

/// The visible non-blank lines of each `no_run` doctest in a source's doc comments.
fn doctest_blocks(source: &str) -> Vec<Vec<String>> {
    let docs: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!").or_else(|| l.trim_start().strip_prefix("///")))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let mut blocks = vec![];
    let mut lines = docs.into_iter();
    while let Some(line) = lines.next() {
        if line.starts_with("```no_run") {
            let block = lines.by_ref().take_while(|l| !l.starts_with("```"));
            blocks.push(block.filter(|l| !l.trim().is_empty() && !l.starts_with("# ") && *l != "#").map(str::to_string).collect());
        }
    }
    blocks
}

/// Functions short enough to read at once, files short enough to hold one responsibility:
/// no library function over 80 lines outside test code, no source file over 450 lines.
#[test]
fn library_functions_and_files_stay_short() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = vec![];
    for path in source_sizes::rust_files(&src) {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(&src).unwrap().display().to_string();
        if source_sizes::line_count(&text) > 450 {
            long.push(format!("{name}: {} lines", source_sizes::line_count(&text)));
        }
        for (function, line, lines) in source_sizes::functions(&text) {
            if lines > 80 {
                long.push(format!("{name}:{line}: fn {function} has {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "over the limits:\n{}", long.join("\n"));
}

#[test]
fn the_size_reader_counts_bodies_and_skips_declarations_strings_and_tests() {
    let text = "pub(crate) unsafe fn a(x: &str) -> u32 {\n    let s = \"}}}\"; // }\n    let c = '}';\n    1\n}\ntrait T {\n    fn b(&self);\n}\nfn c() {}\n#[cfg(test)]\nmod tests {\n    fn d() {\n    }\n}\n";
    let found = source_sizes::functions(text);
    assert_eq!(found, vec![("a".to_string(), 1, 5), ("c".to_string(), 9, 1)]);
}
