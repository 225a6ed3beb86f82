package scenarios

import (
	"time"

	"github.com/retrysim/retrysim/sim"
)

// The parameters a sweep can vary, in the order 'retrysim sweep --help'
// lists them. The kinds that have one attach its setter when they register
// (kinds_builtin.go); max_attempts and deadline belong to every policy.
var (
	paramClients = registerParam(&Param{Name: "clients", Title: "clients", Unit: Count, Min: 1, Max: MaxClients,
		About: "number of clients in the burst", missing: "the workload has no clients"})
	paramCapacity = registerParam(&Param{Name: "capacity", Title: "capacity: requests admitted per window", Unit: Count, Max: 1<<31 - 1,
		About:   "requests admitted per window in the server's last phase (window 1s if it had none)",
		missing: "the server has no capacity to set"})
	paramBase = registerParam(&Param{Name: "base", Title: "base delay", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About:   "base delay of every backoff that has one (not immediate's fixed delay; cap unchanged)",
		missing: "no policy of this scenario has a base delay"})
	paramDelay = registerParam(&Param{Name: "delay", Title: "fixed delay", Unit: Duration, Max: int64(MaxDuration),
		About: "fixed delay of immediate policies", missing: "no policy of this scenario is immediate (has a fixed delay)"})
	paramOutage = registerParam(&Param{Name: "outage", Title: "outage length", Unit: Duration, Max: int64(MaxDuration),
		About: "duration of the server's first phase (0 removes it)", missing: "the server has no outage"})
	paramResponseTime = registerParam(&Param{Name: "response_time", Title: "response time", Unit: Duration, Max: int64(MaxDuration),
		About: "time from each request to its response", missing: "the server has no response time"})
	paramThrottle = registerParam(&Param{Name: "throttle", Title: "throttle: starts per period", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "start rate (per period) of every throttled policy", missing: "no policy of this scenario has a throttle"})
	_ = registerParam(&Param{Name: "max_attempts", Title: "max attempts", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "attempts per operation of every policy", missing: "the scenario has no policies",
		setters: []func(*Scenario, int64) (bool, error){forPolicies(func(p *sim.Policy, v int64) bool {
			p.Rules.MaxAttempts = int(v)
			return true
		})}})
	_ = registerParam(&Param{Name: "deadline", Title: "deadline", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About: "deadline per operation of every policy", missing: "the scenario has no policies",
		setters: []func(*Scenario, int64) (bool, error){forPolicies(func(p *sim.Policy, v int64) bool {
			p.Rules.Deadline = time.Duration(v)
			return true
		})}})
)

// Clone returns a copy of s that a parameter can be set on without changing
// s: the server, the policies and what their coordinators keep behind
// pointers are copied.
func (s *Scenario) Clone() *Scenario {
	c := *s
	server := *s.Server
	server.Phases = append([]sim.Phase(nil), s.Server.Phases...)
	c.Server = &server
	c.Policies = append([]sim.Policy(nil), s.Policies...)
	for i := range c.Policies {
		for _, k := range coordinatorKinds {
			k.clone(&c.Policies[i])
		}
	}
	return &c
}
