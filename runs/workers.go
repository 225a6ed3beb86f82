package runs

// parallelMemory is the memory that concurrent runs may take together when
// the number of parallel runs is chosen automatically: each run holds about
// bytesPerClient per client, so huge bursts run on fewer cores rather than
// exhausting memory on a machine with many.
const (
	parallelMemory int64 = 16 << 30
	// bytesPerClient bounds what a run allocates per client across the
	// server models and workloads, about 1.5 times the 105 B of a burst
	// and the 150-240 B of the others (docs/performance.md), and 117 B of
	// RSS at 10,000,000 clients.
	bytesPerClient int64 = 160
	// bytesPerQueuedClient is the more a client costs when its policy
	// queues operations (an in-flight limit): its waiter (16 B) and its
	// slot in the limiter's queue (40 B), twice for the queue's growth.
	bytesPerQueuedClient int64 = 96
	// bytesPerRun bounds what a run allocates whatever its clients: its
	// first buffers, the server's state, coordinators, the recovery
	// recorder (3-50 KB measured).
	bytesPerRun int64 = 64 << 10
)

// A client process of a run (sim.ProcessSplit) that has an operation holds
// its own plan: bytesPerProcess, plus up to bytesPerCoordinator for each
// coordinator in it (the breaker's 672 B is the most). Measured with
// BenchmarkProcesses (package sim): docs/performance.md.
const (
	bytesPerProcess     int64 = 128
	bytesPerCoordinator int64 = 700
)

// ParallelWorkers is how many runs of a scenario with the given number of
// clients go in parallel on the given number of cores: one per core, but no
// more than fit in 16 GiB together at bytesPerClient a client (the retry
// layers of client processes are not counted here; the estimate counts
// them). The runs package runs that many; the work estimate assumes it.
func ParallelWorkers(cores, clients int) int {
	return int(min(int64(cores), max(1, parallelMemory/(max(int64(clients), 1)*bytesPerClient))))
}
