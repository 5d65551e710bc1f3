//! One table of the benchmark alone (`--result-paths`, `--draw-planning`,
//! `--instance-planning`, `--planner-choice`), for iterating on what it measures.

use crate::scenes::{BenchScene, SceneSpec};
use crate::{config, gpu_planning, gpu_planning_draws, planner_choice, result_paths, Config, SPHERE_960};
use picking_vk_context::{ContextOptions, VulkanContext};

/// One table alone, for iterating on what it measures: `title`, `header`, then the lines of
/// `extra`'s scenes and of each scene `keep` takes from `measure` (its lines, and whether its
/// parity held); returns whether every parity held.
fn one_table(
    small: bool,
    (title, header): (&str, &str),
    (extra, keep): (&[SceneSpec], fn(&SceneSpec) -> bool),
    measure: impl Fn(&VulkanContext, &BenchScene, &Config, u64) -> Result<(String, bool), String>,
) -> Result<bool, String> {
    let cfg = config(small);
    let ctx = VulkanContext::new(&ContextOptions { validation: false, sync_validation: false, want_detail: false, ..Default::default() })
        .map_err(|e| e.to_string())?;
    println!("{title} on {} ({}x{}, {} frames after {} warm-up, medians):", ctx.device_name, cfg.size.0, cfg.size.1, cfg.frames, cfg.warmup);
    println!("{header}");
    let mut parity = true;
    // Each scene keeps its index in the configuration (its seeds), as in the full run; the
    // extra scenes' follow them.
    let extra = extra.iter().enumerate().map(|(i, s)| (cfg.scenes.len() + i, s));
    for (k, spec) in extra.chain(cfg.scenes.iter().enumerate().filter(|(_, s)| keep(s))) {
        let scene = BenchScene::build(&ctx, *spec, 100 + k as u64).map_err(|e| e.to_string())?;
        let (line, ok) = measure(&ctx, &scene, &cfg, k as u64)?;
        parity &= ok;
        println!("{line}");
    }
    Ok(parity)
}

/// The GPU results table alone (`--result-paths`).
pub fn result_paths_only(small: bool) -> Result<bool, String> {
    one_table(small, ("GPU results and snapping", result_paths::HEADER), (&[], |_| true), |ctx, scene, cfg, k| {
        let paths = result_paths::measure(ctx, scene, cfg.size, cfg.warmup, cfg.frames, 900 + k)?;
        Ok((paths.line(scene.spec.name), true))
    })
}

/// The plain-draw GPU planning table alone (`--draw-planning`): the scenes of separate draws.
pub fn draw_planning_only(small: bool) -> Result<bool, String> {
    one_table(small, ("GPU planning of plain draws", gpu_planning_draws::HEADER), (&[], |s| !s.instanced), |ctx, scene, cfg, k| {
        let gd = gpu_planning_draws::measure(ctx, scene, cfg.size, cfg.warmup, cfg.frames, 650 + k)?;
        Ok((gd.line(scene.spec.name), gd.parity.0 == gd.parity.1))
    })
}

/// The instance-field GPU planning table alone (`--instance-planning`): the instanced scenes.
pub fn instance_planning_only(small: bool) -> Result<bool, String> {
    one_table(small, ("GPU planning of instances", gpu_planning::HEADER), (&[], |s| s.instanced), |ctx, scene, cfg, k| {
        let gp = gpu_planning::measure(ctx, scene, cfg.size, cfg.warmup, cfg.frames, 600 + k)?;
        Ok((gp.line(scene.spec.name), gp.parity.0 == gp.parity.1))
    })
}

/// Where each planner wins and what `Planner::Auto` chose (`--planner-choice`): the scenes of
/// separate draws, and in the full configuration a list of 100 draws too.
pub fn planner_choice_only(small: bool, cold: bool) -> Result<bool, String> {
    let extra = if small { vec![] } else { vec![SceneSpec { name: "100 x 960", objects: 100, instanced: false, mesh: SPHERE_960 }] };
    let title = if cold {
        "Planner choice for a shared list's plain draws, the GPU's caches evicted before each set"
    } else {
        "Planner choice for a shared list's plain draws"
    };
    one_table(small, (title, planner_choice::HEADER), (&extra, |s| !s.instanced), |ctx, scene, cfg, k| {
        let pc = planner_choice::measure(ctx, scene, cfg.size, (cfg.warmup, cfg.frames), 680 + k, cold)?;
        Ok((pc.lines(scene.spec.name).join("\n"), pc.parity.0 == pc.parity.1))
    })
}
