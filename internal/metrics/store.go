package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"quarry/internal/engine"
)

// storeCollector reads runs by status and the job queue's depth from the
// database at each scrape, so the figures are the database's, not counts
// this process kept (which a restart would lose).
type storeCollector struct {
	stats        Stats
	runs         *prometheus.Desc
	jobs         *prometheus.Desc
	oldestJobAge *prometheus.Desc
}

func newStoreCollector(stats Stats) *storeCollector {
	return &storeCollector{
		stats: stats,
		runs: prometheus.NewDesc("quarry_runs",
			"Runs in the database, by status.", []string{"status"}, nil),
		jobs: prometheus.NewDesc("quarry_jobs",
			"Jobs in River's queue, by state (available: due; running; retryable: failed, to be retried; scheduled: due later).",
			[]string{"state"}, nil),
		oldestJobAge: prometheus.NewDesc("quarry_job_oldest_available_age_seconds",
			"How long the oldest available job has been due (0 when none is); growing means the workers are stuck or too few.",
			nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runs
	ch <- c.jobs
	ch <- c.oldestJobAge
}

// Collect implements prometheus.Collector. A read that fails becomes an
// invalid metric, which the handler logs and leaves out.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	if counts, err := c.stats.RunCounts(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.runs, err)
	} else {
		// Every status is reported, zero included, so a dashboard's series
		// do not appear and vanish.
		for _, status := range engine.Statuses() {
			if _, ok := counts[status]; !ok {
				ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, 0, string(status))
			}
		}
		for status, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(n), string(status))
		}
	}
	q, err := c.stats.QueueStats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		ch <- prometheus.NewInvalidMetric(c.oldestJobAge, err)
		return
	}
	for state, n := range map[string]int{"available": q.Available, "running": q.Running, "retryable": q.Retryable, "scheduled": q.Scheduled} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(c.oldestJobAge, prometheus.GaugeValue, q.OldestAvailable.Seconds())
}
