package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpWrapping: every command's long help is wrapped at 80 columns
// without a line broken well short of it (one that the next line's first
// word would have fitted on with room to spare), outside indented blocks
// and list items.
func TestHelpWrapping(t *testing.T) {
	a := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		lines := strings.Split(c.Long, "\n")
		for i, l := range lines {
			if len([]rune(l)) > 80 && !strings.HasPrefix(l, " ") {
				t.Errorf("%s: a line of %d characters: %q", c.CommandPath(), len([]rune(l)), l)
			}
			if i+1 >= len(lines) || l == "" || strings.HasPrefix(l, " ") {
				continue
			}
			next := lines[i+1]
			if next == "" || strings.HasPrefix(next, " ") || strings.HasPrefix(next, "-") && !strings.HasPrefix(next, "--") || strings.HasPrefix(next, "*") {
				continue
			}
			if strings.HasSuffix(l, ":") || strings.HasSuffix(l, ".") {
				continue // a heading, or a sentence that ends its line
			}
			word, _, _ := strings.Cut(next, " ")
			if len([]rune(l))+1+len([]rune(word)) <= 60 {
				t.Errorf("%s: a line broken early: %q before %q", c.CommandPath(), l, next)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(a))
}
