package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/satchel-dev/satchel/internal/svgplot"
)

// Curves draws results measured at several scales (Result.N) as cost
// curves: for W3, bytes per checkpoint and time per step against F; for
// the other workloads, each phase's operations per second against N; and
// for each, the process's CPU time per step or operation, when measured. A
// series is one phase on one system: its colour says the phase, its dash
// the system.
func Curves(rs []Result) []svgplot.Chart {
	var workloads, systems []string
	for _, r := range rs {
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
		if !slices.Contains(systems, r.System) {
			systems = append(systems, r.System)
		}
	}
	dash := func(system string) string {
		return svgplot.Dashes[slices.Index(systems, system)%len(svgplot.Dashes)]
	}
	short := func(system string) string { return strings.TrimPrefix(system, "satchel-") }
	var charts []svgplot.Chart
	for _, w := range workloads {
		if w == "W3" {
			bytes := svgplot.Chart{Title: "W3 checkpoints: storage bytes added per checkpoint", XLabel: "F (files in the workspace)", YLabel: "bytes per checkpoint"}
			step := svgplot.Chart{Title: "W3 checkpoints: time per step (one edit and a checkpoint)", XLabel: "F (files in the workspace)", YLabel: "µs per step"}
			for i, sys := range systems {
				b := svgplot.Series{Name: short(sys), Color: svgplot.Palette[i%len(svgplot.Palette)], Dash: dash(sys)}
				s := b
				for _, r := range rs {
					if r.Workload == w && r.System == sys && r.Phase == "edit" {
						b.Points = append(b.Points, svgplot.Point{X: float64(r.N), Y: r.BytesPerCheckpoint})
						s.Points = append(s.Points, svgplot.Point{X: float64(r.N), Y: r.StepUs})
					}
				}
				if len(b.Points) > 0 {
					bytes.Series, step.Series = append(bytes.Series, b), append(step.Series, s)
				}
			}
			charts = append(charts, bytes, step)
			cpu := svgplot.Chart{Title: "W3 checkpoints: CPU time per step (the process's, whatever the machine's load)", XLabel: "F (files in the workspace)", YLabel: "CPU µs per step"}
			for i, sys := range systems {
				s := svgplot.Series{Name: short(sys) + " CPU", Color: svgplot.Palette[i%len(svgplot.Palette)], Dash: dash(sys)}
				for _, r := range rs {
					if r.Workload == w && r.System == sys && r.Phase == "edit" && r.CPUusPerOp > 0 {
						s.Points = append(s.Points, svgplot.Point{X: float64(r.N), Y: r.CPUusPerOp})
					}
				}
				if len(s.Points) > 0 {
					cpu.Series = append(cpu.Series, s)
				}
			}
			if len(cpu.Series) > 0 {
				charts = append(charts, cpu)
			}
			continue
		}
		c := svgplot.Chart{Title: w + ": operations per second against the scale", XLabel: "N", YLabel: "operations per second"}
		var phases []string
		for _, r := range rs {
			if r.Workload == w && !slices.Contains(phases, phaseKey(r)) {
				phases = append(phases, phaseKey(r))
			}
		}
		for _, sys := range systems {
			for i, ph := range phases {
				s := svgplot.Series{Name: short(sys) + " " + ph, Color: svgplot.Palette[i%len(svgplot.Palette)], Dash: dash(sys)}
				for _, r := range rs {
					if r.Workload == w && r.System == sys && phaseKey(r) == ph {
						s.Points = append(s.Points, svgplot.Point{X: float64(r.N), Y: r.OpsPerSec})
					}
				}
				if len(s.Points) > 0 {
					c.Series = append(c.Series, s)
				}
			}
		}
		charts = append(charts, c)
		cpu := svgplot.Chart{Title: w + ": CPU time per operation against the scale (the process's, whatever the machine's load)", XLabel: "N", YLabel: "CPU µs per operation"}
		for _, sys := range systems {
			for i, ph := range phases {
				s := svgplot.Series{Name: short(sys) + " " + ph + " CPU", Color: svgplot.Palette[i%len(svgplot.Palette)], Dash: dash(sys)}
				for _, r := range rs {
					if r.Workload == w && r.System == sys && phaseKey(r) == ph && r.CPUusPerOp > 0 {
						s.Points = append(s.Points, svgplot.Point{X: float64(r.N), Y: r.CPUusPerOp})
					}
				}
				if len(s.Points) > 0 {
					cpu.Series = append(cpu.Series, s)
				}
			}
		}
		if len(cpu.Series) > 0 {
			charts = append(charts, cpu)
		}
	}
	return charts
}

// phaseKey names a phase with W4's transport and calls in flight.
func phaseKey(r Result) string {
	if r.Transport == "" {
		return r.Phase
	}
	return fmt.Sprintf("%s %s×%d", r.Phase, r.Transport, r.Concurrency)
}
