package cli

import (
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
)

// isTerminal says whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// table writes rows, tab-separated lines each ending in a newline: as
// they are when w is not a terminal (for cut, awk and scripts), and on a
// terminal under a header row of names, in aligned columns.
func table(header []string, rows string) func(w io.Writer) error {
	return func(w io.Writer) error {
		if !isTerminal(w) {
			_, err := io.WriteString(w, rows)
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if _, err := io.WriteString(tw, strings.Join(header, "\t")+"\n"+rows); err != nil {
			return err
		}
		return tw.Flush()
	}
}
