package policies_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// headerTransport answers 503 to every request and records a header.
type headerTransport struct {
	name string
	got  []string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	h.got = append(h.got, req.Header.Get(h.name))
	return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// Every attempt carries the budget it has left, in milliseconds, under the
// header's name: the tier behind can stop when the caller will not wait.
// A context deadline earlier than the budget's end wins; with neither, no
// header is sent.
func TestTransportSendsTheRemainingBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &headerTransport{name: "X-Envoy-Expected-Rq-Timeout-Ms"}
		tr := newTransport(t, base, policies.WithMaxAttempts(3), policies.WithBudget(10*time.Second),
			policies.WithBackoff(policies.Constant{Wait: time.Second}), policies.WithDeadlineHeader("x-envoy-expected-rq-timeout-ms"))
		if _, err := tr.RoundTrip(post(t, "", true)); err != nil {
			t.Fatal(err)
		}
		if want := []string{"10000", "9000", "8000"}; !slices.Equal(base.got, want) {
			t.Errorf("budget headers %q, want %q", base.got, want)
		}

		base.got = nil
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		req := post(t, "", true).WithContext(ctx)
		_, _ = tr.RoundTrip(req)
		if want := []string{"1500", "500"}; !slices.Equal(base.got, want) {
			t.Errorf("with a 1.5s context: %q, want %q", base.got, want)
		}

		base.got = nil
		none := newTransport(t, base, policies.WithPolicy(policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1}),
			policies.WithDeadlineHeader("x-envoy-expected-rq-timeout-ms"))
		_, _ = none.RoundTrip(post(t, "", true))
		if want := []string{""}; !slices.Equal(base.got, want) {
			t.Errorf("without a budget: %q, want no header", base.got)
		}
	})
}
