package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/store"
)

// idleWindow is how long BenchmarkIdleCPU watches a server with no work.
const idleWindow = 20 * time.Second

// BenchmarkIdleCPU serves the app as cmd/web does (the search workflow,
// River's workers, the demo library) and, once it has answered a request
// and settled, measures the process's CPU time over idleWindow while
// nothing happens. It prints `engine: idle_cpu_pct=…` (issue 17: ≤ 1 % of
// a core). The benchmark binary itself adds nothing while it sleeps.
func BenchmarkIdleCPU(b *testing.B) {
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(b.TempDir(), "quarry.db")}
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, cfg, app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, logger)
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		b.Fatal(err)
	}
	_ = res.Body.Close()
	for b.Loop() {
		time.Sleep(2 * time.Second) // start-up work (seeding, first polls) ends
		before := cpuTime(b)
		start := time.Now()
		time.Sleep(idleWindow)
		pct := 100 * float64(cpuTime(b)-before) / float64(time.Since(start))
		b.ReportMetric(pct, "idle_cpu_pct")
		fmt.Printf("engine: idle_cpu_pct=%.2f (process CPU over %s of an idle server, %% of one core)\n", pct, idleWindow)
	}
	cancel()
	<-done
}

// cpuTime is the process's user plus system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
