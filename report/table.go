package report

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteTable renders a header and rows as an ASCII table, or as a GitHub
// markdown table. Headers are printed as written (tablewriter would rewrite
// them otherwise). Column i is aligned left when left[i] (text), right
// otherwise (numbers).
func WriteTable(w io.Writer, markdown bool, header []string, rows [][]string, left []bool) error {
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
