package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// InMemory returns an http.RoundTripper that serves every request with h in
// the same process, without a network: each request runs h on a goroutine
// of its own, and the response body is a pipe, so a streamed answer arrives
// as h writes it. Inside a testing/synctest bubble every wait of h and of
// the client is on the bubble's fake clock, which a real socket would not
// allow: a test of a minute of model time at speed 1 takes no real time.
// The request's URL host is ignored.
//
// Closing the response body, or the end of the request's context, ends the
// context of h's request. A handler that panics with http.ErrAbortHandler
// cuts the connection, as with net/http: the body's reads end with
// io.ErrUnexpectedEOF, or the round trip fails if no header was written. Response deadlines (http.ResponseController) are
// not supported and are ignored by Handler.
func InMemory(h http.Handler) http.RoundTripper { return memTransport{h} }

type memTransport struct{ h http.Handler }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "in-memory"
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	pr, pw := io.Pipe()
	w := &memWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	aborted := make(chan struct{})
	go func() {
		defer func() {
			if r := recover(); r != nil {
				if r != http.ErrAbortHandler {
					panic(r)
				}
				// The handler cut the connection, as net/http does for
				// ErrAbortHandler: the body ends early, or there is no
				// response at all.
				_ = pw.CloseWithError(io.ErrUnexpectedEOF)
				close(aborted)
				return
			}
			w.WriteHeader(http.StatusOK) // for a handler that wrote nothing
			_ = pw.Close()
		}()
		m.h.ServeHTTP(w, sreq)
	}()
	select {
	case <-w.ready:
	case <-aborted:
		select {
		case <-w.ready: // headers went out before the cut: the body ends early
		default:
			cancel()
			return nil, fmt.Errorf("in-memory round trip: %w (the server cut the connection before its response)", io.ErrUnexpectedEOF)
		}
	case <-ctx.Done():
		cancel()
		_ = pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	// The end of the request's context ends the body's reads too.
	stop := context.AfterFunc(ctx, func() { _ = pr.CloseWithError(context.Cause(ctx)) })
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &memBody{pr: pr, close: func() { stop(); cancel() }},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// memBody is a response body; Close ends the handler's request.
type memBody struct {
	pr    *io.PipeReader
	once  sync.Once
	close func()
}

func (b *memBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *memBody) Close() error {
	b.once.Do(b.close)
	return b.pr.Close()
}

// memWriter is the handler's side: headers are sent with the first
// WriteHeader or Write, the body goes into the pipe.
type memWriter struct {
	header http.Header
	sent   http.Header
	status int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (w *memWriter) Header() http.Header { return w.header }

func (w *memWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status = status
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *memWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush does nothing: every Write reaches the reader at once.
func (w *memWriter) Flush() {}
