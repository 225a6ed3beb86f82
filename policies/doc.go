// Package policies is retrysim's retry layer for production Go clients: Do
// (a retry loop around one operation, with the real clock, sleeps and
// context handling) and Transport (an http.RoundTripper over Do), the
// Policy and its backoffs that decide when to try again, the
// classification of answers, the coordinators that workers sharing one API
// key pass to them, and the errors and hooks they report. See
// docs/client.md.
//
// The decisions are package policies/machine's, which the simulator runs
// as they are: most types here are aliases of its types, documented there
// with their fields and methods. Tests of code that calls Do run it in a
// testing/synctest bubble, whose fake clock makes waits take no time.
//
// The default classifier, ClassifyError, does not know the errors of the
// Anthropic Go SDK: around SDK calls, use package policies/anthropicsdk's.
package policies
