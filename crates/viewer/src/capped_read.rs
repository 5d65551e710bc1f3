//! Reading an input file up to a limit, whatever its size says (`/proc` files report 0, a
//! pipe or `/dev/zero` has none, a file may grow after it was looked at): the scene, the pick
//! file and the replay script.

use crate::ViewerError;
use std::io::Read;
use std::path::Path;

/// `path`'s bytes, at most `cap` of them and one more: a result longer than `cap` says the
/// file is larger, without reading the rest.
pub fn read_at_most(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![];
    std::fs::File::open(path)?.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `path`'s text (`what` names the input in errors), refused past `cap` bytes. Bytes are
/// counted before they are decoded, so a file cut at the limit inside a character is too
/// large, not malformed.
pub fn read_text(path: &Path, cap: u64, what: &str) -> Result<String, ViewerError> {
    let bytes = read_at_most(path, cap).map_err(|e| ViewerError::Input(format!("cannot read {what} {}: {e}", path.display())))?;
    if bytes.len() as u64 > cap {
        return Err(ViewerError::Input(format!("{what} {} is larger than {cap} bytes", path.display())));
    }
    String::from_utf8(bytes).map_err(|e| ViewerError::Input(format!("{what} {}: {e}", path.display())))
}
