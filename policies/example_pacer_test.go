package policies_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// One Pacer per API key, shared by every worker: its Transport reads the
// rate-limit headers of every response, and as a coordinator it holds a
// call until the key has room (docs/policies.md, "Pacing by the rate-limit
// headers").
func ExamplePacer() {
	// A stand-in for the API: 60 requests per minute, 2 left.
	var left atomic.Int64
	left.Store(2)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := max(left.Add(-1), 0)
		w.Header().Set("x-ratelimit-limit-requests", "60")
		w.Header().Set("x-ratelimit-remaining-requests", strconv.FormatInt(n, 10))
		w.Header().Set("x-ratelimit-reset-requests", (time.Duration(60-n) * time.Second).String())
	}))
	defer api.Close()

	pacer, err := policies.NewPacer(policies.PacerConfig{})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: pacer.Transport(http.DefaultTransport)}
	call := func(ctx context.Context, _ policies.Attempt) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	for range 2 {
		if err := policies.Do(context.Background(), call, policies.WithCoordinator(pacer)); err != nil {
			panic(err)
		}
	}
	now := time.Now()
	fmt.Println("requests left:", pacer.Limits(now).Requests.Remaining)
	next := pacer.Admit(now, machine.Ask{})
	fmt.Println("the next call waits:", next.At.After(now))
	// Output:
	// requests left: 0
	// the next call waits: true
}
