//! Writing the headless outputs so that nothing is lost or overwritten by surprise: every
//! output is written to a temporary file beside its destination and renamed into place only
//! when all of them succeeded; a failure (a full disk, a PNG encoder error) is an error, and
//! leaves no partial output and no earlier output behind. Paths that collide with each other
//! or with an input are refused before anything runs.

use crate::ViewerError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Refuses outputs that name the same file twice, or an input (the scene, the pick file).
pub fn check_paths(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<(), ViewerError> {
    let key = |p: &Path| -> PathBuf {
        // Component by component: each existing prefix by its real path (links), so a `..`
        // after it steps up as the system will; folders still to be made by name.
        let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let mut key = PathBuf::new();
        for c in absolute.components() {
            match c {
                std::path::Component::ParentDir => {
                    key.pop();
                }
                std::path::Component::CurDir => {}
                other => {
                    key.push(other);
                    if let Ok(real) = key.canonicalize() {
                        key = real;
                    }
                }
            }
        }
        key
    };
    for (i, (what, path)) in outputs.iter().enumerate() {
        if path.is_dir() {
            return Err(ViewerError::Input(format!("--{what} {} is a folder, not a file", path.display())));
        }
        // Outputs are renamed into place: over a device, a pipe or a socket that would
        // replace the node itself.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(ViewerError::Input(format!("--{what} {} exists and is not a regular file", path.display())));
        }
        for (other, other_path) in &outputs[..i] {
            if key(path) == key(other_path) {
                return Err(ViewerError::Input(format!("--{what} and --{other} name the same file {}", path.display())));
            }
        }
        for (input, input_path) in inputs {
            if key(path) == key(input_path) {
                return Err(ViewerError::Input(format!("--{what} {} would overwrite the {input}", path.display())));
            }
        }
    }
    Ok(())
}

/// Outputs written to temporary files, renamed into place by [`Staged::commit`]; dropped
/// without a commit, the temporary files are removed.
#[derive(Default)]
pub struct Staged {
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staged {
    /// Writes one output through `write` into a temporary file beside `path`.
    pub fn write(&mut self, path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), ViewerError> {
        let fail = |e: std::io::Error| ViewerError::Output(format!("{}: {e}", path.display()));
        // A link is written through: the file it names is replaced, the link stays.
        let linked = path.is_symlink().then(|| path.canonicalize().ok()).flatten();
        let path = linked.as_deref().unwrap_or(path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        // Registered first, so a failure below still removes it.
        self.files.push((tmp.clone(), path.to_path_buf()));
        let file = std::fs::File::create(&tmp).map_err(fail)?;
        let mut out = std::io::BufWriter::new(file);
        write(&mut out).map_err(fail)?;
        let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
        // Errors of a full disk can surface only here.
        file.sync_all().map_err(fail)?;
        Ok(())
    }

    /// Moves every output into place. A destination that is a folder fails before anything
    /// moves; a rename that fails still leaves the outputs not yet moved removed.
    pub fn commit(mut self) -> Result<(), ViewerError> {
        if let Some((_, dir)) = self.files.iter().find(|(_, path)| path.is_dir()) {
            return Err(ViewerError::Output(format!("{} is a folder, not a file", dir.display())));
        }
        while let Some((tmp, path)) = self.files.first().cloned() {
            std::fs::rename(&tmp, &path).map_err(|e| ViewerError::Output(format!("{}: {e}", path.display())))?;
            self.files.remove(0);
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A PNG in memory, so an encoder error is an error rather than a half-written file.
pub fn png(image: &image::RgbaImage) -> Result<Vec<u8>, ViewerError> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    image.write_to(&mut bytes, image::ImageFormat::Png).map_err(|e| ViewerError::Output(format!("PNG encoding: {e}")))?;
    Ok(bytes.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_through_a_link_replaces_the_file_it_names() {
        let dir = std::env::temp_dir().join(format!("viewer-outputs-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("real.json"), "old").unwrap();
        let _ = std::fs::remove_file(dir.join("link.json"));
        std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
        let mut staged = Staged::default();
        staged.write(&dir.join("link.json"), |w: &mut dyn Write| w.write_all(b"new")).unwrap();
        staged.commit().unwrap();
        assert!(dir.join("link.json").is_symlink(), "the link stays a link");
        assert_eq!(std::fs::read_to_string(dir.join("real.json")).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_over_devices_are_refused() {
        // Renamed into place, a record file would replace the device node itself.
        let err = check_paths(&[("json", Path::new("/dev/null"))], &[]).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn colliding_paths_are_refused() {
        let dir = std::env::temp_dir().join(format!("viewer-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scene = dir.join("scene.glb");
        std::fs::write(&scene, b"x").unwrap();
        let a = dir.join("a.json");
        assert!(check_paths(&[("json", &a), ("screenshot", &dir.join("b.png"))], &[("scene", &scene)]).is_ok());
        assert!(check_paths(&[("json", &a), ("screenshot", &dir.join(".").join("a.json"))], &[]).is_err());
        assert!(check_paths(&[("json", &scene)], &[("scene", &scene)]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn uncommitted_outputs_leave_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("viewer-staged-{}", std::process::id()));
        let path = dir.join("out.json");
        let mut staged = Staged::default();
        staged.write(&path, |w| w.write_all(b"[]")).unwrap();
        assert!(staged.write(&dir.join("x.png"), |_| Err(std::io::Error::other("disk full"))).is_err());
        drop(staged);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no temporary file remains");
        let mut staged = Staged::default();
        staged.write(&path, |w| w.write_all(b"[]")).unwrap();
        staged.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"[]");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
