package serve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/cputime"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// How many requests per second one serve answers on time: an open-loop load
// generator in the same process sends requests at an offered rate over
// loopback to serve.Listen (what `retrysim serve` runs: HTTP/1.1, one
// connection per request in flight) and measures each response's lateness,
// the time from sending it to reading the whole answer minus the model's
// response time. That includes the request's way in and the answer's way
// out, so it bounds from above how late serve sent it. See docs/serve.md.
//
//	go test -run '^$' -bench 'BenchmarkServeThroughput' -benchtime 1x -count 5 ./serve/

const (
	// loadResponseTime is the model's response time for every request: the
	// answer of each request is due this long after it arrives.
	loadResponseTime = 20 * time.Millisecond
	// loadRun is how long one run offers its rate, and loadMaxRequests the
	// most requests it sends; loadTimeout bounds each request.
	loadRun         = time.Second
	loadMaxRequests = 40_000
	loadTimeout     = 10 * time.Second
	// loadConns bounds the client's connections (2 descriptors each in
	// this process, under the usual limit of 1024); a request beyond them
	// waits for one, and that wait counts in its lateness.
	loadConns = 256
	// onTime is the p99 lateness the ramp allows.
	onTime = time.Millisecond
)

// loadModel admits every request and answers it after loadResponseTime.
var loadModel = &sim.CapacityWindows{ResponseTime: sim.Fixed(loadResponseTime),
	Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Hour, Reject: rejection529}}}

// loadResult is what one run measured.
type loadResult struct {
	sent, failed int
	// late holds the lateness of every answered request, sorted; lag how
	// late the generator sent each request after its scheduled time.
	late, lag []time.Duration
	// span is from the first request's scheduled send to the last answer;
	// cpu the CPU time the process used meanwhile (the generator's, and
	// serve's if it was there).
	span, cpu time.Duration
}

func (r loadResult) rate() float64 {
	if r.span <= 0 {
		return 0
	}
	return float64(len(r.late)) / r.span.Seconds()
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// offer sends rate requests a second for d (at most loadMaxRequests), each
// at its scheduled time, without waiting for answers (an open loop), and
// waits for every answer.
func offer(client *http.Client, url string, rate float64, d time.Duration) loadResult {
	return offerFunc(func() (time.Duration, bool) { return send(client, url) }, rate, d)
}

// offerFunc is offer with do in place of a request.
func offerFunc(do func() (time.Duration, bool), rate float64, d time.Duration) loadResult {
	n := min(loadMaxRequests, max(1, int(rate*d.Seconds())))
	late := make([]time.Duration, n)
	lag := make([]time.Duration, n)
	ok := make([]bool, n)
	var wg sync.WaitGroup
	start, startCPU := time.Now(), cputime.Used()
	for i := range n {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		wg.Go(func() {
			sent := time.Now()
			lag[i] = sent.Sub(at)
			late[i], ok[i] = do()
		})
	}
	wg.Wait()
	r := loadResult{sent: n, span: time.Since(start), cpu: cputime.Used() - startCPU}
	for i := range n {
		if !ok[i] {
			r.failed++
			continue
		}
		r.late = append(r.late, late[i])
	}
	slices.Sort(r.late)
	slices.Sort(lag)
	r.lag = lag
	return r
}

// send posts one message and reads its answer; it returns how much longer
// than the model's response time that took, and whether it got a 200.
func send(client *http.Client, url string) (time.Duration, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", strings.NewReader(okRequest))
	if err != nil {
		return 0, false
	}
	req.Header.Set("content-type", "application/json")
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	took := time.Since(sent)
	resp.Body.Close()
	return max(took-loadResponseTime, 0), err == nil && resp.StatusCode == http.StatusOK
}

// oversleep sleeps loadResponseTime and returns how much longer that took:
// the floor that the machine's scheduling sets under any lateness.
func oversleep() (time.Duration, bool) {
	start := time.Now()
	time.Sleep(loadResponseTime)
	return max(time.Since(start)-loadResponseTime, 0), true
}

// loadServer starts serve on loopback, and a client of at most loadConns
// connections, all kept open between requests.
func loadServer(b *testing.B) (*http.Client, string) {
	srv, err := serve.Listen("127.0.0.1:0", loadModel)
	if err != nil {
		b.Fatal(err)
	}
	transport := &http.Transport{MaxConnsPerHost: loadConns, MaxIdleConnsPerHost: loadConns}
	b.Cleanup(func() {
		transport.CloseIdleConnections()
		srv.Close()
	})
	return &http.Client{Transport: transport}, srv.URL
}

func reportLoad(b *testing.B, r loadResult) {
	b.ReportMetric(0, "ns/op") // one op is a whole run
	b.ReportMetric(r.rate(), "req/s")
	b.ReportMetric(float64(quantile(r.late, 0.50))/1e6, "late-p50-ms")
	b.ReportMetric(float64(quantile(r.late, 0.90))/1e6, "late-p90-ms")
	b.ReportMetric(float64(quantile(r.late, 0.99))/1e6, "late-p99-ms")
	b.ReportMetric(float64(quantile(r.lag, 0.99))/1e6, "send-lag-p99-ms")
	b.ReportMetric(float64(r.failed), "failed")
	b.ReportMetric(float64(r.cpu.Microseconds())/float64(max(1, r.sent)), "cpu-us/req")
	if r.span > 0 {
		b.ReportMetric(r.cpu.Seconds()/r.span.Seconds(), "cores") // what the machine gave the process
	}
}

// BenchmarkServeThroughput/rate=N offers N requests a second for loadRun.
// BenchmarkServeThroughput/floor/rate=N runs the same load generator with a
// sleep of loadResponseTime in place of each request, without serve: its
// lateness is what the machine's scheduling alone costs.
// BenchmarkServeThroughput/ramp raises the rate by a quarter from 500 until
// serve falls behind (a request fails, or the rate answered is under 90% of
// the one offered); it reports the highest offered rate whose p99 lateness
// was within onTime (on-time-req/s, 0 if none was), with that run's
// metrics, and the highest rate answered (max-req/s).
func BenchmarkServeThroughput(b *testing.B) {
	for _, rate := range []int{500, 1000, 2000, 3000, 4000, 6000, 8000} {
		b.Run(fmt.Sprintf("floor/rate=%d", rate), func(b *testing.B) {
			var r loadResult
			for b.Loop() {
				r = offerFunc(oversleep, float64(rate), loadRun)
			}
			reportLoad(b, r)
		})
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			client, url := loadServer(b)
			offer(client, url, float64(rate), loadRun/5) // open the connections
			var r loadResult
			for b.Loop() {
				r = offer(client, url, float64(rate), loadRun)
			}
			reportLoad(b, r)
		})
	}
	b.Run("ramp", func(b *testing.B) {
		client, url := loadServer(b)
		var best loadResult
		var onTimeRate, maxRate float64
		for b.Loop() {
			best, onTimeRate, maxRate = loadResult{}, 0, 0
			for rate := 500.0; rate*loadRun.Seconds() <= loadMaxRequests; rate *= 1.25 { // beyond, a run is cut short
				offer(client, url, rate, loadRun/5)
				r := offer(client, url, rate, loadRun)
				maxRate = max(maxRate, r.rate())
				if r.failed > 0 || r.rate() < 0.9*rate {
					break
				}
				if quantile(r.late, 0.99) <= onTime {
					best, onTimeRate = r, rate
				}
			}
		}
		reportLoad(b, best)
		b.ReportMetric(onTimeRate, "on-time-req/s")
		b.ReportMetric(maxRate, "max-req/s")
	})
}
