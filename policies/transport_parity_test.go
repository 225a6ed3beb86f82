package policies_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// answer is how scriptServer answers one request: after wait, with status
// (and a retry-after of retryAfter seconds if set).
type answer struct {
	wait       time.Duration
	status     int
	retryAfter string
}

// scriptServer answers the i-th request it receives with steps[i] (the
// last repeats) and logs when each arrives and how it ends.
type scriptServer struct {
	steps  []answer
	origin time.Time
	mu     sync.Mutex
	n      int
	log    []string
}

func (s *scriptServer) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("+%v ", time.Since(s.origin))+fmt.Sprintf(format, args...))
}

func (s *scriptServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if string(b) != `{"stream":true}` && string(b) != `{"stream":false}` {
			return nil, fmt.Errorf("request body %q", b)
		}
	}
	s.mu.Lock()
	i := s.n
	s.n++
	st := s.steps[min(i, len(s.steps)-1)]
	s.mu.Unlock()
	s.logf("request %d sent", i)
	select {
	case <-time.After(st.wait):
	case <-req.Context().Done():
		s.logf("request %d cancelled", i)
		return nil, req.Context().Err()
	}
	h := http.Header{}
	if st.retryAfter != "" {
		h.Set("retry-after", st.retryAfter)
	}
	return &http.Response{StatusCode: st.status, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// parityCases are the controls TestTransportAtParityWithDo runs through
// both; opts builds fresh coordinators for each world.
var parityCases = []struct {
	name     string
	steps    []answer
	requests int
	stream   bool // the request asks for a stream
	opts     func() []policies.Option
}{
	{"backoff and max attempts", []answer{{0, 529, ""}, {0, 500, ""}, {0, 200, ""}}, 2, false,
		func() []policies.Option { return []policies.Option{policies.WithMaxAttempts(3)} }},
	{"retry-after and gate", []answer{{0, 429, "2"}, {0, 200, ""}}, 2, false,
		func() []policies.Option { return []policies.Option{policies.WithGate(&policies.Gate{})} }},
	{"budget", []answer{{0, 529, ""}}, 1, false,
		func() []policies.Option { return []policies.Option{policies.WithBudget(2500 * time.Millisecond)} }},
	{"throttle", []answer{{0, 200, ""}}, 3, false,
		func() []policies.Option {
			return []policies.Option{policies.WithThrottle(must(policies.NewThrottle(1, 2*time.Second, 10)))}
		}},
	{"limiter", []answer{{time.Second, 529, ""}, {time.Second, 200, ""}}, 2, false,
		func() []policies.Option {
			return []policies.Option{policies.WithLimiter(must(policies.NewLimiter(1, 1)))}
		}},
	{"breaker", []answer{{0, 529, ""}, {0, 529, ""}, {0, 529, ""}, {0, 200, ""}}, 4, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(2), policies.WithCoordinator(must(policies.NewBreaker(policies.BreakerConfig{ConsecutiveFailures: 2, OpenFor: 5 * time.Second})))}
		}},
	{"retry quota", []answer{{0, 529, ""}}, 3, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(4), policies.WithCoordinator(must(policies.NewRetryQuota(policies.RetryQuotaConfig{Capacity: 10, RetryCost: 5})))}
		}},
	{"retry throttling", []answer{{0, 529, ""}}, 3, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(4), policies.WithCoordinator(must(policies.NewRetryThrottling(policies.RetryThrottlingConfig{MaxTokens: 4, TokenRatio: 0.1})))}
		}},
	{"ratio budget", []answer{{0, 529, ""}}, 3, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(4), policies.WithCoordinator(must(policies.NewRatioBudget(policies.RatioBudgetConfig{Percent: 20, MinPerSecond: 1, Window: 10 * time.Second})))}
		}},
	{"adaptive throttle", []answer{{0, 429, ""}, {0, 429, ""}, {0, 200, ""}}, 4, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(2), policies.WithCoordinator(must(policies.NewAdaptiveThrottle(policies.AdaptiveThrottleConfig{})))}
		}},
	{"cubic rate", []answer{{0, 429, ""}, {0, 429, ""}, {0, 200, ""}}, 4, false,
		func() []policies.Option {
			return []policies.Option{policies.WithMaxAttempts(3), policies.WithCoordinator(must(policies.NewCubicRate(policies.CubicRateConfig{})))}
		}},
	{"hedging", []answer{{5 * time.Second, 200, ""}, {500 * time.Millisecond, 200, ""}, {5 * time.Second, 529, ""}, {time.Second, 529, ""}, {0, 200, ""}}, 2, false,
		func() []policies.Option {
			return []policies.Option{policies.WithCoordinator(must(policies.NewHedger(policies.HedgeConfig{Delay: time.Second})))}
		}},
	{"hedge budget", []answer{{3 * time.Second, 200, ""}}, 4, false,
		func() []policies.Option {
			return []policies.Option{policies.WithCoordinator(must(policies.NewHedger(policies.HedgeConfig{Delay: time.Second, BudgetPercent: 10, BudgetBurst: 1})))}
		}},
	{"attempt timeout", []answer{{10 * time.Second, 200, ""}, {time.Second, 200, ""}}, 1, false,
		func() []policies.Option { return []policies.Option{policies.WithAttemptTimeout(2 * time.Second)} }},
	{"watchdog until the headers", []answer{{10 * time.Minute, 200, ""}, {time.Second, 200, ""}}, 1, true,
		func() []policies.Option {
			return []policies.Option{policies.WithPolicy(policies.Policy{Backoff: policies.Constant{Wait: time.Second}, MaxAttempts: 3, StreamIdleTimeout: 3 * time.Second})}
		}},
}

// Every control that Transport supports runs through it as through Do
// around the same round trip: the same requests at the same times, the
// same copies cancelled, the same ends.
func TestTransportAtParityWithDo(t *testing.T) {
	for _, tc := range parityCases {
		t.Run(tc.name, func(t *testing.T) {
			doLog := parityWorld(t, false, tc.steps, tc.requests, tc.stream, tc.opts)
			trLog := parityWorld(t, true, tc.steps, tc.requests, tc.stream, tc.opts)
			if !slices.Equal(doLog, trLog) {
				t.Errorf("Do and Transport differ:\nDo:        %s\nTransport: %s", strings.Join(doLog, "; "), strings.Join(trLog, "; "))
			} else {
				t.Log(strings.Join(doLog, "; "))
			}
		})
	}
}

// parityWorld runs requests one after the other through Do around the
// round trip, or through Transport, and returns the server's log and how
// each request ended.
func parityWorld(t *testing.T, viaTransport bool, steps []answer, requests int, stream bool, options func() []policies.Option) []string {
	var log []string
	synctest.Test(t, func(t *testing.T) {
		srv := &scriptServer{steps: steps, origin: time.Now()}
		opts := append([]policies.Option{policies.WithBackoff(policies.Constant{Wait: time.Second})}, options()...)
		// Transport seeds each request's generator from the one it is
		// given; Do gets the same generators.
		shared := rand.New(rand.NewPCG(1, 2))
		trOpts := append(slices.Clip(opts), policies.WithRand(rand.New(rand.NewPCG(1, 2))))
		body := fmt.Sprintf(`{"stream":%v}`, stream)
		newReq := func(ctx context.Context) *http.Request {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/v1/messages", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
		tr := newTransport(t, srv, trOpts...)
		for k := range requests {
			var end string
			if viaTransport {
				resp, err := tr.RoundTrip(newReq(t.Context()))
				var pe *policies.Error
				switch {
				case err == nil:
					_ = resp.Body.Close()
					end = fmt.Sprintf("status %d", resp.StatusCode)
				case errors.As(err, &pe):
					end = "stopped: " + pe.Reason.String()
				default:
					t.Fatalf("request %d: %v", k, err)
				}
			} else {
				err := policies.Do(t.Context(), func(ctx context.Context, _ policies.Attempt) error {
					resp, err := srv.RoundTrip(newReq(ctx))
					if err != nil {
						return err
					}
					_ = resp.Body.Close()
					if resp.StatusCode >= 400 {
						return &policies.HTTPError{StatusCode: resp.StatusCode, Header: resp.Header}
					}
					return nil
				}, append(opts, policies.WithRand(rand.New(rand.NewPCG(shared.Uint64(), shared.Uint64()))))...)
				var pe *policies.Error
				var he *policies.HTTPError
				switch {
				case err == nil:
					end = "status 200"
				case errors.As(err, &pe) && errors.As(pe.Last, &he):
					end = fmt.Sprintf("status %d", he.StatusCode)
				case errors.As(err, &pe):
					end = "stopped: " + pe.Reason.String()
				default:
					t.Fatalf("request %d: %v", k, err)
				}
			}
			srv.logf("call %d ends: %s", k, end)
		}
		synctest.Wait()
		log = srv.log
	})
	return log
}
