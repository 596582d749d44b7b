package mcpserver

import (
	"net/http"
	"time"

	"github.com/satchel-dev/satchel"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (so several servers can live in one process):
//
//	satchel_mcp_tool_calls_total{tool}             calls, refused ones included
//	satchel_mcp_tool_errors_total{tool}            calls that returned a tool error
//	satchel_mcp_tool_duration_seconds{tool}        latency histogram
//	satchel_mcp_stored_bytes_total                 content bytes written by tools
//	satchel_mcp_spills_total                       results spilled
//	satchel_mcp_sessions                           open sessions
//	satchel_mcp_http_unauthorized_total            HTTP requests refused with 401
//	satchel_access_refusals_total{agent,reason}    refusals of file rules (read_only, hidden)
//
// plus the Go runtime and process collectors, and, on a backend with a
// pool of connections (Store.PoolStats, PostgreSQL), the pool's:
//
//	satchel_db_pool_connections{state}             in_use, idle
//	satchel_db_pool_max_connections                its bound (pool_max_conns)
//	satchel_db_pool_acquires_total                 connections taken
//	satchel_db_pool_acquire_waits_total            of those, taken after waiting
//	satchel_db_pool_acquire_wait_seconds_total     time those waited, in all
//
// File tools are labelled by their name without the server's prefix.
type metrics struct {
	reg          *prometheus.Registry
	calls        *prometheus.CounterVec
	errors       *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	stored       prometheus.Counter
	spills       prometheus.Counter
	sessions     prometheus.Gauge
	unauthorized prometheus.Counter

	gate func(http.Handler) http.Handler // who may read them
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "satchel_mcp_tool_calls_total", Help: "Tool calls, by tool.",
		}, []string{"tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "satchel_mcp_tool_errors_total", Help: "Tool calls that returned a tool error, by tool.",
		}, []string{"tool"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "satchel_mcp_tool_duration_seconds",
			Help:    "Latency of tool calls, by tool.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "satchel_mcp_stored_bytes_total", Help: "Bytes of content stored by tool calls (written, appended, edited in).",
		}),
		spills: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "satchel_mcp_spills_total", Help: "Tool results spilled to the caller's thread.",
		}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "satchel_mcp_sessions", Help: "Open MCP sessions.",
		}),
		unauthorized: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "satchel_mcp_http_unauthorized_total", Help: "HTTP requests refused for a missing or invalid token.",
		}),
	}
	m.reg.MustRegister(m.calls, m.errors, m.duration, m.stored, m.spills, m.sessions, m.unauthorized,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// call records one tool call.
func (m *metrics) call(tool string, d time.Duration, failed bool) {
	m.calls.WithLabelValues(tool).Inc()
	if failed {
		m.errors.WithLabelValues(tool).Inc()
	}
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
}

// handler serves the metrics, through gate when one is set.
func (m *metrics) handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	if m.gate != nil {
		return m.gate(h)
	}
	return h
}

// poolCollector exports a backend's pool of connections, read once a
// scrape so that its figures agree with each other.
type poolCollector struct{ st *satchel.Store }

var (
	poolConnsDesc = prometheus.NewDesc("satchel_db_pool_connections",
		"Connections of the database pool, by state: in_use (taken now), idle (open and free).", []string{"state"}, nil)
	poolMaxDesc = prometheus.NewDesc("satchel_db_pool_max_connections",
		"The database pool's bound on its connections (pool_max_conns in the URL).", nil, nil)
	poolAcquiresDesc = prometheus.NewDesc("satchel_db_pool_acquires_total",
		"Connections taken from the database pool.", nil, nil)
	poolWaitsDesc = prometheus.NewDesc("satchel_db_pool_acquire_waits_total",
		"Connections taken from the database pool after waiting, none being free.", nil, nil)
	poolWaitedDesc = prometheus.NewDesc("satchel_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a free connection of the database pool, in all.", nil, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConnsDesc, poolMaxDesc, poolAcquiresDesc, poolWaitsDesc, poolWaitedDesc} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s, _ := c.st.PoolStats()
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(s.Max))
	ch <- prometheus.MustNewConstMetric(poolAcquiresDesc, prometheus.CounterValue, float64(s.Acquires))
	ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(s.Waits))
	ch <- prometheus.MustNewConstMetric(poolWaitedDesc, prometheus.CounterValue, s.Waited.Seconds())
}

// refusalCollector exports the store's refusals of file rules
// (Store.AccessRefusals).
type refusalCollector struct{ st *satchel.Store }

var refusalsDesc = prometheus.NewDesc("satchel_access_refusals_total",
	"Refusals of file rules, by agent and reason: read_only (a change to a path the caller may only read), hidden (a read or change of a path hidden from it).",
	[]string{"agent", "reason"}, nil)

func (c refusalCollector) Describe(ch chan<- *prometheus.Desc) { ch <- refusalsDesc }

func (c refusalCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.st.AccessRefusals() {
		ch <- prometheus.MustNewConstMetric(refusalsDesc, prometheus.CounterValue, float64(r.Count), r.Agent, r.Reason)
	}
}
