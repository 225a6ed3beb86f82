package serve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// These tests use real loopback sockets (127.0.0.1), so they wait on the
// real clock; every wait is bounded.

// waitFor polls cond every millisecond for at most limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(time.Millisecond)
	}
}

func post(client *http.Client, url, body string) (int, string, error) {
	resp, err := client.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Shutdown lets every response in flight finish, plain and streamed, and
// refuses new connections.
func TestShutdownFinishesInFlight(t *testing.T) {
	model := &sim.CapacityWindows{ResponseTime: sim.Fixed(300 * time.Millisecond),
		Phases: []sim.Phase{{Admit: 1000, Window: time.Second, Reject: rejection529}}}
	srv := serve.NewServer(model)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	const n = 20
	type result struct {
		status int
		body   string
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		body := okRequest
		if i%2 == 1 {
			body = `{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
		}
		wg.Go(func() {
			s, b, err := post(client, srv.URL, body)
			results[i] = result{s, b, err}
		})
	}
	waitFor(t, 5*time.Second, "every request in flight", func() bool { return srv.Handler.Stats().InFlight == n })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	wg.Wait()
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("request %d: %v", i, r.err)
		case r.status != 200:
			t.Errorf("request %d: status %d", i, r.status)
		case i%2 == 0 && !strings.Contains(r.body, `"stop_reason":"end_turn"`):
			t.Errorf("request %d: incomplete message %s", i, r.body)
		case i%2 == 1 && !strings.HasSuffix(r.body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"):
			t.Errorf("request %d: incomplete stream %q", i, r.body)
		}
	}
	if _, _, err := post(client, srv.URL, okRequest); err == nil {
		t.Error("a request after shutdown was served")
	}
	srv.Close() // a second stop does nothing
}

// 500 concurrent requests, each on a connection of its own: all are
// answered, the counts add up, shutdown is prompt, and no goroutine is left
// behind. (Validate's loopback server, which also speaks h2c, is covered by
// TestValidateLoopbackSmoke.)
func TestLoadNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	model := &sim.CapacityWindows{ResponseTime: sim.Fixed(50 * time.Millisecond),
		Phases: []sim.Phase{{Admit: 200, Window: time.Minute, Reject: rejection529}}}
	var logs bytes.Buffer
	var logMu sync.Mutex
	srv, err := serve.Listen("127.0.0.1:0", model, serve.WithLog(lockedWriter{&logs, &logMu}, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	h1 := &http.Transport{MaxIdleConnsPerHost: 500}
	const n = 500
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		ok, overloaded, fl int
	)
	for range n {
		client := &http.Client{Transport: h1, Timeout: 10 * time.Second}
		wg.Go(func() {
			status, _, err := post(client, srv.URL, okRequest)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				fl++
				t.Errorf("request: %v", err)
			case status == 200:
				ok++
			case status == 529:
				overloaded++
			}
		})
	}
	wg.Wait()
	if ok != 200 || overloaded != 300 || fl != 0 {
		t.Errorf("%d ok, %d overloaded, %d failed; want 200, 300, 0", ok, overloaded, fl)
	}
	if st := srv.Handler.Stats(); st != (serve.Stats{Requests: n, Admitted: 200, Rejected: 300}) {
		t.Errorf("stats %+v", st)
	}
	waitFor(t, 5*time.Second, "a log line", func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		return strings.Contains(logs.String(), "retrysim serve: last 20ms: ")
	})
	h1.CloseIdleConnections() // see Server.Shutdown: else it waits for connections never used
	t0 := time.Now()
	srv.Close()
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("shutdown took %v with no request in flight", took)
	}
	waitFor(t, 5*time.Second, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestListenBadAddress(t *testing.T) {
	if _, err := serve.Listen("256.0.0.1:http", admitAll); err == nil {
		t.Fatal("listened on a bad address")
	}
}
