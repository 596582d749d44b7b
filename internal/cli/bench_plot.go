package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

// readResults reads the results that `bench --json` printed, one JSON
// object a line, from each file in turn: runs of different lengths (a
// scale of a million run on its own) are drawn in one picture. Lines that
// are not a phase's result (blank, or without a workload and a phase) are
// skipped; a line that is not JSON is refused with its file and number.
func readResults(paths []string) ([]bench.Result, error) {
	var rs []bench.Result
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--plot-from: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" {
				continue
			}
			var r bench.Result
			if err := json.Unmarshal([]byte(text), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("--plot-from: %s:%d is not a result of bench --json: %v", path, line, err)
			}
			if r.Workload != "" && r.Phase != "" {
				rs = append(rs, r)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--plot-from: %s: %w", path, err)
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("--plot-from: no results of bench --json in %s", strings.Join(paths, ", "))
	}
	return rs, nil
}
