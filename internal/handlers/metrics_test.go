package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// scrape fetches /metrics and parses it as Prometheus does.
func (w *web) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := w.client.Get(w.srv.URL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/plain")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return fams
}

// value returns the sample of fam whose labels include want: a counter's
// or gauge's value, a histogram's count; ok is false when none matches.
func value(fam *dto.MetricFamily, want map[string]string) (v float64, ok bool) {
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// requireValue checks that fam has a sample with the labels want and
// returns its value.
func requireValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	fam, ok := fams[name]
	require.True(t, ok, "no metric family %s", name)
	v, ok := value(fam, want)
	require.True(t, ok, "%s has no sample labelled %v", name, want)
	return v
}

// TestMetricsAfterARunAndAnImport runs a search to its review checkpoint
// (a person approving the strategy on the way) and imports a file, then
// scrapes /metrics as Prometheus would: every family is there, labelled
// by route pattern, workflow, step, checkpoint kind, source and state.
func TestMetricsAfterARunAndAnImport(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation",
		"strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	w.waitForCheckpoint(t, created.ID, "result_review", 1)

	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, page := w.get(t, c, "/library")
	res, _ = w.upload(t, c, csrf(page), "endnote.ris", sampleRIS, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)

	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool { // the import runs in the background
		fams = w.scrape(t)
		v, ok := value(fams["quarry_imports_total"], map[string]string{"outcome": "ok"})
		return ok && v == 1
	}, 10*time.Second, 50*time.Millisecond, "the import never counted")

	// HTTP: by route pattern, never by path (run IDs are share links).
	require.Equal(t, 1.0, requireValue(t, fams, "quarry_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/runs", "status": "201"}))
	require.Equal(t, 1.0, requireValue(t, fams, "quarry_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/runs/:id/decisions", "status": "202"}))
	require.Positive(t, requireValue(t, fams, "quarry_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/api/runs/:id", "status": "200"}))
	for _, m := range fams["quarry_http_request_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			require.NotContains(t, l.GetValue(), created.ID)
		}
	}

	// Runs by status, read from the database: this one waits.
	require.Equal(t, 1.0, requireValue(t, fams, "quarry_runs", map[string]string{"status": "waiting"}))
	require.Equal(t, 0.0, requireValue(t, fams, "quarry_runs", map[string]string{"status": "failed"}))

	// Steps: each ran once in the first iteration; the strategy gate was
	// visited (checkpoint) and resumed (ok); the review gate waits.
	for step, outcome := range map[string]string{"parse": "ok", "build": "ok", "search": "ok", "dedup": "ok", "score": "ok", "organize": "ok", "review": "checkpoint"} {
		require.Equal(t, 1.0, requireValue(t, fams, "quarry_step_duration_seconds", map[string]string{"workflow": "search", "step": step, "outcome": outcome}), step)
	}
	require.Equal(t, 1.0, requireValue(t, fams, "quarry_step_duration_seconds", map[string]string{"step": "confirm_strategy", "outcome": "checkpoint"}))
	require.Equal(t, 1.0, requireValue(t, fams, "quarry_step_duration_seconds", map[string]string{"step": "confirm_strategy", "outcome": "ok"}))

	require.Equal(t, 1.0, requireValue(t, fams, "quarry_decisions_total", map[string]string{"kind": "strategy_confirmation", "action": "approve"}))

	// The search sent each source its queries; all answered.
	for _, source := range testapp.Sources {
		require.Positive(t, requireValue(t, fams, "quarry_source_requests_total", map[string]string{"source": source, "outcome": "ok"}), source)
	}

	// The queue: every state is reported; the run's jobs waited and ran.
	for _, state := range []string{"available", "running", "retryable", "scheduled"} {
		requireValue(t, fams, "quarry_jobs", map[string]string{"state": state})
	}
	requireValue(t, fams, "quarry_job_oldest_available_age_seconds", nil)
	require.GreaterOrEqual(t, requireValue(t, fams, "quarry_job_wait_seconds", map[string]string{"kind": "advance_run"}), 2.0,
		"the run's first job and the job the decision queued")

	// The import: 3 records read (2 stored, 1 skipped) at some rate.
	require.Equal(t, 3.0, requireValue(t, fams, "quarry_import_records_total", nil))
	require.Positive(t, requireValue(t, fams, "quarry_import_last_records_per_second", nil))

	require.Contains(t, fams, "go_goroutines")
	require.Contains(t, fams, "process_resident_memory_bytes")
	for name := range fams {
		require.True(t, strings.HasPrefix(name, "quarry_") || strings.HasPrefix(name, "go_") ||
			strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_"), name)
	}
}
