//! Sizes the code-size rules are judged by: lines per source file, and lines per function
//! outside `#[cfg(test)]` code (from its `fn` line to its closing brace, string literals and
//! comments ignored when matching braces).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())).flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Lines of `text`.
pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// `(name, first line (1-based), lines)` of every function with a body outside test code.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = vec![];
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("#[cfg(test)]") {
            // Test code runs to the end of the file in this workspace's style.
            break;
        }
        if let Some(name) = fn_name(lines[i]) {
            if let Some(end) = body_end(&lines, i) {
                found.push((name, i + 1, end - i + 1));
            }
        }
        i += 1;
    }
    found
}

/// The name of the function a line declares, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let mut words = line.trim_start();
    if words.starts_with("//") {
        return None;
    }
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"system\" ", "extern \"C\" "] {
        if let Some(rest) = words.strip_prefix(prefix) {
            words = rest;
        }
    }
    for prefix in ["const ", "unsafe ", "extern \"system\" ", "extern \"C\" "] {
        if let Some(rest) = words.strip_prefix(prefix) {
            words = rest;
        }
    }
    let rest = words.strip_prefix("fn ")?;
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// The line of the brace closing the body that starts at or after line `start`; `None` for
/// a declaration without a body (a trait method ending in `;`).
fn body_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(start) {
        let code = strip_strings_and_comments(line);
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(k);
        }
        if !opened && code.trim_end().ends_with(';') {
            return None;
        }
    }
    None
}

/// `line` without string and char literals' contents and without a trailing `//` comment.
fn strip_strings_and_comments(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if chars.peek() == Some(&'/') => break,
            // '{' and '}' as char literals.
            '\'' if matches!(chars.clone().take(2).collect::<Vec<_>>()[..], ['{' | '}', '\'']) => {
                chars.next();
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}
