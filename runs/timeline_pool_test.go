package runs

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
)

// A pool's member timelines add up to its per-member counters, and its
// own 429s to pool.unavailable, for every policy; a coarser bucket keeps
// the totals; a server that is not a pool has none.
func TestTimelinePoolMembers(t *testing.T) {
	s := scenariotest.Builtin(t, "pool-cooldown")
	for p := range s.Policies {
		tl, r, err := RecordTimeline(s.Config(p, 1), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.Members) != 2 || tl.Members[0].Name != "east" || tl.Members[1].Name != "west" {
			t.Fatalf("%s: members %+v", tl.Policy, tl.Members)
		}
		failedSome := false
		for _, m := range tl.Members {
			if len(m.Requests) != tl.Buckets() || len(m.Failed) != tl.Buckets() {
				t.Fatalf("%s %s: %d and %d buckets, want %d", tl.Policy, m.Name, len(m.Requests), len(m.Failed), tl.Buckets())
			}
			for _, what := range []struct {
				name   string
				series []int
			}{{"requests", m.Requests}, {"failed", m.Failed}} {
				want, _ := r.Counters.Get("pool." + m.Name + "." + what.name)
				if got := sum(what.series); int64(got) != want || want == 0 {
					t.Errorf("%s %s: %d %s over the timeline, the counter says %d", tl.Policy, m.Name, got, what.name, want)
				}
			}
			failedSome = failedSome || sum(m.Failed) > 0
		}
		if !failedSome {
			t.Errorf("%s: no member failed", tl.Policy)
		}
		if want, _ := r.Counters.Get("pool.unavailable"); len(tl.PoolUnavailable) != tl.Buckets() || int64(sum(tl.PoolUnavailable)) != want || want == 0 {
			t.Errorf("%s: %d answered by the pool in %d buckets, the counter says %d", tl.Policy, sum(tl.PoolUnavailable), len(tl.PoolUnavailable), want)
		}
		if err := tl.check(time.Second); err != nil {
			t.Fatal(err)
		}
		if err := checkMembers(&tl, s.Server); err != nil {
			t.Fatal(err)
		}
		before := sum(tl.Members[1].Requests)
		tl.coarsen()
		if got := sum(tl.Members[1].Requests); got != before || len(tl.Members[1].Requests) != tl.Buckets() {
			t.Errorf("coarsened: %d requests in %d buckets, want %d in %d", got, len(tl.Members[1].Requests), before, tl.Buckets())
		}
	}
	other, _, err := RecordTimeline(scenariotest.Builtin(t, "overload-burst").Config(0, 1), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if other.Members != nil || other.PoolUnavailable != nil {
		t.Errorf("overload-burst has member timelines: %+v, %v", other.Members, other.PoolUnavailable)
	}
	// A pool without a cooldown never answers itself: no such series.
	crash, _, err := RecordTimeline(scenariotest.Builtin(t, "stability-sim-metastable").Config(0, 1), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(crash.Members) != 2 || crash.PoolUnavailable != nil {
		t.Errorf("stability-sim-metastable: %d members, pool_unavailable %v", len(crash.Members), crash.PoolUnavailable)
	}
}

// Member timelines read from a shard file are checked: failures above the
// requests, a bad name, and members that are not the scenario's pool's.
func TestTimelinePoolMembersCheck(t *testing.T) {
	s := scenariotest.Builtin(t, "pool-cooldown")
	record := func() Timeline {
		tl, _, err := RecordTimeline(s.Config(0, 1), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	tl := record()
	tl.Members[0].Failed[0] = tl.Members[0].Requests[0] + 1
	if err := tl.check(time.Second); err == nil || !strings.Contains(err.Error(), `member "east" fails`) {
		t.Errorf("more failures than requests: %v", err)
	}
	tl = record()
	tl.Members[1].Name = "we st"
	if err := tl.check(time.Second); err == nil || !strings.Contains(err.Error(), "we st") {
		t.Errorf("a bad name: %v", err)
	}
	tl = record()
	tl.Members[0].Failed = tl.Members[0].Failed[:1]
	if err := tl.check(time.Second); err == nil {
		t.Error("a short member series passed")
	}
	tl = record()
	tl.Members = tl.Members[:1]
	if err := checkMembers(&tl, s.Server); err == nil || !strings.Contains(err.Error(), "west") {
		t.Errorf("a missing member: %v", err)
	}
	if err := checkMembers(&tl, scenariotest.Builtin(t, "overload-burst").Server); err == nil {
		t.Error("members for a server that is not a pool passed")
	}
	tl = record()
	tl.PoolUnavailable = nil
	if err := checkMembers(&tl, s.Server); err == nil || !strings.Contains(err.Error(), "pool_unavailable") {
		t.Errorf("no pool_unavailable for a pool with a cooldown: %v", err)
	}
}

func sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}
