package kinds

import (
	"fmt"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The agent-sessions workload (sim.AgentSessions): chains of model calls.
func registerAgentSessions() {
	// What the sessions count, reported only for scenarios whose workload
	// runs sessions; in tables they share a column, sessions. Tokens
	// wasted are those of completed calls that sessions lost by restarting
	// or failing.
	completed := metrics.RegisterCount(&metrics.Metric{Name: "sessions.completed", ShedReason: metrics.TheWork, Quantity: "sessions completed", Unit: metrics.Count, Better: stats.HigherIsBetter, Headline: true, Work: metrics.WorkDone})
	failed := metrics.RegisterCount(&metrics.Metric{Name: "sessions.failed", ShedReason: metrics.TheWork, Quantity: "sessions failed", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true, Work: metrics.WorkLost})
	resumed := metrics.RegisterCount(&metrics.Metric{Name: "sessions.resumed", ShedReason: metrics.SpentWork, Quantity: "sessions resumed", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true, Work: metrics.WorkSpent})
	repeated := metrics.RegisterCount(&metrics.Metric{Name: "sessions.turns_repeated", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	tokensWasted := metrics.RegisterCount(&metrics.Metric{Name: "sessions.tokens_wasted", ShedReason: metrics.SpentWork, Quantity: "tokens wasted", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true, Work: metrics.WorkSpent})
	// Background calls that gave up: their work is lost, their sessions go on.
	backgroundFailed := metrics.RegisterCount(&metrics.Metric{Name: "sessions.background_failed", ShedReason: metrics.TheWork, Quantity: "background calls failed", Unit: metrics.Count, Better: stats.LowerIsBetter, Work: metrics.WorkLost})
	registerWorkload(&Kind{Name: "agent-sessions", Fields: []string{"sessions", "turns", "think", "spread", "resume", "pause", "max_repeats",
		"input_tokens", "input_growth", "output_tokens", "background"},
		About: "agent sessions, each a chain of model calls; a failed call repeats its turn or restarts the session"},
		workloadFuncs[*sim.AgentSessions]{
			decode:   decodeAgentSessions,
			describe: describeSessions,
			metrics: func(w *sim.AgentSessions) []string {
				names := []string{completed.Name, failed.Name, resumed.Name, repeated.Name}
				if w.InputTokens > 0 || w.InputGrowth > 0 || w.OutputTokens > 0 {
					names = append(names, tokensWasted.Name)
				}
				if w.PriorityLevels() != nil {
					names = append(names, backgroundFailed.Name)
				}
				return names
			},
			clone: func(w *sim.AgentSessions) *sim.AgentSessions { c := *w; return &c },
			scale: func(w *sim.AgentSessions, f float64) (*sim.AgentSessions, error) {
				var err error
				w.Sessions, err = scaleCount(w.Sessions, f, "sessions")
				return w, err
			},
		},
		workloadParam[*sim.AgentSessions]{paramClients, func(w *sim.AgentSessions, v int64) (*sim.AgentSessions, error) {
			w.Sessions = int(v)
			return w, nil
		}})
}

// MaxTurns and MaxRepeats bound an agent session's turns and repeats.
const (
	MaxTurns   = 10_000
	MaxRepeats = 1_000
)

// decodeAgentSessions reads an agent-sessions workload.
func decodeAgentSessions(d *schema.Decoder, m *schema.Mapping, path string) *sim.AgentSessions {
	for _, f := range []string{"sessions", "turns"} {
		if !m.Has(f) && m.Node() != nil {
			m.Errorf(f, "missing: %s", map[string]string{"sessions": "how many agent sessions run", "turns": "model calls per session"}[f])
		}
	}
	w := &sim.AgentSessions{
		Sessions:     int(m.Integer("sessions", 1, 1, MaxClients)),
		Turns:        int(m.Integer("turns", 1, 1, MaxTurns)),
		Think:        distribution(m, "think", nil),
		Spread:       m.Duration("spread", 0),
		Pause:        m.Duration("pause", 0),
		MaxRepeats:   int(m.Integer("max_repeats", 0, 0, MaxRepeats)),
		InputTokens:  int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		InputGrowth:  int(m.Integer("input_growth", 0, 0, 1<<31-1)),
		OutputTokens: int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
	}
	if n := m.Get("background"); n != nil {
		bm := d.Mapping(n, m.Field("background"))
		if !bm.Has("share") {
			bm.Errorf("share", "missing: the share of each session's turns that are background calls, in (0, 1]")
		}
		w.Background = sim.Background{Share: bm.Number("share", 0, 0, 1), Priority: decodePriority(bm, "priority", sim.PrioritySheddable)}
		bm.Finish()
	}
	switch r := m.Str("resume", "turn"); r {
	case "turn":
		w.Resume = sim.ResumeTurn
	case "restart":
		w.Resume = sim.ResumeRestart
	default:
		m.Errorf("resume", "want turn (repeat the failed call) or restart (start the session again), got %q", r)
	}
	if w.MaxRepeats == 0 {
		for _, f := range []string{"resume", "pause"} {
			if m.Has(f) {
				m.Errorf(f, "has no effect: a session that fails a call stops unless max_repeats > 0")
			}
		}
	}
	return w
}

func describeSessions(w *sim.AgentSessions) string {
	s := fmt.Sprintf("%d agent sessions of %d model calls", w.Sessions, w.Turns)
	if w.Think != nil {
		s += ", think " + describeDistribution(w.Think)
	}
	if b := w.Background; b.Share > 0 {
		s += fmt.Sprintf("; %.3g of the turns are background calls (priority %v), whose failure does not end the session", b.Share, b.Priority)
	}
	if w.MaxRepeats == 0 {
		return s + "; a call that gives up fails its session"
	}
	how := "repeats the turn"
	if w.Resume == sim.ResumeRestart {
		how = "restarts the session"
	}
	return s + fmt.Sprintf("; after a call gives up, the session %s %v later, at most %d times", how, w.Pause, w.MaxRepeats)
}
