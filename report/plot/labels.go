package plot

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Labels on plots are written as people write them: numbers with thousands
// separators and never "-0", durations without zero components ("1m", not
// "1m0s"), and duration axes in the unit that suits their range.

// plotNumber formats v with prec decimals, groups the digits of its integer
// part in threes ("2,500,000") and writes zero as "0", never "-0".
func plotNumber(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-") // -0, or a negative value that rounds to 0
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// plotCount formats a whole number with thousands separators.
func plotCount(n int) string { return plotNumber(float64(n), 0) }

// plotDuration writes d as people do: "1m", "90s" as "1m30s", "1h", "500ms";
// components that are zero are left out.
func plotDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return strings.Replace(s, "h0m", "h", 1)
}

// msDuration converts milliseconds, as sweeps report durations, back to a
// duration, to the nearest nanosecond.
func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// durationUnit is a unit for a duration axis.
type durationUnit struct {
	name string
	ms   float64 // its length in milliseconds
}

// of converts d to the unit.
func (u durationUnit) of(d time.Duration) float64 {
	return float64(d) / (u.ms * float64(time.Millisecond))
}

// axisDurationUnit picks the unit of a duration axis from the largest
// magnitude on it, in milliseconds: ms below 1s, s below 3 minutes, min
// below 3 hours, else h. So 0–30000 ms is drawn as 0–30 s and a sweep up to
// 5 minutes as 0–5 min, with whole-number ticks.
func axisDurationUnit(maxMS float64) durationUnit {
	switch {
	case maxMS < 1000:
		return durationUnit{"ms", 1}
	case maxMS < 3*60_000:
		return durationUnit{"s", 1000}
	case maxMS < 3*3_600_000:
		return durationUnit{"min", 60_000}
	}
	return durationUnit{"h", 3_600_000}
}
