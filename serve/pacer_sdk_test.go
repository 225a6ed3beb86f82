package serve_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// TestPacerWithAnthropicSDK: 20 workers share one key of 60 requests per
// minute through the real anthropic-sdk-go client, 5 calls each, as
// docs/client.md shows it: the SDK's retries off, policies.Do around each
// call, one Pacer whose Transport reads the headers serve sends. Without
// the pacer the key refuses calls (429s); with it, none.
func TestPacerWithAnthropicSDK(t *testing.T) {
	key := keyOf60PerMinute()
	for _, paced := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			h := newHandler(t, key)
			var base http.RoundTripper = serve.InMemory(h)
			opts := []policies.Option{policies.WithBudget(10 * time.Minute), anthropicsdk.WithClassifier()}
			if paced {
				pacer, err := policies.NewPacer(policies.PacerConfig{})
				if err != nil {
					t.Fatal(err)
				}
				base = pacer.Transport(base)
				opts = append(opts, policies.WithCoordinator(pacer))
			}
			client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("ignored"), option.WithBaseURL("http://serve.test/"),
				option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: base}))
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for w := range errs {
				wg.Go(func() {
					for range 5 {
						if err := policies.Do(context.Background(), func(ctx context.Context, _ policies.Attempt) error {
							_, err := client.Messages.New(ctx, params())
							return err
						}, opts...); err != nil {
							errs[w] = err
						}
					}
				})
			}
			wg.Wait()
			for w, err := range errs {
				if err != nil {
					t.Errorf("paced %v: worker %d: %v", paced, w, err)
				}
			}
			st := h.Stats()
			if st.Admitted != 100 || paced != (st.Rejected == 0) {
				t.Errorf("paced %v: %d admitted, %d refused (429)", paced, st.Admitted, st.Rejected)
			}
			t.Logf("paced %v: %d admitted, %d refused; done after %v", paced, st.Admitted, st.Rejected, time.Since(time.Unix(946684800, 0)))
		})
	}
}

// keyOf60PerMinute is one API key of 60 requests per minute (serve's
// rate-limit model) in front of a server that answers every request in 1 s.
func keyOf60PerMinute() *sim.RateLimit {
	return &sim.RateLimit{RequestsPerMinute: 60, RetryAfterUnit: time.Second,
		Inner: &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Second), Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Second, Reject: rejection529}}}}
}
