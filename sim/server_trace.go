package sim

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Capacity from a trace: CSV rows "start,value", one per change of
// capacity, such as a recorded incident. start is when the value takes
// effect, as a Go duration ("90s", "1m30s") or a plain number of seconds
// ("90", "1.5"); value is a whole number >= 0. The first row starts at 0,
// starts increase strictly, and the last row's value holds for ever. An
// optional header row has "start" as its first field; lines starting with
// # are comments; spaces after a comma are ignored. A UTF-8 byte order mark
// at the start (Excel's "CSV UTF-8") is skipped. Every error names the
// line. The models that read traces (capacity windows, queue workers)
// turn the rows into their phases with readTrace.

type traceRow struct {
	line     int
	start    time.Duration
	duration time.Duration // until the next row's start; 0 for the last
	value    int
}

// utf8BOM is the byte order mark some editors put at the start of a UTF-8 file.
const utf8BOM = "\ufeff"

// maxTraceStart bounds a start, as every scenario duration is bounded.
const maxTraceStart = 1000 * time.Hour

func readTrace(r io.Reader, valueName string) ([]traceRow, error) {
	cr := traceCSV(r)
	cr.ReuseRecord = true
	var rows []traceRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, traceCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rows) == 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "start") {
			continue // the header
		}
		start, err := parseTraceStart(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, fmt.Errorf("capacity trace: line %d: start %q: %v", line, rec[0], err)
		}
		v, err := strconv.Atoi(strings.TrimSpace(rec[1]))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("capacity trace: line %d: %s %q is not a whole number >= 0", line, valueName, rec[1])
		}
		switch {
		case len(rows) == 0 && start != 0:
			return nil, fmt.Errorf("capacity trace: line %d: the first row must start at 0 (got %v)", line, start)
		case len(rows) > 0 && start <= rows[len(rows)-1].start:
			return nil, fmt.Errorf("capacity trace: line %d: start %v is not after the previous row's %v", line, start, rows[len(rows)-1].start)
		}
		if len(rows) > 0 {
			rows[len(rows)-1].duration = start - rows[len(rows)-1].start
		}
		rows = append(rows, traceRow{line: line, start: start, value: v})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("capacity trace: no rows")
	}
	return rows, nil
}

// traceCSV reads the rows of a trace's CSV: two fields, # comments, a
// UTF-8 byte order mark at the start skipped.
func traceCSV(r io.Reader) *csv.Reader {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(len(utf8BOM)); string(bom) == utf8BOM {
		br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = 2
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	return cr
}

// traceCSVError is a trace reader's error for a row the CSV reader refused.
func traceCSVError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("capacity trace: line %d: %v", pe.Line, pe.Err)
	}
	return fmt.Errorf("capacity trace: %w", err)
}

// parseTraceStart reads a Go duration or a number of seconds, in [0, 1000 h].
func parseTraceStart(s string) (time.Duration, error) {
	var d time.Duration
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if !(secs >= 0 && secs <= maxTraceStart.Seconds()) {
			return 0, fmt.Errorf("must be between 0 and %v", maxTraceStart)
		}
		d = time.Duration(math.Round(float64(secs * 1e9)))
	} else {
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, errors.New("not a duration (such as 90s) or a number of seconds")
		}
	}
	if d < 0 || d > maxTraceStart {
		return 0, fmt.Errorf("must be between 0 and %v", maxTraceStart)
	}
	return d, nil
}
