package main

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
)

func TestCompareSeedsGolden(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"table", "markdown", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			out, errOut, _, err := runCLI(t, "compare", "--seeds", "12", "--format", format)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "compare-seeds12."+format, out, errOut)
		})
	}
}

// rate-limited-burst has policies that do not differ significantly: the
// table must say so with "~".
func TestCompareSeedsNotSignificantGolden(t *testing.T) {
	t.Parallel()
	out, errOut, _, err := runCLI(t, "compare", "--scenario", "rate-limited-burst", "--seeds", "10")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "| ~ (p=") {
		t.Error("no non-significant comparison marked ~")
	}
	checkGolden(t, "compare-rate-limited-seeds10.table", out, errOut)
}

// With one seed, compare keeps its single-seed output, whatever --seeds says.
func TestCompareOneSeedUnchanged(t *testing.T) {
	t.Parallel()
	plain, _, _, err := runCLI(t, "compare", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	one, _, _, err := runCLI(t, "compare", "--format", "json", "--seeds", "1")
	if err != nil {
		t.Fatal(err)
	}
	if plain != one || strings.Contains(one, "multi-seed") {
		t.Errorf("--seeds 1 changed the single-seed JSON:\n%s", one)
	}
}

// The multi-seed output must not depend on how many goroutines run it.
func TestCompareSeedsSameOnAnyGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var outs []string
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		out, _, _, err := runCLI(t, "compare", "--scenario", "long-outage", "--seeds", "16", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Fatalf("output with GOMAXPROCS run %d differs:\n%s", i, golden.Diff(outs[0], outs[i]))
		}
	}
}

func TestSeedsFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--seeds", "0"}, "--seeds must be between 1"},
		{[]string{"compare", "--seeds", "-3"}, "must be a non-negative integer"},
		{[]string{"compare", "--seeds", "many"}, "seeds"},
		{[]string{"compare", "--seed", "18446744073709551615", "--seeds", "2"}, "runs past the largest seed"},
		{[]string{"compare", "--format", "pdf"}, "unknown format \"pdf\""},
	}
	for _, tt := range tests {
		_, _, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		}
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v is not a usage error (exit 2)", tt.args, err)
		}
	}
}

// --vs picks the reference policy of the comparisons; a name the scenario
// does not have is a usage error that lists those it has.
func TestCompareVs(t *testing.T) {
	t.Parallel()
	out, _, code, _ := runCLI(t, "compare", "--seeds", "6", "--vs", "gated", "--format", "csv")
	if code != 0 || !strings.Contains(out, ",full-jitter,completed,higher,6,") || !strings.Contains(out, ",gated,") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Split(line, ",")
		policy, baseline := f[3], f[16]
		if (policy == "gated") != (baseline == "") || (baseline != "" && baseline != "gated") {
			t.Fatalf("row compares %s with %q:\n%s", policy, baseline, line)
		}
	}
	html, _, code, _ := runCLI(t, "compare", "--seeds", "2", "--vs", "full-jitter", "--format", "html")
	if code != 0 || !strings.Contains(html, "<th>vs full-jitter</th>") || !strings.Contains(html, "--vs full-jitter") {
		t.Fatalf("exit %d; the HTML report lacks the reference column or --vs in its command", code)
	}
	for _, args := range [][]string{{"compare"}, {"report", "--out", "-"}, {"sweep", "--param", "clients=10:20:10"}} {
		_, errOut, code, _ := runCLI(t, append(args, "--vs", "nope")...)
		if cmd := args[0]; code != 2 || !strings.Contains(errOut, `--vs "nope": scenario overload-burst has no such policy (have: immediate, capped-exponential, full-jitter, gated)`) {
			t.Errorf("%s --vs nope: exit %d, stderr %q", cmd, code, errOut)
		}
	}
}

// Warnings go to stderr for the text formats and into the document for
// JSON.
func TestCompareSeedsWarnings(t *testing.T) {
	t.Parallel()
	const want = "retrysim: warning: seeds 1–3: no comparison can be significant at α = 0.05"
	out, errOut, code, _ := runCLI(t, "compare", "--seeds", "3")
	if code != 0 || !strings.HasPrefix(errOut, want) || !strings.Contains(out, "~ (p=0.250, only 3 seeds differ)") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	out, errOut, code, _ = runCLI(t, "compare", "--seeds", "3", "--format", "json")
	if code != 0 || errOut != "" || !strings.Contains(out, `"warnings": [`+"\n"+`    "seeds 1–3: no comparison can be significant`) {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}
