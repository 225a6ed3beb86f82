package kinds

import (
	"slices"
	"time"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The parameters a sweep can vary, in the order 'retrysim sweep --help'
// lists them. The kinds that have one attach its setter when they register
// (builtin.go); max_attempts and deadline belong to every policy.
var (
	paramClients = registerParam(&Param{Name: "clients", Title: "clients", Unit: Count, Min: 1, Max: MaxClients,
		About: "clients of a burst, workers of a closed loop or agent sessions", missing: "the workload has no clients (an open loop has a rate; client groups have theirs each, clients.groups[N].clients.count by path)"})
	paramCapacity = registerParam(&Param{Name: "capacity", Title: "capacity: requests admitted per window", Unit: Count, Max: 1<<31 - 1,
		About:   "requests admitted per window in the server's last phase (window 1s if it had none)",
		missing: "the server has no capacity to set"})
	paramBase = registerParam(&Param{Name: "base", Field: "base", Title: "base delay", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About:   "base delay of every backoff that has one (not immediate's fixed delay; cap unchanged)",
		missing: "no policy of this scenario has a base delay"})
	paramDelay = registerParam(&Param{Name: "delay", Field: "delay", Title: "fixed delay", Unit: Duration, Max: int64(MaxDuration),
		About: "fixed delay of immediate policies", missing: "no policy of this scenario is immediate (has a fixed delay)"})
	paramOutage = registerParam(&Param{Name: "outage", Title: "outage length", Unit: Duration, Max: int64(MaxDuration),
		About: "duration of the server's first phase (0 removes it)", missing: "the server has no outage"})
	paramResponseTime = registerParam(&Param{Name: "response_time", Title: "response time", Unit: Duration, Max: int64(MaxDuration),
		About: "time from each request to its response", missing: "the server has no response time"})
	paramThrottle = registerParam(&Param{Name: "throttle", Field: "throttle.rate", Title: "throttle: starts per period", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "start rate (per period) of every throttled policy", missing: "no policy of this scenario has a throttle"})
	_ = registerParam(&Param{Name: "max_attempts", Field: "max_attempts", Title: "max attempts", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "attempts per operation of every policy", missing: "the scenario has no policies",
		setters: []func(*Parts, int64) (bool, error){forPolicies(func(p *sim.Policy, v int64) bool {
			p.Rules.MaxAttempts = int(v)
			return true
		})}})
	_ = registerParam(&Param{Name: "deadline", Field: "deadline", Title: "deadline", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About: "deadline per operation of every policy", missing: "the scenario has no policies",
		setters: []func(*Parts, int64) (bool, error){forPolicies(func(p *sim.Policy, v int64) bool {
			p.Rules.Deadline = time.Duration(v)
			return true
		})}})
	paramConcurrency = registerParam(&Param{Name: "concurrency", Title: "workers", Unit: Count, Min: 1, Max: sim.MaxConcurrency,
		About: "workers of a queue server (in its last phase)", missing: "the server has no workers (it is not a queue)"})
	paramServiceTime = registerParam(&Param{Name: "service_time", Title: "service time", Unit: Duration, Max: int64(MaxDuration),
		About: "a queue server's time per request (fixed)", missing: "the server has no service time (it is not a queue)"})
	paramRequestsPerMinute = registerParam(&Param{Name: "requests_per_minute", Title: "requests per minute", Unit: Count, Min: 1, Max: sim.MaxPerMinute,
		About: "requests per minute a rate-limit server allows", missing: "the server has no rate limit"})
	paramNetwork = registerParam(&Param{Name: "network", Title: "network delay (mean)", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About:   "mean one-way delay of a contention server's messages (a normal delay keeps its spread relative to the mean; another becomes fixed)",
		missing: "the server has no network delay (it is not a contention server)"})
	paramRate = registerParam(&Param{Name: "rate", Title: "arrivals per second", Unit: Count, Max: MaxClients,
		About: "arrivals per second of an open loop with a constant rate", missing: "the workload has no arrival rate (it is not an open loop)"})
	paramDownFor = registerParam(&Param{Name: "down_for", Title: "time down per crash", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About: "length of each down window of a crash server (each still starts at its from)", missing: "the server never crashes (no crash server)"})
)

// Parts are the parts of a scenario that kinds make up: the server, the
// workload and the policies. A sweep sets its parameters on them.
type Parts struct {
	Server   sim.ServerModel
	Workload sim.Workload
	Policies []sim.Policy
}

// MaxDuration bounds every duration of a kind (schema.MaxDuration).
const MaxDuration = schema.MaxDuration

// Clone returns a copy of s that a parameter can be set on without changing
// s: the server, the workload, the policies, their lists of coordinator
// specs and what their coordinators keep behind pointers are copied.
func (s Parts) Clone() Parts {
	c := s
	c.Server = cloneServer(s.Server)
	c.Workload = cloneWorkload(s.Workload)
	c.Policies = append([]sim.Policy(nil), s.Policies...)
	for i := range c.Policies {
		c.Policies[i].Coordinators = slices.Clone(c.Policies[i].Coordinators)
		for _, k := range coordinatorKinds {
			if k.clone != nil {
				k.clone(&c.Policies[i])
			}
		}
	}
	return c
}
