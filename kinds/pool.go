package kinds

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The pool server (sim.Pool): member servers behind a load balancer.
func registerPool() {
	// The busiest member's share of the pool's requests (1/n when they
	// are spread evenly), and the outlier ejections. Each member's own
	// counts are the run's counters pool.NAME.requests, pool.NAME.failed
	// and pool.NAME.ejections (sim.Result.Counters).
	busiest := metrics.RegisterCounted(&metrics.Metric{Name: "pool.busiest_share", Unit: metrics.Ratio, Better: stats.LowerIsBetter, JSONDecimals: 4,
		Missing: "no requests"}, func(r *sim.Result) (float64, bool) {
		total, _ := r.Counters.Get("pool.requests")
		most, _ := r.Counters.Get("pool.busiest_requests")
		return float64(most) / float64(total), total > 0
	})
	ejections := metrics.RegisterCount(&metrics.Metric{Name: "pool.ejections", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	// Cooldowns, and the requests answered 429 because every member was
	// cooled down.
	cooldowns := metrics.RegisterCount(&metrics.Metric{Name: "pool.cooldowns", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	unavailable := metrics.RegisterCount(&metrics.Metric{Name: "pool.unavailable", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	registerServer(&Kind{Name: "pool", Fields: []string{"balancer", "members", "eject", "cooldown"},
		About: "member servers (each any model) behind a load balancer, with optional outlier ejection"},
		serverFuncs[*sim.Pool]{
			decode:   decodePool,
			describe: describePool,
			minResponse: func(p *sim.Pool) time.Duration {
				least := time.Duration(-1)
				for _, m := range p.Members {
					if r := MinResponse(m.Server); least < 0 || r < least {
						least = r
					}
				}
				return max(least, 0)
			},
			instant: func(p *sim.Pool) bool {
				// Retries at one instant go round the members: all must
				// answer at once for time to stand still.
				return len(p.Members) > 0 && !slices.ContainsFunc(p.Members, func(m sim.PoolMember) bool {
					k := serverKindOf(m.Server)
					return k == nil || !k.instant(m.Server)
				})
			},
			metrics: func(p *sim.Pool) []string {
				switch {
				case p.Ejection.Consecutive > 0:
					return []string{busiest.Name, ejections.Name}
				case p.Cooldown.AllowedFails > 0 || p.Cooldown.FailureRate > 0:
					return []string{busiest.Name, cooldowns.Name, unavailable.Name}
				}
				return []string{busiest.Name}
			},
			inner: func(p *sim.Pool) []sim.ServerModel {
				out := make([]sim.ServerModel, len(p.Members))
				for i, m := range p.Members {
					out[i] = m.Server
				}
				return out
			},
			clone: func(p *sim.Pool) *sim.Pool {
				c := *p
				c.Members = slices.Clone(p.Members)
				for i := range c.Members {
					c.Members[i].Server = cloneServer(p.Members[i].Server)
				}
				return &c
			},
			scale: func(p *sim.Pool, f float64) (*sim.Pool, error) {
				// The members stay; each serves its share of fewer clients.
				// Failures counted in a window come more slowly.
				if p.Cooldown.AllowedFails > 0 {
					return p, errors.New("a cooldown after a count of failures depends on the load")
				}
				for i := range p.Members {
					var err error
					if p.Members[i].Server, err = scaleServer(p.Members[i].Server, f); err != nil {
						return p, err
					}
				}
				return p, nil
			},
		})
}

func balancerNames() string {
	var names []string
	for _, b := range sim.Balancers {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// decodePool reads a pool: its balancer, its members (each a name and a
// server mapping) and its outlier ejection.
func decodePool(d *schema.Decoder, m *schema.Mapping, path string) *sim.Pool {
	p := &sim.Pool{}
	name := m.Str("balancer", sim.Balancers[0].Name)
	found := false
	for _, b := range sim.Balancers {
		if b.Name == name {
			p.Balancer, found = b.Balancer, true
		}
	}
	if !found {
		m.Errorf("balancer", "unknown balancer %q%s; choose one of %s", name, didYouMean(name, balancerNames()), balancerNames())
	}
	items := m.Sequence("members")
	switch {
	case !m.Has("members") && m.Node() != nil:
		m.Errorf("members", "missing: the servers behind the balancer, such as [{name: a, server: {type: queue, ...}}, ...]")
	case m.Has("members") && len(items) == 0:
		m.Errorf("members", "the list is empty")
	case len(items) > sim.MaxPoolMembers:
		m.Errorf("members", "%d members; at most %d", len(items), sim.MaxPoolMembers)
		items = nil
	}
	for i, item := range items {
		mm := d.Mapping(item, fmt.Sprintf("%s.members[%d]", path, i))
		member := sim.PoolMember{Name: mm.Str("name", "")}
		if member.Name == "" && item != nil {
			mm.Errorf("name", "missing: every member needs a name (its counters are pool.NAME.requests, ...)")
		} else if err := sim.CheckMemberName(member.Name); err != nil && item != nil {
			mm.Errorf("name", "%v", err)
		} else if slices.ContainsFunc(p.Members, func(o sim.PoolMember) bool { return o.Name == member.Name }) {
			mm.Errorf("name", "two members are called %q", member.Name)
		}
		if !mm.Has("server") {
			if item != nil {
				mm.Errorf("server", "missing: the member's server mapping, with its own type")
			}
		} else {
			member.Server = DecodeServer(d, mm.Get("server"), mm.Field("server"))
		}
		mm.Finish("name", "server")
		p.Members = append(p.Members, member)
	}
	if m.Has("eject") {
		em := d.Mapping(m.Get("eject"), m.Field("eject"))
		p.Ejection.Consecutive = int(em.Integer("consecutive", 5, 1, 1<<31-1))
		p.Ejection.For = em.Duration("for", 30*time.Second)
		if p.Ejection.For <= 0 {
			em.Errorf("for", "must be > 0")
		}
		p.Ejection.MaxEjected = int(em.Integer("max_ejected", 0, 0, int64(max(len(items)-1, 0))))
		em.Finish("consecutive", "for", "max_ejected")
	}
	if m.Has("cooldown") {
		if m.Has("eject") {
			m.Errorf("cooldown", "choose eject or cooldown, not both")
		}
		cm := d.Mapping(m.Get("cooldown"), m.Field("cooldown"))
		switch oneOf(cm, "allowed_fails", "failure_rate") {
		case "allowed_fails":
			p.Cooldown.AllowedFails = int(cm.Integer("allowed_fails", 1, 1, 1<<31-1))
		case "failure_rate":
			p.Cooldown.FailureRate = cm.Number("failure_rate", 0.5, 0.001, 0.999)
		default:
			p.Cooldown.FailureRate = 0.5 // LiteLLM's default
		}
		p.Cooldown.For = cm.Duration("for", 5*time.Second)
		if p.Cooldown.For <= 0 {
			cm.Errorf("for", "must be > 0")
		}
		cm.Finish("allowed_fails", "failure_rate", "for")
	}
	return p
}

func describePool(p *sim.Pool) Table {
	notes := []string{"balancer " + p.Balancer.String()}
	if e := p.Ejection; e.Consecutive > 0 {
		most := e.MaxEjected
		if most == 0 {
			most = len(p.Members) - 1
		}
		notes = append(notes, fmt.Sprintf("a member with %d failed responses in a row is ejected for %v (at most %d at a time)", e.Consecutive, e.For, most))
	}
	switch c := p.Cooldown; {
	case c.AllowedFails > 0:
		notes = append(notes, fmt.Sprintf("a member cools down for %v at its failure number %d, failures forgotten %v after the last", c.For, c.AllowedFails+1, c.For))
	case c.FailureRate > 0:
		notes = append(notes, fmt.Sprintf("a member cools down for %v when more than %g of its responses in the current minute failed", c.For, c.FailureRate))
	}
	t := Table{
		Caption: fmt.Sprintf("Server: a pool of %d members (%s)", len(p.Members), strings.Join(notes, "; ")),
		Header:  []string{"member", "server"},
		Numeric: []bool{false, false},
	}
	for _, m := range p.Members {
		inner := DescribeServer(m.Server)
		about := strings.TrimPrefix(strings.TrimPrefix(inner.Caption, "Server"), ": ")
		if k := serverKindOf(m.Server); k != nil {
			about = k.Name + ": " + about
		}
		t.Rows = append(t.Rows, []string{m.Name, about})
	}
	return t
}
