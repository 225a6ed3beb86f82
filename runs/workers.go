package runs

// parallelMemory is the memory that concurrent runs may take together when
// the number of parallel runs is chosen automatically: each run holds about
// bytesPerClient per client, so huge bursts run on fewer cores rather than
// exhausting memory on a machine with many.
const (
	parallelMemory int64 = 16 << 30
	bytesPerClient int64 = 120 // measured: docs/performance.md (118 B/client RSS at 1 M)
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
