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
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
)

// TestPacerAdmitsHedges: 20 workers share one key of 60 requests per
// minute (serve's rate-limit model, answers of 1 s) through one Pacer, 5
// calls each, with and without hedging (a hedge 300 ms after an attempt's
// first copy). A hedge is a request on the key, and the pacer admits it
// as one (machine.CopyAdmitter): with hedging the key refuses no more
// calls than without, which is none. (When a hedge shared its first
// copy's admission, the hedged run sent 250 requests, 71 of them refused
// with 429, and took 2 minutes instead of 1.)
func TestPacerAdmitsHedges(t *testing.T) {
	key := keyOf60PerMinute()
	for _, hedged := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			h := newHandler(t, key)
			pacer, err := policies.NewPacer(policies.PacerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			opts := []policies.Option{policies.WithBudget(10 * time.Minute), anthropicsdk.WithClassifier()}
			var hedger *policies.Hedger
			if hedged {
				if hedger, err = policies.NewHedger(policies.HedgeConfig{Delay: 300 * time.Millisecond, MaxHedges: 1}); err != nil {
					t.Fatal(err)
				}
				opts = append(opts, policies.WithCoordinator(hedger))
			}
			opts = append(opts, policies.WithCoordinator(pacer))
			client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("ignored"), option.WithBaseURL("http://serve.test/"),
				option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: pacer.Transport(serve.InMemory(h))}))
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
					t.Errorf("hedged %v: worker %d: %v", hedged, w, err)
				}
			}
			st := h.Stats()
			var hs machine.HedgeStats
			if hedger != nil {
				hs = hedger.Stats()
			}
			t.Logf("hedged %v: %d admitted, %d refused (429); hedges %+v; done after %v", hedged, st.Admitted, st.Rejected, hs, time.Since(time.Unix(946684800, 0)))
			if st.Rejected != 0 {
				t.Errorf("hedged %v: the key refused %d requests (429) that the pacer let go", hedged, st.Rejected)
			}
			if st.Admitted < 100 {
				t.Errorf("hedged %v: %d requests admitted, want at least the 100 calls", hedged, st.Admitted)
			}
		})
	}
}
