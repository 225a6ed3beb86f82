package report

import (
	"io"
	"slices"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// table renders a header and rows as an ASCII table, or as a GitHub
// markdown table. Headers are printed as written (tablewriter would rewrite
// them otherwise); align gives each column's alignment.
func table(w io.Writer, markdown bool, header []string, rows [][]string, align tw.Alignment) error {
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

// rightAligned aligns the listed columns of n right (numbers), the rest left.
func rightAligned(n int, cols ...int) tw.Alignment {
	return aligned(n, tw.AlignRight, tw.AlignLeft, cols)
}

// leftAligned aligns the listed columns of n left (text), the rest right.
func leftAligned(n int, cols ...int) tw.Alignment {
	return aligned(n, tw.AlignLeft, tw.AlignRight, cols)
}

func aligned(n int, listed, rest tw.Align, cols []int) tw.Alignment {
	align := make(tw.Alignment, n)
	for i := range align {
		align[i] = rest
		if slices.Contains(cols, i) {
			align[i] = listed
		}
	}
	return align
}
