package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
)

// noteOneSeed says on stderr that a single-seed result is one history, when
// some policy of s draws random waits (its numbers change with the seed),
// and how to see more: --seeds.
func noteOneSeed(stderr io.Writer, s *scenarios.Scenario, seed uint64) {
	var names []string
	for _, p := range s.Policies {
		if machine.Randomised(p.Rules) {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	verb := "draws"
	if len(names) > 1 {
		verb = "draw"
	}
	fmt.Fprintf(stderr, "retrysim: note: one seed (%d): %s %s random waits, so another seed gives other numbers; --seeds 20 compares the policies over seeds, with tests\n",
		seed, strings.Join(names, ", "), verb)
}
