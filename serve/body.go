package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// bodyChunk is the first buffer of a body of unknown length; it doubles
// as the body arrives.
const bodyChunk = 16 << 10

// bodyBudget bounds the bytes that the request bodies of a Handler hold
// together: every byte of a body's buffer is reserved here before it is
// allocated, and released when the request no longer needs it.
type bodyBudget struct {
	mu        sync.Mutex
	held, max int64
}

// reserve takes n bytes from the budget, or reports false if they would
// exceed it.
func (b *bodyBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.max {
		return false
	}
	b.held += n
	return true
}

func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

func (b *bodyBudget) bytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// errBodyBudget says a body would take the bodies' budget past its limit.
var errBodyBudget = errors.New("the request bodies in flight hold as many bytes as the server allows")

// readBody reads a body into one buffer whose capacity is reserved from
// h.bodies before it is allocated: length bytes and one more (to see the
// end) when the length is known, else bodyChunk bytes, doubling as the body
// arrives (the old buffer and the new one are both held while it is
// copied). It returns the buffer and the bytes held, which the caller
// releases; on an error nothing is held. Bodies over the limit end in the
// reader's *http.MaxBytesError.
func (h *Handler) readBody(r io.Reader, length int64) ([]byte, int64, error) {
	limit := h.cfg.maxBody + 1
	var buf []byte
	var held int64
	for {
		if len(buf) == cap(buf) {
			next := max(2*int64(cap(buf)), bodyChunk)
			if length >= 0 && cap(buf) == 0 {
				next = length + 1
			}
			next = min(next, limit)
			if next <= int64(cap(buf)) || !h.bodies.reserve(next) {
				h.bodies.release(held)
				if next <= int64(cap(buf)) {
					return nil, 0, errors.New("the body is larger than the limit") // the reader did not stop it
				}
				return nil, 0, errBodyBudget
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			h.bodies.release(held)
			buf, held = grown, next
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, held, nil
		case err != nil:
			h.bodies.release(held)
			return nil, 0, err
		}
	}
}

// MaxModelName bounds a request's model name, in bytes: a longer one is
// refused with 400 invalid_request_error, as the APIs refuse a model they
// do not know. serve echoes the name in every answer and stream chunk
// (JSON writes some bytes, such as '<', as six), so an unbounded one let a
// small request make a large answer.
const MaxModelName = 256

// checkModel checks a request's model name; the error is the message of an
// invalid_request_error.
func checkModel(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("model: required")
	case len(name) > MaxModelName:
		return fmt.Errorf("model: at most %d bytes, got %d", MaxModelName, len(name))
	}
	return nil
}

// messageRequest is what serve reads of a Messages request.
type messageRequest struct {
	Model     string    `json:"model"`
	MaxTokens *int64    `json:"max_tokens"`
	Messages  []ignored `json:"messages"`
	Stream    bool      `json:"stream"`
}

// ignored is a JSON value that is checked but not kept: a message is
// counted, and its bytes stay in the body.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }

// parseMessageRequest decodes and checks a request body, in place (no copy
// of it is made but the model's name); the error is the message of an
// invalid_request_error.
func parseMessageRequest(body []byte) (messageRequest, error) {
	var req messageRequest
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return req, errors.New("the request body is empty; send a JSON object")
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return req, fmt.Errorf("%s: expected %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
		case errors.As(err, &syntaxErr) && syntaxErr.Offset > 1 && json.Valid(body[:syntaxErr.Offset-1]):
			// A whole value, then more than white space.
			return req, errors.New("the request body holds more than one JSON value")
		}
		return req, fmt.Errorf("the request body is not a JSON object: %v", err)
	}
	if err := checkModel(req.Model); err != nil {
		return req, err
	}
	switch {
	case req.MaxTokens == nil:
		return req, errors.New("max_tokens: required")
	case *req.MaxTokens < 1:
		return req, fmt.Errorf("max_tokens: must be at least 1, got %d", *req.MaxTokens)
	case len(req.Messages) == 0:
		return req, errors.New("messages: required, at least one message")
	}
	return req, nil
}
