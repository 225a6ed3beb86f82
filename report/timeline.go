package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sim"
)

// TimelineSchema names the JSON schema of the timeline data (docs/output.md).
const TimelineSchema = "retrysim/timeline/v1"

// TimelineDoc is the JSON document of a scenario's timelines: what the
// timeline and load figures draw, and more.
type TimelineDoc struct {
	Schema   string `json:"schema"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// BucketMS is every timeline's bucket, in milliseconds.
	BucketMS float64 `json:"bucket_ms"`
	// Capacity is the requests the server admits per bucket, at each
	// bucket's start; nil (null) for a server that cannot say.
	Capacity  []float64       `json:"capacity"`
	Timelines []runs.Timeline `json:"timelines"`
}

// Timelines returns the timeline document of d.
func Timelines(d *runs.PlotData) TimelineDoc {
	doc := TimelineDoc{Schema: TimelineSchema, Scenario: d.Scenario, Seed: d.Runs.FirstSeed, Timelines: d.Timelines}
	if len(d.Timelines) == 0 {
		return doc
	}
	bucket := d.Timelines[0].Bucket
	doc.BucketMS = float64(bucket) / float64(time.Millisecond)
	buckets := 0
	for i := range d.Timelines {
		buckets = max(buckets, d.Timelines[i].Buckets())
	}
	if p, ok := sim.ModelAs[sim.CapacityProfile](d.Server); ok {
		steps := p.Capacity()
		doc.Capacity = make([]float64, buckets)
		for i := range doc.Capacity {
			start := time.Duration(i) * bucket
			for _, st := range steps {
				if st.At > start {
					break
				}
				doc.Capacity[i] = 0
				if st.Requests > 0 && st.Per > 0 {
					doc.Capacity[i] = st.Requests * float64(bucket) / float64(st.Per)
				}
			}
		}
	}
	return doc
}

// WriteTimelineJSON writes d's timelines as indented JSON (TimelineSchema),
// each series of numbers on one line.
func WriteTimelineJSON(w io.Writer, d *runs.PlotData) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Timelines(d)); err != nil {
		return err
	}
	_, err := w.Write(numberArray.ReplaceAllFunc(buf.Bytes(), func(a []byte) []byte {
		return whitespace.ReplaceAll(a, nil)
	}))
	return err
}

// numberArray matches an indented JSON array of numbers; whitespace
// matches what indenting put into it.
var (
	numberArray = regexp.MustCompile(`\[[\s0-9.eE+,-]*\]`)
	whitespace  = regexp.MustCompile(`\s+`)
)

// TimelineCSVHeader is the header of WriteTimelineCSV's rows.
var TimelineCSVHeader = []string{"scenario", "seed", "policy", "bucket", "start_ms", "end_ms",
	"first_attempts", "retries", "admitted", "wasted", "rejected",
	"rejected_retry_after", "rejected_capacity", "rejected_transient", "rejected_terminal",
	"completed", "gave_up", "local_budget", "local_throttled", "local_circuit_open",
	"in_flight", "capacity", "served", "served_late"}

// WriteTimelineCSV writes d's timelines as CSV, one row per policy and
// bucket, policies in the scenario's order; capacity is empty for a server
// that cannot say it, served and served_late for one that is no queue.
func WriteTimelineCSV(w io.Writer, d *runs.PlotData) error {
	doc := Timelines(d)
	cw := csv.NewWriter(w)
	if err := cw.Write(TimelineCSVHeader); err != nil {
		return err
	}
	ms := func(t time.Duration) string {
		return strconv.FormatFloat(float64(t)/float64(time.Millisecond), 'f', -1, 64)
	}
	seed := strconv.FormatUint(doc.Seed, 10)
	for p := range doc.Timelines {
		t := &doc.Timelines[p]
		for i := range t.Buckets() {
			row := []string{doc.Scenario, seed, t.Policy, strconv.Itoa(i), ms(time.Duration(i) * t.Bucket), ms(time.Duration(i+1) * t.Bucket)}
			for _, v := range []int{t.FirstAttempts[i], t.Retries[i], t.Admitted[i], t.Wasted[i], t.Rejected[i],
				t.RejectedBy.RetryAfter[i], t.RejectedBy.Capacity[i], t.RejectedBy.Transient[i], t.RejectedBy.Terminal[i],
				t.Completed[i], t.GaveUp[i], t.LocalRejected.Budget[i], t.LocalRejected.Throttled[i], t.LocalRejected.CircuitOpen[i],
				t.InFlight[i]} {
				row = append(row, strconv.Itoa(v))
			}
			c := ""
			if doc.Capacity != nil {
				c = strconv.FormatFloat(doc.Capacity[i], 'f', -1, 64)
			}
			row = append(row, c)
			if t.Served != nil {
				row = append(row, strconv.FormatFloat(t.Served[i], 'f', -1, 64), strconv.FormatFloat(t.ServedLate[i], 'f', -1, 64))
			} else {
				row = append(row, "", "")
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
