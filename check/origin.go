package check

import (
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
)

// OriginError says why a baseline is not of what a check runs: recorded
// with other --param values, or of a scenario whose world (server,
// workload, incident) has changed since. It is bad input (exit 2) unless
// the check accepts the change (--accept-scenario-change).
type OriginError struct {
	File     string
	Problems []string
	// Rerecord is the command that records the baseline again.
	Rerecord string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("baseline %s is not of what this check runs: %s. Record it again (%s) or, to compare with it anyway, pass --accept-scenario-change",
		e.File, strings.Join(e.Problems, "; "), e.Rerecord)
}

// maxWorldChanges is how many changed settings a message names.
const maxWorldChanges = 5

// worldChanges names the settings that differ between old and new, the
// first maxWorldChanges of them, as ": a, b and 3 more"; "" if none.
func worldChanges(old, new []scenarios.Setting) string {
	changes := scenarios.CompareWorlds(old, new)
	var names []string
	for i, c := range changes {
		if i == maxWorldChanges {
			names = append(names, fmt.Sprintf("and %d more", len(changes)-i))
			break
		}
		names = append(names, c.String())
	}
	if len(names) == 0 {
		return ""
	}
	return ": " + strings.Join(names, ", ")
}

// BaselineParams decides the --param values a baseline recorded with
// origin rec (nil: an older baseline, which records none) runs with, given
// the check's own (given, canonical as compare.Params writes them; set
// when --param was given at all). Without --param, a baseline runs with
// the values it was recorded with, and note says so; with --param, they
// must be the recorded ones (in any order), else problem names each that
// differs.
func BaselineParams(file string, rec *report.Origin, given []string, set bool) (params []string, note, problem string) {
	switch {
	case rec == nil:
		return given, "", ""
	case !set:
		if len(rec.Params) > 0 {
			note = fmt.Sprintf("%s was recorded with --param %s: the check runs it so", file, strings.Join(rec.Params, " --param "))
		}
		return rec.Params, note, ""
	}
	if d := paramsDiffer(rec.Params, given, "when recorded", "here"); d != "" {
		return given, "", "--param differs: " + d
	}
	return given, "", ""
}

// paramsDiffer says how the --param values given (where, e.g. "here")
// differ from those recorded (where, e.g. "when recorded"), or "".
func paramsDiffer(recorded, given []string, recWhere, givenWhere string) string {
	value := func(list []string) (map[string]string, []string) {
		m := map[string]string{}
		var names []string
		for _, p := range list {
			name, v, _ := strings.Cut(p, "=")
			m[name] = v
			names = append(names, name)
		}
		return m, names
	}
	was, recNames := value(recorded)
	now, givenNames := value(given)
	var diffs []string
	for _, name := range recNames {
		switch v, ok := now[name]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s=%s %s, not set %s", name, was[name], recWhere, givenWhere))
		case v != was[name]:
			diffs = append(diffs, fmt.Sprintf("%s=%s %s, %s=%s %s", name, v, givenWhere, name, was[name], recWhere))
		}
	}
	for _, name := range givenNames {
		if _, ok := was[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%s %s, not set %s", name, now[name], givenWhere, recWhere))
		}
	}
	return strings.Join(diffs, ", ")
}

// VerifyScenario compares the scenario a baseline recorded with origin
// rec (not nil) was of with s, the scenario the check runs for it (its
// --param values set), read from scenarioFile (as the origin names
// files). problem, if not "", says what differs: the settings of the world
// (scenarios.Scenario.World), the first few by their paths, and the file
// it was read from. note, if not "", says the world is the same but the
// file is another.
func VerifyScenario(rec *report.Origin, s *scenarios.Scenario, scenarioFile string) (problem, note string) {
	otherFile := rec.File != scenarioFile
	digest := s.Digest()
	if digest == rec.Digest {
		if otherFile {
			note = fmt.Sprintf("recorded from %s and checked against %s: the same world (scenario %s, digest %s)", rec.File, scenarioFile, s.Name, report.ShortDigest(digest))
		}
		return "", note
	}
	problem = fmt.Sprintf("scenario %s is not the one recorded (digest %s, now %s)", s.Name, report.ShortDigest(rec.Digest), report.ShortDigest(digest))
	if old, err := rec.Settings(); err == nil && len(rec.World) > 0 {
		problem += worldChanges(old, s.World())
	}
	if otherFile {
		problem += fmt.Sprintf("; it was recorded from %s, this check reads %s", rec.File, scenarioFile)
	}
	return problem, ""
}

// UnverifiedWarning is the warning for a baseline whose report records no
// origin (written before reports did).
func UnverifiedWarning(file string) string {
	return fmt.Sprintf("%s does not record what produced it (written by an older retrysim): it cannot be verified to be of this scenario file, scenario and --param values; it is compared as it is. Record it again to have it verified", file)
}

// OriginOf is the origin of a baseline read as doc (a single-seed report)
// or multi (a multi-seed one): nil when it records none.
func OriginOf(doc *report.Document, multi *SeedSet) *report.Origin {
	if doc != nil {
		return doc.Origin
	}
	return multi.Origin
}

// CompareOrigins says how the origins of two reports of a diff differ
// (either may be nil: a report written before reports recorded one): one
// warning for another world (naming the first settings that differ), one
// for other --param values, one for a report that records none. A diff
// of two scenarios is allowed; the warnings say that it is one.
func CompareOrigins(oldFile string, old *report.Origin, newFile string, new *report.Origin) []string {
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil || new == nil:
		file := oldFile
		if new == nil {
			file = newFile
		}
		return []string{fmt.Sprintf("%s does not record what produced it (written by an older retrysim): whether both reports are of the same scenario and --param values cannot be told", file)}
	}
	var out []string
	if d := paramsDiffer(old.Params, new.Params, "in "+oldFile, "in "+newFile); d != "" {
		out = append(out, fmt.Sprintf("%s and %s were recorded with other --param values: %s", oldFile, newFile, d))
	}
	if old.Digest != new.Digest {
		w := fmt.Sprintf("%s and %s are of scenarios with other worlds (digest %s and %s)", oldFile, newFile, report.ShortDigest(old.Digest), report.ShortDigest(new.Digest))
		a, errA := old.Settings()
		b, errB := new.Settings()
		if errA == nil && errB == nil && len(old.World) > 0 && len(new.World) > 0 {
			w += worldChanges(a, b)
		}
		out = append(out, w)
	}
	return out
}
