package sim

import "time"

// ServiceObserver is told of the work a queue's workers did for each
// request they served: one worker's time from start to done, and whether
// the client had stopped waiting by done (the work was wasted). It is
// called from the run's goroutine; nothing it does may reach the run.
type ServiceObserver func(start, done time.Duration, wasted bool)

// ServiceModel is a server model whose workers serve what they admit over
// time (a queue), whose runs can tell an observer when the work was done:
// what a timeline needs to draw work when it is served, not when it
// arrived, without naming the kind.
type ServiceModel interface {
	ServerModel
	// MeanService is the mean time a worker takes for one request; ok is
	// false when it is not known.
	MeanService() (mean time.Duration, ok bool)
	// ObservedService returns a copy of the model whose runs tell observe
	// of the work they do; the model itself is not changed.
	ObservedService(observe ServiceObserver) ServerModel
}

var _ ServiceModel = (*Queue)(nil)

// MeanService implements ServiceModel.
func (q *Queue) MeanService() (time.Duration, bool) { return MeanOf(q.Service) }

// ObservedService implements ServiceModel.
func (q *Queue) ObservedService(observe ServiceObserver) ServerModel {
	c := *q
	c.observe = observe
	return &c
}

// served tells the model's observer, if any, of a worker's time from start
// to done for a request whose client stops waiting at giveUp (0: never).
func (s *queueState) served(start, done, giveUp time.Duration) {
	if f := s.model.observe; f != nil {
		f(start, done, giveUp > 0 && done > giveUp)
	}
}

var _ ServiceModel = (*Billing)(nil)

// MeanService forwards Inner's (ServiceModel); ok is false when it has none.
func (b *Billing) MeanService() (time.Duration, bool) {
	if s, ok := b.Inner.(ServiceModel); ok {
		return s.MeanService()
	}
	return 0, false
}

// ObservedService returns a copy of b whose inner model is observed
// (ServiceModel); b itself when the inner model cannot be.
func (b *Billing) ObservedService(observe ServiceObserver) ServerModel {
	s, ok := b.Inner.(ServiceModel)
	if !ok {
		return b
	}
	c := *b
	c.Inner = s.ObservedService(observe)
	return &c
}

// KeyLimiter is a server model that limits one key's requests and tokens
// per minute (a rate limit): what a timeline names as the limits that may
// have bound, without naming the kind. 0 means no limit of that kind.
type KeyLimiter interface {
	KeyLimits() (requests, inputTokens, outputTokens int64)
}

var _ KeyLimiter = (*RateLimit)(nil)

// KeyLimits implements KeyLimiter.
func (m *RateLimit) KeyLimits() (requests, inputTokens, outputTokens int64) {
	return m.RequestsPerMinute, m.InputTokensPerMinute, m.OutputTokensPerMinute
}
