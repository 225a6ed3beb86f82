package serve_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// A model name longer than MaxModelName is refused with 400 in the API's
// own error shape, without echoing it; one of exactly MaxModelName bytes
// is served. Before, serve echoed the name in every stream chunk (JSON
// writes '<' as six bytes): a 2 MiB name came back as hundreds of MiB.
func TestLongModelNameRefused(t *testing.T) {
	admitNow := &sim.CapacityWindows{ResponseTime: sim.Fixed(0), Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Hour, Reject: rejection529}}}
	h, err := serve.NewHandler(admitNow, serve.WithMaxBody(4<<20), serve.WithMaxBodies(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	const bound = 64 << 10 // of a refusal's bytes; the name alone is 2 MiB
	long := strings.Repeat("<", 2<<20)
	for _, c := range []struct{ path, body, shape string }{
		{"/v1/messages", `{"model":%q,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, `{"type":"error","error":{"type":"invalid_request_error"`},
		{"/v1/messages", `{"model":%q,"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, `{"type":"error","error":{"type":"invalid_request_error"`},
		{"/v1/chat/completions", `{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, `{"error":{"message":`},
		{"/v1/chat/completions", `{"model":%q,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, `{"error":{"message":`},
		{"/v1/responses", `{"model":%q,"input":"hi","stream":true}`, `{"error":{"message":`},
	} {
		for _, name := range []string{long, strings.Repeat("m", serve.MaxModelName+1), strings.Repeat("m", serve.MaxModelName)} {
			body := strings.Replace(c.body, "%q", `"`+name+`"`, 1)
			resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if len(name) == serve.MaxModelName {
				if resp.StatusCode != 200 {
					t.Errorf("%s %s: a name of %d bytes got %d %.300s", c.path, c.body, len(name), resp.StatusCode, got)
				}
				continue
			}
			if resp.StatusCode != 400 || !strings.HasPrefix(string(got), c.shape) || !strings.Contains(string(got), `"invalid_request_error"`) ||
				!strings.Contains(string(got), "model") || len(got) > bound {
				t.Errorf("%s %s, a name of %d bytes: %d, %d bytes %.300s; want 400 %s..., at most %d bytes",
					c.path, c.body, len(name), resp.StatusCode, len(got), got, c.shape, bound)
			}
		}
	}
}
