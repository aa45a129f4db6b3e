package fastnow

import (
	"context"
	"log/slog"
)

// NewSlogHandler returns a slog.Handler that stamps each record with
// WallTime and passes it on to h.
//
// log/slog has no clock to replace: a Logger reads time.Now for every record
// it logs, before any Handler sees the record, so no handler saves that
// read. What a Handler may do is replace Record.Time, and this one does, so
// that log records are on the same timeline as the program's other fastnow
// stamps and, under UseClock, follow the test's ManualClock. A record whose
// Time is zero stays zero (handlers leave such a time out).
//
// A program that wants the cheaper read too builds its records itself,
// slog.NewRecord(WallTime(), level, msg, 0), and passes them to its
// handler's Handle. NewSlogHandler panics if h is nil.
func NewSlogHandler(h slog.Handler) slog.Handler {
	if h == nil {
		panic("fastnow: NewSlogHandler(nil)")
	}
	return slogHandler{h}
}

// slogHandler is NewSlogHandler's handler; the handlers derived from it
// (WithAttrs, WithGroup) stamp their records too.
type slogHandler struct{ h slog.Handler }

func (s slogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return s.h.Enabled(ctx, level)
}

func (s slogHandler) Handle(ctx context.Context, r slog.Record) error {
	if !r.Time.IsZero() {
		r.Time = WallTime()
	}
	return s.h.Handle(ctx, r)
}

func (s slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return slogHandler{s.h.WithAttrs(attrs)}
}

func (s slogHandler) WithGroup(name string) slog.Handler {
	return slogHandler{s.h.WithGroup(name)}
}
