package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/retrysim/retrysim/sim"
)

// Connection limits of a Server.
const (
	// ReadHeaderTimeout bounds the time to read a request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
	// MaxStreamsPerConn bounds the requests in flight on one HTTP/2
	// connection of Validate's loopback server; a client opens another
	// connection beyond it.
	MaxStreamsPerConn = 1000
)

// Server is a Handler listening on a TCP address, as httptest.Server is for
// tests: URL is its base URL ("http://127.0.0.1:PORT"). It speaks HTTP/1.1.
type Server struct {
	// URL is the base URL of the API, without a trailing slash.
	URL string
	// Handler is the handler serving every request.
	Handler *Handler

	srv       *http.Server
	served    chan error    // Serve's result
	stopLog   chan struct{} // closed to stop the log loop
	logDone   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Listen serves model on addr (host:port; port 0 picks a free one) until
// Shutdown or Close. It checks every request's Host (WithAllowedHosts),
// allowing the host of addr too. A malformed addr is an *AddrError.
func Listen(addr string, model sim.ServerModel, opts ...Option) (*Server, error) {
	host, err := checkAddr(addr)
	if err != nil {
		return nil, err
	}
	h, err := NewHandler(model, append([]Option{WithAllowedHosts(host)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return serveHandler(addr, h, false)
}

// AddrError refuses a listen address that is not host:port with a port
// from 0 to 65535.
type AddrError struct{ Addr, Problem string }

func (e *AddrError) Error() string {
	return fmt.Sprintf("serve: the address %q %s; want HOST:PORT, such as 127.0.0.1:8080 (port 0 picks a free one)", e.Addr, e.Problem)
}

// checkAddr checks that addr is host:port and returns the host.
func checkAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", &AddrError{addr, "is not HOST:PORT"}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
			return "", &AddrError{addr, fmt.Sprintf("has the port %q, which is neither a number from 0 to 65535 nor a service name", port)}
		}
	}
	return host, nil
}

// serveHandler serves h on addr, over HTTP/1.1 and, if h2c, HTTP/2 without
// TLS (prior knowledge) too.
func serveHandler(addr string, h *Handler, h2c bool) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(h2c)
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		Handler: h,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: ReadHeaderTimeout,
			IdleTimeout:       IdleTimeout,
			MaxHeaderBytes:    MaxHeaderBytes,
			Protocols:         protocols,
			HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: MaxStreamsPerConn},
			// Read and write deadlines are set per request by the handler:
			// a response is due when the model says, which may be long.
		},
		served:  make(chan error, 1),
		stopLog: make(chan struct{}),
		logDone: make(chan struct{}),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	if h.cfg.logTo != nil {
		go s.logLoop(h.cfg.logTo, h.cfg.logEvery)
	} else {
		close(s.logDone)
	}
	return s, nil
}

// NewServer serves model on a free loopback port, for tests (of this or
// any other project): like httptest.NewServer, it panics if it cannot
// listen or the options are invalid. Close it when done.
func NewServer(model sim.ServerModel, opts ...Option) *Server {
	s, err := Listen("127.0.0.1:0", model, opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Shutdown stops accepting requests and waits until every response in
// flight has been written, or ctx ends: then the remaining connections are
// closed at once, cutting their responses, and the error is a *CutError
// (which wraps ctx's error). Only the first call of Shutdown or Close does
// anything; later ones return its result.
//
// As http.Server.Shutdown does, it also waits for connections on which no
// request has arrived yet, for up to 5 s of their age (a client pool that
// dialled more connections than it used leaves such ones open): a client
// in the same process can close its idle connections first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		close(s.stopLog)
		err := s.srv.Shutdown(ctx)
		if err != nil {
			err = &CutError{InFlight: s.Handler.Stats().InFlight, Err: err}
			_ = s.srv.Close()
		}
		if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		<-s.logDone
		s.closeErr = err
	})
	return s.closeErr
}

// CutError says that Shutdown's context ended with responses in flight,
// which were cut.
type CutError struct {
	// InFlight is the number of requests being served when it ended.
	InFlight int64
	Err      error
}

func (e *CutError) Error() string {
	return fmt.Sprintf("serve: %d responses still in flight were cut: %v", e.InFlight, e.Err)
}

func (e *CutError) Unwrap() error { return e.Err }

// Close shuts the server down gracefully (Shutdown with no time limit: a
// response in flight takes at most its model time divided by the speed,
// plus WriteMargin).
func (s *Server) Close() { _ = s.Shutdown(context.Background()) }

// logLoop writes a line every interval until the server stops.
func (s *Server) logLoop(w io.Writer, every time.Duration) {
	defer close(s.logDone)
	t := time.NewTicker(every)
	defer t.Stop()
	last := s.Handler.Stats()
	for {
		select {
		case <-s.stopLog:
			return
		case <-t.C:
			now := s.Handler.Stats()
			fmt.Fprintln(w, logLine(last, now, every))
			last = now
		}
	}
}

// logLine describes the counts between two Stats.
func logLine(prev, now Stats, every time.Duration) string {
	return fmt.Sprintf("retrysim serve: last %v: %d requests, %d admitted, %d rejected, %d refused; %d turned away; %d in flight",
		every, now.Requests-prev.Requests, now.Admitted-prev.Admitted, now.Rejected-prev.Rejected,
		now.Refused-prev.Refused, now.TurnedAway-prev.TurnedAway, now.InFlight)
}
