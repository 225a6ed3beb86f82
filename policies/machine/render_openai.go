package machine

import (
	"encoding/json"
	"net/http"
)

// The OpenAI rendering: the same Outcome as Render's, in the shape of the
// OpenAI API. Status and headers are Render's (a 429 adds x-ratelimit-*),
// the body is OpenAI's error object, and ClassifyResponse reads it back to
// the Outcome it reads from Render's (the property test in
// render_openai_test.go).

// OpenAI's insufficient_quota: a 429 that fails until the account is
// topped up, the spend-limit 429 of the OpenAI API.
const CodeInsufficientQuota = "insufficient_quota"

// OpenAI error types and codes for the API error types of Render. The
// OpenAI API names no overload type of its own; retrysim marks a capacity
// failure with the code "overloaded".
var openAIErrors = map[string]struct{ typ, code string }{
	"overloaded_error":      {"server_error", "overloaded"},
	"api_error":             {"server_error", ""},
	"timeout_error":         {"server_error", "timeout"},
	"rate_limit_error":      {"requests", "rate_limit_exceeded"},
	"authentication_error":  {"invalid_request_error", "invalid_api_key"},
	"permission_error":      {"invalid_request_error", "permission_denied"},
	"not_found_error":       {"invalid_request_error", "not_found"},
	"request_too_large":     {"invalid_request_error", "request_too_large"},
	"billing_error":         {"invalid_request_error", "billing_error"},
	"invalid_request_error": {"invalid_request_error", ""},
}

// RenderOpenAI returns the response that carries o as the OpenAI API sends
// it: Render's status and headers, a 429 with x-ratelimit-remaining-requests
// 0 and x-ratelimit-reset-requests (the wait in whole milliseconds,
// rounded up, as Go writes a duration: "12ms", "1.5s", "1m0s") when it
// has a wait, and the body
// {"error":{"message":...,"type":...,"param":null,"code":...}}. A spend
// limit is type and code insufficient_quota.
func RenderOpenAI(o Outcome) Rendered {
	r := Render(o)
	if o.Class == Success {
		return r
	}
	errType, code := parseErrorBody(r.Body)
	if r.Status == http.StatusTooManyRequests && o.Class == RetryAfter {
		r.Header.Set("x-ratelimit-remaining-requests", "0")
		if o.ServerWait > 0 {
			r.Header.Set("x-ratelimit-reset-requests", openAIDuration(o.ServerWait))
		}
	}
	r.Body = OpenAIErrorBody(errType, code, errorMessage(errType, code))
	return r
}

// OpenAIErrorBody returns OpenAI's error object for an API error type of
// Render (errType) and a spend-limit code ("" if none).
func OpenAIErrorBody(errType, spendCode, message string) []byte {
	e, ok := openAIErrors[errType]
	if !ok {
		e = openAIErrors["invalid_request_error"]
	}
	if isSpendLimit(spendCode) {
		e.typ, e.code = CodeInsufficientQuota, CodeInsufficientQuota
	}
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	v := struct {
		Error apiError `json:"error"`
	}{apiError{Message: message, Type: e.typ}}
	if e.code != "" {
		v.Error.Code = &e.code
	}
	return mustMarshal(v)
}

// RenderOpenAIEvent returns the data of the error that ends a streamed
// OpenAI response: for Chat Completions a data-only event whose JSON is
// the error object ({"error":{...}}); for the Responses API (responses
// true) an "error" event {"type":"error","code":...,"message":...,
// "param":null,"sequence_number":seq}. ok is false for Success.
func RenderOpenAIEvent(o Outcome, responses bool, seq int) (event string, data []byte, ok bool) {
	_, anth, ok := RenderEvent(o)
	if !ok {
		return "", nil, false
	}
	errType, code := parseErrorBody(anth)
	body := OpenAIErrorBody(errType, code, errorMessage(errType, code))
	if !responses {
		return "", body, true
	}
	var v struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		panic(err) // it was just marshalled
	}
	code = v.Error.Type // server_error, invalid_request_error, ...
	if v.Error.Code != nil {
		code = *v.Error.Code
	}
	return "error", mustMarshal(struct {
		Type     string  `json:"type"`
		Code     string  `json:"code"`
		Message  string  `json:"message"`
		Param    *string `json:"param"`
		Sequence int     `json:"sequence_number"`
	}{"error", code, v.Error.Message, nil, seq}), true
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs always marshal
	}
	return b
}

// openAIErrorType maps an OpenAI error's type and code to the API error
// type of Render and a spend-limit code: the reverse of OpenAIErrorBody.
func openAIErrorType(typ, code string) (errType, spend string) {
	switch {
	case code == CodeInsufficientQuota || typ == CodeInsufficientQuota:
		return "rate_limit_error", CodeInsufficientQuota
	case code == "overloaded":
		return "overloaded_error", ""
	case code == "rate_limit_exceeded" || typ == "requests" || typ == "tokens":
		return "rate_limit_error", ""
	case code == "timeout":
		return "timeout_error", ""
	case typ == "server_error":
		return "api_error", ""
	}
	return "invalid_request_error", ""
}
