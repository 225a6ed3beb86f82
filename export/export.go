// Package export writes a scenario's policy as the client set-up that runs
// it in production, in the language of the SDK a team uses: the SDK's own
// settings where they are enough, otherwise its retries off and a short
// retry loop with the policy's backoff, server-wait rule, attempt limit,
// deadline and in-process coordination. What the target cannot express is
// said in the output and returned, never dropped silently.
package export

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// A Target is an SDK that a policy can be carried into.
type Target struct {
	Name string // as --for takes it
	// Preset is the scenario preset that models the SDK's own retries.
	Preset string
	lang   string // template: python, typescript or go
	sdk    string // anthropic or openai
}

// Targets lists every target, in the order --for's help names them.
var Targets = []Target{
	{Name: "anthropic-python", Preset: "anthropic-sdk-python", lang: "python", sdk: "anthropic"},
	{Name: "anthropic-typescript", Preset: "anthropic-sdk-typescript", lang: "typescript", sdk: "anthropic"},
	{Name: "openai-python", Preset: "openai-python", lang: "python", sdk: "openai"},
	{Name: "openai-node", Preset: "openai-node", lang: "typescript", sdk: "openai"},
	{Name: "go", Preset: "anthropic-sdk-go", lang: "go", sdk: "anthropic"},
}

// TargetNames are the targets' names, comma-separated.
func TargetNames() string {
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// LookupTarget returns the target called name.
func LookupTarget(name string) (Target, error) {
	for _, t := range Targets {
		if t.Name == name {
			return t, nil
		}
	}
	return Target{}, fmt.Errorf("unknown target %q; known: %s", name, TargetNames())
}

// Source says where the policy comes from, for the output's heading and
// for the Go target, which loads the policy from it.
type Source struct {
	File     string // the scenario file as given; "" for the built-in scenarios
	Scenario string
}

// Result says how the policy was carried.
type Result struct {
	// SDKOnly is true when the SDK's own settings realise the policy.
	SDKOnly bool
	// Unexpressed lists, in words, what the output does not do that the
	// simulated policy does (each also a comment in the output).
	Unexpressed []string
}

//go:embed templates
var templates embed.FS

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"secs": func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) },
	"ms": func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
	},
	"goq": strconv.Quote,
}).ParseFS(templates, "templates/*.tmpl"))

// plan is what a template needs: the policy taken apart.
type plan struct {
	Target      Target
	SDK         string // anthropic or openai
	Policy      string
	Source      Source
	Command     string
	Described   []string // the policy in words, a line each
	SDKOnly     bool
	SDKWhy      string // why the SDK's retries are off
	MaxRetries  int    // with SDKOnly
	Rules       policies.Policy
	Backoff     string // full-jitter, exponential, ... (the loop's backoff function)
	Base, Cap   time.Duration
	Factor      string
	Gate        bool
	Throttle    *kinds.ThrottleValues
	Limit       *kinds.LimitValues
	Unexpressed []string
}

// Write writes the set-up that realises policy p for target t.
func Write(w io.Writer, p *sim.Policy, t Target, src Source) (Result, error) {
	pl, err := newPlan(p, t, src)
	if err != nil {
		return Result{}, err
	}
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, t.lang+".tmpl", pl); err != nil {
		return Result{}, fmt.Errorf("export %s: %w", t.Name, err) // a template bug
	}
	_, err = w.Write(b.Bytes())
	return Result{SDKOnly: pl.SDKOnly, Unexpressed: pl.Unexpressed}, err
}

func newPlan(p *sim.Policy, t Target, src Source) (*plan, error) {
	pl := &plan{Target: t, SDK: t.sdk, Policy: p.Name, Source: src, Rules: p.Rules, Factor: "1"}
	pl.Command = "retrysim show --policy " + p.Name + " --for " + t.Name
	if src.File != "" {
		pl.Command += " --file " + src.File
	}
	if src.Scenario != "" {
		pl.Command += " --scenario " + src.Scenario
	}
	pl.Described = describe(p)
	if t.lang == "go" {
		// The policies package runs every rule and control; the SDK's own
		// retries are off, as docs/client.md says.
		if len(p.Layers) > 0 {
			pl.Unexpressed = append(pl.Unexpressed, "the retry layers inside this one (build them by nesting policies.Do)")
		}
		return pl, nil
	}
	sdk, err := presetRules(t.Preset)
	if err != nil {
		return nil, err
	}
	if why := sdkDiffers(p, sdk); why == "" {
		pl.SDKOnly = true
		pl.MaxRetries = max(p.Rules.MaxAttempts-1, 0)
		return pl, nil
	} else {
		pl.SDKWhy = why
	}
	if err := pl.backoff(p.Rules.Backoff); err != nil {
		return nil, err
	}
	r := p.Rules
	if !r.RetryOn.IsZero() {
		pl.Unexpressed = append(pl.Unexpressed, "the retry rule by status and class (retry_on: "+r.RetryOn.String()+"): the loop below does not read it and retries as retry_by says (the Go policies package runs it: --for go)")
	}
	if r.Watchdog().On() {
		pl.Unexpressed = append(pl.Unexpressed, "the stream watchdog (stream_idle_timeout, stream_first_byte_timeout): the loop retries a stream that fails, not one that stalls")
	}
	lc := kinds.LocalControlsOf(p)
	pl.Gate, pl.Throttle, pl.Limit = lc.Gate, lc.Throttle, lc.Limit
	if c := pl.Throttle; c != nil && c.MaxQueue > 0 {
		pl.Unexpressed = append(pl.Unexpressed, fmt.Sprintf("the throttle's queue bound (max_queue %d): callers wait for their slot however many wait", c.MaxQueue))
	}
	if c := pl.Limit; c != nil && c.MaxQueue > 0 {
		pl.Unexpressed = append(pl.Unexpressed, fmt.Sprintf("the in-flight limit's queue bound (max_queue %d): callers wait however many wait", c.MaxQueue))
	}
	for _, s := range lc.Others {
		pl.Unexpressed = append(pl.Unexpressed, kinds.CoordinatorNoun(s)+": no SDK has it, and it is not written here (the Go policies package runs it: --for go)")
	}
	if pl.Gate || pl.Throttle != nil || pl.Limit != nil {
		pl.Unexpressed = append(pl.Unexpressed, "sharing across processes: the gate, throttle and in-flight limit here are shared by the callers of one process only; workers in other processes on the same key keep their own")
	}
	if f := p.Fallback; f != nil {
		pl.Unexpressed = append(pl.Unexpressed, fmt.Sprintf("the model fallback after %d capacity failures: pass the model to call into the loop's function and switch it yourself", f.After))
	}
	if len(p.Layers) > 0 {
		pl.Unexpressed = append(pl.Unexpressed, "the retry layers inside this one")
	}
	return pl, nil
}

// backoff sets the loop's backoff from b, by its kind's name (the
// templates hold each kind's code). A kind without code there is refused,
// never replaced by another.
func (pl *plan) backoff(b policies.Backoff) error {
	if b == nil {
		pl.Backoff = "immediate"
		return nil
	}
	sh, ok := kinds.ShapeOf(b)
	if !ok || !templated[sh.Kind] {
		return fmt.Errorf("export: no code for the backoff %v", b)
	}
	pl.Backoff, pl.Base, pl.Cap = sh.Kind, sh.Base, sh.Cap
	pl.Factor = strconv.FormatFloat(max(sh.Factor, 1), 'f', -1, 64)
	if sh.Cap <= 0 {
		pl.Cap = machine.MaxDelay
	}
	return nil
}

// templated lists the backoff kinds the Python and TypeScript templates
// have code for.
var templated = map[string]bool{
	"immediate": true, "capped-exponential": true, "full-jitter": true, "equal-jitter": true,
	"decorrelated-jitter": true, "sdk-jitter": true, "added-jitter": true, "doubling-jitter": true,
	"grpc-jitter": true,
}

// sdkDiffers says why the SDK's own retries cannot run policy p, whose
// SDK's preset has rules sdk; "" when they can (with its max_retries and
// timeout).
func sdkDiffers(p *sim.Policy, sdk policies.Policy) string {
	r := p.Rules
	switch {
	case len(p.Coordinators) > 0:
		return "it shares " + kinds.CoordinatorNoun(p.Coordinators[0]) + " between calls, which the SDK has not"
	case p.Fallback != nil:
		return "it falls back to another model"
	case r.MaxAttempts <= 0:
		return "it has no attempt limit, and the SDK's max_retries is a number"
	case r.Deadline != 0:
		return "it has a deadline, " + r.Deadline.String() + " from the first attempt, and the SDK's timeouts bound one request each"
	}
	sdk.MaxAttempts, sdk.AttemptTimeout = r.MaxAttempts, r.AttemptTimeout
	if r != sdk {
		if r.Backoff != sdk.Backoff {
			return fmt.Sprintf("its backoff, %v, is not the SDK's, %v", r.Backoff, sdk.Backoff)
		}
		return "its rules for server waits and errors are not the SDK's"
	}
	return ""
}

// presetRules are the rules of the preset called name, through the
// scenario loader, as a scenario file gets them.
func presetRules(name string) (policies.Policy, error) {
	f, err := scenarios.Parse("preset", []byte("scenarios:\n  - name: preset\n    server: {phases: [{admit: 1, window: 1s}]}\n    clients: {count: 1}\n    policies:\n      - name: "+name+"\n"))
	if err != nil {
		return policies.Policy{}, fmt.Errorf("export: preset %s: %w", name, err)
	}
	return f.Scenarios[0].Policies[0].Rules, nil
}

// describe says what policy p does, a line each, for the heading.
func describe(p *sim.Policy) []string {
	r := p.Rules
	var out []string
	attempts := "no attempt limit"
	if r.MaxAttempts > 0 {
		attempts = fmt.Sprintf("at most %d attempts", r.MaxAttempts)
	}
	deadline := "no deadline"
	if r.Deadline != 0 {
		deadline = "no attempt starts later than " + r.Deadline.String() + " after the first"
	}
	out = append(out, fmt.Sprintf("backoff %v; %s; %s", r.Backoff, attempts, deadline))
	if r.AttemptTimeout > 0 {
		out = append(out, "each attempt times out after "+r.AttemptTimeout.String())
	}
	wait := "a server's retry-after is honoured as the wait"
	if r.AtLeastBackoff {
		wait = "a server's retry-after is a floor under the backoff"
	}
	switch {
	case r.IgnoreServerWaitAbove > 0:
		wait += ", ignored above " + r.IgnoreServerWaitAbove.String()
	case r.ClampServerWait > 0:
		wait += ", cut to " + r.ClampServerWait.String() + " above it"
	case r.FailServerWaitAbove > 0:
		wait += "; one above " + r.FailServerWaitAbove.String() + " ends the call"
	}
	if r.ServerWaitJitter > 0 {
		wait += ", plus up to " + r.ServerWaitJitter.String() + " of jitter"
	}
	if r.TotalServerWaitCap > 0 {
		wait += "; at most " + r.TotalServerWaitCap.String() + " of server waits in all"
	}
	out = append(out, wait)
	rule := "errors retried by class (a spend-limit 429 and other client errors are not)"
	if r.RetryByStatus {
		rule = "errors retried by status, as the SDKs do (408, 409, 429, 5xx, no response; x-should-retry decides)"
	}
	if !r.RetryOn.IsZero() {
		rule = "only " + r.RetryOn.String() + " retried (retry_on); every other failure ends the call"
	}
	if r.NoCapacityRetries {
		rule += "; a capacity failure (529, 503) is not retried"
	}
	if r.NoMidStreamRetries {
		rule += "; a failure inside a streamed 200 is not retried"
	}
	out = append(out, rule)
	var shared []string
	for _, s := range p.Coordinators {
		shared = append(shared, kinds.CoordinatorNoun(s))
	}
	if len(shared) > 0 {
		out = append(out, "shared: "+strings.Join(slices.Compact(shared), ", "))
	}
	return out
}
