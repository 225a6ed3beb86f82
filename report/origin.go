package report

import (
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/scenarios"
)

// Origin says what produced a report of 'retrysim compare --format json':
// enough for 'retrysim check --baseline' to run the same scenario again,
// and to refuse a baseline whose scenario is no longer the one it checks.
// docs/output.md describes it; reports written before it have none.
type Origin struct {
	// Version is the retrysim build that wrote the report, for the record:
	// "retrysim devel, commit unknown".
	Version string `json:"retrysim_version"`
	// File is the scenario file as --file gave it, scenarios.BuiltinFile
	// for the built-in scenarios, or "<stdin>".
	File string `json:"scenario_file"`
	// Params are the --param values set on the scenario, NAME=VALUE as the
	// sweep writes values (clients=40, outage=5s), in the order given;
	// never null.
	Params []string `json:"params"`
	// Digest is the scenario's digest (scenarios.Scenario.Digest): its
	// server, workload and incident after defaults and Params, not its
	// policies.
	Digest string `json:"scenario_digest"`
	// World is what Digest hashes, one setting a line ("PATH = VALUE",
	// scenarios.Setting), so that a check can name what changed.
	World []string `json:"world"`
}

// NewOrigin is the origin of a report of s (with params set on it), read
// from file, written by version.
func NewOrigin(version, file string, params []string, s *scenarios.Scenario) *Origin {
	o := &Origin{Version: version, File: file, Params: append([]string{}, params...), Digest: s.Digest(), World: []string{}}
	for _, st := range s.World() {
		o.World = append(o.World, st.String())
	}
	return o
}

// Settings reads World.
func (o *Origin) Settings() ([]scenarios.Setting, error) {
	out := make([]scenarios.Setting, len(o.World))
	for i, line := range o.World {
		st, err := scenarios.ParseSetting(line)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

// Check says what is wrong with an origin read from a file, or nil: a
// digest that is not "sha256:" and 64 hex digits, a world that does not
// read or does not hash to the digest (the file was edited), an empty
// parameter.
func (o *Origin) Check() error {
	hex := strings.TrimPrefix(o.Digest, "sha256:")
	if len(hex) != 64 || hex == o.Digest || strings.Trim(hex, "0123456789abcdef") != "" {
		return fmt.Errorf("origin: scenario_digest %q: want sha256: and 64 hex digits", o.Digest)
	}
	for _, p := range o.Params {
		if !strings.Contains(p, "=") {
			return fmt.Errorf("origin: params: %q is not NAME=VALUE", p)
		}
	}
	if o.World == nil {
		return nil
	}
	world, err := o.Settings()
	if err != nil {
		return fmt.Errorf("origin: world: %v", err)
	}
	if d := scenarios.WorldDigest(world); d != o.Digest {
		return fmt.Errorf("origin: the world recorded does not have the digest recorded (%s, not %s): the file was edited", d, o.Digest)
	}
	return nil
}

// Describe says in a line where a report came from: "scenario file
// scenarios.yaml (built in), --param clients=40, digest sha256:ad3c8be840c8…,
// retrysim devel, commit unknown".
func (o *Origin) Describe() string {
	s := "scenario file " + o.File
	if len(o.Params) > 0 {
		s += ", --param " + strings.Join(o.Params, " --param ")
	}
	return s + ", digest " + ShortDigest(o.Digest) + ", " + o.Version
}

// ShortDigest is a digest cut to 12 hex digits, for messages.
func ShortDigest(d string) string {
	if n := len("sha256:") + 12; len(d) > n {
		return d[:n] + "…"
	}
	return d
}
