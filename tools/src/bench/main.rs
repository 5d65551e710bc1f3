//! `cargo run --release -p picking-vk-tools --bin bench [-- --small] [--out DIR] [--result-paths] [--draw-planning] [--instance-planning] [--planner-choice]`
//!
//! Compares, side by side in one run on whatever Vulkan device it finds: the picker with and
//! without pick-ray culling, the classic full-size ID target scissored to the pixel, a
//! full-resolution ID pass, a simple lit main pass (the reference frame cost), and a CPU ray
//! cast with parry3d's BVH. Prints a table and writes it as JSON plus a PNG chart.
//! `--result-paths` measures and prints only the GPU results table (nothing is written);
//! `--draw-planning` only the table of GPU planning of plain draws.
//! `--instance-planning` only the table of GPU planning of instances (the instanced fields).
//! `--planner-choice [cold]` only the table of where each planner wins, and what `Planner::Auto`
//! chose (`cold`: the GPU's caches evicted before each set).
//! `--record-profile [SCENE] [POINTS] [gpu|cpu] [cold]` only the CPU cost of recording, for a profiler.

mod chart;
mod cpu_bvh;
mod deform;
mod gpu_planning;
mod gpu_planning_draws;
mod gpu_timing;
mod heap;
mod hooks;
mod latency;
mod memory;
mod one_table;
mod parity;
mod planner_choice;
mod queries;
mod record_profile;
mod result_paths;
mod scenes;

use glam::UVec2;
use picking_vk::{PickRequest, Viewport};
use picking_vk_context::{ContextOptions, VulkanContext};
use scenes::{BenchScene, MeshSpec, SceneSpec};
use serde_json::json;
use std::path::PathBuf;

#[global_allocator]
static HEAP: heap::CountingAllocator = heap::CountingAllocator;

struct Config {
    scenes: Vec<SceneSpec>,
    size: (u32, u32),
    warmup: usize,
    frames: usize,
    parity_culled: usize,
    parity_unculled: usize,
    parity_scissored: usize,
    latency_frames: usize,
    /// GPU load before each timed table (`gpu_timing::settle_clocks`).
    settle_ms: u64,
}

pub(crate) const SPHERE_960: MeshSpec = MeshSpec::Sphere { rings: 20, segments: 24 };
const SPHERE_20000: MeshSpec = MeshSpec::Sphere { rings: 100, segments: 100 };

fn config(small: bool) -> Config {
    let spec = |name, objects, instanced, mesh| SceneSpec { name, objects, instanced, mesh };
    if small {
        Config {
            scenes: vec![
                spec("100 x 960", 100, false, SPHERE_960),
                spec("1000 x 960", 1000, false, SPHERE_960),
                spec("10 x 20000", 10, false, SPHERE_20000),
                spec("10000-instance field", 10_000, true, MeshSpec::Box),
            ],
            size: (320, 180),
            warmup: 2,
            frames: 5,
            parity_culled: 1000,
            parity_unculled: 128,
            parity_scissored: 8,
            latency_frames: 8,
            settle_ms: 0,
        }
    } else {
        Config {
            scenes: vec![
                spec("1000 x 960", 1000, false, SPHERE_960),
                spec("10000 x 960", 10_000, false, SPHERE_960),
                spec("100 x 20000", 100, false, SPHERE_20000),
                spec("100000-instance field", 100_000, true, MeshSpec::Box),
            ],
            size: (1920, 1080),
            warmup: 10,
            frames: 60,
            parity_culled: 1000,
            parity_unculled: 1000,
            parity_scissored: 32,
            latency_frames: 40,
            settle_ms: 200,
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let small = args.iter().any(|a| a == "--small");
    let out = args.iter().position(|a| a == "--out").and_then(|i| args.get(i + 1)).map_or(PathBuf::from("out/bench"), PathBuf::from);
    let run = |small, out: &std::path::Path| {
        if args.iter().any(|a| a == "--result-paths") {
            one_table::result_paths_only(small)
        } else if args.iter().any(|a| a == "--draw-planning") {
            one_table::draw_planning_only(small)
        } else if let Some(i) = args.iter().position(|a| a == "--record-profile") {
            let number = |k: usize, default| args.get(i + k).and_then(|a| a.parse().ok()).unwrap_or(default);
            let flag = |name: &str| args[i + 1..].iter().any(|a| a == name);
            let planner = match (flag("gpu"), flag("cpu")) {
                (true, _) => picking_vk::config::Planner::Gpu,
                (_, true) => picking_vk::config::Planner::Cpu,
                _ => picking_vk::config::Planner::Auto,
            };
            record_profile::record_profile(number(1, 1), number(2, 1), planner, flag("cold"))
        } else if args.iter().any(|a| a == "--planner-choice") {
            one_table::planner_choice_only(small, args.iter().any(|a| a == "cold"))
        } else if args.iter().any(|a| a == "--instance-planning") {
            one_table::instance_planning_only(small)
        } else {
            run(small, out)
        }
    };
    match run(small, &out) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("bench: a parity check failed (see the table)");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("bench: error: {e}");
            std::process::exit(1);
        }
    }
}

fn fmt_bytes(b: u64) -> String {
    match b {
        0..=9_999 => format!("{b} B"),
        10_000..=9_999_999 => format!("{:.1} KiB", b as f64 / 1024.0),
        _ => format!("{:.1} MiB", b as f64 / 1048576.0),
    }
}

fn run(small: bool, out: &std::path::Path) -> Result<bool, String> {
    let cfg = config(small);
    let ctx = VulkanContext::new(&ContextOptions { validation: false, sync_validation: false, want_detail: false, ..Default::default() })
        .map_err(|e| e.to_string())?;
    let (w, h) = cfg.size;
    println!(
        "picking-vk benchmark on {} ({} config, view {w}x{h}, {} frames after {} warm-up, medians)",
        ctx.device_name,
        if small { "small" } else { "full" },
        cfg.frames,
        cfg.warmup
    );
    let cam = gpu_timing::camera(w, h);
    let mut all_parity_ok = true;
    let mut scene_rows = vec![];
    let mut chart_gpu = vec![];
    let mut chart_cpu = vec![];
    let mut latency_scene = None;
    println!();
    println!("| scene | tris/object | picker (culling) ms | picker (no culling) ms | full-size scissored ms | full-res ID ms | lit main ms | culled pick / lit | picker CPU culling, in frame µs | picker CPU culling, isolated µs | picker CPU no culling µs | picker CPU per-frame list culling µs | median draws recorded (cull/all) | parity picker cull | parity picker no cull | parity scissored |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut cpu_lines = vec![];
    let (mut query_lines, mut query_rows) = (vec![], vec![]);
    let (mut path_lines, mut path_rows) = (vec![], vec![]);
    let (mut sf_lines, mut sf_rows) = (vec![], vec![]);
    // GPU results: usable by the host's next pass once the pick and its results pass ran.
    let mut gpu_results_latency_us = None;
    let (mut hook_lines, mut hook_rows) = (vec![], vec![]);
    let mut planning = vec![];
    let mut draw_planning = vec![];
    for (k, spec) in cfg.scenes.iter().enumerate() {
        let scene = BenchScene::build(&ctx, *spec, 100 + k as u64).map_err(|e| e.to_string())?;
        let settle = || gpu_timing::settle_clocks(&ctx, &scene, cfg.size, cfg.settle_ms);
        settle()?;
        let t = gpu_timing::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, k as u64)?;
        let full = parity::full_image(&ctx, &scene, &cam, cfg.size)?;
        let pixels: Vec<UVec2> = {
            let mut rng = fastrand::Rng::with_seed(900 + k as u64);
            (0..cfg.parity_culled).map(|_| UVec2::new(rng.u32(..w), rng.u32(..h))).collect()
        };
        let pc = parity::picker(&ctx, &scene, &cam, cfg.size, true, &pixels, &full)?;
        let pu = parity::picker(&ctx, &scene, &cam, cfg.size, false, &pixels[..cfg.parity_unculled.min(pixels.len())], &full)?;
        let ps = parity::scissored(&ctx, &scene, &cam, cfg.size, &pixels[..cfg.parity_scissored.min(pixels.len())], &full)?;
        all_parity_ok &= pc.0 == pc.1 && pu.0 == pu.1 && ps.0 == ps.1;
        let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
        let rays: Vec<_> = pixels.iter().filter_map(|&p| request.ray(p).ok().flatten()).map(|r| (r.origin, r.direction)).collect();
        let expected: Vec<Option<usize>> = pixels.iter().map(|p| parity::object_of_texel(&scene, &full[(p.y * w + p.x) as usize])).collect();
        let mut cpu_rows = vec![];
        for result in [cpu_bvh::flat(&scene, &rays)?, cpu_bvh::two_level(&scene, &rays)?] {
            let agree = result.hits.iter().zip(&expected).filter(|(a, b)| a == b).count();
            cpu_lines.push(format!(
                "| {} | {} | {:.1} | {:.2} | {} | {agree}/{} |",
                spec.name,
                result.name,
                result.build_ms,
                result.ray_us,
                fmt_bytes(result.memory_bytes),
                expected.len()
            ));
            cpu_rows.push(json!({"method": result.name, "build_ms": result.build_ms, "ray_us": result.ray_us, "memory_bytes": result.memory_bytes, "agreement_with_gpu_id_image": [agree, expected.len()]}));
        }
        let ratio = t.gpu_ms[0] / t.gpu_ms[4];
        println!(
            "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.2}% | {:.1} | {:.1} | {:.1} | {:.1} | {}/{} | {}/{} | {}/{} | {}/{} |",
            spec.name,
            scene.triangles_per_object,
            t.gpu_ms[0],
            t.gpu_ms[1],
            t.gpu_ms[2],
            t.gpu_ms[3],
            t.gpu_ms[4],
            ratio * 100.0,
            t.in_frame_us,
            t.cpu_us[0],
            t.cpu_us[1],
            t.cpu_us[2],
            t.draws_recorded[0],
            t.draws_recorded[1],
            pc.0,
            pc.1,
            pu.0,
            pu.1,
            ps.0,
            ps.1
        );
        chart_gpu.push((spec.name.to_string(), t.gpu_ms.to_vec()));
        let cpu_ray = |i: usize| cpu_rows[i]["ray_us"].as_f64().unwrap_or(f64::NAN);
        chart_cpu.push((spec.name.to_string(), vec![t.in_frame_us, t.cpu_us[0], t.cpu_us[2], t.cpu_us[1], cpu_ray(0), cpu_ray(1)]));
        scene_rows.push(json!({
            "scene": spec.name, "objects": spec.objects, "triangles_per_object": scene.triangles_per_object, "instanced": spec.instanced,
            "gpu_ms": gpu_timing::APPROACHES.iter().zip(t.gpu_ms).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "culled_pick_over_lit": ratio,
            "picker_cpu_us": {"culling_shared_list_in_frame": t.in_frame_us, "culling_shared_list": t.cpu_us[0], "no_culling": t.cpu_us[1], "culling_per_frame_list": t.cpu_us[2]},
            "draws_recorded": {"culling": t.draws_recorded[0], "no_culling": t.draws_recorded[1]},
            "instances_culled": t.instances_culled,
            "parity": {"picker_culling": [pc.0, pc.1], "picker_no_culling": [pu.0, pu.1], "full_size_scissored": [ps.0, ps.1]},
            "cpu_bvh": cpu_rows,
        }));
        settle()?;
        let q = queries::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, 500 + k as u64)?;
        query_lines.push(format!(
            "| {} | {} | {:.2}x | {:.2}x | {} | {} | {} | {} | {:.1}% | {:.1}% | {:.1} / {:.1} ({:.2}x) | {:.1} / {:.1} | {:.0} |",
            spec.name,
            q.gpu_ms.iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>().join(" | "),
            q.gpu_ms[1] / q.gpu_ms[0],
            q.gpu_ms[2] / q.gpu_ms[0],
            format_args!("{:.2}x", q.gpu_ms[3] / q.gpu_ms[0]),
            format_args!("{:.2}x", q.gpu_ms[4] / q.gpu_ms[0]),
            format_args!("{:.1}%", 100.0 * q.gpu_ms[3] / q.gpu_ms[7]),
            format_args!("{:.1}%", 100.0 * q.gpu_ms[5] / q.gpu_ms[7]),
            100.0 * q.gpu_ms[4] / q.gpu_ms[7],
            100.0 * q.gpu_ms[4] / q.gpu_ms[8],
            q.cpu_us[0],
            q.cpu_us[1],
            q.cpu_us[1] / q.cpu_us[0],
            q.cpu_us[2],
            q.cpu_us[3],
            q.cpu_reduce_us
        ));
        if spec.instanced {
            settle()?;
            let gp = gpu_planning::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, 600 + k as u64)?;
            all_parity_ok &= gp.parity.0 == gp.parity.1;
            planning.push((gp.line(spec.name), gp.json(spec.name)));
        } else {
            settle()?;
            let gd = gpu_planning_draws::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, 650 + k as u64)?;
            all_parity_ok &= gd.parity.0 == gd.parity.1;
            draw_planning.push((gd.line(spec.name), gd.json(spec.name)));
        }
        settle()?;
        let paths = result_paths::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, 900 + k as u64)?;
        path_lines.push(paths.line(spec.name));
        if k == 0 {
            gpu_results_latency_us = Some(paths.gpu_us[0][1]);
        }
        // The same-frame path at every scene, 1 frame in flight (the queue idle at the pick).
        settle()?;
        let sf = latency::measure(&ctx, &scene, cfg.size, 1, cfg.latency_frames.max(100), true)?;
        sf_lines.push(format!("| {} | {:.0} | {:.0} |", spec.name, sf.micros, sf.p99_micros));
        sf_rows.push(json!({"scene": spec.name, "micros": sf.micros, "p99_micros": sf.p99_micros}));
        path_rows.push(paths.json(spec.name));
        query_rows.push(json!({
            "scene": spec.name,
            "gpu_ms": queries::APPROACHES.iter().zip(q.gpu_ms).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "cpu_us": {"record_one_point": q.cpu_us[0], "record_16_points": q.cpu_us[1], "take_one_point": q.cpu_us[2], "take_16_points": q.cpu_us[3]},
            "cpu_reduce_256_readback_us": q.cpu_reduce_us,
        }));
        settle()?;
        let hk = hooks::measure(&ctx, &scene, cfg.size, cfg.warmup, cfg.frames, 700 + k as u64)?;
        hook_lines.push(format!(
            "| {} | {:.4} | {:.4} | {:.4} | {:.2}x | {:.2}x | {:.1} | {:.1} | {:.1} | {:+.1} | {:+.1} | {:.1} | {:.1} |",
            spec.name,
            hk.gpu_ms[0],
            hk.gpu_ms[1],
            hk.gpu_ms[2],
            hk.gpu_ms[1] / hk.gpu_ms[0],
            hk.gpu_ms[2] / hk.gpu_ms[0],
            hk.cpu_us[0],
            hk.cpu_us[1],
            hk.cpu_us[2],
            hk.cpu_us[1] - hk.cpu_us[0],
            hk.cpu_us[2] - hk.cpu_us[0],
            hk.first_pick_ms[0],
            hk.first_pick_ms[1]
        ));
        hook_rows.push(json!({
            "scene": spec.name,
            "gpu_ms": hooks::VARIANTS.iter().zip(hk.gpu_ms).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "cpu_record_us": hooks::VARIANTS.iter().zip(hk.cpu_us).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "first_pick_ms": {"discard + texture fetch": hk.first_pick_ms[0], "world adjust": hk.first_pick_ms[1]},
        }));
        if k == 0 {
            latency_scene = Some(scene);
        }
    }
    println!();
    println!(
        "Query sets, GPU ms ({}), then ratios: 16 points / one pick, radius 8 / one pick, rect 64 / one pick, rect 256 / one pick, rect 64 / full-res ID, whole-view rect / full-res ID, rect 256 / full-res ID, rect 256 / full-res ID + readback; CPU µs record one / 16 points (ratio), take one / 16, CPU reduction of a read-back 256x256 region:",
        queries::APPROACHES.join(", ")
    );
    println!("| scene | {} | 16 pts / pick | r8 / pick | r64 / pick | r256 / pick | r64 / ID | view / ID | r256 / ID | r256 / ID+read | CPU record 1 / 16 µs | CPU take 1 / 16 µs | CPU reduce 256² readback µs |", queries::APPROACHES.join(" | "));
    println!("|---|{}", "---|".repeat(queries::APPROACHES.len() + 11));
    for l in &query_lines {
        println!("{l}");
    }
    println!();
    println!("GPU planning: the field's instances known to the CPU (CPU planner) against the same transforms written each frame by a host compute pass (GPU planner; CPU planner unculled), GPU ms, ratios, CPU µs of recording, GPU-planned answers equal to the CPU-known ones:");
    println!("{}", gpu_planning::HEADER);
    for (line, _) in &planning {
        println!("{line}");
    }
    println!();
    println!("GPU planning of a shared list's plain draws: the CPU planner against the GPU planner (the list's table, culled by a compute pass), GPU ms, ratios, CPU µs of recording, GPU-planned answers (object and depth) equal to the CPU-planned ones:");
    println!("{}", gpu_planning_draws::HEADER);
    for (line, _) in &draw_planning {
        println!("{line}");
    }
    println!();
    println!("GPU results and snapping, GPU µs (timestamps) without / with PickerConfig::gpu_results, side by side in the same frames; CPU µs:");
    println!("{}", result_paths::HEADER);
    for l in &path_lines {
        println!("{l}");
    }
    println!();
    println!("Same-frame CPU results (1 frame in flight): from the pick's early submission to its result on the CPU (wait_results at once):");
    println!("| scene | median µs | p99 µs |");
    println!("|---|---|---|");
    for l in &sf_lines {
        println!("{l}");
    }
    println!();
    println!("Hooks (culling, shared list), GPU ms and ratios to no hooks; CPU µs of recording (hooks compiled) and the difference; the first pick with each hook, compilation included:");
    println!("| scene | no hooks ms | discard + texture ms | world adjust ms | discard / none | world / none | CPU none µs | CPU discard µs | CPU world µs | discard - none µs | world - none µs | first discard pick ms | first world pick ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for l in &hook_lines {
        println!("{l}");
    }
    println!();
    println!("Skinned against rigid (culling off: every draw recorded), GPU ms and ratio to rigid; CPU µs of recording:");
    println!("| tubes x triangles | variant | GPU ms | / rigid | CPU record µs |");
    println!("|---|---|---|---|---|");
    let mut deform_rows = vec![];
    for (k, field) in deform::FIELDS.into_iter().enumerate() {
        let df = deform::measure(&ctx, field, cfg.size, cfg.warmup, cfg.frames, 900 + k as u64)?;
        for v in 0..deform::VARIANTS.len() {
            println!(
                "| {} x {} | {} | {:.4} | {:.2}x | {:.1} |",
                df.tubes,
                df.triangles,
                deform::VARIANTS[v],
                df.gpu_ms[v],
                df.gpu_ms[v] / df.gpu_ms[0],
                df.cpu_us[v]
            );
        }
        deform_rows.push(json!({
            "tubes": df.tubes,
            "triangles_per_tube": df.triangles,
            "gpu_ms": deform::VARIANTS.iter().zip(df.gpu_ms).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "cpu_record_us": deform::VARIANTS.iter().zip(df.cpu_us).map(|(a, v)| (a.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        }));
    }
    println!();
    println!("| scene | CPU ray cast | build ms | per ray µs | memory (heap) | agrees with GPU ID image |");
    println!("|---|---|---|---|---|---|");
    for l in &cpu_lines {
        println!("{l}");
    }

    let memory_rows = memory::table(&ctx)?;

    println!();
    println!("| frames in flight | pick-to-result latency (frames) | pick-to-result latency (µs, median) | p99 µs |");
    println!("|---|---|---|---|");
    let mut latency_rows = vec![];
    if let Some(scene) = &latency_scene {
        // The ring path at 1, 2 and 3 frames in flight, then the same-frame path at 1 (the
        // queue idle when the pick is submitted) and 2 (the pick queued behind the previous
        // frame's work).
        for (f, same_frame) in [(1, false), (2, false), (3, false), (1, true), (2, true)] {
            let l = latency::measure(&ctx, scene, cfg.size, f, cfg.latency_frames.max(3 * f), same_frame)?;
            let label = if l.same_frame { format!("{} (same frame: wait_results)", l.frames_in_flight) } else { l.frames_in_flight.to_string() };
            println!("| {label} | {:.0} | {:.0} | {:.0} |", l.frames, l.micros, l.p99_micros);
            latency_rows.push(
                json!({"frames_in_flight": l.frames_in_flight, "same_frame": l.same_frame, "frames": l.frames, "micros": l.micros, "p99_micros": l.p99_micros}),
            );
        }
    }
    if let Some(us) = gpu_results_latency_us {
        println!("| any (GPU results: the host's passes after the pick, same command buffer; GPU time of pick + results pass) | 0 | {us:.0} | |");
        latency_rows.push(json!({"gpu_results": true, "frames": 0.0, "micros": us}));
    }

    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let report = json!({"device": ctx.device_name, "config": if small { "small" } else { "full" }, "view": [w, h], "frames": cfg.frames, "scenes": scene_rows, "queries": query_rows, "result_paths": path_rows, "same_frame": sf_rows, "hooks": hook_rows, "gpu_planning": planning.iter().map(|p| &p.1).collect::<Vec<_>>(), "gpu_planning_draws": draw_planning.iter().map(|p| &p.1).collect::<Vec<_>>(), "deform": deform_rows, "memory": memory_rows, "latency": latency_rows, "parity_all_match": all_parity_ok});
    let json_path = out.join("bench.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report).unwrap_or_default()).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let png = chart::render(&[
        chart::Panel { title: "GPU time per frame", unit: "ms", series: &gpu_timing::APPROACHES, groups: chart_gpu },
        chart::Panel {
            title: "CPU time per pick",
            unit: "µs".replace('µ', "u").leak(),
            series: &[
                "picker, culling, shared list, in frame",
                "picker, culling, shared list, isolated",
                "picker, culling, per-frame list",
                "picker, no culling",
                "CPU BVH flat (per ray)",
                "CPU BVH two-level (per ray)",
            ],
            groups: chart_cpu,
        },
    ]);
    let png_path = out.join("bench.png");
    png.save(&png_path).map_err(|e| format!("{}: {e}", png_path.display()))?;
    println!();
    println!("parity: {}", if all_parity_ok { "every approach read back the right IDs" } else { "MISMATCH" });
    println!("wrote {} and {}", json_path.display(), png_path.display());
    Ok(all_parity_ok)
}
