package fit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CSV: one attempt per row, after a header row naming the columns. Each
// field below is read from the column of its own name, or from the column
// --map gives it (ParseMap: "sent=ts,status=code"). sent is required; the
// others may be left out.
//
//	sent            when the attempt started: RFC 3339, or Unix seconds (fractions allowed)
//	answered        when its answer came, likewise; or
//	latency_ms      the time from sent to the answer, in milliseconds
//	op              the operation's id (absent: every row is an operation of one attempt)
//	attempt         the attempt's number from 1 (absent: 1)
//	session         the session's id
//	status          the HTTP status (0 or empty: none, such as a transport error)
//	class           success, retry-after, capacity, transient or terminal (absent: from the status)
//	server_wait_ms  the wait the server asked for, in milliseconds
//	backoff_ms      the wait before the next attempt, in milliseconds
//	model           the model called
var CSVFields = []string{"sent", "answered", "latency_ms", "op", "attempt", "session", "status", "class", "server_wait_ms", "backoff_ms", "model"}

// ParseMap reads --map: comma-separated field=column pairs.
func ParseMap(s string) (map[string]string, error) {
	m := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, pair := range strings.Split(s, ",") {
		field, col, ok := strings.Cut(pair, "=")
		field, col = strings.TrimSpace(field), strings.TrimSpace(col)
		switch {
		case !ok || col == "":
			return nil, fmt.Errorf("--map: %q is not FIELD=COLUMN", pair)
		case !slices.Contains(CSVFields, field):
			return nil, fmt.Errorf("--map: unknown field %q; the fields are %s", field, strings.Join(CSVFields, ", "))
		case m[field] != "":
			return nil, fmt.Errorf("--map: field %q is mapped twice", field)
		}
		m[field] = col
	}
	return m, nil
}

type csvReader struct {
	*lines
	cr  *csv.Reader
	col map[string]int // field → column index
}

func newCSVReader(ls *lines, mapping map[string]string) (*csvReader, error) {
	cr := csv.NewReader(readerOf(ls))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	c := &csvReader{lines: ls, cr: cr, col: map[string]int{}}
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no header row", ls.o.Name)
		}
		return nil, c.csvErr(err)
	}
	index := map[string]int{}
	for i, h := range head {
		index[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	for _, f := range CSVFields {
		name := f
		if m := mapping[f]; m != "" {
			name = m
		}
		i, ok := index[name]
		if !ok {
			if mapping[f] != "" {
				return nil, fmt.Errorf("%s:1: --map %s=%s: no column %q in the header", ls.o.Name, f, name, name)
			}
			continue
		}
		c.col[f] = i
	}
	if _, ok := c.col["sent"]; !ok {
		return nil, fmt.Errorf("%s:1: no column sent (name it with --map sent=COLUMN)", ls.o.Name)
	}
	return c, nil
}

// readerOf exposes the scanner-less reader under ls: CSV rows may span
// lines, so encoding/csv reads the bytes itself.
func readerOf(ls *lines) io.Reader { return ls.src }

func (c *csvReader) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &LineError{File: c.o.Name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("%s: %w", c.o.Name, err)
}

func (c *csvReader) Next(r *Record) bool {
	for c.err == nil {
		rec, err := c.cr.Read()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && c.o.Lenient && !errors.Is(pe.Err, csv.ErrQuote) {
				c.skipped++
				continue
			}
			c.err = c.csvErr(err)
			return false
		}
		c.line, _ = c.cr.FieldPos(0)
		if field, err := c.fill(rec, r); err != nil {
			if c.bad(field, err) {
				return false
			}
			continue
		}
		return true
	}
	return false
}

// get returns a field's cell ("" when the column is absent or short).
func (c *csvReader) get(rec []string, field string) string {
	i, ok := c.col[field]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// name is a field as the file calls it, for errors.
func (c *csvReader) name(field string) string {
	if m := c.o.Map[field]; m != "" {
		return m
	}
	return field
}

func (c *csvReader) fill(rec []string, r *Record) (string, error) {
	*r = Record{Kind: AttemptRecord, Attempt: 1}
	var err error
	if r.Sent, err = parseCSVTime(c.get(rec, "sent")); err != nil {
		return c.name("sent"), err
	}
	r.Answered = r.Sent
	if s := c.get(rec, "answered"); s != "" {
		if r.Answered, err = parseCSVTime(s); err != nil {
			return c.name("answered"), err
		}
	} else if s := c.get(rec, "latency_ms"); s != "" {
		ms, err := strconv.ParseFloat(s, 64)
		d, ok := millis(ms)
		if err != nil || !ok {
			return c.name("latency_ms"), fmt.Errorf("%q is not milliseconds between 0 and %v", s, maxWait)
		}
		r.Answered = r.Sent.Add(d)
	}
	if r.Answered.Before(r.Sent) {
		return c.name("answered"), errors.New("is before sent")
	}
	r.Op = c.get(rec, "op")
	if _, ok := c.col["op"]; !ok {
		r.Op = strconv.Itoa(c.line) // one operation per row
	} else if r.Op == "" {
		return c.name("op"), errors.New("empty")
	}
	if s := c.get(rec, "attempt"); s != "" {
		if r.Attempt, err = strconv.Atoi(s); err != nil || r.Attempt < 1 {
			return c.name("attempt"), fmt.Errorf("%q is not a whole number >= 1", s)
		}
	}
	r.Session, r.Model = c.get(rec, "session"), c.get(rec, "model")
	if s := c.get(rec, "status"); s != "" {
		if r.Status, err = strconv.Atoi(s); err != nil || r.Status < 0 || r.Status > 999 {
			return c.name("status"), fmt.Errorf("%q is not an HTTP status", s)
		}
	}
	if s := c.get(rec, "class"); s != "" {
		if r.Class, r.Classified = parseClass(s); !r.Classified {
			return c.name("class"), fmt.Errorf("unknown class %q (success, retry-after, capacity, transient, terminal)", s)
		}
	} else if r.Status > 0 {
		r.Class, r.Classified = classOfStatus(r.Status), true
	}
	for _, w := range []struct {
		field string
		d     *time.Duration
		have  *bool
	}{{"server_wait_ms", &r.ServerWait, &r.HasServerWait}, {"backoff_ms", &r.Backoff, &r.HasBackoff}} {
		if s := c.get(rec, w.field); s != "" {
			ms, err := strconv.ParseFloat(s, 64)
			d, ok := millis(ms)
			if err != nil || !ok {
				return c.name(w.field), fmt.Errorf("%q is not milliseconds between 0 and %v", s, maxWait)
			}
			*w.d, *w.have = d, true
		}
	}
	return "", nil
}

// parseCSVTime reads RFC 3339 or Unix seconds.
func parseCSVTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("empty")
	}
	if sec, err := strconv.ParseFloat(s, 64); err == nil {
		if !(sec >= 0 && sec < 1<<33) {
			return time.Time{}, fmt.Errorf("%q is out of range as Unix seconds", s)
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(math.Round(frac*1e9))).UTC(), nil
	}
	return parseTime(s)
}
