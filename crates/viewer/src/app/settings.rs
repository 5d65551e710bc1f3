//! What the panel's controls set, and animation playback: kept apart from the panel and
//! the input (a device loss makes the panel again, and the settings stay).

/// The hover radius the window opens with, pixels: thin objects are easy to point at.
pub(super) const DEFAULT_HOVER_RADIUS: u32 = 4;

/// What the panel's controls set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Settings {
    /// Show the ID buffer view in the panel.
    pub show_ids: bool,
    /// The hover query's pick radius, pixels (0: a plain point query).
    pub hover_radius: u32,
    /// Animation playback, for scenes with animations.
    pub playback: Option<Playback>,
    /// Pick in the frame that asks (the default): the set submitted first and waited for
    /// alone, highlights from the picker's GPU results. Off: the ring path, results a round
    /// later and highlights from them (to compare).
    pub same_frame: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { show_ids: false, hover_radius: DEFAULT_HOVER_RADIUS, playback: None, same_frame: true }
    }
}

/// Where playback is: the panel's play box and time slider set it; Space toggles play.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Playback {
    pub playing: bool,
    /// Seconds into the animations.
    pub time: f32,
    /// The longest animation's length; playback loops over it.
    pub duration: f32,
    last: Option<std::time::Instant>,
    /// The time of the pose shown (`None`: the file's rest pose), and whether the last pose
    /// tried was refused (reported once, until one is shown again).
    shown: Option<f32>,
    refused: bool,
}

impl Playback {
    /// Playing from 0, or paused at `start`.
    pub fn new(duration: f32, start: Option<f32>) -> Self {
        Playback { playing: start.is_none(), time: start.unwrap_or(0.0), duration, last: None, shown: None, refused: false }
    }

    /// Poses `scene` at this frame's time. A pose the loader would refuse (one that carries a
    /// skinned or morphed mesh past f32's range, where it would vanish without an error) is
    /// not shown: playback pauses on the last pose shown, with a warning.
    pub fn pose(&mut self, scene: &mut crate::scene::Scene, now: std::time::Instant) {
        let time = self.advance(now);
        crate::animation::pose(scene, Some(time));
        match crate::gltf_load::check_pose(scene) {
            Ok(()) => (self.shown, self.refused) = (Some(time), false),
            Err(e) => {
                if !self.refused {
                    log::warn!("the animations at {time} s: {e}; playback paused");
                    self.refused = true;
                }
                self.playing = false;
                // The slider shows the pose the picture shows.
                self.time = self.shown.unwrap_or(self.time);
                crate::animation::pose(scene, self.shown);
            }
        }
    }

    /// The time to pose this frame: advanced by the wall time since the last frame while
    /// playing, looping.
    pub fn advance(&mut self, now: std::time::Instant) -> f32 {
        let dt = self.last.map_or(0.0, |l| now.duration_since(l).as_secs_f32());
        self.last = Some(now);
        if self.playing && self.duration > 0.0 {
            self.time = (self.time + dt) % self.duration;
        }
        self.time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playback_pauses_on_the_last_pose_shown_rather_than_one_past_f32() {
        use crate::scene::{Animation, Channel, Interpolation, Property};
        use crate::scene::{MeshAsset, Node, Scene};
        // A triangle whose one morph target moves a vertex by 3e38, its weight animated from
        // 0 (at 0 s) to 1 (at 1 s): from about 0.28 s on, the GPU's products could pass f32's
        // range.
        let positions = vec![glam::Vec3::ZERO, glam::Vec3::X, glam::Vec3::Y];
        let target = vec![glam::Vec3::ZERO, glam::Vec3::ZERO, glam::Vec3::new(0.0, 3e38, 0.0)];
        let prim = picking_vk_host::Primitive { positions, morph_targets: vec![target], ..Default::default() };
        let node = Node { mesh: Some(0), weights: vec![0.0], default_weights: vec![0.0], ..Default::default() };
        let channel = Channel {
            node: 0,
            property: Property::Weights,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0].into(),
            values: vec![0.0, 1.0].into(),
            width: 1,
        };
        let mut scene = Scene {
            meshes: vec![MeshAsset { primitives: vec![prim], ..Default::default() }],
            nodes: vec![node],
            animations: vec![Animation { name: None, channels: vec![channel] }],
            ..Default::default()
        };
        let mut playback = Playback::new(1.0, Some(0.1));
        let now = std::time::Instant::now();
        playback.pose(&mut scene, now);
        assert_eq!(scene.nodes[0].weights, vec![0.1], "a pose in range is shown");
        playback.time = 0.9;
        playback.playing = true;
        playback.pose(&mut scene, now);
        assert_eq!(scene.nodes[0].weights, vec![0.1], "the pose at 0.9 s is refused; the last one stays");
        assert!(!playback.playing, "playback paused");
        assert_eq!(playback.time, 0.1, "the slider shows the pose shown");
    }
}
