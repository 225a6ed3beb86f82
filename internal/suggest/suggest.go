// Package suggest finds the name a user probably meant when a name is
// not one of those there are: the closest by edit distance.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the name of names nearest to got by edit distance (case
// ignored), when it is near enough to be a slip: at most a third of the
// longer name's letters, and at most 3. "" when none is, or when got is
// shorter than 3 letters.
func Closest(got string, names []string) string {
	if len(got) < 3 {
		return "" // too little to go on
	}
	best, bestD := "", 0
	for _, n := range names {
		if n == got {
			continue
		}
		d := distance(strings.ToLower(got), strings.ToLower(n))
		limit := min(3, max(1, max(len(got), len(n))/3))
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// DidYouMean is ` (did you mean "NAME"?)` for the closest name, or "".
func DidYouMean(got string, names []string) string {
	if n := Closest(got, names); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// distance is the Levenshtein distance between a and b, in bytes (the
// names compared are ASCII), with a swap of two neighbours costing 1.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
