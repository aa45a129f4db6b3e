//! The tracing-subscriber timers stamp events with the wall tier's time.
#![cfg(feature = "tracing")]

mod common;

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
    let before = common::system_unix_nanos();
    let stamps = [
        stamp_of_one_event(fastnow::tracing::WallTime),
        stamp_of_one_event(fastnow::tracing::RecentWallTime),
    ];
    let after = common::system_unix_nanos();
    for stamp in stamps {
        // RFC 3339 in UTC with microseconds, whatever the date and the
        // machine's time zone.
        let (_, fraction) = stamp.split_once('.').expect(&stamp);
        assert!(
            fraction.len() == 7 && fraction[..6].bytes().all(|b| b.is_ascii_digit()),
            "{stamp}"
        );
        assert!(stamp.ends_with('Z'), "{stamp}");
        // The time the event was stamped with is the system clock's, within
        // a second (the coarse tier's cached value may be a refresh old).
        let unix = stamp.parse::<fastnow::UnixTime>().expect(&stamp).as_nanos();
        assert!(
            unix + 1_000_000_000 >= before && unix <= after + 1_000_000_000,
            "{stamp} ({unix}) outside [{before}, {after}]"
        );
    }
}
