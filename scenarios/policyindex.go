package scenarios

import (
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/internal/suggest"
)

// PolicyIndex is the index in s.Policies of the policy called name. When s
// has none, the error names the scenario and lists the policies it has.
func (s *Scenario) PolicyIndex(name string) (int, error) {
	names := make([]string, len(s.Policies))
	for i := range s.Policies {
		if names[i] = s.Policies[i].Name; names[i] == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("scenario %s has no such policy%s (have: %s)", s.Name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}
