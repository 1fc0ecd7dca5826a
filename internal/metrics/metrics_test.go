package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/library"
	"quarry/internal/metrics"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/searcher"
	"quarry/internal/store"
)

// stats answers fixed figures, or err.
type stats struct {
	runs  map[engine.Status]int
	queue store.QueueStats
	err   error
}

func (s stats) RunCounts(context.Context) (map[engine.Status]int, error) { return s.runs, s.err }
func (s stats) QueueStats(context.Context) (store.QueueStats, error)     { return s.queue, s.err }

// gather returns each family's samples keyed by their labels ("k=v,k=v"):
// a counter's or gauge's value, a histogram's sample count.
func gather(t *testing.T, reg *prometheus.Registry) map[string]map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]map[string]float64{}
	for _, f := range fams {
		out[f.GetName()] = samples(f)
	}
	return out
}

func samples(f *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var key string
		for i, l := range m.GetLabel() {
			if i > 0 {
				key += ","
			}
			key += l.GetName() + "=" + l.GetValue()
		}
		switch {
		case m.Counter != nil:
			out[key] = m.Counter.GetValue()
		case m.Gauge != nil:
			out[key] = m.Gauge.GetValue()
		case m.Histogram != nil:
			out[key] = float64(m.Histogram.GetSampleCount())
		}
	}
	return out
}

func TestHooksAndScrape(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(stats{
		runs:  map[engine.Status]int{engine.StatusWaiting: 2, engine.StatusCompleted: 5},
		queue: store.QueueStats{Available: 3, Running: 1, OldestAvailable: 1500 * time.Millisecond},
	}, metrics.Options{Version: "v1.2.3"})
	require.NoError(t, err)

	now := time.Now()
	m.ObserveRequest("GET", "/runs/:id", 200, 30*time.Millisecond)
	m.StepDone("search", engine.StepRecord{Step: "search", Outcome: "ok", StartedAt: now, FinishedAt: now.Add(2 * time.Second)})
	m.Decided("search", pipeline.KindStrategyConfirmation, engine.Approve)
	m.Decided("search", pipeline.KindStrategyConfirmation, engine.Approve)
	m.Progress("search", engine.Event{Data: searcher.Event{Source: "arxiv", Kind: searcher.EventError,
		Calls: map[searcher.CallOutcome]int{searcher.CallOK: 2, searcher.CallTimeout: 1}}})
	m.Progress("search", engine.Event{Data: searcher.Event{Source: "arxiv", Kind: searcher.EventStart}})
	m.Progress("search", engine.Event{Data: "some other step's progress"})
	m.Progress("search", engine.Event{Data: research.LLMCall{Model: "openai/m", TokensIn: 300, TokensOut: 50, Latency: 1200 * time.Millisecond}})
	m.Progress("search", engine.Event{Data: research.LLMCall{Model: "openai/m", TokensIn: 100, TokensOut: 20, Latency: 800 * time.Millisecond}})
	m.JobStarted("advance_run", 20*time.Millisecond)
	m.ImportDone(library.ImportStats{Read: 1000, Inserted: 990, Skipped: 10}, 2*time.Second, nil)
	m.ImportDone(library.ImportStats{Read: 50}, time.Second, errors.New("broken gzip stream"))

	got := gather(t, m.Registry())
	require.Equal(t, map[string]float64{"method=GET,route=/runs/:id,status=200": 1}, got["quarry_http_request_duration_seconds"])
	require.Equal(t, map[string]float64{"outcome=ok,step=search,workflow=search": 1}, got["quarry_step_duration_seconds"])
	require.Equal(t, map[string]float64{"action=approve,kind=strategy_confirmation": 2}, got["quarry_decisions_total"])
	require.Equal(t, map[string]float64{"outcome=ok,source=arxiv": 2, "outcome=timeout,source=arxiv": 1}, got["quarry_source_requests_total"])
	require.Equal(t, map[string]float64{"kind=advance_run": 1}, got["quarry_job_wait_seconds"])
	require.Equal(t, map[string]float64{"direction=in,model=openai/m": 400, "direction=out,model=openai/m": 70}, got["quarry_llm_tokens_total"])
	require.Equal(t, map[string]float64{"model=openai/m": 2}, got["quarry_llm_request_duration_seconds"])
	require.Equal(t, map[string]float64{"": 1000}, got["quarry_import_records_total"], "the failed import's records are not counted")
	require.Equal(t, map[string]float64{"outcome=ok": 1, "outcome=error": 1}, got["quarry_imports_total"])
	require.Equal(t, map[string]float64{"": 500}, got["quarry_import_last_records_per_second"])
	require.Equal(t, map[string]float64{"status=pending": 0, "status=running": 0, "status=waiting": 2, "status=completed": 5,
		"status=failed": 0, "status=escalated": 0, "status=canceled": 0}, got["quarry_runs"])
	require.Equal(t, map[string]float64{"state=available": 3, "state=running": 1, "state=retryable": 0, "state=scheduled": 0}, got["quarry_jobs"])
	require.Equal(t, map[string]float64{"": 1.5}, got["quarry_job_oldest_available_age_seconds"])
	require.Equal(t, map[string]float64{"goversion=" + runtime.Version() + ",version=v1.2.3": 1}, got["quarry_build_info"])
	require.Contains(t, got, "go_goroutines")
	require.Contains(t, got, "process_start_time_seconds")
}

// TestScrapeSurvivesAStoreError: a database that cannot be read leaves its
// metrics out (and logs why), and the rest are still served.
func TestScrapeSurvivesAStoreError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	m, err := metrics.New(stats{err: errors.New("unable to open database file")}, metrics.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	m.Decided("search", pipeline.KindResultReview, engine.Edit)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, `quarry_decisions_total{action="edit",kind="result_review"} 1`)
	require.NotContains(t, body, "quarry_runs{")
	require.Contains(t, logs.String(), "unable to open database file")
}

// TestAppsDoNotShareCounters: each Metrics has its own registry.
func TestAppsDoNotShareCounters(t *testing.T) {
	t.Parallel()
	a, err := metrics.New(stats{}, metrics.Options{})
	require.NoError(t, err)
	b, err := metrics.New(stats{}, metrics.Options{})
	require.NoError(t, err)
	a.Decided("search", pipeline.KindResultReview, engine.Approve)
	require.NotContains(t, gather(t, b.Registry()), "quarry_decisions_total")
}
