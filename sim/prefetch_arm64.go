package sim

import "unsafe"

// prefetch asks the CPU to bring the cache line at p into its caches,
// without waiting for it (PRFM PLDL1KEEP). It never faults.
//
//go:noescape
func prefetch(p unsafe.Pointer)
