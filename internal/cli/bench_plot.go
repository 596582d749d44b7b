package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/svgplot"
)

// writePlot draws the results as cost curves into the SVG file path,
// written whole or not at all.
func writePlot(path string, rs []bench.Result) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".plot-*.svg")
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := svgplot.Write(tmp, bench.Curves(rs)); err != nil {
		tmp.Close()
		return fmt.Errorf("--plot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}
