//! The tracing-subscriber timers stamp events with the wall tier's time.
#![cfg(feature = "tracing")]

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn stamp_of_one_event<T>(timer: T) -> String
where
    T: tracing_subscriber::fmt::time::FormatTime + Send + Sync + 'static,
{
    let buf = Buffer::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_timer(timer)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || tracing::info!("hello"));
    let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(out.contains("hello"), "{out}");
    out.split_whitespace().next().unwrap().to_string()
}

#[test]
fn events_carry_the_wall_time() {
    for stamp in [
        stamp_of_one_event(fastnow::tracing::WallTime),
        stamp_of_one_event(fastnow::tracing::RecentWallTime),
    ] {
        // The formatted time must be within a few seconds of SystemTime.
        let mut expected = String::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        fastnow::tracing::write_rfc3339(&mut expected, now.as_nanos() as u64).unwrap();
        assert_eq!(stamp.len(), "2026-11-22T23:42:43.123456Z".len(), "{stamp}");
        assert_eq!(stamp[..16], expected[..16], "{stamp} vs {expected}"); // same minute (boundary aside)
        assert!(stamp.ends_with('Z'));
    }
}
