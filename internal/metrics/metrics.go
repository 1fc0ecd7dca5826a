// Package metrics is Quarry's Prometheus instrumentation: it implements the
// observer hooks the engine, the job queue, library imports and the HTTP
// layer expose, and reads run and queue counts from the store when
// scraped. Nothing below internal/app imports it, and it keeps its own
// registry (no global default registry), so two apps in one process (tests)
// never share counters.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"quarry/internal/engine"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/searcher"
	"quarry/internal/store"
)

// Stats is what a scrape reads from the database; *store.Store
// implements it.
type Stats interface {
	RunCounts(ctx context.Context) (map[engine.Status]int, error)
	QueueStats(ctx context.Context) (store.QueueStats, error)
}

// ScrapeTimeout bounds the database reads of one scrape.
const ScrapeTimeout = 5 * time.Second

// Metrics holds Quarry's collectors and the registry /metrics serves.
// Its methods are safe for concurrent use.
type Metrics struct {
	reg    *prometheus.Registry
	logger *slog.Logger

	httpDuration   *prometheus.HistogramVec
	stepDuration   *prometheus.HistogramVec
	decisions      *prometheus.CounterVec
	sourceRequests *prometheus.CounterVec
	jobWait        *prometheus.HistogramVec
	importRecords  prometheus.Counter
	imports        *prometheus.CounterVec
	importRate     prometheus.Gauge
	llmTokens      *prometheus.CounterVec
	llmDuration    *prometheus.HistogramVec
}

var _ engine.Observer = (*Metrics)(nil)

// Options tune New; the zero value is valid.
type Options struct {
	// Logger receives scrape errors; nil discards them.
	Logger *slog.Logger
	// Version is the running release (main.version), reported by
	// quarry_build_info; empty means a development build.
	Version string
}

// New builds the collectors and registers them, with the Go runtime's and
// the process's, on a registry of its own. stats is read at every scrape.
func New(stats Stats, opts Options) (*Metrics, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		logger: opts.Logger,
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quarry_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by method, route pattern and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "quarry_step_duration_seconds",
			Help: "Time of a workflow step's attempt, by workflow, step and outcome " +
				"(a resumed checkpoint counts from the decision to the resumption).",
			// 10 ms to 11 min: searches wait on rate-limited APIs.
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 9),
		}, []string{"workflow", "step", "outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quarry_decisions_total",
			Help: "Decisions recorded at checkpoints, by checkpoint kind and action.",
		}, []string{"kind", "action"}),
		sourceRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quarry_source_requests_total",
			Help: "Requests to literature sources, by source and outcome (ok, warning, error, timeout, canceled).",
		}, []string{"source", "outcome"}),
		jobWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quarry_job_wait_seconds",
			Help:    "Time a job waited between becoming due and a worker starting it, by job kind.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1 ms to 4.4 min
		}, []string{"kind"}),
		importRecords: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "quarry_import_records_total",
			Help: "Records read by library imports that were committed; rate() gives records per second.",
		}),
		imports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quarry_imports_total",
			Help: "Library imports that ended, by outcome (ok, error).",
		}, []string{"outcome"}),
		importRate: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "quarry_import_last_records_per_second",
			Help: "Records per second of the last committed library import.",
		}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quarry_llm_tokens_total",
			Help: "Tokens the skills' language-model calls spent, by model (provider/model) and direction (in, out).",
		}, []string{"model", "direction"}),
		llmDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quarry_llm_request_duration_seconds",
			Help:    "Time of a skill's language-model call (the SDK's retries included), by model.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 11), // 0.1 s to 102 s
		}, []string{"model"}),
	}
	for _, o := range []string{"ok", "error"} {
		m.imports.WithLabelValues(o)
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "quarry_build_info",
		Help:        "Always 1; its labels name the running release and the Go version that built it.",
		ConstLabels: prometheus.Labels{"version": opts.Version, "goversion": runtime.Version()},
	})
	buildInfo.Set(1)
	var errs []error
	for _, c := range []prometheus.Collector{
		buildInfo,
		m.httpDuration, m.stepDuration, m.decisions, m.sourceRequests, m.jobWait,
		m.importRecords, m.imports, m.importRate, m.llmTokens, m.llmDuration,
		newStoreCollector(stats),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		errs = append(errs, m.reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// Handler serves the registry in Prometheus' exposition format. A metric
// the store cannot read is left out of the answer and logged, rather than
// failing the whole scrape.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{m.logger},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // counts promhttp's own errors
	})
}

// Registry is what /metrics serves, for tests that gather directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest counts an answered HTTP request.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	m.httpDuration.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// StepDone implements engine.Observer.
func (m *Metrics) StepDone(workflow string, rec engine.StepRecord) {
	m.stepDuration.WithLabelValues(workflow, rec.Step, rec.Outcome).Observe(max(0, rec.Duration().Seconds()))
}

// Decided implements engine.Observer.
func (m *Metrics) Decided(_ string, kind engine.CheckpointKind, action engine.DecisionAction) {
	m.decisions.WithLabelValues(string(kind), string(action)).Inc()
}

// Progress implements engine.Observer: a search step's per-source report
// (a searcher.Event that ends the source) counts its requests by outcome,
// and a language-model call (research.LLMCall) its tokens and time.
// Other progress is not counted.
func (m *Metrics) Progress(_ string, ev engine.Event) {
	if c, ok := ev.Data.(research.LLMCall); ok {
		m.llmTokens.WithLabelValues(c.Model, "in").Add(float64(c.TokensIn))
		m.llmTokens.WithLabelValues(c.Model, "out").Add(float64(c.TokensOut))
		m.llmDuration.WithLabelValues(c.Model).Observe(c.Latency.Seconds())
		return
	}
	se, ok := ev.Data.(searcher.Event)
	if !ok || (se.Kind != searcher.EventDone && se.Kind != searcher.EventError) {
		return
	}
	for outcome, n := range se.Calls {
		m.sourceRequests.WithLabelValues(se.Source, string(outcome)).Add(float64(n))
	}
}

// JobStarted is store.QueueOptions.OnJobStart: a worker started a job
// that had waited this long since it was due.
func (m *Metrics) JobStarted(kind string, wait time.Duration) {
	m.jobWait.WithLabelValues(kind).Observe(wait.Seconds())
}

// ImportDone is a library.ImportObserver. Only a committed import's
// records count: a failed import leaves the library as it was.
func (m *Metrics) ImportDone(stats library.ImportStats, took time.Duration, err error) {
	if err != nil {
		m.imports.WithLabelValues("error").Inc()
		return
	}
	// The count of imports moves last: a scrape that sees the import
	// counted sees its records and its rate too.
	m.importRecords.Add(float64(stats.Read))
	if took > 0 {
		m.importRate.Set(float64(stats.Read) / took.Seconds())
	}
	m.imports.WithLabelValues("ok").Inc()
}

var _ library.ImportObserver = (*Metrics)(nil).ImportDone

// slogPrinter is promhttp's error log on slog.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.l.Warn("metrics: scrape", "err", fmt.Sprint(v...)) }
