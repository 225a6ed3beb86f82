package serve_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// A pool with a crashing member, on the (fake) real clock: round robin
// alternates the members; a request member a holds when it crashes fails
// at the crash, not when its answer was due; while a is down it refuses
// at once; b is unaffected; a comes back and serves again.
func TestHandlerPoolWithCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := &sim.Pool{Members: []sim.PoolMember{
			{Name: "a", Server: &sim.Crash{Down: []sim.DownWindow{{From: 1500 * time.Millisecond, Until: 5 * time.Second}}, Inner: admitAll}},
			{Name: "b", Server: admitAll},
		}}
		h := newHandler(t, model)
		check := func(what string, got exchange, ok bool, took time.Duration) {
			t.Helper()
			if (got.status == 200) != ok || got.took != took || (!ok && got.status < 500) {
				t.Errorf("%s: %d after %v, want success %v after %v", what, got.status, got.took, ok, took)
			}
		}
		check("a at 0s", do(t, h, http.MethodPost, "/v1/messages", okRequest), true, time.Second)
		// At 1 s: one to b, then one to a that a holds when it crashes at 1.5 s.
		var wg sync.WaitGroup
		var toB, toA exchange
		wg.Go(func() { toB = do(t, h, http.MethodPost, "/v1/messages", okRequest) })
		synctest.Wait()
		wg.Go(func() { toA = do(t, h, http.MethodPost, "/v1/messages", okRequest) })
		wg.Wait()
		check("b at 1s", toB, true, time.Second)
		check("a at 1s, crashed at 1.5s", toA, false, 500*time.Millisecond)
		check("b at 2s", do(t, h, http.MethodPost, "/v1/messages", okRequest), true, time.Second)
		check("a at 3s, down", do(t, h, http.MethodPost, "/v1/messages", okRequest), false, 0)
		time.Sleep(2 * time.Second)
		check("b at 5s", do(t, h, http.MethodPost, "/v1/messages", okRequest), true, time.Second)
		check("a at 6s, back", do(t, h, http.MethodPost, "/v1/messages", okRequest), true, time.Second)
	})
}

// validate's real clients run one retry loop: a policy with layers
// inside is refused, not run as if it had none.
func TestValidateRefusesLayers(t *testing.T) {
	s := scenariotest.Builtin(t, "layered-amplification")
	_, err := serve.Validate(context.Background(), validation(s, 1))
	var unsupported *serve.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "retry layers") {
		t.Errorf("layered-amplification: %v", err)
	}
}
