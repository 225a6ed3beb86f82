package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/internal/golden"
)

// The files of docs/scale/ that docs/scale.md shows.
var scaleDir = filepath.Join(docsRoot, "docs", "scale")

// k8sObject holds the fields of a Kubernetes object that the tests check:
// those a PersistentVolumeClaim and a Job need.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		AccessModes    []string `yaml:"accessModes"`
		CompletionMode string   `yaml:"completionMode"`
		Completions    *int     `yaml:"completions"`
		Parallelism    *int     `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Name         string   `yaml:"name"`
					Image        string   `yaml:"image"`
					Command      []string `yaml:"command"`
					Args         []string `yaml:"args"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name                  string `yaml:"name"`
					PersistentVolumeClaim *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// readK8s reads every object of a multi-document manifest.
func readK8s(t *testing.T, name string) []k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(scaleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, o)
	}
}

// checkK8sJob checks the fields every Job needs and returns its one
// container's arguments and its volume's mount path and claim.
func checkK8sJob(t *testing.T, o k8sObject) (args []string, mount, claim string) {
	t.Helper()
	spec := o.Spec.Template.Spec
	switch {
	case o.APIVersion != "batch/v1" || o.Kind != "Job":
		t.Fatalf("%s/%s, want batch/v1 Job", o.APIVersion, o.Kind)
	case o.Metadata.Name == "":
		t.Fatal("Job has no name")
	case spec.RestartPolicy != "Never" && spec.RestartPolicy != "OnFailure":
		t.Fatalf("%s: restartPolicy %q; a Job's pods need Never or OnFailure", o.Metadata.Name, spec.RestartPolicy)
	case len(spec.Containers) != 1 || spec.Containers[0].Name == "" || spec.Containers[0].Image == "":
		t.Fatalf("%s: want one container with a name and an image", o.Metadata.Name)
	case len(spec.Containers[0].Command) > 0:
		t.Fatalf("%s: the image's entrypoint is retrysim: give args, not command", o.Metadata.Name)
	case len(spec.Containers[0].VolumeMounts) != 1 || len(spec.Volumes) != 1:
		t.Fatalf("%s: want one volume, mounted once", o.Metadata.Name)
	case spec.Volumes[0].Name != spec.Containers[0].VolumeMounts[0].Name || spec.Volumes[0].PersistentVolumeClaim == nil:
		t.Fatalf("%s: the mount does not name the volume, or the volume is not a claim", o.Metadata.Name)
	}
	return spec.Containers[0].Args, spec.Containers[0].VolumeMounts[0].MountPath, spec.Volumes[0].PersistentVolumeClaim.ClaimName
}

// flagValue returns the value after --name in args.
func flagValue(args []string, name string) (string, bool) {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

// withoutFlags drops each --name and its value from args.
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(names, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// runBinary runs the built binary in dir with extra environment variables
// and returns its stdout.
func runBinary(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, envIndex+"=") || strings.HasPrefix(kv, envShards+"=")
	}), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("retrysim %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.String()
}

// The Indexed Job manifest is a Job with the fields an Indexed Job needs,
// and its command line, run here as one process per completion index with
// JOB_COMPLETION_INDEX set, then merged as merge-job.yaml does, prints
// what the same command prints unsharded.
func TestScaleIndexedJob(t *testing.T) {
	t.Parallel()
	objs := readK8s(t, "indexed-job.yaml")
	if len(objs) != 2 || objs[0].Kind != "PersistentVolumeClaim" || objs[0].APIVersion != "v1" {
		t.Fatalf("want a v1 PersistentVolumeClaim, then the Job; got %d objects", len(objs))
	}
	pvc := objs[0]
	if pvc.Metadata.Name == "" || !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") {
		t.Fatal("the claim needs a name and ReadWriteMany (the pods may run on several nodes)")
	}
	job := objs[1]
	args, mount, claim := checkK8sJob(t, job)
	spec := job.Spec
	switch {
	case spec.CompletionMode != "Indexed":
		t.Fatalf("completionMode %q, want Indexed", spec.CompletionMode)
	case spec.Completions == nil || *spec.Completions < 1:
		t.Fatal("an Indexed Job needs completions")
	case spec.Parallelism == nil || *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions:
		t.Fatal("parallelism must be between 1 and completions")
	case claim != pvc.Metadata.Name:
		t.Fatalf("the Job mounts claim %q, the manifest makes %q", claim, pvc.Metadata.Name)
	}
	n := *spec.Completions
	if v, _ := flagValue(args, "--shards"); v != strconv.Itoa(n) {
		t.Fatalf("--shards %q, want the completions, %d", v, n)
	}
	if slices.Contains(args, "--shard") {
		t.Fatal("the index must come from JOB_COMPLETION_INDEX, not --shard")
	}
	out, _ := flagValue(args, "--shard-out")
	if !strings.HasPrefix(out, mount) {
		t.Fatalf("--shard-out %q is not on the volume mounted at %s", out, mount)
	}

	merge := readK8s(t, "merge-job.yaml")
	if len(merge) != 1 {
		t.Fatalf("merge-job.yaml: want one Job, got %d objects", len(merge))
	}
	margs, mmount, mclaim := checkK8sJob(t, merge[0])
	if mclaim != claim || len(margs) < 2 || margs[0] != "merge" || !strings.HasPrefix(margs[1], mmount) {
		t.Fatalf("the merge Job must run 'merge' on the same claim's mount, got %q on %s (%s)", margs, mmount, mclaim)
	}

	// The volume is a scratch directory; the pods are processes.
	volume := t.TempDir()
	local := func(args []string, mount string) []string {
		out := slices.Clone(args)
		for i, a := range out {
			if strings.HasPrefix(a, mount) {
				out[i] = volume + a[len(mount):]
			}
		}
		return out
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cmd := exec.Command(builtBinary(t), local(args, mount)...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), envIndex+"="+strconv.Itoa(i))
			if b, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("index %d: %v\n%s", i, err, b)
				return
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := runBinary(t, t.TempDir(), nil, local(margs, mmount)...)
	want := runBinary(t, t.TempDir(), nil, withoutFlags(args, "--shards", "--shard-out")...)
	if got != want {
		t.Fatalf("merged output differs from the unsharded output:\n%s", golden.Diff(want, got))
	}
}

// workflow holds the fields of a GitHub Actions workflow that the tests
// check.
type workflow struct {
	Name string         `yaml:"name"`
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		RunsOn   string `yaml:"runs-on"`
		Needs    any    `yaml:"needs"`
		Strategy struct {
			FailFast *bool            `yaml:"fail-fast"`
			Matrix   map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// matrixShard stands for ${{ matrix.shard }} in the arguments of a run line.
const matrixShard = "MATRIX_SHARD"

// retrysimLine splits a workflow's run line that runs retrysim into its
// arguments and the file its stdout is redirected to, if any.
func retrysimLine(line string) (args []string, redirect string, ok bool) {
	const prefix = "go run ./cmd/retrysim "
	if !strings.HasPrefix(line, prefix) {
		return nil, "", false
	}
	line = strings.ReplaceAll(line, "${{ matrix.shard }}", matrixShard)
	fields := strings.Fields(strings.TrimPrefix(line, prefix))
	if i := slices.Index(fields, ">"); i >= 0 && i+2 == len(fields) {
		redirect, fields = fields[i+1], fields[:i]
	}
	return fields, redirect, true
}

// The GitHub Actions workflow has a matrix of shards and a merge job that
// needs them; its steps, run here as one process per matrix entry (each
// in a workspace of its own), the artifacts copied as upload-artifact and
// download-artifact with merge-multiple would, give the unsharded output.
func TestScaleGitHubActions(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(scaleDir, "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		t.Fatal(err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	matrix := shard.Strategy.Matrix["shard"]
	switch {
	case wf.Name == "" || len(wf.On) == 0:
		t.Fatal("the workflow needs a name and a trigger")
	case len(wf.Jobs) != 2 || shard.RunsOn == "" || merge.RunsOn == "":
		t.Fatal("want the jobs shard and merge, each with runs-on")
	case merge.Needs != "shard":
		t.Fatalf("merge needs %v, want shard", merge.Needs)
	case len(matrix) < 2:
		t.Fatal("the shard job needs a matrix of shard indexes")
	}
	n := len(matrix)
	for i, v := range matrix {
		if v != i {
			t.Fatalf("matrix.shard = %v, want 0 … %d", matrix, n-1)
		}
	}
	var shardArgs []string
	var shardOut string
	for _, s := range shard.Steps {
		if args, _, ok := retrysimLine(s.Run); ok {
			shardArgs = args
			if v, _ := flagValue(args, "--shard"); v != matrixShard+"/"+strconv.Itoa(n) {
				t.Fatalf("the shard step runs %q; want --shard ${{ matrix.shard }}/%d", s.Run, n)
			}
			shardOut, _ = flagValue(shardArgs, "--shard-out")
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && (s.With["path"] != shardOut || !strings.Contains(s.With["name"], "${{ matrix.shard }}")) {
			t.Fatalf("the shard job uploads %q as %q; want %q under a name with the shard", s.With["path"], s.With["name"], shardOut)
		}
	}
	if shardArgs == nil || shardOut == "" {
		t.Fatal("the shard job runs no 'go run ./cmd/retrysim … --shard-out DIR'")
	}

	var shardDirs []string
	for _, i := range matrix {
		workspace := t.TempDir()
		args := slices.Clone(shardArgs)
		args[slices.Index(args, "--shard")+1] = fmt.Sprintf("%d/%d", i, n)
		runBinary(t, workspace, nil, args...)
		shardDirs = append(shardDirs, filepath.Join(workspace, shardOut))
	}
	workspace := t.TempDir()
	var merged string
	for _, s := range merge.Steps {
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
			if s.With["merge-multiple"] != "true" || s.With["pattern"] != "shard-*" {
				t.Fatalf("download-artifact: want pattern shard-* and merge-multiple, got %v", s.With)
			}
			dst := filepath.Join(workspace, s.With["path"])
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, dir := range shardDirs {
				files, _ := filepath.Glob(filepath.Join(dir, "*"))
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if args, redirect, ok := retrysimLine(s.Run); ok {
			if args[0] != "merge" || redirect == "" {
				t.Fatalf("the merge job runs %q; want 'merge DIR > FILE'", s.Run)
			}
			merged = runBinary(t, workspace, nil, args...)
		}
	}
	want := runBinary(t, t.TempDir(), nil, withoutFlags(shardArgs, "--shard", "--shard-out")...)
	if merged != want {
		t.Fatalf("merged output differs from the unsharded output:\n%s", golden.Diff(want, merged))
	}
}

// The Dockerfile builds a static binary in one stage and ships only it.
func TestScaleDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(scaleDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var from, build, copyFrom, entry int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "FROM":
			from++
		case f[0] == "RUN" && strings.Contains(line, "CGO_ENABLED=0") && strings.Contains(line, "go build") && strings.HasSuffix(line, "./cmd/retrysim"):
			build++
		case f[0] == "COPY" && len(f) > 1 && strings.HasPrefix(f[1], "--from="):
			copyFrom++
		case f[0] == "ENTRYPOINT":
			entry++
		}
	}
	if from != 2 || build != 1 || copyFrom != 1 || entry != 1 {
		t.Fatalf("want two stages (FROM ×2), a CGO_ENABLED=0 go build of ./cmd/retrysim, a COPY --from and an ENTRYPOINT; got %d, %d, %d, %d", from, build, copyFrom, entry)
	}
}
