package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A command is flags → plan → execute → present (docs/architecture.md):
// the commands and their job functions neither know nor ask whether they
// run here, as a shard or in a merge (only execute does), and stay short.
func TestCommandsDoNotBranchOnShards(t *testing.T) {
	t.Parallel()
	const maxLines = 60
	// What tells the modes apart: execute's business, and its helpers'.
	modal := []string{"sharding", "merging", "runShard", "shardOf", "merged", "presentShards"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name == "mergeCommand" {
				continue
			}
			fn := fd.Name.Name
			isJob := slices.Contains([]string{"compareJob", "compareSeeds", "plotJob", "reportJob", "sweepJob", "checkJob", "checkPlan", "tuneJob"}, fn)
			if !isJob && !strings.HasSuffix(fn, "Command") {
				continue
			}
			seen++
			ast.Inspect(fd, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && slices.Contains(modal, id.Name) {
					t.Errorf("%s: %s names %s: only execute tells a shard, a merge and a run here apart", fset.Position(id.Pos()), fn, id.Name)
				}
				return true
			})
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if lines > maxLines {
				t.Errorf("%s: %s is %d lines, over %d", fset.Position(fd.Pos()), fn, lines, maxLines)
			}
		}
	}
	if seen < 12 {
		t.Errorf("found %d command and job functions; the test no longer finds them", seen)
	}
}

// The commands with the shard flags are those whose shards merge can
// present (shardJobs), and no other.
func TestShardJobsAreTheCommandsThatShard(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range commands() {
		if _, ok := shardJobs[c.Name]; ok != splits(c) {
			t.Errorf("%s: has the shard flags %v, has a job for merge %v", c.Name, splits(c), ok)
		}
		if splits(c) {
			n++
		}
	}
	if n != len(shardJobs) {
		t.Errorf("%d commands shard, %d jobs for merge", n, len(shardJobs))
	}
}
