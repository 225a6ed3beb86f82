package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
)

// clearShardEnv unsets every variable that chooses a shard, for the rest
// of the test.
func clearShardEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{envIndex, envShards, envSlurmID, envSlurmCount, envSlurmMin, envSlurmMax} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// setEnv sets the variables of env, after unsetting every shard variable.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	clearShardEnv(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// A Slurm array task's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT pick
// the shard when the command writes a partial result (--shard-out); the
// merge of the array's files prints the unsharded output. (Not parallel:
// it sets environment variables.)
func TestShardFromSlurmArray(t *testing.T) {
	clearShardEnv(t)
	dir := t.TempDir()
	args := []string{"compare", "--seeds", "5", "--format", "json"}
	want, _, _, _ := runCLI(t, args...)
	for i := range 3 {
		setEnv(t, map[string]string{envSlurmID: fmt.Sprint(i), envSlurmCount: "3", envSlurmMin: "0", envSlurmMax: "2"})
		if _, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard-out", dir+"/")...); code != 0 {
			t.Fatalf("task %d: exit %d\n%s", i, code, errOut)
		}
	}
	got, errOut, code, _ := runCLI(t, "merge", dir)
	if code != 0 || got != want {
		t.Fatalf("merge: exit %d\n%s\n%s", code, errOut, golden.Diff(want, got))
	}

	// Without --shard-out, --shards or RETRYSIM_SHARDS, an array task runs
	// the whole command, as outside an array.
	setEnv(t, map[string]string{envSlurmID: "1", envSlurmCount: "3"})
	if got, errOut, code, _ := runCLI(t, args...); code != 0 || got != want {
		t.Errorf("SLURM_ARRAY_TASK_ID without --shard-out: exit %d, output differs: %v\n%s", code, got != want, errOut)
	}

	// An array that runs again some shards gives their number: --shards
	// or RETRYSIM_SHARDS win over the array's size; the ID is the index.
	again := map[string]string{envSlurmID: "2", envSlurmCount: "1", envSlurmMin: "2", envSlurmMax: "2"}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		file string
	}{
		{nil, []string{"--shards", "4"}, "shard-2-of-4.json"},
		{map[string]string{envShards: "5"}, []string{"--shard-out", dir + "/"}, "shard-2-of-5.json"},
		{map[string]string{envShards: "6"}, nil, "shard-2-of-6.json"},
		// A Job's index and the array's may both be set if they agree.
		{map[string]string{envIndex: "2", envShards: "7"}, nil, "shard-2-of-7.json"},
		// --shard wins over them all.
		{map[string]string{envShards: "9"}, []string{"--shard", "0/8"}, "shard-0-of-8.json"},
	} {
		setEnv(t, again)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		a := append(slices.Clone(args), tt.args...)
		if !slices.Contains(a, "--shard-out") {
			a = append(a, "--shard-out", dir+"/")
		}
		if _, errOut, code, _ := runCLI(t, a...); code != 0 {
			t.Fatalf("%v %v: exit %d\n%s", tt.env, tt.args, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, tt.file)); err != nil {
			t.Errorf("%v %v: %v", tt.env, tt.args, err)
		}
	}
}

// Slurm variables that do not make the array a set of shards are usage
// errors naming the variable. (Not parallel: it sets environment
// variables.)
func TestShardFromSlurmArrayErrors(t *testing.T) {
	args := []string{"compare", "--seeds", "5", "--shard-out", t.TempDir() + "/"}
	for _, tt := range []struct {
		env   map[string]string
		flags []string
		want  string
	}{
		{map[string]string{envSlurmID: "x", envSlurmCount: "3"}, nil, `$SLURM_ARRAY_TASK_ID="x": must be a shard index`},
		{map[string]string{envSlurmID: "3", envSlurmCount: "3", envSlurmMax: "2"}, nil, "shard index must be between 0 and 2"},
		{map[string]string{envSlurmID: "0"}, nil, "$SLURM_ARRAY_TASK_COUNT is not (older Slurm"},
		{map[string]string{envSlurmID: "0", envSlurmCount: "three"}, nil, `$SLURM_ARRAY_TASK_COUNT="three"`},
		{map[string]string{envSlurmID: "0", envSlurmCount: "0"}, nil, "the array has no tasks"},
		// --array=1-3
		{map[string]string{envSlurmID: "1", envSlurmCount: "3", envSlurmMin: "1", envSlurmMax: "3"}, nil, "starts at task 1, and shards count from 0; submit --array=0-2"},
		// --array=0-4:2
		{map[string]string{envSlurmID: "0", envSlurmCount: "3", envSlurmMin: "0", envSlurmMax: "4"}, nil, "not 0 to 2 (a step or a list?)"},
		{map[string]string{envSlurmID: "0", envSlurmCount: "3", envSlurmMax: "-1"}, nil, `$SLURM_ARRAY_TASK_MAX="-1"`},
		// --array=0-3 with 2 shards: every task fails, not only 2 and 3.
		{map[string]string{envSlurmID: "0", envSlurmCount: "4", envSlurmMax: "3"}, []string{"--shards", "2"}, "$SLURM_ARRAY_TASK_MAX=3: the array has tasks beyond the last shard of --shards=2; submit --array=0-1"},
		{map[string]string{envSlurmID: "0", envSlurmMax: "3", envShards: "2"}, nil, "beyond the last shard of $RETRYSIM_SHARDS=2"},
		{map[string]string{envSlurmID: "1", envIndex: "0", envShards: "2"}, nil, "$JOB_COMPLETION_INDEX=0 and $SLURM_ARRAY_TASK_ID=1 disagree"},
		{map[string]string{envSlurmID: "0", envSlurmMax: "3"}, []string{"--shards", "0"}, "the number of shards must be between 1"},
		{map[string]string{}, []string{"--shards", "2"}, "or set $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or $SLURM_ARRAY_TASK_ID (a Slurm job array)"},
	} {
		setEnv(t, tt.env)
		out, errOut, code, _ := runCLI(t, append(slices.Clone(args), tt.flags...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v %v: exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", tt.env, tt.flags, code, len(out), errOut, tt.want)
		}
	}
}
