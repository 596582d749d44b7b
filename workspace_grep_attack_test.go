package satchel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

func attackWorkspace(t *testing.T) *satchel.Workspace {
	t.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Workspace(ctx, "attack", "main")
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// A pattern whose program is thousands of instructions, over one 1 MiB
// line, used to run a minute inside one file, past any deadline, and end
// as if complete. It must stop at its deadline and say so, keeping the
// matches found before.
func TestAttackGrepStopsInsideAFile(t *testing.T) {
	ctx := context.Background()
	ws := attackWorkspace(t)
	if err := ws.Write(ctx, "a.txt", "b\nb\n"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "big.txt", strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	const pattern = `.{1000}.{1000}.{1000}b|^b$`
	res, err := ws.Grep(ctx, pattern, "", satchel.GrepOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Stopped, "grep stopped after 50ms") {
		t.Fatalf("stopped = %q, want a grep stopped after its timeout", res.Stopped)
	}
	if len(res.Matches) != 2 || res.Matches[0].Path != "a.txt" {
		t.Fatalf("matches so far = %v, want the two of a.txt", res.Matches)
	}

	// The context's deadline stops it too, with the same report. The
	// deadline leaves a busy machine time to reach a.txt (a deadline
	// passed before the scan starts stops it with no match); the pattern
	// takes minutes over big.txt.
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err = ws.Grep(dctx, pattern, "", satchel.GrepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Stopped, "grep stopped at the call's deadline") || len(res.Matches) != 2 {
		t.Fatalf("at a context deadline: stopped %q, %d matches", res.Stopped, len(res.Matches))
	}

	// A cancelled context ends it with the context's error.
	cctx, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := ws.Grep(cctx, pattern, "", satchel.GrepOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Many short lines: the clock is read within a file, not only between
// files.
func TestAttackGrepStopsAmongManyLines(t *testing.T) {
	ctx := context.Background()
	ws := attackWorkspace(t)
	if err := ws.Write(ctx, "many.txt", strings.Repeat(strings.Repeat("x", 200)+"\n", 40000)); err != nil {
		t.Fatal(err)
	}
	res, err := ws.Grep(ctx, `(x|y){10}(x|y){10}z`, "", satchel.GrepOptions{Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped == "" {
		t.Fatal("a grep past its timeout did not say it stopped")
	}
}

// Repetitions add up: a pattern that expands past MaxRegexProgram is
// refused before it is compiled (RE2's parser refuses nested counts
// whose product passes 1000 itself).
func TestAttackGrepPatternSize(t *testing.T) {
	ctx := context.Background()
	ws := attackWorkspace(t)
	for _, p := range []string{strings.Repeat(`.{1000}`, 21), strings.Repeat(`(\pL{10}){100}`, 30), strings.Repeat(`x{1000}`, 25)} {
		_, err := ws.Grep(ctx, p, "", satchel.GrepOptions{})
		if !errors.Is(err, satchel.ErrInvalidPattern) || !strings.Contains(err.Error(), "expand to over") {
			t.Errorf("grep %.40q: %v, want it refused for its size", p, err)
		}
	}
	for _, p := range []string{`.{1000}.{1000}.{1000}b`, `(a{10}){100}`, `func \w+`} {
		if _, err := ws.Grep(ctx, p, "", satchel.GrepOptions{}); err != nil {
			t.Errorf("grep %q: %v", p, err)
		}
	}
}
