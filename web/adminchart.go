package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The admin view's chart: allocated CPU, memory and fGPU as shares of the
// cluster's totals over the controller's recent samples, drawn as inline
// SVG on the server (no chart library, nothing for the page to run). The
// numbers go into the template as attributes, which html/template escapes.

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 600, 160
	chartPad       = 30 // left and bottom margin for the axes' labels
)

// chart is what admin.html draws.
type chart struct {
	W, H, Left, Bottom int
	Series             []chartSeries
	From, To           string // the time axis's ends
	Empty              bool
	Every              string
}

// chartSeries is one resource's line.
type chartSeries struct {
	Class, Label string
	Points       string // "x,y x,y ..."
	Now          string // the latest figure, in words
}

// allocChart draws samples (oldest first).
func allocChart(samples []api.AllocSample) chart {
	c := chart{W: chartW, H: chartH, Left: chartPad, Bottom: chartH - chartPad, Empty: len(samples) == 0}
	if c.Empty {
		return c
	}
	first, last := samples[0].Time, samples[len(samples)-1].Time
	span := last.Sub(first)
	x := func(t time.Time) float64 {
		if span <= 0 {
			return chartW // one sample: at the right edge
		}
		return chartPad + float64(chartW-chartPad)*float64(t.Sub(first))/float64(span)
	}
	y := func(part, whole int64) float64 {
		f := 0.0
		if whole > 0 {
			f = min(1, float64(part)/float64(whole))
		}
		return float64(chartH-chartPad) * (1 - f)
	}
	type res struct {
		class, label string
		of           func(s api.AllocSample) (int64, int64)
		words        func(part, whole int64) string
	}
	for _, r := range []res{
		{"cpu", "CPU", func(s api.AllocSample) (int64, int64) { return int64(s.AllocCPUs), int64(s.CPUs) },
			func(p, w int64) string { return fmt.Sprintf("%d of %d", p, w) }},
		{"mem", "Memory", func(s api.AllocSample) (int64, int64) { return s.AllocMemBytes, s.MemBytes },
			func(p, w int64) string { return bytesText(p) + " of " + bytesText(w) }},
		{"fgpu", "fGPU", func(s api.AllocSample) (int64, int64) { return int64(s.AllocFGPUHundredths), int64(s.FGPUHundredths) },
			func(p, w int64) string { return hundredths(p) + " of " + hundredths(w) }},
	} {
		var pts strings.Builder
		for i, s := range samples {
			part, whole := r.of(s)
			if i > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", x(s.Time), y(part, whole))
		}
		if len(samples) == 1 { // a line needs two points
			part, whole := r.of(samples[0])
			fmt.Fprintf(&pts, " %.1f,%.1f", float64(chartPad), y(part, whole))
		}
		part, whole := r.of(samples[len(samples)-1])
		c.Series = append(c.Series, chartSeries{Class: r.class, Label: r.label, Points: pts.String(), Now: r.words(part, whole)})
	}
	c.From, c.To = first.Local().Format("Jan 2 15:04"), last.Local().Format("Jan 2 15:04")
	return c
}
