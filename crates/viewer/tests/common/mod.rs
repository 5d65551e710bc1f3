//! What the window tests share: a private Xvfb display, the viewer in it with its output
//! read line by line, xdotool, and the process's resident memory, descriptors, threads and
//! CPU time from /proc. Missing tools fail the tests (never skip them).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// An Xvfb server on a display it chose itself (`-displayfd`), killed on drop.
pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Xvfb {
    pub fn start(screen: &str) -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", screen, "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is needed for this test (see tools/setup.sh)");
        let mut number = String::new();
        let mut out = child.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).map(|n| n == 1).unwrap_or(false) && byte[0] != b'\n' {
            number.push(byte[0] as char);
        }
        assert!(!number.trim().is_empty(), "Xvfb did not report its display");
        Xvfb { child, display: format!(":{}", number.trim()) }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The viewer in a window, its stdout as lines on a channel, its stderr collected.
pub struct Viewer {
    pub child: Child,
    pub display: String,
    lines: mpsc::Receiver<String>,
    /// Every stdout line read so far.
    pub log: Vec<String>,
    stderr: Option<std::thread::JoinHandle<()>>,
    /// Its stderr lines so far.
    errors: Arc<Mutex<Vec<String>>>,
    pub window: String,
}

impl Viewer {
    /// Starts `viewer --validation ARGS` on `display` with `envs`, and waits for its first frame.
    pub fn start(display: &str, args: &[&str], envs: &[(&str, &str)]) -> Viewer {
        // Diagnostics: `VIEWER_WRAPPER="heaptrack -o /tmp/viewer"` runs the viewer under a
        // wrapper (the /proc figures are then the wrapper's).
        let wrapper: Vec<String> = std::env::var("VIEWER_WRAPPER").map(|w| w.split_whitespace().map(String::from).collect()).unwrap_or_default();
        let mut cmd = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(env!("CARGO_BIN_EXE_viewer"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_viewer")),
        };
        cmd.arg("--validation").args(args).env("DISPLAY", display).env_remove("WAYLAND_DISPLAY").stdout(Stdio::piped()).stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start viewer");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stderr = child.stderr.take().unwrap();
        let errors = Arc::new(Mutex::new(vec![]));
        let collected = errors.clone();
        let stderr = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                collected.lock().unwrap().push(line);
            }
        });
        let mut v = Viewer { child, display: display.into(), lines, log: vec![], stderr: Some(stderr), errors, window: String::new() };
        v.wait_for("ready:", Duration::from_secs(120));
        v.window = v.xdo(&["search", "--name", "picking-vk viewer"]).lines().next().unwrap_or_default().to_string();
        assert!(!v.window.is_empty(), "the viewer window exists");
        v
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs xdotool on the viewer's display; returns its stdout.
    pub fn xdo(&self, args: &[&str]) -> String {
        tool("xdotool", args, &self.display)
    }

    /// xdotool with a command line of chained commands (`"mousemove 1 2 click 1"`).
    pub fn xdo_line(&self, line: &str) -> String {
        let args: Vec<&str> = line.split_whitespace().collect();
        self.xdo(&args)
    }

    /// Keyboard focus for the window (there is no window manager to give it).
    pub fn focus(&self) {
        let w = self.window.clone();
        self.xdo(&["windowfocus", "--sync", &w]);
    }

    /// Waits for a stdout line starting with `prefix`; panics with the output so far if none comes.
    pub fn wait_for(&mut self, prefix: &str, timeout: Duration) -> String {
        match self.try_wait_for(prefix, timeout) {
            Some(line) => line,
            None => {
                let errors = self.errors.lock().map(|e| e.join("\n")).unwrap_or_default();
                panic!("no {prefix:?} line within {timeout:?}; output so far:\n{}\nstderr:\n{errors}", self.log.join("\n"))
            }
        }
    }

    pub fn try_wait_for(&mut self, prefix: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if line.starts_with(prefix) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Every line printed so far (without waiting).
    pub fn drain(&mut self) -> &[String] {
        let start = self.log.len();
        while let Ok(line) = self.lines.try_recv() {
            self.log.push(line);
        }
        &self.log[start..]
    }

    /// Escape, then the exit: code 0, zero validation messages, no panic. Returns the exit line.
    pub fn quit_cleanly(mut self) -> String {
        self.focus();
        self.xdo(&["key", "Escape"]);
        let exit_line = self.wait_for("exit:", Duration::from_secs(60));
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "viewer did not exit");
            std::thread::sleep(Duration::from_millis(100));
        };
        self.stderr.take().unwrap().join().unwrap();
        let stderr = self.errors.lock().unwrap().clone();
        assert!(status.success(), "exit status {status:?}\n{}", stderr.join("\n"));
        assert!(exit_line.contains("validation_messages=0"), "{exit_line}\n{}", stderr.join("\n"));
        assert!(!stderr.iter().any(|l| l.contains("validation:") || l.contains("panicked")), "{}", stderr.join("\n"));
        exit_line
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn tool(cmd: &str, args: &[&str], display: &str) -> String {
    let out =
        Command::new(cmd).args(args).env("DISPLAY", display).output().unwrap_or_else(|e| panic!("{cmd} is needed for this test (see tools/setup.sh): {e}"));
    assert!(out.status.success(), "{cmd} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Resident memory in KiB (VmRSS).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap_or(0)
}

/// A `/proc/PID/status` field in KiB (`RssAnon`, `RssShmem`...).
pub fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix(&format!("{key}:"))).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap_or(0)
}

/// Open file descriptors.
pub fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Threads.
pub fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.count()).unwrap_or(0)
}

/// User plus system CPU time, in clock ticks (1/100 s on Linux).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0) + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// A field `key=value` of a line, parsed.
pub fn field<T: std::str::FromStr>(line: &str, key: &str) -> Option<T> {
    let start = line.find(&format!("{key}="))? + key.len() + 1;
    let rest = &line[start..];
    let end = rest.find(|c: char| c.is_whitespace() || c == ',' || c == ')').unwrap_or(rest.len());
    rest[..end].parse().ok()
}
