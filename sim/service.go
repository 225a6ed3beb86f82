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

// KeyLimiter is a server model that limits one key's requests and tokens
// per minute (a rate limit): what a timeline names as the limits that may
// have bound, without naming the kind. 0 means no limit of that kind.
type KeyLimiter interface {
	KeyLimits() (requests, inputTokens, outputTokens int64)
}
