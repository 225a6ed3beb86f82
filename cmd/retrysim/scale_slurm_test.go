package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
)

// The Slurm batch scripts of docs/scale.md, run here without Slurm as one
// process per array task with the variables Slurm sets (the array's size
// from the script's #SBATCH --array line), then the merge script: the
// merged output is the unsharded command's. scripts/slurm-e2e.sh runs
// them on a real Slurm.
func TestScaleSlurmArray(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	shards, err := os.ReadFile(filepath.Join(scaleDir, "slurm-shards.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --array=0-([0-9]+)$`).FindSubmatch(shards)
	if m == nil {
		t.Fatal("slurm-shards.sh has no '#SBATCH --array=0-N' line")
	}
	hi, _ := strconv.Atoi(string(m[1]))
	merge, err := os.ReadFile(filepath.Join(scaleDir, "slurm-merge.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(merge, []byte("#SBATCH --array")) || !bytes.Contains(merge, []byte("retrysim merge")) {
		t.Fatal("slurm-merge.sh must be one job running 'retrysim merge'")
	}
	page, err := os.ReadFile(filepath.Join(docsRoot, "docs", "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("sbatch --dependency=afterok:$array --kill-on-invalid-dep=yes --output=comparison.md docs/scale/slurm-merge.sh results")) {
		t.Fatal("docs/scale.md no longer shows the dependent merge job this test runs")
	}

	bin := builtBinary(t)
	scripts, err := filepath.Abs(scaleDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	command := []string{"compare", "--seeds", "9", "--format", "markdown"}
	// run runs a script as a Slurm task would, with env set.
	run := func(script string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{filepath.Join(scripts, script)}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "SLURM_") || strings.HasPrefix(kv, envIndex+"=") || strings.HasPrefix(kv, envShards+"=")
		}), append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", script, strings.Join(args, " "), err, stderr.Bytes())
		}
		return stdout.String()
	}
	for i := range hi + 1 {
		run("slurm-shards.sh", []string{
			"SLURM_ARRAY_TASK_ID=" + strconv.Itoa(i), "SLURM_ARRAY_TASK_COUNT=" + strconv.Itoa(hi+1),
			"SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=" + strconv.Itoa(hi), "SLURM_CPUS_PER_TASK=1",
		}, append([]string{results}, command...)...)
	}
	for i := range hi + 1 {
		if _, err := os.Stat(filepath.Join(results, fmt.Sprintf("shard-%d-of-%d.json", i, hi+1))); err != nil {
			t.Fatal(err)
		}
	}
	got := run("slurm-merge.sh", nil, results)
	want := runBinary(t, dir, nil, command...)
	if got != want {
		t.Fatalf("merged output differs from the unsharded output:\n%s", golden.Diff(want, got))
	}
}
