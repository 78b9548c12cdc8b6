package report

import "time"

// Report is what the latest run of each of a workload's stages measured.
type Report struct {
	Workload string
	Sections []Section
}

// Section is one stage's latest run.
type Section struct {
	Address, Status, RunID string
	Duration               time.Duration
	// Notes are sentences a reader needs to read the figures right.
	Notes   []string
	Figures []Figure
	Tables  []Table
}

// FigureKind says how a figure is drawn.
type FigureKind int

const (
	// Lines draws each series as Y against X.
	Lines FigureKind = iota
	// Bars draws one group of bars per label, one bar per series.
	Bars
	// Heat draws Matrix as coloured cells, Labels naming rows and columns.
	Heat
)

// Figure is one chart; markdown writes it as a table.
type Figure struct {
	Title, XLabel, YLabel string
	Kind                  FigureKind
	// LogX puts X on a log-2 axis, as bandwidth against message size is
	// plotted; XBytes labels X ticks as sizes.
	LogX, XBytes bool
	Series       []Series
	// Refs are horizontal lines: a prediction or a threshold.
	Refs   []Ref
	Labels []string
	Matrix [][]float64
}

// Series is one line (X and Y) or one bar per label (Y only).
type Series struct {
	Name string
	X, Y []float64
}

// Ref is a horizontal reference line.
type Ref struct {
	Name string
	Y    float64
}

// Table is rows of already formatted cells.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}
