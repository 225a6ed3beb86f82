package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The bash completion runs in a bash without the bash-completion package
// (bash --norc: no _init_completion) and completes commands, flags and
// values: scenario names (built-in, or of the --file on the line), policy
// names, --format values, sweep parameters, shells. Each case sets
// COMP_WORDS as bash splits the line (at '=' too) and COMP_CWORD to the last
// word, calls _retrysim and reads COMPREPLY.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := builtBinary(t)
	script, errOut, code, _ := runCLI(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d, %s", code, errOut)
	}
	for _, dep := range []string{"_init_completion", "_get_comp_words_by_ref", "_comp_initialize", "__ltrim_colon_completions"} {
		if strings.Contains(script, dep) {
			t.Errorf("the script uses bash-completion's %s", dep)
		}
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	yaml := "scenarios:\n  - name: my-burst\n    server: {phases: [{admit: 5, window: 1s}]}\n    clients: {count: 5, max_attempts: 3}\n" +
		"    policies:\n      - {name: quick, type: immediate}\n      - {name: slow, type: full-jitter}\n"
	if err := os.WriteFile(mine, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	scriptPath := filepath.Join(dir, "retrysim.bash")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// The cursor is on the last word, or on word cword if it is > 0.
	cases := []struct {
		line, want string
		cword      int
	}{
		{"", "compare list plot sweep report check merge serve validate show diff tune playground schema fit completion", 0},
		{"co", "compare completion", 0},
		{"compare --sc", "--scenario", 0},
		{"compare --scenario lo", "long-outage", 0},
		{"compare -s over", "overload-burst", 0},
		{"compare --file " + mine + " --scenario ''", "my-burst", 0},
		{"compare --scenario '' --file " + mine, "my-burst", 3},
		{"compare --file = " + mine + " -s m", "my-burst", 0},
		{"compare --vs ''", "immediate capped-exponential full-jitter gated", 0},
		{"compare --scenario long-outage --vs d", "decorrelated-jitter", 0},
		{"sweep --file " + mine + " --vs ''", "quick slow", 0},
		{"compare --format ''", "table markdown csv json html", 0},
		{"compare --format = j", "json", 0},
		{"compare --format =", "table markdown csv json html", 0},
		{"check --format ''", "table markdown", 0},
		{"sweep --param cl", "clients= clients.count= clients.max_attempts= clients.deadline=", 0},
		{"compare --scenario bad-day-agents --param server.inner.phases[1].d", "server.inner.phases[1].duration=", 0},
		{"compare -p policies[gated].th", "policies[gated].throttle.rate= policies[gated].throttle.per=", 0},
		{"sweep -p ''", "clients= capacity= base= delay= outage= response_time= throttle= max_attempts= deadline= concurrency= service_time= requests_per_minute= network= rate= down_for= cap= budget_percent= budget_min_per_second= breaker_failures= breaker_open_for= hedge_delay= hedge_budget_percent= shared_throttle= " +
			"seed= server.phases[0].duration= server.phases[1].admit= server.phases[1].window= clients.count= clients.max_attempts= clients.deadline= check_seeds= " +
			"policies[immediate].delay= policies[capped-exponential].base= policies[capped-exponential].factor= policies[capped-exponential].cap= " +
			"policies[full-jitter].base= policies[full-jitter].cap= policies[gated].base= policies[gated].cap= policies[gated].throttle.rate= policies[gated].throttle.per=", 0},
		{"sweep --param clients = 1", "", 0},
		{"compare --seed ''", "", 0},
		{"compare --force --form", "--format", 0},
		{"compare -q --qu", "--quiet", 0},
		{"-q comp", "compare completion", 0},
		{"show f", "flaky-server foreground-background", 0},
		{"completion ''", "bash zsh fish pwsh", 0},
		{"list --file " + filepath.Join(dir, "mi"), mine, 0},
	}
	var driver strings.Builder
	driver.WriteString("source " + scriptPath + "\n")
	for _, c := range cases {
		// The words as bash splits them, the binary first; '' is an empty word.
		driver.WriteString("COMP_WORDS=(" + bin + " " + c.line + ")\n")
		if c.line == "" {
			driver.WriteString("COMP_WORDS+=('')\n")
		}
		cword := "$((${#COMP_WORDS[@]} - 1))"
		if c.cword > 0 {
			cword = strconv.Itoa(c.cword)
		}
		driver.WriteString("COMP_CWORD=" + cword + "; _retrysim; echo \"${COMPREPLY[*]}\"\n")
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", driver.String())
	cmd.Env = append(os.Environ(), "BASH_ENV=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(cases) {
		t.Fatalf("bash printed %d lines for %d cases:\n%s", len(got), len(cases), out)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("retrysim %s<TAB>: got %q, want %q", c.line, got[i], c.want)
		}
	}
}

// An unknown shell, or none, is a usage error naming the shells.
func TestCompletionShellRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}} {
		out, errOut, code, _ := runCLI(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "bash, zsh, fish, pwsh") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming the shells", args, code, out, errOut)
		}
	}
}
