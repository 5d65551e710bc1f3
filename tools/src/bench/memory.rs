//! What the picker holds, which never depends on the view: the default configuration, a
//! hover-only one and one for 16 points and a rectangle, against a full-size ID target and a
//! full-resolution ID pass with its readback, at three view sizes.

use crate::fmt_bytes;
use picking_vk::debug::IdImage;
use picking_vk::{Picker, PickerConfig};
use picking_vk_context::VulkanContext;
use serde_json::json;

/// Prints the memory table and returns its rows.
pub fn table(ctx: &VulkanContext) -> Result<Vec<serde_json::Value>, String> {
    // Memory: the picker holds the same bytes whatever the view size.
    // SAFETY: the context outlives the picker.
    let picker = unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(2)) }.map_err(|e| e.to_string())?;
    let memory = picker.memory();
    let pm = memory.total();
    drop(picker);
    // SAFETY: as above.
    let sets = unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(2).with_max_queries(17)) }.map_err(|e| e.to_string())?;
    let set_memory = sets.memory();
    drop(sets);
    let hover_only = PickerConfig::default().with_frames_in_flight(2).with_max_queries(1).with_max_radius(0).with_rect_entries(0).with_batch_rows(32);
    // SAFETY: as above.
    let hover = unsafe { Picker::new(ctx.host_device(), hover_only) }.map_err(|e| e.to_string())?;
    let hover_memory = hover.memory();
    drop(hover);
    println!();
    println!("| approach (2 frames in flight) | 1x1 | 1920x1080 | 3840x2160 |");
    println!("|---|---|---|---|");
    let mut memory_rows = vec![];
    let sizes = [(1u32, 1u32), (1920, 1080), (3840, 2160)];
    let mut full_size = vec![];
    for &(sw, sh) in &sizes {
        // SAFETY: the context's device and physical device belong to its live instance.
        let att = unsafe { IdImage::attachment_bytes_for(ctx.host_device(), sw, sh) }.map_err(|e| e.to_string())?;
        full_size.push(att);
    }
    let rows: [(&str, Vec<u64>); 5] = [
        ("picker, hover only (max_queries 1, max_radius 0, rect_entries 0, 32 batch rows)", vec![hover_memory.total(); 3]),
        ("picker, default config (16 query cells, 256x256 rectangle tile and table, staging ring, batch rows)", vec![pm; 3]),
        ("picker for 16 points + one 256x256 rectangle a frame (max_queries 17)", vec![set_memory.total(); 3]),
        ("full-size target, scissored (+ 1 texel staging)", full_size.iter().map(|a| a + 20).collect()),
        ("full-resolution ID pass (+ full readback)", full_size.iter().zip(sizes).map(|(a, (sw, sh))| a + u64::from(sw) * u64::from(sh) * 20).collect()),
    ];
    for (name, bytes) in &rows {
        println!("| {name} | {} | {} | {} |", fmt_bytes(bytes[0]), fmt_bytes(bytes[1]), fmt_bytes(bytes[2]));
        memory_rows.push(json!({"approach": name, "bytes_1x1": bytes[0], "bytes_1920x1080": bytes[1], "bytes_3840x2160": bytes[2]}));
    }
    println!(
        "picker: query cells {} B, rectangle tile and table {} B, staging {} B, batch rows {} B (none without multiDrawIndirect), GPU planner {} B (gpu_plan_pairs and gpu_plan_commands; none without drawIndirectCount)",
        memory.attachments, memory.rectangles, memory.staging, memory.draw_batches, memory.planner
    );
    Ok(memory_rows)
}
