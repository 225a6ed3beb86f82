package serve_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// Many slow clients each send most of a large body and stall: the bytes
// that bodies hold together stay within the handler's budget (by its own
// accounting, and in the live heap), the clients over it get 529 in the
// API's error shape at once, and the others are answered once their bodies
// arrive. Before the budget, each stalled body held its own buffer: 40 of
// them held about 24 MiB.
func TestBodiesHoldBoundedMemory(t *testing.T) {
	const (
		maxBody   = 1 << 20
		maxBodies = 4 << 20
		clients   = 40
		sent      = 600 << 10 // of each body, before the stall
	)
	// One body shared by every client, so that the clients hold no copy.
	head := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"`
	tail := `"}]}`
	body := []byte(head + strings.Repeat("x", maxBody-len(head)-len(tail)) + tail)
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithMaxBody(maxBody), serve.WithMaxBodies(maxBodies))
		client := &http.Client{Transport: serve.InMemory(h)}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)

		unstall := make(chan struct{})
		statuses := make([]int, clients)
		bodies := make([]string, clients)
		var wg sync.WaitGroup
		for i := range clients {
			pr, pw := io.Pipe()
			go func() {
				if _, err := pw.Write(body[:sent]); err != nil {
					return // refused: the handler stopped reading
				}
				<-unstall
				_, _ = pw.Write(body[sent:])
				_ = pw.Close()
			}()
			wg.Go(func() {
				defer pr.Close() // ends the writer of a refused request
				req, _ := http.NewRequest(http.MethodPost, "http://serve.test/v1/messages", pr)
				req.ContentLength = maxBody
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				statuses[i], bodies[i] = resp.StatusCode, string(b)
			})
		}
		synctest.Wait() // every client has stalled, or been refused

		st := h.Stats()
		if st.BodyBytes > maxBodies || st.BodyBytes < maxBody {
			t.Errorf("bodies hold %d bytes; want at least one body's and at most the budget (%d)", st.BodyBytes, maxBodies)
		}
		var during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&during)
		if grew := int64(during.HeapAlloc) - int64(before.HeapAlloc); grew > 2*maxBodies {
			t.Errorf("the live heap grew by %d bytes with %d stalled bodies; the bodies' budget is %d", grew, clients, maxBodies)
		}
		close(unstall)
		wg.Wait()

		var ok, busy int
		for i, status := range statuses {
			switch {
			case status == 200:
				ok++
			case status == 529 && strings.Contains(bodies[i], `"type":"overloaded_error"`) && strings.Contains(bodies[i], "request bodies in flight"):
				busy++
			default:
				t.Errorf("client %d: %d %s", i, status, bodies[i])
			}
		}
		if ok < 1 || ok > maxBodies/maxBody || ok+busy != clients {
			t.Errorf("%d answered, %d refused; want 1 to %d answered and the rest refused", ok, busy, maxBodies/maxBody)
		}
		if st := h.Stats(); st.BodyBytes != 0 || st.Refused != int64(busy) || st.Admitted != int64(ok) {
			t.Errorf("after the answers: %+v", st)
		}
	})
}

// A body whose declared length is over the limit is refused before it is
// read; the refusal does not hold any of the budget.
func TestDeclaredLengthOverLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithMaxBody(100))
		req, _ := http.NewRequest(http.MethodPost, "http://serve.test/v1/messages", strings.NewReader(okRequest))
		req.ContentLength = 1 << 30
		resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 || h.Stats().Refused != 1 || h.Stats().BodyBytes != 0 {
			t.Errorf("%d, %+v", resp.StatusCode, h.Stats())
		}
	})
}

func TestNewHandlerRefusesBodiesUnderOneBody(t *testing.T) {
	if _, err := serve.NewHandler(admitAll, serve.WithMaxBody(1000), serve.WithMaxBodies(999)); err == nil {
		t.Error("a budget smaller than one body was accepted")
	}
}

// Shutdown whose context ends with a response in flight cuts it and says
// how many it cut.
func TestShutdownCutsAtTheDeadline(t *testing.T) {
	slow := &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Hour), Phases: []sim.Phase{{Admit: 10, Window: time.Hour, Reject: rejection529}}}
	srv := serve.NewServer(slow)
	done := make(chan error, 1)
	go func() {
		_, _, err := post(http.DefaultClient, srv.URL, okRequest)
		done <- err
	}()
	waitFor(t, 5*time.Second, "the request in flight", func() bool { return srv.Handler.Stats().InFlight == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace at all
	err := srv.Shutdown(ctx)
	var cut *serve.CutError
	if !errors.As(err, &cut) || cut.InFlight != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("shutdown: %v, want a CutError of 1 response", err)
	}
	if err := <-done; err == nil {
		t.Error("the cut response arrived whole")
	}
}

// A server checks the Host of every request, so that a web page whose own
// name resolves to it (DNS rebinding) gets nothing: localhost, IP
// addresses, the listen address's name and the allowed names pass.
func TestHostCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithAllowedHosts("sim.example"))
		for _, tt := range []struct {
			host   string
			status int
		}{
			{"127.0.0.1:8080", 200}, {"localhost:8080", 200}, {"LOCALHOST", 200}, {"api.localhost:1", 200},
			{"[::1]:8080", 200}, {"10.1.2.3", 200}, {"sim.example:8080", 200}, {"sim.example.", 200},
			{"evil.example:8080", 403}, {"localhost.evil.example", 403},
		} {
			req, _ := http.NewRequest(http.MethodGet, "http://"+tt.host+"/healthz", nil)
			resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("Host %s: %d %s, want %d", tt.host, resp.StatusCode, b, tt.status)
			}
			if tt.status == 403 && !strings.Contains(string(b), `"type":"permission_error"`) {
				t.Errorf("Host %s: %s", tt.host, b)
			}
		}
		if st := h.Stats(); st.TurnedAway != 2 {
			t.Errorf("turned away %d, want 2", st.TurnedAway)
		}
		any := newHandler(t, admitAll, serve.WithAllowedHosts("*"))
		req, _ := http.NewRequest(http.MethodGet, "http://evil.example/healthz", nil)
		resp, err := (&http.Client{Transport: serve.InMemory(any)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("'*' refused a host: %d", resp.StatusCode)
		}
	})
}

// Listen checks the Host: a name it was not given is refused.
func TestListenChecksHost(t *testing.T) {
	srv := serve.NewServer(admitAll)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/healthz", nil)
	req.Host = "rebound.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a foreign Host got %d, want 403", resp.StatusCode)
	}
}

// With a control token, POST /control/reset needs it.
func TestControlToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithControlToken("s3cret"))
		for _, tt := range []struct {
			auth   string
			status int
		}{{"", 401}, {"Bearer wrong", 401}, {"s3cret", 401}, {"Bearer s3cret", 200}} {
			req, _ := http.NewRequest(http.MethodPost, "http://serve.test/control/reset", nil)
			if tt.auth != "" {
				req.Header.Set("authorization", tt.auth)
			}
			resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || tt.status == 401 && !strings.Contains(string(b), `"type":"authentication_error"`) {
				t.Errorf("authorization %q: %d %s, want %d", tt.auth, resp.StatusCode, b, tt.status)
			}
		}
		// The messages endpoint needs no token.
		if got := do(t, h, http.MethodPost, "/v1/messages", okRequest); got.status != 200 {
			t.Errorf("messages: %d", got.status)
		}
	})
}

// Requests to no endpoint are counted (a client pointed at the wrong base
// URL shows up), in Stats and /metrics, by reason.
func TestTurnedAwayCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll)
		do(t, h, http.MethodPost, "/messages", okRequest)
		do(t, h, http.MethodPost, "/v1/v1/messages", okRequest)
		do(t, h, http.MethodGet, "/v1/messages", "")
		if st := h.Stats(); st.TurnedAway != 3 || st.Requests != 0 {
			t.Errorf("stats %+v, want 3 turned away and no messages request", st)
		}
		got := do(t, h, http.MethodGet, "/metrics", "")
		for _, line := range []string{`retrysim_serve_turned_away_total{reason="not_found"} 2`, `retrysim_serve_turned_away_total{reason="method"} 1`} {
			if !strings.Contains(got.body, "\n"+line+"\n") {
				t.Errorf("metrics lack %q:\n%s", line, got.body)
			}
		}
	})
}

// Each POST /control/reset without a seed moves to the next seed, so that
// repeated runs are independent, and each is the simulator's run with that
// seed; ?seed=N replays seed N.
func TestResetSeeds(t *testing.T) {
	// Fails half of the requests at random, from the model's stream.
	model := sim.FailWithProbability(0.5, sim.Rejection{Status: 500, Class: policies.Transient}, sim.Fixed(0))
	draws := func(h *serve.Handler) string {
		var b strings.Builder
		for range 32 {
			if do(t, h, http.MethodPost, "/v1/messages", okRequest).status == 200 {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	synctest.Test(t, func(t *testing.T) {
		fresh := func(seed uint64) string { return draws(newHandler(t, model, serve.WithSeed(seed))) }
		h := newHandler(t, model, serve.WithSeed(5))
		first := draws(h)
		if got := do(t, h, http.MethodPost, "/control/reset", ""); got.body != `{"reset":true,"seed":6}`+"\n" {
			t.Fatalf("reset: %s", got.body)
		}
		second := draws(h)
		if first == second || first != fresh(5) || second != fresh(6) {
			t.Errorf("runs\n%s\n%s\nwant seed 5's\n%s\nthen seed 6's\n%s", first, second, fresh(5), fresh(6))
		}
		do(t, h, http.MethodPost, "/control/reset?seed=5", "")
		if again := draws(h); again != first || h.Seed() != 5 {
			t.Errorf("seed 5 again gave %s (seed %d), want %s", again, h.Seed(), first)
		}
	})
}

// A model that serve cannot run, and an address that cannot be one, are
// refused in words a user knows.
func TestRefusalsInUsersWords(t *testing.T) {
	_, err := serve.NewHandler(&sim.Contention{Network: sim.Fixed(0)})
	var unsupported *serve.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "the contention server model") || strings.Contains(err.Error(), "*sim.") {
		t.Errorf("contention: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:99999", "127.0.0.1", "127.0.0.1:-1", "127.0.0.1:", "localhost:nosuchservice"} {
		_, err := serve.Listen(addr, admitAll)
		var bad *serve.AddrError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "HOST:PORT") {
			t.Errorf("%s: %v, want an AddrError", addr, err)
		}
	}
}
