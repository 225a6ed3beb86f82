// Package plot draws retrysim's figures with gonum/plot, as PNG and SVG:
// the timeline, completion CDF, outcomes and distributions of a scenario
// (Figures) and the metrics of a sweep (SweepFigures). docs/plots.md shows
// each. It is apart from package report so that only what draws pictures
// depends on gonum.
package plot
