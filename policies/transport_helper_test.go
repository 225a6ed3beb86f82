package policies_test

import (
	"net/http"
	"testing"

	"github.com/retrysim/retrysim/policies"
)

// newTransport is policies.NewTransport for options it accepts.
func newTransport(t testing.TB, base http.RoundTripper, opts ...policies.Option) *policies.Transport {
	t.Helper()
	tr, err := policies.NewTransport(base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
