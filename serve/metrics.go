package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are a Handler's Prometheus metrics, in a registry of its own (no
// global registration: any number of handlers can live in one process).
type metrics struct {
	registry   *prometheus.Registry
	admitted   prometheus.Counter
	rejected   *prometheus.CounterVec
	refused    *prometheus.CounterVec
	turnedAway *prometheus.CounterVec
	handler    http.Handler
}

func newMetrics(h *Handler) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		admitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "retrysim_serve_admitted_total",
			Help: "Requests the server model admitted.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "retrysim_serve_rejected_total",
			Help: "Requests the server model rejected, by the HTTP status sent.",
		}, []string{"status"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "retrysim_serve_refused_total",
			Help: "POST /v1/messages requests answered without asking the model, by reason: invalid, too_large, busy, busy_bodies.",
		}, []string{"reason"}),
		turnedAway: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "retrysim_serve_turned_away_total",
			Help: "Other requests answered with an error, by reason: not_found (404), method (405), host (403), token (401).",
		}, []string{"reason"}),
	}
	requests := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "retrysim_serve_requests_total",
		Help: "POST /v1/messages requests received.",
	}, func() float64 { return float64(h.requests.Load()) })
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "retrysim_serve_in_flight",
		Help: "POST /v1/messages requests being served now.",
	}, func() float64 { return float64(h.inFlight.Load()) })
	modelTime := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "retrysim_serve_model_time_seconds",
		Help: "The server model's clock (0 until the first request or reset).",
	}, func() float64 {
		d, _ := h.ModelTime()
		return d.Seconds()
	})
	bodyBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "retrysim_serve_body_bytes",
		Help: "Bytes that request bodies hold now (bounded by the server's limit).",
	}, func() float64 { return float64(h.bodies.bytes()) })
	wasted := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "retrysim_serve_wasted_output_tokens_total",
		Help: "Output tokens (text deltas) streamed before a mid-stream failure, as the simulator's server.wasted_output_tokens.",
	}, func() float64 { return float64(h.wastedTokens.Load()) })
	m.registry.MustRegister(requests, m.admitted, m.rejected, m.refused, m.turnedAway, inFlight, bodyBytes, modelTime, wasted)
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}
