package store

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestQuietLoggerSaysARepeatOnce: the same River error a hundred times in
// a burst (a full disk fails every fetch) is one line, and the next one
// after the quiet period says how many were dropped.
func TestQuietLoggerSaysARepeatOnce(t *testing.T) {
	var buf bytes.Buffer
	l := quietLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	start := time.Now()
	for i := range 100 {
		r := slog.NewRecord(start.Add(time.Duration(i)*time.Millisecond), slog.LevelError, "producer: Error fetching jobs", 0)
		_ = l.Handler().Handle(t.Context(), r)
	}
	l.Info("not shown: below warnings")
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("a burst of one error logged %d lines:\n%s", n, buf.String())
	}
	r := slog.NewRecord(start.Add(repeatEvery+time.Second), slog.LevelError, "producer: Error fetching jobs", 0)
	_ = l.Handler().Handle(t.Context(), r)
	if !strings.Contains(buf.String(), "repeated=99") {
		t.Fatalf("the line after the quiet period does not count the dropped ones:\n%s", buf.String())
	}
}
