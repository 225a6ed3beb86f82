// Package policies is retrysim's retry layer for production Go clients:
// Do (a retry loop around one operation) and Transport (an
// http.RoundTripper over Do), with the policy, backoffs, classification,
// coordinators, errors and hooks they take. See docs/client.md. Most types
// are aliases of package policies/machine's, the decision code the
// simulator runs; go doc shows their fields there. Tests of code that
// calls Do run it in a testing/synctest bubble. Around Anthropic SDK
// calls, use package policies/anthropicsdk's classifier.
package policies
