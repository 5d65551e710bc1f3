//! `viewer [SCENE]`: the desktop viewer; `viewer --headless ...`: scripted picking.

use clap::Parser;
use picking_vk::config::PassRendering;
use std::path::PathBuf;
use std::process::ExitCode;
use viewer::headless::{self, HeadlessOptions};
use viewer::ViewerError;

#[derive(Parser, Debug)]
#[command(name = "viewer", about = "picking-vk viewer: hover to highlight, click to select, see what was picked")]
struct Args {
    /// A glTF 2.0 file (.gltf or .glb); the built-in scene when omitted.
    scene: Option<PathBuf>,
    /// Render offscreen and pick the pixels of --pick-file (or, with --demo, a built-in set).
    #[arg(long)]
    headless: bool,
    /// Headless demo: pick a grid of pixels and write picks.json, demo.png and id_view.png to --out.
    #[arg(long)]
    demo: bool,
    /// Output folder of --demo.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Render size, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size)]
    size: Option<(u32, u32)>,
    /// JSON array of entries, in any mix: `[x, y]`, `{"point": [x, y], "radius": r, "snap":
    /// "nearest" | "thin"}`, `{"rect": [x0, y0, x1, y1], "mode": "visible" | "all"}` (whole
    /// pixels, origin top-left).
    #[arg(long)]
    pick_file: Option<PathBuf>,
    /// Headless: replay a scripted camera and cursor path, frame by frame, picking in the
    /// frame that asks (`{"frames": [{"orbit": [dx, dy], "cursor": [x, y], "radius": r,
    /// "band": [x0, y0, x1, y1]}, ...]}`); --json gets a record per frame of what was
    /// highlighted, --screenshot the last frame.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Where to write the pick records (JSON).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Where to write the rendered image, first pick highlighted (PNG).
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Where to write the ID buffer in false colour (PNG).
    #[arg(long)]
    id_view: Option<PathBuf>,
    /// Enable the Khronos validation layer; any message makes the run fail.
    #[arg(long)]
    validation: bool,
    /// Do not use the detail attachment even where the device has it.
    #[arg(long)]
    no_detail: bool,
    /// Begin the pick passes with dynamic rendering instead of render passes.
    #[arg(long)]
    dynamic_rendering: bool,
    /// Write the built-in scene to this .glb file and exit (regenerates assets/default_scene.glb).
    #[arg(long)]
    write_default_scene: Option<PathBuf>,
    /// Read buffer and image files outside the scene's folder (absolute paths, `..`, `file://`).
    #[arg(long)]
    allow_external_uris: bool,
    /// Largest scene file, total buffer size and decoded geometry, in bytes.
    #[arg(long, default_value_t = viewer::gltf_load::LoadOptions::default().max_bytes)]
    max_scene_bytes: u64,
    /// Print the peak resident memory at exit (for memory-bound tests).
    #[arg(long, hide = true)]
    report_memory: bool,
    /// Window mode: quit after this many frames (for tests and screenshots).
    #[arg(long)]
    exit_after_frames: Option<u64>,
    /// Pose the scene's animations at this time in seconds (headless: picks and screenshot;
    /// window: where playback starts, paused). Without it, headless runs use the node
    /// transforms as the file gives them and the window plays from 0.
    /// Read as f64 so that a time past f32's range is refused as such, not as "inf".
    /// Takes a leading hyphen, so that `-inf` is refused as a time, not as a flag.
    #[arg(long, allow_hyphen_values = true)]
    time: Option<f64>,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("size {s:?} must look like 800x600"))?;
    let w: u32 = w.trim().parse().map_err(|_| format!("bad width in {s:?}"))?;
    let h: u32 = h.trim().parse().map_err(|_| format!("bad height in {s:?}"))?;
    if w == 0 || h == 0 {
        return Err(format!("size {s:?} must be at least 1x1"));
    }
    Ok((w, h))
}

fn rendering_of(args: &Args) -> PassRendering {
    if args.dynamic_rendering {
        PassRendering::Dynamic
    } else {
        PassRendering::RenderPass
    }
}

/// glibc serves allocations below its mmap threshold from heaps it rarely returns to the
/// system, and raises the threshold (up to 32 MiB) each time a large block is freed. A
/// software rasterizer (lavapipe) allocates and frees tens of megabytes a frame in 64 KiB
/// blocks from its own threads; in those heaps the churn fragments, and resident memory crept
/// up by about 0.7 MB a minute with 2,000 objects on screen. With the threshold fixed at
/// 64 KiB such blocks are mapped and unmapped whole. Set once, before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fix_allocator_threshold() {
    // SAFETY: mallopt only changes glibc's allocator parameters; called at the start of
    // main, before any other thread exists.
    let applied = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 64 * 1024) };
    if applied != 1 {
        log::warn!("could not set glibc's mmap threshold");
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fix_allocator_threshold() {}

fn main() -> ExitCode {
    fix_allocator_threshold();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("viewer: error: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, ViewerError> {
    if let Some(path) = &args.write_default_scene {
        // As every output: a temporary file renamed into place, so a failed write leaves
        // what was there.
        let mut staged = viewer::outputs::Staged::default();
        staged.write(path, |out| out.write_all(&viewer::default_scene::build().to_glb()))?;
        staged.commit()?;
        println!("wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let load = viewer::gltf_load::LoadOptions { allow_external_uris: args.allow_external_uris, max_bytes: args.max_scene_bytes };
    let mut scene = viewer::load_scene_with(args.scene.as_deref(), &load)?;
    if let Some((given, t)) = args.time.map(|t| (t, t as f32)) {
        if !t.is_finite() {
            return Err(ViewerError::Input(format!("--time {given:e}: must be a finite number of seconds (at most {:e})", f32::MAX)));
        }
        viewer::animation::pose(&mut scene, Some(t));
        viewer::gltf_load::check_pose(&scene).map_err(|e| ViewerError::Input(format!("--time {t}: {e}")))?;
    }
    if args.replay.is_some() && !args.headless {
        return Err(ViewerError::Input("--replay needs --headless".into()));
    }
    if !args.headless && !args.demo {
        return viewer_window(&args, scene);
    }
    if let Some(script) = &args.replay {
        return replay(&args, &scene, script);
    }
    let mut options = HeadlessOptions {
        size: args.size.unwrap_or((960, 540)),
        picks: vec![],
        json: args.json.clone(),
        screenshot: args.screenshot.clone(),
        id_view: args.id_view.clone(),
        validation: args.validation,
        detail: !args.no_detail,
        rendering: rendering_of(&args),
    };
    if args.demo {
        let (w, h) = options.size;
        options.picks = demo_pixels(w, h);
        options.json.get_or_insert(args.out.join("picks.json"));
        options.screenshot.get_or_insert(args.out.join("demo.png"));
        options.id_view.get_or_insert(args.out.join("id_view.png"));
    } else {
        let path = args.pick_file.as_ref().ok_or_else(|| ViewerError::Input("--headless needs --pick-file PICKS.json (or use --demo)".into()))?;
        options.picks = viewer::pick_file::read_pick_file(path)?;
    }
    let outputs: Vec<(&str, &std::path::Path)> = [("json", &options.json), ("screenshot", &options.screenshot), ("id-view", &options.id_view)]
        .into_iter()
        .filter_map(|(w, p)| Some((w, p.as_deref()?)))
        .collect();
    viewer::outputs::check_paths(&outputs, &inputs_of(&args, &scene, ("pick file", args.pick_file.as_deref())))?;
    let outcome = headless::run(&scene, &options)?;
    print_summary(&outcome, &options, args.demo);
    if args.report_memory {
        println!("peak memory: {} KiB", headless::peak_rss_kib().unwrap_or(0));
    }
    if args.validation && !outcome.validation_messages.is_empty() {
        eprintln!("viewer: {} validation message(s)", outcome.validation_messages.len());
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// What a run reads, which no output may name: the scene, the files it reads, and `script`
/// (the pick file or the replay script, where given).
fn inputs_of<'a>(args: &'a Args, scene: &'a viewer::scene::Scene, script: (&'a str, Option<&'a std::path::Path>)) -> Vec<(&'a str, &'a std::path::Path)> {
    let mut inputs: Vec<(&str, &std::path::Path)> = [("scene", args.scene.as_deref()), script].into_iter().filter_map(|(w, p)| Some((w, p?))).collect();
    inputs.extend(scene.files.iter().map(|f| ("scene's own file", f.as_path())));
    inputs
}

/// `--headless --replay SCRIPT`: see `viewer::replay`.
fn replay(args: &Args, scene: &viewer::scene::Scene, script: &std::path::Path) -> Result<ExitCode, ViewerError> {
    let frames = viewer::replay::read_script(script)?;
    let (w, h) = args.size.unwrap_or((960, 540));
    headless::check_size((w, h))?;
    if let Some(f) = frames.iter().find(|f| f.cursor[0] >= w || f.cursor[1] >= h || f.radius > 12) {
        return Err(ViewerError::Input(format!(
            "replay cursor {:?} radius {}: the cursor must lie in the {w}x{h} view, the radius at most 12",
            f.cursor, f.radius
        )));
    }
    // A band is clipped to the view, but one wholly outside it is no rectangle of the view.
    if let Some(band) = frames.iter().filter_map(|f| f.band).find(|b| b[0].min(b[2]) >= w || b[1].min(b[3]) >= h) {
        return Err(ViewerError::Input(format!("replay band {band:?}: it lies wholly outside the {w}x{h} view")));
    }
    let outputs: Vec<(&str, &std::path::Path)> =
        [("json", &args.json), ("screenshot", &args.screenshot)].into_iter().filter_map(|(w, p)| Some((w, p.as_deref()?))).collect();
    viewer::outputs::check_paths(&outputs, &inputs_of(args, scene, ("replay script", Some(script))))?;
    let ctx = picking_vk_context::VulkanContext::new(&picking_vk_context::ContextOptions { validation: args.validation, ..Default::default() })?;
    let mut staged = viewer::outputs::Staged::default();
    let records = viewer::replay::run(&ctx, scene, &frames, (w, h), &mut staged, (args.json.as_deref(), args.screenshot.as_deref()))?;
    let messages = ctx.take_validation_messages();
    let agree = records.iter().filter(|r| r["highlighted"] == r["cpu_hover"]).count();
    println!("replay: {} frames on {}; highlighted = same-frame CPU result in {agree}", records.len(), ctx.device_name);
    if args.validation && !messages.is_empty() {
        eprintln!("viewer: {} validation message(s):\n{}", messages.len(), messages.join("\n"));
        return Ok(ExitCode::from(3));
    }
    staged.commit()?;
    Ok(ExitCode::SUCCESS)
}

/// The centre, then a grid over the view.
fn demo_pixels(w: u32, h: u32) -> Vec<viewer::pick_file::PickEntry> {
    use viewer::pick_file::PickEntry;
    let (w, h) = (i64::from(w), i64::from(h));
    let mut picks = vec![PickEntry::Point { x: w / 2, y: h / 2 }];
    for j in 0..5 {
        for i in 0..8 {
            picks.push(PickEntry::Point { x: w * (2 * i + 1) / 16, y: h * (2 * j + 1) / 10 });
        }
    }
    // A radius query beside the centre and a rectangle over the middle of the view.
    picks.push(PickEntry::Radius { x: w / 2 + 3, y: h / 2, radius: 8, snap: picking_vk::Snap::Nearest });
    picks.push(PickEntry::Rect { rect: [w / 4, h / 4, w * 3 / 4, h * 3 / 4], mode: picking_vk::RectMode::Visible });
    picks
}

fn print_summary(outcome: &headless::HeadlessOutcome, options: &HeadlessOptions, table: bool) {
    println!("device: {}; detail picking: {:?}", outcome.device, outcome.detail);
    if table {
        println!("{:>5} {:>5}  {:<14} {:>4} {:>8} {:>9}  world", "x", "y", "node", "inst", "depth", "distance");
        for r in &outcome.shown {
            match &r.hit {
                Some(h) => println!(
                    "{:>5} {:>5}  {:<14} {:>4} {:>8.5} {:>9.3}  ({:.3}, {:.3}, {:.3})",
                    r.x,
                    r.y,
                    viewer::gltf_load::printable(h.node_name.as_deref().unwrap_or("?")),
                    h.instance.map_or("-".into(), |i| i.to_string()),
                    h.depth,
                    h.distance,
                    h.world.x,
                    h.world.y,
                    h.world.z
                ),
                None => println!("{:>5} {:>5}  (nothing)", r.x, r.y),
            }
        }
    }
    if outcome.picks > outcome.shown.len() && table {
        println!("... and {} more (all in the JSON file)", outcome.picks - outcome.shown.len());
    }
    println!("{} picks, {} hits", outcome.picks, outcome.hits);
    // A run with validation messages fails and writes no outputs.
    for (what, path) in [("pick records", &options.json), ("screenshot", &options.screenshot), ("ID view", &options.id_view)] {
        if let Some(p) = path.as_ref().filter(|_| outcome.validation_messages.is_empty()) {
            println!("{what}: {}", p.display());
        }
    }
}

fn viewer_window(args: &Args, scene: viewer::scene::Scene) -> Result<ExitCode, ViewerError> {
    let options = viewer::app::AppOptions {
        validation: args.validation,
        detail: !args.no_detail,
        rendering: rendering_of(args),
        exit_after_frames: args.exit_after_frames,
        time: args.time.map(|t| t as f32),
    };
    viewer::app::run(scene, options).map(ExitCode::from)
}
