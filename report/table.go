package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteTable renders a header and rows as an ASCII table, or as a GitHub
// markdown table. Headers are printed as written (tablewriter would rewrite
// them otherwise). Column i is aligned left when left[i] (text), right
// otherwise (numbers).
//
// When w is a terminal that says how wide it is (Width), an ASCII table
// wider than that is fitted to it: columns are left out from the right
// (the first two stay) and then the widest cells are shortened, and a line
// after the table names what was left out. Pipes, files and markdown keep
// every column.
func WriteTable(w io.Writer, markdown bool, header []string, rows [][]string, left []bool) error {
	if width := TerminalWidth(w); width > 0 && !markdown {
		return writeFitted(w, width, header, rows, left)
	}
	return renderTable(w, markdown, header, rows, left)
}

// Width is a writer that is a terminal of a known width, in columns;
// Width() <= 0 means no limit (a pipe, a file, or --wide).
type Width interface{ Width() int }

// TerminalWidth is the width w asks tables to fit, or 0 for none.
func TerminalWidth(w io.Writer) int {
	if t, ok := w.(Width); ok {
		return t.Width()
	}
	return 0
}

// deciding are the columns a fitted table leaves out last, the last
// named last: those that decide between policies (and say which row is
// which).
var deciding = []string{"policy", "scenario", "result", "completed", "sessions", "metric", "change", "verdict",
	"expectation", "measured", "baseline", "now", "gave_up", "attempts", "p99_ms", "p50_ms"}

// writeFitted writes the table in at most width columns, as WriteTable says.
func writeFitted(w io.Writer, width int, header []string, rows [][]string, left []bool) error {
	// The order in which columns go: the others from the right, then the
	// deciding ones from the right; the first two stay.
	var order []int
	for i := len(header) - 1; i >= 2; i-- {
		if !slices.Contains(deciding, header[i]) {
			order = append(order, i)
		}
	}
	for _, name := range slices.Backward(deciding) {
		if i := slices.Index(header, name); i >= 2 {
			order = append(order, i)
		}
	}
	var buf bytes.Buffer
	dropped := map[int]bool{}
	var h []string
	var r [][]string
	var l []bool
	for k := 0; ; k++ {
		h, r, l = pick(header, rows, left, dropped)
		buf.Reset()
		if err := renderTable(&buf, false, h, r, l); err != nil {
			return err
		}
		if widest(buf.String()) <= width || k == len(order) {
			break
		}
		dropped[order[k]] = true
	}
	// A column left out early may fit beside those kept: try them back,
	// the last left out first.
	for k := len(dropped) - 1; k >= 0; k-- {
		delete(dropped, order[k])
		h2, r2, l2 := pick(header, rows, left, dropped)
		var try bytes.Buffer
		if err := renderTable(&try, false, h2, r2, l2); err != nil {
			return err
		}
		if widest(try.String()) > width {
			dropped[order[k]] = true
			continue
		}
		h, r, l, buf = h2, r2, l2, try
	}
	shortened := false
	for widest(buf.String()) > width {
		// Even the first columns do not fit: shorten the widest cells.
		col, cw := widestColumn(h, r)
		if cw <= 8 {
			break // as short as a cell is made; let the terminal wrap
		}
		var changed bool
		if r, changed = shorten(r, col, max(cw-(widest(buf.String())-width), 8)); !changed {
			break // the header is the widest: nothing to shorten
		}
		shortened = true
		buf.Reset()
		if err := renderTable(&buf, false, h, r, l); err != nil {
			return err
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	var notes []string
	if len(dropped) > 0 {
		var names []string
		for i, name := range header {
			if dropped[i] {
				names = append(names, name)
			}
		}
		notes = append(notes, fmt.Sprintf("%d of %d columns, to fit %d (left out: %s)", len(h), len(header), width, strings.Join(names, ", ")))
	}
	if shortened {
		notes = append(notes, "long cells shortened with …")
	}
	if len(notes) == 0 {
		return nil
	}
	_, err := io.WriteString(w, wrap("("+strings.Join(notes, "; ")+"; --wide shows all)", width))
	return err
}

// pick returns the table without the dropped columns.
func pick(header []string, rows [][]string, left []bool, dropped map[int]bool) (h []string, r [][]string, l []bool) {
	for i := range header {
		if !dropped[i] {
			h = append(h, header[i])
			l = append(l, i < len(left) && left[i])
		}
	}
	r = make([][]string, len(rows))
	for j, row := range rows {
		for i := range row {
			if !dropped[i] {
				r[j] = append(r[j], row[i])
			}
		}
	}
	return h, r, l
}

// wrap breaks text into lines of at most width characters at spaces,
// each ending in a newline.
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		if i > 0 && line+1+n > width {
			b.WriteString("\n")
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += n
	}
	b.WriteString("\n")
	return b.String()
}

// widest is the width of the longest line of s, in characters.
func widest(s string) int {
	m := 0
	for line := range strings.SplitSeq(s, "\n") {
		m = max(m, utf8.RuneCountInString(line))
	}
	return m
}

// widestColumn returns the column whose longest cell is the longest, and
// that cell's width.
func widestColumn(header []string, rows [][]string) (col, width int) {
	for i := range header {
		cw := utf8.RuneCountInString(header[i])
		for _, r := range rows {
			if i < len(r) {
				cw = max(cw, utf8.RuneCountInString(r[i]))
			}
		}
		if cw > width {
			col, width = i, cw
		}
	}
	return col, width
}

// shorten returns rows with the cells of column col cut to limit
// characters, the last of them an ellipsis, and whether any was cut.
func shorten(rows [][]string, col, limit int) (out [][]string, changed bool) {
	out = make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string(nil), r...)
		if col < len(r) && utf8.RuneCountInString(r[col]) > limit {
			out[i][col] = string([]rune(r[col])[:limit-1]) + "…"
			changed = true
		}
	}
	return out, changed
}

// renderTable renders the table with every column given.
func renderTable(w io.Writer, markdown bool, header []string, rows [][]string, left []bool) error {
	align := make(tw.Alignment, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < len(left) && left[i] {
			align[i] = tw.AlignLeft
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	} else {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// TextColumns returns n flags, true at the listed columns: the left
// argument of WriteTable for a table whose listed columns hold text.
func TextColumns(n int, text ...int) []bool {
	left := make([]bool, n)
	for _, i := range text {
		left[i] = true
	}
	return left
}
