//! The library's modules follow the data (host -> request -> plan -> record -> staging ->
//! resolve) with no import circles: a module may use the stages before it, never one that
//! uses it back. Read from the sources, so a new `use` that closes a circle fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module of each source file, and the top-level modules it names as `crate::x`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("a component").as_os_str().to_string_lossy().into_owned();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source is readable");
            // Only the module's own code: its unit tests may reach anywhere.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let uses = graph.entry(module.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (at, _) in line.match_indices("crate::") {
                    let name: String = line[at + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() && name != module {
                        uses.insert(name);
                    }
                }
            }
        }
    }
    graph
}

/// A circle through `node`, if any, as the path that closes it.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>, node: &str, path: &mut Vec<String>) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|n| n == node) {
        let mut circle = path[start..].to_vec();
        circle.push(node.to_string());
        return Some(circle);
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(circle) = find_circle(graph, next, path) {
            return Some(circle);
        }
    }
    path.pop();
    None
}

#[test]
fn no_import_circles_between_the_librarys_modules() {
    let graph = module_graph();
    for expected in ["host", "request", "draw", "plan", "pass", "record", "readback", "handoff", "resolve", "picker", "debug"] {
        assert!(graph.contains_key(expected), "module {expected} is missing from {:?}", graph.keys());
    }
    for node in graph.keys() {
        if let Some(circle) = find_circle(&graph, node, &mut vec![]) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
    // The hand-off is the only thing record and resolve share.
    assert!(!graph["record"].contains("resolve") && !graph["resolve"].contains("record"));
}

#[test]
fn the_readme_example_is_the_crate_docs_doctest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The workspace's README, or the copy `cargo package` puts beside the manifest.
    let readme = std::fs::read_to_string(root.join("../../README.md")).or_else(|_| std::fs::read_to_string(root.join("README.md"))).expect("README.md");
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
    let readme_block: Vec<&str> = readme.split("```rust").nth(1).expect("a rust block in the README").split("```").next().unwrap_or_default().lines().collect();
    let doc_block: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l).to_string())
        .skip_while(|l| !l.starts_with("```no_run"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| !l.starts_with("# ") && l != "#")
        .collect();
    let readme_block: Vec<&str> = readme_block.into_iter().filter(|l| !l.trim().is_empty()).collect();
    let doc_block: Vec<&str> = doc_block.iter().map(String::as_str).filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(readme_block, doc_block, "README's snippet must be the compiled doctest in src/lib.rs");
}
