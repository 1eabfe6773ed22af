//! A logged time (RFC 3339, UTC) as the rewind picker shows it: local time, "14:05" when it
//! is today, "2026-11-29 14:05" before. The local zone is the C library's (TZ, /etc/localtime),
//! as `date` shows it.

use std::time::{SystemTime, UNIX_EPOCH};

/// A local date and time to the minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Local {
    year: i32,
    month: i32,
    day: i32,
    hour: i32,
    minute: i32,
}

/// The label of `time` as seen at `now`; None when `time` is not RFC 3339.
pub fn label(time: &str, now: SystemTime) -> Option<String> {
    let at = humantime::parse_rfc3339_weak(time).ok()?;
    Some(label_of(local(at)?, local(now)?))
}

fn label_of(at: Local, today: Local) -> String {
    let clock = format!("{:02}:{:02}", at.hour, at.minute);
    if (at.year, at.month, at.day) == (today.year, today.month, today.day) {
        clock
    } else {
        format!("{:04}-{:02}-{:02} {clock}", at.year, at.month, at.day)
    }
}

fn local(time: SystemTime) -> Option<Local> {
    let secs = time.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let secs = libc::time_t::try_from(secs).ok()?;
    // SAFETY: `tm` is plain data that localtime_r fills (all zeroes is a valid value), and
    // both pointers are to live locals; the reentrant variant shares no static buffer.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let filled = unsafe { libc::localtime_r(&secs, &mut tm) };
    if filled.is_null() {
        return None;
    }
    Some(Local {
        year: tm.tm_year + 1900,
        month: tm.tm_mon + 1,
        day: tm.tm_mday,
        hour: tm.tm_hour,
        minute: tm.tm_min,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;

    fn at(year: i32, month: i32, day: i32, hour: i32, minute: i32) -> Local {
        Local {
            year,
            month,
            day,
            hour,
            minute,
        }
    }

    #[test]
    fn today_shows_the_clock_and_another_day_the_date_too() {
        let today = at(2026, 11, 30, 14, 5);
        assert_eq!(label_of(at(2026, 11, 30, 9, 7), today), "09:07");
        assert_eq!(
            label_of(at(2026, 11, 29, 23, 59), today),
            "2026-11-29 23:59"
        );
        assert_eq!(label_of(at(2025, 11, 30, 9, 7), today), "2025-11-30 09:07");
    }

    #[test]
    fn a_logged_time_is_read_in_the_local_zone() {
        let now = SystemTime::now();
        let stamp = humantime::format_rfc3339_seconds(now).to_string();
        let same = label(&stamp, now).unwrap();
        assert_eq!(same.len(), 5, "{same}");
        let old = humantime::format_rfc3339_seconds(now - Duration::from_secs(3 * 86_400));
        let old = label(&old.to_string(), now).unwrap();
        assert_eq!(old.len(), 16, "{old}");
        assert_eq!(&old[4..5], "-", "{old}");
        assert_eq!(label("yesterday", now), None);
    }
}
