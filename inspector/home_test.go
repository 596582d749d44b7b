package inspector

import (
	"strings"
	"testing"
)

// TestHomeShowsUsage: the home page shows each scope's usage, and a
// thread with one file says "1 file".
func TestHomeShowsUsage(t *testing.T) {
	f := newFixture(t)
	_, body := f.get(t, "/")
	for _, want := range []string{
		`>acme</a> · 2 threads, 5 files, `, ", 2 documents · last activity <time",
		`>globex</a> · 1 thread, 1 file, `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the home page lacks %q:\n%s", want, body)
		}
	}
	_, body = f.get(t, "/s/globex/t/main/")
	if !strings.Contains(body, `<p class="facts">1 file, `) {
		t.Errorf("a thread of one file:\n%s", body)
	}
}
