package main

import (
	"os"

	"github.com/retrysim/retrysim/runs"
)

// The variables Slurm sets in every task of a job array (sbatch --array).
// SLURM_ARRAY_TASK_COUNT is missing in older Slurm releases.
const (
	envSlurmID    = "SLURM_ARRAY_TASK_ID"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmMax   = "SLURM_ARRAY_TASK_MAX"
)

// envShardIndex returns the shard index the environment gives, and the
// variable it came from: $JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID
// (which must agree when both are set).
func envShardIndex() (string, uint64, error) {
	var name string
	var index uint64
	for _, v := range []string{envIndex, envSlurmID} {
		s, ok := os.LookupEnv(v)
		if !ok {
			continue
		}
		i, err := parseDecimal(s)
		if err != nil || i > runs.MaxShards {
			return "", 0, usagef("$%s=%q: must be a shard index in decimal digits", v, s)
		}
		if name != "" && i != index {
			return "", 0, usagef("$%s=%d and $%s=%d disagree on the shard index; unset one, or give --shard I/N", name, index, v, i)
		}
		if name == "" {
			name, index = v, i
		}
	}
	if name == "" {
		return "", 0, usagef("--shards needs the shard's index: give --shard I/N, or set $%s (a Kubernetes Indexed Job) or $%s (a Slurm job array)", envIndex, envSlurmID)
	}
	return name, index, nil
}

// slurmVar reads a whole number from Slurm's variable name; ok is false
// when it is not set.
func slurmVar(name string) (n uint64, ok bool, err error) {
	s, ok := os.LookupEnv(name)
	if !ok {
		return 0, false, nil
	}
	if n, err = parseDecimal(s); err != nil {
		return 0, true, usagef("$%s=%q: %v", name, s, err)
	}
	return n, true, nil
}

// slurmArraySize is the number of shards a Slurm array stands for: its
// number of tasks, when its task IDs are exactly 0 to that number less
// one (not a range of other IDs, a step or a list, which is refused).
func slurmArraySize() (uint64, error) {
	n, ok, err := slurmVar(envSlurmCount)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, usagef("$%s is set but $%s is not (older Slurm releases do not set it): give the number of shards with --shards N or $%s", envSlurmID, envSlurmCount, envShards)
	case n == 0:
		return 0, usagef("$%s=0: the array has no tasks", envSlurmCount)
	}
	lo, ok, err := slurmVar(envSlurmMin)
	if err != nil {
		return 0, err
	}
	if ok && lo != 0 {
		return 0, usagef("$%s=%d: the array starts at task %d, and shards count from 0; submit --array=0-%d, or give the number of shards with --shards N (to run again only some shards)", envSlurmMin, lo, lo, n-1)
	}
	hi, ok, err := slurmVar(envSlurmMax)
	if err != nil {
		return 0, err
	}
	if ok && hi != n-1 {
		return 0, usagef("$%s=%d of $%s=%d: the array's task IDs are not 0 to %d (a step or a list?); submit --array=0-%d, or give the number of shards with --shards N", envSlurmMax, hi, envSlurmCount, n, n-1, n-1)
	}
	return n, nil
}

// slurmFits checks that every task of the Slurm array is a shard of n ≥ 1
// (the number from), so that a too large array fails in every task, not
// only in those beyond the last shard.
func slurmFits(n uint64, from string) error {
	hi, ok, err := slurmVar(envSlurmMax)
	if err != nil || !ok || hi < n {
		return err
	}
	return usagef("$%s=%d: the array has tasks beyond the last shard of %s=%d; submit --array=0-%d", envSlurmMax, hi, from, n, n-1)
}
