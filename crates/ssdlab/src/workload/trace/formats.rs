//! Line parsers of the supported trace formats.
//!
//! About 520 lines of code (then its tests), one short parser per format beside the field
//! parsers and error messages they share, so the formats' rules can be read side by side.

use super::TraceError;
use crate::workload::IoOp;
use std::path::Path;
use std::str::FromStr;

/// Supported trace formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`;
    /// timestamps in 100 ns ticks (Windows FILETIME), offsets and sizes in bytes.
    Msr,
    /// SPC (UMass Financial / WebSearch): `ASU,LBA,Size,Opcode,Timestamp`; LBA in 512 B
    /// sectors, size in bytes, opcode r/w, timestamp in seconds.
    Spc,
    /// FIU IODedup: `ts_ns pid process lba size R|W major minor md5`; lba and size in 512 B
    /// sectors; the MD5 of the content is kept. Tar framing around sample files is skipped.
    Fiu,
    /// DiskSim ASCII: `time devno lba size flags` (sectors; flags in hex as DiskSim reads them,
    /// bit 0 set = read: `1`, `0`, DiskSim's own dumps' `40000001`). DiskSim writes times in ms
    /// (with a decimal point); MQSim/SSDSim write integer ns.
    Disksim,
    /// FlashNet/Heimdall cuts: `ts_ms devno offset_bytes size_bytes op` (op 1 = read).
    Flashnet,
    /// blkparse text: `maj,min cpu seq time_s pid action rwbs sector + nsectors [process]`;
    /// only events of the given action become requests (D = dispatched to the device, the
    /// default; Q = queued by the block layer); other lines (other actions, flushes, discards,
    /// the per-CPU summary) are skipped.
    Blktrace(BlkAction),
    /// CloudPhysics vSCSI as CSV (libCacheSim): `version,time,op,size,lbn`; time in whole
    /// seconds, op a SCSI opcode in hex (reads 08/28/a8/88, writes 0a/2a/aa/8a; other commands
    /// are skipped), size in bytes, lbn in 512 B sectors.
    Vscsi,
    /// CloudPhysics vSCSI version 1 binary: 32-byte little-endian records `u32 sn, u32 len,
    /// u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts_us` (version in the high byte of `ver`).
    VscsiBin,
}

/// Which blkparse events are requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkAction {
    /// `Q`: queued.
    Queue,
    /// `D`: dispatched to the device driver.
    Dispatch,
    /// `C`: completed.
    Complete,
}

impl BlkAction {
    fn letter(self) -> &'static str {
        match self {
            BlkAction::Queue => "Q",
            BlkAction::Dispatch => "D",
            BlkAction::Complete => "C",
        }
    }
}

impl FromStr for BlkAction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "Q" | "q" => Ok(BlkAction::Queue),
            "D" | "d" => Ok(BlkAction::Dispatch),
            "C" | "c" => Ok(BlkAction::Complete),
            _ => Err(format!(
                "unknown blktrace action `{s}` (expected Q, D or C)"
            )),
        }
    }
}

/// Units of DiskSim-style timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
    /// ms if the field has a decimal point or exponent, else ns (DiskSim vs MQSim/SSDSim).
    Auto,
}

impl Format {
    /// All formats in detection order.
    pub const ALL: [Format; 8] = [
        Format::Msr,
        Format::Spc,
        Format::Fiu,
        Format::Disksim,
        Format::Flashnet,
        Format::Blktrace(BlkAction::Dispatch),
        Format::Vscsi,
        Format::VscsiBin,
    ];
    /// Name used by `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Fiu => "fiu",
            Format::Disksim => "disksim",
            Format::Flashnet => "flashnet",
            Format::Blktrace(_) => "blktrace",
            Format::Vscsi => "vscsi",
            Format::VscsiBin => "vscsi-bin",
        }
    }
    pub(super) fn default_unit(self) -> TimeUnit {
        match self {
            Format::Disksim => TimeUnit::Auto,
            Format::Flashnet => TimeUnit::Ms,
            Format::Spc | Format::Blktrace(_) | Format::Vscsi => TimeUnit::S,
            Format::VscsiBin => TimeUnit::Us,
            Format::Msr | Format::Fiu => TimeUnit::Ns,
        }
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown trace format `{s}` (expected auto, msr, spc, fiu, disksim, flashnet, blktrace, vscsi or vscsi-bin)"))
    }
}

impl FromStr for TimeUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "s" => TimeUnit::S,
            "ms" => TimeUnit::Ms,
            "us" => TimeUnit::Us,
            "ns" => TimeUnit::Ns,
            "auto" => TimeUnit::Auto,
            _ => {
                return Err(format!(
                    "unknown time unit `{s}` (expected s, ms, us, ns or auto)"
                ))
            }
        })
    }
}

/// One parsed record (absolute time in ns).
#[derive(Debug, Clone)]
pub(super) struct Record {
    pub time_ns: u128,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub op: IoOp,
    pub device: u32,
    pub content: Option<u128>,
}

/// A line-level error before the file and line number are attached.
#[derive(Debug)]
pub(super) struct LineError {
    field: &'static str,
    expected: String,
    found: String,
}

impl LineError {
    fn new(field: &'static str, expected: &str, found: &str) -> Self {
        let found = printable(&found.chars().take(60).collect::<String>());
        LineError {
            field,
            expected: expected.to_string(),
            found,
        }
    }
    pub(super) fn at(self, path: &Path, line: u64) -> TraceError {
        TraceError::Parse {
            path: path.to_path_buf(),
            line,
            field: self.field,
            expected: self.expected,
            found: self.found,
        }
    }
}

pub(super) type LineResult = Result<Option<Record>, LineError>;

/// Parses one line; `Ok(None)` for lines that carry no record (blank, comment, header, framing).
pub(super) fn parse_line(format: Format, unit: TimeUnit, line: &str) -> LineResult {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    match format {
        Format::Msr => msr(line),
        Format::Spc => spc(line),
        Format::Fiu => fiu(line),
        Format::Disksim => five_columns(line, unit, 512, true),
        Format::Flashnet => five_columns(line, unit, 1, false),
        Format::Blktrace(action) => blktrace(line, action),
        Format::Vscsi => vscsi_csv(line, unit),
        Format::VscsiBin => Err(LineError::new(
            "record",
            "32-byte binary vscsi records, not text lines",
            line,
        )),
    }
}

/// Nanoseconds per unit of a timestamp written as `text` (`Auto`: ms if it has a decimal point
/// or exponent, else ns).
fn unit_ns(unit: TimeUnit, text: &str) -> f64 {
    match unit {
        TimeUnit::S => 1e9,
        TimeUnit::Ms => 1e6,
        TimeUnit::Us => 1e3,
        TimeUnit::Ns => 1.0,
        TimeUnit::Auto if text.contains(['.', 'e', 'E']) => 1e6,
        TimeUnit::Auto => 1.0,
    }
}

/// Size of one binary vSCSI v1 record.
pub(super) const VSCSI_RECORD_BYTES: usize = 32;

/// The direction of a SCSI READ/WRITE command (6, 10, 12 and 16-byte forms); `None` for other
/// commands.
fn scsi_op(code: u16) -> Option<IoOp> {
    match code {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(IoOp::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(IoOp::Write),
        _ => None,
    }
}

fn vscsi_csv(line: &str, unit: TimeUnit) -> LineResult {
    let f: Vec<&str> = line.split(',').collect();
    if f[0].trim().eq_ignore_ascii_case("version") {
        return Ok(None);
    }
    uint(&f, 0, "version")?;
    let time = float(&f, 1, "time")? * unit_ns(unit, f[1]);
    let code = field(&f, 2, "op", "a SCSI opcode in hex")?;
    let code = u16::from_str_radix(code, 16)
        .map_err(|_| LineError::new("op", "a SCSI opcode in hex", code))?;
    let size = uint(&f, 3, "size")?;
    let lbn = uint(&f, 4, "lbn")?;
    let Some(op) = scsi_op(code) else {
        return Ok(None);
    };
    Ok(Some(Record {
        time_ns: time.round() as u128,
        offset_bytes: lbn.saturating_mul(512),
        size_bytes: size,
        op,
        device: 0,
        content: None,
    }))
}

/// Parses one binary vSCSI v1 record; `Ok(None)` for commands other than READ/WRITE.
pub(super) fn vscsi_record(rec: &[u8; VSCSI_RECORD_BYTES], unit: TimeUnit) -> LineResult {
    let u16_at = |i: usize| u16::from_le_bytes([rec[i], rec[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes(rec[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(rec[i..i + 8].try_into().expect("8 bytes"));
    let version = u16_at(14) >> 8;
    if version != 1 {
        return Err(LineError::new(
            "ver",
            "vscsi version 1 (only v1 records are supported)",
            &version.to_string(),
        ));
    }
    let Some(op) = scsi_op(u16_at(12)) else {
        return Ok(None);
    };
    Ok(Some(Record {
        time_ns: match unit {
            TimeUnit::Us | TimeUnit::Auto => u128::from(u64_at(24)) * 1000,
            _ => (u64_at(24) as f64 * unit_ns(unit, "")).round() as u128,
        },
        offset_bytes: u64_at(16).saturating_mul(512),
        size_bytes: u64::from(u32_at(4)),
        op,
        device: 0,
        content: None,
    }))
}

/// Whether the start of a file looks like a binary vSCSI v1 trace: text never holds NUL bytes,
/// and the first record must carry version 1 and a READ/WRITE opcode.
pub(super) fn looks_like_vscsi_bin(head: &[u8]) -> bool {
    head.contains(&0)
        && head
            .get(..VSCSI_RECORD_BYTES)
            .and_then(|r| r.try_into().ok())
            .is_some_and(|r| matches!(vscsi_record(r, TimeUnit::Us), Ok(Some(_))))
}

fn field<'a>(
    fields: &[&'a str],
    i: usize,
    name: &'static str,
    expected: &str,
) -> Result<&'a str, LineError> {
    fields
        .get(i)
        .map(|s| s.trim())
        .ok_or_else(|| LineError::new(name, expected, "<missing: line ends early>"))
}

fn uint(fields: &[&str], i: usize, name: &'static str) -> Result<u64, LineError> {
    let s = field(fields, i, name, "a non-negative integer")?;
    s.parse::<u64>()
        .map_err(|_| LineError::new(name, "a non-negative integer", s))
}

fn float(fields: &[&str], i: usize, name: &'static str) -> Result<f64, LineError> {
    let s = field(fields, i, name, "a non-negative number")?;
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(LineError::new(name, "a non-negative number", s)),
    }
}

fn device(v: u64, name: &'static str) -> Result<u32, LineError> {
    u32::try_from(v).map_err(|_| LineError::new(name, "a device number below 2^32", &v.to_string()))
}

fn msr(line: &str) -> LineResult {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() == 7 && f[0].trim().eq_ignore_ascii_case("timestamp") {
        return Ok(None);
    }
    let ticks = uint(&f, 0, "Timestamp")?;
    let dev = device(uint(&f, 2, "DiskNumber")?, "DiskNumber")?;
    let ty = field(&f, 3, "Type", "Read or Write")?;
    let op = if ty.eq_ignore_ascii_case("read") {
        IoOp::Read
    } else if ty.eq_ignore_ascii_case("write") {
        IoOp::Write
    } else {
        return Err(LineError::new("Type", "Read or Write", ty));
    };
    Ok(Some(Record {
        time_ns: u128::from(ticks) * 100,
        offset_bytes: uint(&f, 4, "Offset")?,
        size_bytes: uint(&f, 5, "Size")?,
        op,
        device: dev,
        content: None,
    }))
}

fn rw_letter(s: &str, name: &'static str) -> Result<IoOp, LineError> {
    match s {
        "r" | "R" => Ok(IoOp::Read),
        "w" | "W" => Ok(IoOp::Write),
        _ => Err(LineError::new(name, "r or w", s)),
    }
}

fn spc(line: &str) -> LineResult {
    let f: Vec<&str> = line.split(',').collect();
    let dev = device(uint(&f, 0, "ASU")?, "ASU")?;
    let lba = uint(&f, 1, "LBA")?;
    let size = uint(&f, 2, "Size")?;
    let op = rw_letter(field(&f, 3, "Opcode", "r or w")?, "Opcode")?;
    let secs = float(&f, 4, "Timestamp")?;
    Ok(Some(Record {
        time_ns: (secs * 1e9).round() as u128,
        offset_bytes: lba.saturating_mul(512),
        size_bytes: size,
        op,
        device: dev,
        content: None,
    }))
}

fn is_tar_framing(line: &str) -> bool {
    line.contains('\0')
        && line
            .rsplit('\0')
            .next()
            .is_none_or(|tail| tail.trim().is_empty())
        || line.contains("PaxHeaders")
        || line.contains("ustar")
        || line.split_once(' ').is_some_and(|(n, rest)| {
            n.bytes().all(|b| b.is_ascii_digit()) && rest.contains('=') && !rest.contains(' ')
        })
}

fn fiu(line: &str) -> LineResult {
    // Records glued behind tar header padding start after the last NUL byte.
    let record = line.rsplit('\0').next().unwrap_or(line);
    if is_tar_framing(line)
        && (record.trim().is_empty() || record.contains("ustar") || record.contains('='))
    {
        return Ok(None);
    }
    let f: Vec<&str> = record.split_whitespace().collect();
    if f.len() < 9 {
        return Err(LineError::new(
            "record",
            "9 space-separated fields: ts_ns pid process lba size R|W major minor md5",
            record,
        ));
    }
    let n = f.len();
    let time_ns = u128::from(uint(&f, 0, "ts_ns")?);
    let lba = uint(&f, n - 6, "lba")?;
    let size = uint(&f, n - 5, "size")?;
    let op = rw_letter(f[n - 4], "op")?;
    let dev = device(uint(&f, n - 2, "minor")?, "minor")?;
    let md5 = f[n - 1];
    let content = (md5.len() == 32)
        .then(|| u128::from_str_radix(md5, 16).ok())
        .flatten()
        .ok_or_else(|| LineError::new("md5", "32 hexadecimal digits", md5))?;
    Ok(Some(Record {
        time_ns,
        offset_bytes: lba.saturating_mul(512),
        size_bytes: size.saturating_mul(512),
        op,
        device: dev,
        content: Some(content),
    }))
}

/// Whether a line has the shape of a blkparse event (`maj,min cpu seq time pid action …`).
pub(super) fn is_blktrace_event(line: &str) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    f.len() >= 7
        && f[0].split_once(',').is_some_and(|(a, b)| {
            a.bytes().all(|c| c.is_ascii_digit()) && b.bytes().all(|c| c.is_ascii_digit())
        })
        && f[3].contains('.')
        && f[5].len() <= 2
}

fn blktrace(line: &str, action: BlkAction) -> LineResult {
    if !is_blktrace_event(line) {
        return Ok(None); // summary block, headers, blank lines
    }
    let f: Vec<&str> = line.split_whitespace().collect();
    if f[5] != action.letter() {
        return Ok(None);
    }
    let rwbs = f[6];
    let op = if rwbs.contains('D') {
        return Ok(None); // discard
    } else if rwbs.contains('R') {
        IoOp::Read
    } else if rwbs.contains('W') {
        IoOp::Write
    } else {
        return Ok(None); // flush or barrier without data
    };
    let secs = float(&f, 3, "time")?;
    let sector = uint(&f, 7, "sector")?;
    if field(&f, 8, "+", "`+` between sector and size")? != "+" {
        return Err(LineError::new("+", "`+` between sector and size", f[8]));
    }
    let sectors = uint(&f, 9, "nsectors")?;
    let minor = f[0].split_once(',').map_or("0", |(_, m)| m);
    Ok(Some(Record {
        time_ns: (secs * 1e9).round() as u128,
        offset_bytes: sector.saturating_mul(512),
        size_bytes: sectors.saturating_mul(512),
        op,
        device: minor.parse().unwrap_or(0),
        content: None,
    }))
}

/// A line of five columns: time, device, address, size, operation. DiskSim's operation field is
/// its request flags in hex (`%x` in its ASCII reader; bit 0 set: read), so its own request
/// dumps (`40000001`: a sequential read) load; FlashNet's is `1` or `0`.
fn five_columns(line: &str, unit: TimeUnit, addr_unit: u64, hex_flags: bool) -> LineResult {
    let f: Vec<&str> = line.split_whitespace().collect();
    let secs_factor = unit_ns(unit, field(&f, 0, "time", "a non-negative number")?);
    let time_ns = if secs_factor == 1.0 {
        u128::from(uint(&f, 0, "time")?)
    } else {
        (float(&f, 0, "time")? * secs_factor).round() as u128
    };
    let dev = device(uint(&f, 1, "devno")?, "devno")?;
    let addr = uint(&f, 2, if addr_unit == 1 { "offset" } else { "lba" })?;
    let size = uint(&f, 3, "size")?;
    let op = if hex_flags {
        const WANT: &str = "request flags in hex, bit 0 set for a read (1, 0, 40000001)";
        let text = field(&f, 4, "op", WANT)?;
        let digits = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text);
        match u32::from_str_radix(digits, 16) {
            Ok(flags) if !digits.starts_with('+') => {
                if flags & 1 == 1 {
                    IoOp::Read
                } else {
                    IoOp::Write
                }
            }
            _ => return Err(LineError::new("op", WANT, text)),
        }
    } else {
        match field(&f, 4, "op", "1 (read) or 0 (write)")? {
            "1" => IoOp::Read,
            "0" => IoOp::Write,
            other => return Err(LineError::new("op", "1 (read) or 0 (write)", other)),
        }
    };
    if f.len() > 5 {
        return Err(LineError::new("line", "exactly 5 fields", line));
    }
    Ok(Some(Record {
        time_ns,
        offset_bytes: addr.saturating_mul(addr_unit),
        size_bytes: size.saturating_mul(addr_unit),
        op,
        device: dev,
        content: None,
    }))
}

/// `text` with control characters (binary input: NUL, escape sequences) shown as `?`, so an
/// error quoting a hostile line cannot garble the terminal.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: Format, line: &str) -> Record {
        parse_line(f, f.default_unit(), line).unwrap().unwrap()
    }

    #[test]
    fn msr_line() {
        let r = one(
            Format::Msr,
            "128166386783630075,hm,0,Write,3164164096,40960,2896",
        );
        assert_eq!(
            (r.offset_bytes, r.size_bytes, r.op, r.device),
            (3164164096, 40960, IoOp::Write, 0)
        );
        assert_eq!(r.time_ns, 12816638678363007500);
    }

    #[test]
    fn disksim_op_is_its_request_flags_in_hex() {
        // DiskSim's own request dumps: the sequential bit 0x40000000 with bit 0 (read) or not.
        let r = one(Format::Disksim, "0.000000 0 1234 8 40000001");
        assert_eq!(
            (r.op, r.offset_bytes, r.time_ns),
            (IoOp::Read, 1234 * 512, 0)
        );
        assert_eq!(one(Format::Disksim, "0.5 0 8 8 40000000").op, IoOp::Write);
        assert_eq!(one(Format::Disksim, "0.5 0 8 8 0x3").op, IoOp::Read);
        assert_eq!(one(Format::Disksim, "0.5 0 8 8 a").op, IoOp::Write);
        for bad in ["zz", "-1", "+1", "100000000"] {
            let line = format!("0.5 0 8 8 {bad}");
            let e = parse_line(Format::Disksim, TimeUnit::Auto, &line).unwrap_err();
            assert!(format!("{e:?}").contains("flags in hex"), "{bad}: {e:?}");
        }
        // FlashNet's op stays 1 or 0.
        assert!(parse_line(Format::Flashnet, TimeUnit::Auto, "1.0 0 4096 4096 40000001").is_err());
    }

    #[test]
    fn spc_and_disksim_units() {
        let r = one(Format::Spc, "0,303567,3584,w,0.5");
        assert_eq!(
            (r.offset_bytes, r.size_bytes, r.time_ns),
            (303567 * 512, 3584, 500_000_000)
        );
        let r = one(Format::Disksim, "26214000 1 240840 6 0");
        assert_eq!((r.time_ns, r.size_bytes, r.device), (26214000, 3072, 1));
        let r = one(Format::Disksim, "1.5 0 8 8 1");
        assert_eq!((r.time_ns, r.op), (1_500_000, IoOp::Read));
        let r = one(Format::Flashnet, "223.412 0 3159347200 36864 0");
        assert_eq!(
            (r.time_ns, r.offset_bytes, r.size_bytes),
            (223_412_000, 3159347200, 36864)
        );
    }

    #[test]
    fn fiu_record_behind_tar_padding() {
        let r = one(
            Format::Fiu,
            "\0\0\089966527950584 4253 nfsd 508516672 8 W 6 0 88b93b628d84082186026d9da044f173",
        );
        assert_eq!(
            (r.offset_bytes, r.size_bytes, r.op),
            (508516672 * 512, 4096, IoOp::Write)
        );
        assert_eq!(r.content, Some(0x88b93b628d84082186026d9da044f173));
        assert!(
            parse_line(Format::Fiu, TimeUnit::Ns, "28 ctime=1410563671.7201132")
                .unwrap()
                .is_none()
        );
        assert!(parse_line(Format::Fiu, TimeUnit::Ns, "\0\0\0\0")
            .unwrap()
            .is_none());
    }

    #[test]
    fn blktrace_keeps_the_chosen_action() {
        let d = "  8,16   3        9     0.000032064  4528  D   R 584808 + 936 [java]";
        let r = one(Format::Blktrace(BlkAction::Dispatch), d);
        assert_eq!(
            (r.offset_bytes, r.size_bytes, r.op, r.device, r.time_ns),
            (584808 * 512, 936 * 512, IoOp::Read, 16, 32064)
        );
        assert!(
            parse_line(Format::Blktrace(BlkAction::Queue), TimeUnit::S, d)
                .unwrap()
                .is_none()
        );
        let flush = "  8,16   3        9     0.1  4528  D   FN [java]";
        assert!(
            parse_line(Format::Blktrace(BlkAction::Dispatch), TimeUnit::S, flush)
                .unwrap()
                .is_none()
        );
        assert!(parse_line(
            Format::Blktrace(BlkAction::Dispatch),
            TimeUnit::S,
            "CPU2 (8,16):"
        )
        .unwrap()
        .is_none());
        let bad = "  8,16   3        9     0.5  4528  D   W 5848x08 + 8 [java]";
        assert_eq!(
            parse_line(Format::Blktrace(BlkAction::Dispatch), TimeUnit::S, bad)
                .unwrap_err()
                .field,
            "sector"
        );
    }

    #[test]
    fn bad_fields_are_named() {
        let e = parse_line(Format::Msr, TimeUnit::Ns, "1,hm,0,Trim,0,4096,1").unwrap_err();
        assert_eq!(e.field, "Type");
        let e = parse_line(Format::Spc, TimeUnit::S, "0,12,-4096,r,0.1").unwrap_err();
        assert_eq!(e.field, "Size");
        let e = parse_line(Format::Disksim, TimeUnit::Ns, "100 0 8").unwrap_err();
        assert_eq!(e.field, "size");
        assert!(e.found.contains("missing"));
    }

    #[test]
    fn vscsi_csv_line() {
        let r = one(Format::Vscsi, "1,5633898,2a,512,42932745");
        assert_eq!(r.op, IoOp::Write);
        assert_eq!(r.time_ns, 5_633_898_000_000_000);
        assert_eq!((r.offset_bytes, r.size_bytes), (42_932_745 * 512, 512));
        assert_eq!(one(Format::Vscsi, "1,7,28,4096,8").op, IoOp::Read);
        let header = "version,time,op,size,lbn";
        assert!(parse_line(Format::Vscsi, TimeUnit::S, header)
            .unwrap()
            .is_none());
        // TEST UNIT READY (00) is not an I/O: skipped, not an error.
        assert!(parse_line(Format::Vscsi, TimeUnit::S, "1,7,00,0,0")
            .unwrap()
            .is_none());
        let e = parse_line(Format::Vscsi, TimeUnit::S, "1,7,zz,4096,8").unwrap_err();
        assert_eq!(e.field, "op");
    }

    #[test]
    fn vscsi_binary_record() {
        let mut rec = [0u8; VSCSI_RECORD_BYTES];
        rec[4..8].copy_from_slice(&8192u32.to_le_bytes());
        rec[12..14].copy_from_slice(&0x28u16.to_le_bytes());
        rec[14..16].copy_from_slice(&0x0100u16.to_le_bytes());
        rec[16..24].copy_from_slice(&100u64.to_le_bytes());
        rec[24..32].copy_from_slice(&1_234_567u64.to_le_bytes());
        assert!(looks_like_vscsi_bin(&rec));
        let r = vscsi_record(&rec, TimeUnit::Us).unwrap().unwrap();
        assert_eq!(r.op, IoOp::Read);
        assert_eq!(r.time_ns, 1_234_567_000);
        assert_eq!((r.offset_bytes, r.size_bytes), (51_200, 8192));
        rec[12] = 0x12; // INQUIRY
        assert!(vscsi_record(&rec, TimeUnit::Us).unwrap().is_none());
        assert!(!looks_like_vscsi_bin(
            b"1,5633898,2a,512,42932745\n1,5633898,2a,512,4293"
        ));
    }
}
