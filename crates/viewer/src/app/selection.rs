//! The selection: every object (and instance) picked by clicks and rubber bands, in the order
//! they were picked, and the last clicked hit (its details in the panel, its markers in the
//! view). A plain click replaces the selection, Ctrl + click toggles one object, a band
//! replaces it or (Ctrl) adds to it. Also the stdout lines that report each change.

use crate::gltf_load::printable;
use crate::pick_report::{HitReport, PickReport};
use crate::rect_report::{mode_name, RectEntry, RectReport};
use std::collections::HashSet;

/// One selected object and instance, named by the scene.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selected {
    pub id: u64,
    pub instance: Option<u32>,
    /// Index into `Scene::nodes`: what the lit pass highlights.
    pub scene_node: Option<usize>,
    /// The glTF node index.
    pub node: Option<usize>,
    pub name: Option<String>,
}

/// An object and instance: what makes two picks the same selected thing.
type Key = (u64, Option<u32>);

impl Selected {
    pub fn from_hit(h: &HitReport) -> Self {
        Selected { id: h.id, instance: h.instance, scene_node: h.scene_node, node: h.node, name: h.node_name.clone() }
    }

    pub fn from_rect(e: &RectEntry) -> Self {
        Selected { id: e.id, instance: e.instance, scene_node: e.scene_node, node: e.node, name: e.node_name.clone() }
    }

    fn key(&self) -> Key {
        (self.id, self.instance)
    }

    /// A name for lists and stdout: the node's name (control characters escaped), else its
    /// glTF index, else the object ID.
    pub fn label(&self) -> String {
        match (&self.name, self.node) {
            (Some(n), _) => printable(n),
            (None, Some(n)) => format!("node {n}"),
            (None, None) => format!("id {}", self.id),
        }
    }
}

/// What a click does to the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClickMode {
    /// A plain click: the clicked object alone (nothing on a miss).
    Replace,
    /// Ctrl + click: the clicked object in or out; a miss changes nothing.
    Toggle,
}

#[derive(Clone, Debug, Default)]
pub struct Selection {
    entries: Vec<Selected>,
    /// The entries' keys, so a band of thousands of objects merges in linear time.
    keys: HashSet<Key>,
    /// The last clicked hit, while its object stays selected.
    pub clicked: Option<PickReport>,
}

impl Selection {
    pub fn entries(&self) -> &[Selected] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, id: u64, instance: Option<u32>) -> bool {
        self.keys.contains(&(id, instance))
    }

    /// Applies a click whose pick is `report`; returns the stdout line that reports it.
    pub fn click(&mut self, report: &PickReport, mode: ClickMode) -> String {
        match mode {
            ClickMode::Replace => {
                self.clear();
                if let Some(h) = &report.hit {
                    self.push(Selected::from_hit(h));
                    self.clicked = Some(report.clone());
                }
                selected_line(report)
            }
            ClickMode::Toggle => {
                let Some(h) = &report.hit else {
                    return format!("selection: {} objects (unchanged: nothing at ({}, {}))", self.len(), report.x, report.y);
                };
                let s = Selected::from_hit(h);
                let what = if self.keys.remove(&s.key()) {
                    self.entries.retain(|e| e.key() != s.key());
                    self.forget_unselected_click();
                    "removed"
                } else {
                    self.push(s);
                    self.clicked = Some(report.clone());
                    "added"
                };
                format!("selection: {} objects ({what} {})", self.len(), describe_hit(h))
            }
        }
    }

    /// Applies a rubber band: what it found replaces the selection, or joins it (`add`).
    /// Returns the stdout lines that report it.
    pub fn band(&mut self, report: &RectReport, add: bool) -> Vec<String> {
        if !add {
            self.entries.clear();
            self.keys.clear();
        }
        for e in &report.objects {
            self.push(Selected::from_rect(e));
        }
        self.forget_unselected_click();
        let mut lines = vec![band_line(report)];
        if add {
            lines.push(format!("selection: {} objects", self.len()));
        }
        lines
    }

    fn push(&mut self, s: Selected) {
        if self.keys.insert(s.key()) {
            self.entries.push(s);
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.keys.clear();
        self.clicked = None;
    }

    /// The clicked hit's details stay shown only while its object is selected.
    fn forget_unselected_click(&mut self) {
        let kept = self.clicked.as_ref().and_then(|r| r.hit.as_ref()).is_some_and(|h| self.contains(h.id, h.instance));
        if !kept {
            self.clicked = None;
        }
    }
}

/// `node=Some(4) name=Some("Sheet") instance=None`: a hit as the stdout lines name it.
pub(super) fn describe_hit(h: &HitReport) -> String {
    format!("node={:?} name={:?} instance={:?}", h.node, h.node_name.as_deref().map(printable), h.instance)
}

/// The line a plain click prints (tests parse it; keep its form).
fn selected_line(report: &PickReport) -> String {
    match &report.hit {
        Some(h) => format!("selected: {} pixel=({}, {})", describe_hit(h), report.x, report.y),
        None => format!("selected: nothing at ({}, {})", report.x, report.y),
    }
}

/// `box selected: 3 objects (visible) names=["Cube", "Ground", "Sheet"]`: the band's objects
/// and instances, their names sorted (each quoted and escaped, so the list parses back).
fn band_line(report: &RectReport) -> String {
    let mut names: Vec<String> = report.objects.iter().map(|e| Selected::from_rect(e).label()).collect();
    names.sort();
    format!("box selected: {} objects ({}) names={names:?}", report.objects.len(), mode_name(report.mode))
}

#[cfg(test)]
mod tests {
    use super::*;
    use picking_vk::RectMode;

    fn hit(id: u64, instance: Option<u32>, name: &str) -> PickReport {
        PickReport {
            x: 10,
            y: 20,
            hit: Some(HitReport {
                id,
                scene_node: Some(id as usize),
                node: Some(id as usize),
                node_name: Some(name.into()),
                instance,
                gpu_instance: None,
                mesh_primitive: Some(0),
                depth: 0.5,
                world: glam::DVec3::ZERO,
                distance: 1.0,
                detail: None,
                uv: None,
                texel: None,
                billboard: None,
            }),
            error: None,
        }
    }

    fn entry(id: u64, instance: Option<u32>, name: &str) -> RectEntry {
        RectEntry {
            id,
            scene_node: Some(id as usize),
            node: Some(id as usize),
            node_name: Some(name.into()),
            instance,
            gpu_instance: None,
            pixels: 1,
            depth: 0.5,
            pixel: [0, 0],
        }
    }

    fn band(objects: Vec<RectEntry>) -> RectReport {
        RectReport { rect: [0, 0, 8, 8], mode: RectMode::Visible, objects }
    }

    #[test]
    fn clicks_replace_and_toggle() {
        let mut s = Selection::default();
        let line = s.click(&hit(3, None, "Sheet"), ClickMode::Replace);
        assert_eq!(line, "selected: node=Some(3) name=Some(\"Sheet\") instance=None pixel=(10, 20)");
        assert_eq!(s.click(&hit(7, Some(2), "Crate"), ClickMode::Toggle), "selection: 2 objects (added node=Some(7) name=Some(\"Crate\") instance=Some(2))");
        // Another instance of the same object is another selected thing.
        s.click(&hit(7, Some(3), "Crate"), ClickMode::Toggle);
        assert_eq!(s.len(), 3);
        assert!(s.click(&hit(7, Some(2), "Crate"), ClickMode::Toggle).starts_with("selection: 2 objects (removed"));
        assert!(s.contains(7, Some(3)) && !s.contains(7, Some(2)));
        let miss = PickReport { hit: None, ..hit(0, None, "") };
        assert!(s.click(&miss, ClickMode::Toggle).starts_with("selection: 2 objects (unchanged"));
        assert_eq!(s.click(&miss, ClickMode::Replace), "selected: nothing at (10, 20)");
        assert!(s.is_empty() && s.clicked.is_none());
    }

    #[test]
    fn bands_replace_or_add_without_duplicates() {
        let mut s = Selection::default();
        s.click(&hit(1, None, "Cube"), ClickMode::Replace);
        let lines = s.band(&band(vec![entry(2, None, "Sheet"), entry(1, None, "Cube")]), true);
        assert_eq!(lines, ["box selected: 2 objects (visible) names=[\"Cube\", \"Sheet\"]", "selection: 2 objects"]);
        assert!(s.clicked.is_some(), "the clicked cube is still selected");
        let lines = s.band(&band(vec![entry(5, None, "Ball")]), false);
        assert_eq!(lines, ["box selected: 1 objects (visible) names=[\"Ball\"]"]);
        assert_eq!(s.entries().iter().map(|e| e.id).collect::<Vec<_>>(), [5]);
        assert!(s.clicked.is_none(), "the clicked cube left the selection");
        // Toggling the clicked object off forgets its details too.
        s.click(&hit(9, None, "Pole"), ClickMode::Toggle);
        assert!(s.clicked.is_some());
        s.click(&hit(9, None, "Pole"), ClickMode::Toggle);
        assert!(s.clicked.is_none());
    }

    #[test]
    fn unnamed_and_odd_names_stay_parseable() {
        let mut unnamed = entry(4, None, "");
        unnamed.node_name = None;
        let mut odd = entry(6, None, "a\"b\nc");
        odd.node = None;
        let line = band_line(&band(vec![unnamed, odd]));
        assert_eq!(line, "box selected: 2 objects (visible) names=[\"a\\\"b\\\\nc\", \"node 4\"]");
    }
}
