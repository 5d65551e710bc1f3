//! Device loss in the viewer window, under Xvfb with validation on: the frame loop is made to
//! behave as if its fence wait returned `ERROR_DEVICE_LOST` at two frames
//! (`PICKING_VK_VIEWER_DEVICE_LOSS_AT`). The viewer makes its Vulkan context, surface,
//! swapchain, scene upload and picker again each time, keeps the selection, goes on rendering
//! (a screenshot changes with the hover) and picking (a click selects the sheet), and exits 0
//! on Esc with zero validation messages over all three contexts.

mod common;

use common::{field, Viewer, Xvfb};
use std::time::Duration;

const STEP: Duration = Duration::from_secs(60);

fn screenshot(display: &str, name: &str) -> image::RgbaImage {
    let path = std::env::temp_dir().join(format!("picking-vk-device-loss-{}-{name}.png", std::process::id()));
    common::tool("import", &["-window", "root", path.to_str().unwrap()], display);
    image::open(&path).unwrap().to_rgba8()
}

#[test]
fn device_loss_is_recovered_and_rendering_and_picking_go_on() {
    let x = Xvfb::start("1280x800x24");
    let mut v = Viewer::start(&x.display, &[], &[("PICKING_VK_VIEWER_DEVICE_LOSS_AT", "20,150")]);
    // Select the sheet before the first loss.
    v.xdo_line("mousemove 800 420 click 1");
    assert!(v.wait_for("selected:", STEP).contains("\"Sheet\""));
    for _ in 0..2 {
        let lost = v.wait_for("device lost:", STEP);
        let recovered = v.wait_for("recovered:", STEP);
        assert!(field::<u64>(&recovered, "frame").is_some(), "{lost} / {recovered}");
    }
    // Rendering goes on: the view changes as the pointer hovers elsewhere.
    std::thread::sleep(Duration::from_millis(1000));
    let before = screenshot(&x.display, "before");
    v.xdo_line("mousemove 1000 200");
    std::thread::sleep(Duration::from_millis(1500));
    let after = screenshot(&x.display, "after");
    let changed = before.pixels().zip(after.pixels()).filter(|(a, b)| a != b).count();
    assert!(changed > 100, "the window is still drawn after recovery ({changed} pixels changed)");
    // Picking goes on.
    v.xdo_line("mousemove 800 420 click 1");
    let selected = v.wait_for("selected:", STEP);
    assert!(selected.contains("\"Sheet\""), "{selected}");
    let exit = v.quit_cleanly();
    assert!(exit.contains("device_losses=2"), "{exit}");
    eprintln!("device loss: {exit}");
}
