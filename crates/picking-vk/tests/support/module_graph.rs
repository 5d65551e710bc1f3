//! A crate's module graph read from its sources, for layering checks: which module uses which,
//! at every level, with paths through the crate root's re-exports resolved to the module that
//! defines the item. Shared by `crates/picking-vk/tests/architecture.rs` and the workspace's
//! `tests/tests/module_cycles.rs` (included by path: it needs nothing but `std`).
//!
//! Two sibling modules (children of the same parent, the crate root included) are joined
//! `a -> b` when code anywhere under `a` names anything under `b` (`crate::`, `super::` and
//! `self::` paths, in `use` trees and in code). A module naming its own ancestors or
//! descendants adds nothing: a parent composes its children, and children share their
//! parent's vocabulary. A circle among the siblings of one parent is a layering error. Unit
//! tests (`#[cfg(test)]` and what follows it) and comments are not read.

#![allow(dead_code)] // each includer uses part of it

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path from the crate root (`["plan", "chunks"]`); the root is empty.
pub type ModulePath = Vec<String>;

/// Every module of a crate and what it names.
pub struct ModuleGraph {
    /// Each module's resolved references (module paths, truncated to a known module).
    pub uses: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
}

fn module_of(rel: &Path) -> ModulePath {
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The source without comments and without what follows the first `#[cfg(test)]`.
fn own_code(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = String::with_capacity(code.len());
    let mut in_block = 0usize;
    for line in code.lines() {
        let mut rest = line;
        let mut kept = String::new();
        loop {
            if in_block > 0 {
                match rest.find("*/") {
                    Some(end) => {
                        in_block -= 1;
                        rest = &rest[end + 2..];
                    }
                    None => break,
                }
            } else {
                let line_comment = rest.find("//");
                let block = rest.find("/*");
                match (line_comment, block) {
                    (Some(l), b) if b.is_none_or(|b| l < b) => {
                        kept.push_str(&rest[..l]);
                        break;
                    }
                    (_, Some(b)) => {
                        kept.push_str(&rest[..b]);
                        in_block += 1;
                        rest = &rest[b + 2..];
                    }
                    _ => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Expands a `use` tree (`crate::a::{b::C, d}`) into its paths.
fn expand_tree(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_string()] };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = vec![];
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).flat_map(expand_tree).map(|p| format!("{prefix}{p}")).collect()
}

/// The paths a source names: its `use` trees, expanded, and `crate::`/`super::` paths in code.
fn named_paths(code: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = code;
    // `use` trees, including `pub use` and `pub(crate) use`.
    while let Some(at) = rest.find("use ") {
        let boundary = rest[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = &rest[at + 4..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = after[..end].split(" as ").next().unwrap_or_default().replace(char::is_whitespace, "");
        // A `use` tree is a path: "use " inside a string or a sentence is not one.
        let path_like = tree.chars().all(|c| c.is_alphanumeric() || "_:{},*".contains(c));
        if boundary && path_like {
            out.extend(expand_tree(&tree));
        }
        rest = &after[if boundary { end } else { 0 }..];
    }
    // Paths in code (`crate::draw::contributor::check_ranges(..)`, `super::x::Y`).
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            if code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(path);
        }
    }
    out
}

impl ModuleGraph {
    /// Reads every `.rs` file under `src` (the crate root is `lib.rs` or `main.rs`).
    pub fn read(src: &Path) -> ModuleGraph {
        let mut files: Vec<(ModulePath, String)> = vec![];
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src is readable") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path.strip_prefix(src).expect("under src");
                    files.push((module_of(rel), own_code(&std::fs::read_to_string(&path).expect("source is readable"))));
                }
            }
        }
        let modules: BTreeSet<ModulePath> = files.iter().map(|(m, _)| m.clone()).collect();
        // The crate root's re-exports: item name -> the module that defines it.
        let mut reexports: BTreeMap<String, ModulePath> = BTreeMap::new();
        for (module, code) in &files {
            if !module.is_empty() {
                continue;
            }
            for path in named_paths(code) {
                let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty() && *s != "crate" && *s != "self").collect();
                if let Some((item, from)) = segments.split_last() {
                    let from: ModulePath = from.iter().map(|s| s.to_string()).collect();
                    if modules.contains(&from) && !from.is_empty() {
                        reexports.insert(item.to_string(), from);
                    }
                }
            }
        }
        let mut uses: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
        for (module, code) in &files {
            let set = uses.entry(module.clone()).or_default();
            for path in named_paths(code) {
                if let Some(target) = resolve(module, &path, &modules, &reexports) {
                    set.insert(target);
                }
            }
        }
        ModuleGraph { uses }
    }

    /// The edges between siblings, per parent: `parent -> (a -> {b, ...})`.
    pub fn sibling_edges(&self) -> BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>> {
        let mut out: BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (from, targets) in &self.uses {
            for to in targets {
                let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
                // An ancestor or a descendant: no sibling pair.
                if common == from.len() || common == to.len() {
                    continue;
                }
                let parent = from[..common].to_vec();
                out.entry(parent).or_default().entry(from[common].clone()).or_default().insert(to[common].clone());
            }
        }
        out
    }

    /// The import circles among siblings: every group of siblings that reach each other (a
    /// strongly connected component of two or more), each as `parent: {a, b, c}: a -> b -> a`
    /// (the group, then one circle through it).
    pub fn circles(&self) -> Vec<String> {
        let mut found = vec![];
        for (parent, graph) in self.sibling_edges() {
            let at = if parent.is_empty() { "crate".to_string() } else { parent.join("::") };
            for group in components(&graph).into_iter().filter(|g| g.len() > 1) {
                let inside: BTreeMap<String, BTreeSet<String>> =
                    group.iter().map(|n| (n.clone(), graph.get(n).into_iter().flatten().filter(|m| group.contains(*m)).cloned().collect())).collect();
                let first = group.iter().next().expect("non-empty");
                let circle = find_circle(&inside, first, &mut vec![]).unwrap_or_default();
                let names: Vec<&str> = group.iter().map(String::as_str).collect();
                found.push(format!("{at}: {{{}}}: {}", names.join(", "), circle.join(" -> ")));
            }
        }
        found
    }
}

/// The strongly connected components of `graph` (Tarjan's algorithm).
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, node: &'a str) {
        w.index.insert(node, (w.next, w.next));
        w.next += 1;
        w.stack.push(node);
        let graph = w.graph;
        for next in graph.get(node).into_iter().flatten() {
            match w.index.get(next.as_str()).copied() {
                None => {
                    visit(w, next);
                    let low = w.index[next.as_str()].1.min(w.index[node].1);
                    w.index.get_mut(node).expect("visited").1 = low;
                }
                Some((i, _)) if w.stack.contains(&next.as_str()) => {
                    let low = i.min(w.index[node].1);
                    w.index.get_mut(node).expect("visited").1 = low;
                }
                Some(_) => {}
            }
        }
        let (i, low) = w.index[node];
        if i == low {
            let mut group = BTreeSet::new();
            while let Some(m) = w.stack.pop() {
                group.insert(m.to_string());
                if m == node {
                    break;
                }
            }
            w.out.push(group);
        }
    }
    let mut w = Walk { graph, index: BTreeMap::new(), stack: vec![], next: 0, out: vec![] };
    for node in graph.keys() {
        if !w.index.contains_key(node.as_str()) {
            visit(&mut w, node);
        }
    }
    w.out
}

/// The module `path` (named in `module`) lies in: its longest prefix that is a module, after
/// the crate root's re-exports. `None` for paths outside the crate.
fn resolve(module: &[String], path: &str, modules: &BTreeSet<ModulePath>, reexports: &BTreeMap<String, ModulePath>) -> Option<ModulePath> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (first, rest) = segments.split_first()?;
    let mut absolute: ModulePath = match *first {
        "crate" => vec![],
        "self" => module.to_vec(),
        "super" => {
            let mut m = module.to_vec();
            m.pop()?;
            m
        }
        _ => return None,
    };
    let mut rest = rest.iter().peekable();
    while rest.peek().is_some_and(|s| **s == "super") {
        rest.next();
        absolute.pop()?;
    }
    let rest: Vec<&str> = rest.copied().collect();
    // A root item re-exported from its module.
    if absolute.is_empty() {
        if let Some(from) = rest.first().and_then(|item| reexports.get(*item)) {
            if !modules.contains(&vec![rest[0].to_string()]) {
                return Some(from.clone());
            }
        }
    }
    let mut best = absolute.clone();
    for s in rest {
        let mut next = best.clone();
        next.push(s.to_string());
        if !modules.contains(&next) {
            break;
        }
        best = next;
    }
    Some(best)
}

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
