//! The tool's own text inputs (config files, experiment and job files, run summaries) read
//! with a size cap, so a device such as `/dev/zero` or a file far larger than any such input
//! is refused by name instead of filling memory.

use std::io::Read;
use std::path::Path;

/// Largest text input read, bytes (64 MiB; the largest committed result is 24 KB).
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text of at most [`MAX_TEXT_BYTES`].
///
/// # Errors
/// I/O errors, invalid UTF-8, and `InvalidData` past the cap.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_TEXT_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_TEXT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, more than any config, experiment, job or summary file",
                MAX_TEXT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_without_end_is_refused_at_the_cap() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    }
}
