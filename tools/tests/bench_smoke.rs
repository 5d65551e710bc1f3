//! Smoke run of the benchmark's small configuration on whatever device exists (lavapipe in
//! CI): it must finish, every approach must read back the right IDs, and the table, JSON and
//! chart must be written. Timings are printed, never asserted.

use std::process::Command;

#[test]
fn small_benchmark_runs_with_full_parity() {
    let out = std::env::temp_dir().join(format!("picking-vk-bench-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_bench")).args(["--small", "--out", out.to_str().unwrap()]).output().expect("run bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    println!("{stdout}");
    assert!(run.status.success(), "bench failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains("every approach read back the right IDs"));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    assert_eq!(report["parity_all_match"], true);
    let scenes = report["scenes"].as_array().unwrap();
    assert_eq!(scenes.len(), 4);
    for s in scenes {
        let [m, n] = [0, 1].map(|i| s["parity"]["picker_culling"][i].as_u64().unwrap());
        assert!(m == n && n >= 1000, "{s}");
        assert!(s["gpu_ms"]["lit main pass"].as_f64().unwrap() > 0.0);
    }
    let planning = report["gpu_planning"].as_array().unwrap();
    assert_eq!(planning.len(), 1, "GPU planning is measured on the instance field");
    let [m, n] = [0, 1].map(|i| planning[0]["parity"][i].as_u64().unwrap());
    assert!(m == n && n > 0, "GPU-planned answers equal the CPU-known ones: {}", planning[0]);
    for set in ["GPU-written, GPU planner: 16 points", "CPU-known, GPU planner: point", "CPU-known, GPU planner: whole view"] {
        assert!(planning[0]["gpu_ms"][set].as_f64().unwrap() > 0.0, "{set}");
    }
    // The whole view's survivors are drawn in runs (a row of the field per command at most),
    // without falling back.
    let view = &planning[0]["whole_view_plan"];
    let [survivors, commands, fallbacks] = ["survivors", "commands", "fallbacks"].map(|k| view[k].as_f64().unwrap());
    assert!(commands > 0.0 && commands * 10.0 < survivors && fallbacks == 0.0, "{view}");
    let memory = report["memory"].as_array().unwrap();
    assert_eq!(memory[0]["bytes_1x1"], memory[0]["bytes_3840x2160"], "pick memory does not grow with the view");
    let latency = report["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 6, "the ring at 1, 2 and 3 frames in flight, the same-frame path at 1 and 2, GPU results");
    assert!(latency[5]["gpu_results"] == true && latency[5]["frames"] == 0.0, "GPU results answer in the frame that asked");
    let same_frame = report["same_frame"].as_array().unwrap();
    assert_eq!(same_frame.len(), 4, "the same-frame latency at every scene");
    assert!(same_frame.iter().all(|r| r["p99_micros"].as_f64().unwrap() >= r["micros"].as_f64().unwrap()));
    let paths = report["result_paths"].as_array().unwrap();
    assert_eq!(paths.len(), 4, "a row of GPU results and snapping timings per scene");
    for row in paths {
        for set in ["point", "radius 8 nearest", "radius 8 thin", "rect 64x64"] {
            assert!(row["gpu_us"][set]["gpu_results"].as_f64().unwrap() > 0.0, "{row}");
        }
    }
    for row in latency.iter().filter(|r| r["same_frame"] == true) {
        assert_eq!(row["frames"], 0.0, "the same-frame path answers in the frame that asked: {row}");
    }
    let png = image::open(out.join("bench.png")).unwrap();
    assert!(png.width() > 500 && png.height() > 500);
}
