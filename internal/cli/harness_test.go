package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel"
)

// result is what one run of the command did.
type result struct {
	Code     int
	Out, Err string
}

// harness runs the command in-process, every run of one test against one
// memory store (what `--db memory:` gives a single run), so a test can
// write with one run and read with the next.
type harness struct {
	t     *testing.T
	store *satchel.Store
	env   map[string]string
	dsns  []string // the database each run asked for
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	s, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &harness{t: t, store: s, env: map[string]string{}}
}

func (h *harness) run(args ...string) result { return h.runIn("", args...) }

func (h *harness) runIn(stdin string, args ...string) result {
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(stdin), &out, &errb)
	a.getenv = func(k string) string { return h.env[k] }
	a.openStore = func(_ context.Context, dsn string) (*satchel.Store, error) {
		h.dsns = append(h.dsns, dsn)
		return h.store, nil
	}
	a.closeStore = false
	code := run(context.Background(), a, args)
	return result{Code: code, Out: out.String(), Err: errb.String()}
}

// ok runs args, fails the test unless it exits 0 with nothing on
// stderr, and returns stdout.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	return h.okIn("", args...)
}

func (h *harness) okIn(stdin string, args ...string) string {
	h.t.Helper()
	r := h.runIn(stdin, args...)
	if r.Code != 0 || r.Err != "" {
		h.t.Fatalf("satchel %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Err)
	}
	return r.Out
}

// refused runs args and checks that they were refused with message (the
// whole of stderr, less its newline) and exit 1, printing nothing.
func (h *harness) refused(msg string, args ...string) {
	h.t.Helper()
	r := h.run(args...)
	if r.Code != 1 || r.Err != msg+"\n" || r.Out != "" {
		h.t.Errorf("satchel %s: got exit %d, stdout %q, stderr %q; want exit 1, stderr %q",
			strings.Join(args, " "), r.Code, r.Out, r.Err, msg+"\n")
	}
}

// usage runs args and checks that they were a usage error: exit 2, the
// message and the usage on stderr, nothing on stdout.
func (h *harness) usage(msg string, args ...string) {
	h.t.Helper()
	r := h.run(args...)
	if r.Code != 2 || !strings.HasPrefix(r.Err, msg+"\n") || !strings.Contains(r.Err, "Usage:") || r.Out != "" {
		h.t.Errorf("satchel %s: got exit %d, stdout %q, stderr %q; want exit 2, stderr starting %q with the usage",
			strings.Join(args, " "), r.Code, r.Out, r.Err, msg)
	}
}

// refusedUsage runs args and checks that they were a usage error: exit 2
// with msg alone on stderr (a mistyped subcommand).
func (h *harness) refusedUsage(msg string, args ...string) {
	h.t.Helper()
	r := h.run(args...)
	if r.Code != 2 || r.Err != msg+"\n" || r.Out != "" {
		h.t.Errorf("satchel %s: got exit %d, stdout %q, stderr %q; want exit 2, stderr %q",
			strings.Join(args, " "), r.Code, r.Out, r.Err, msg+"\n")
	}
}

// mainRun runs Main itself, as the binary does.
func mainRun(stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return result{Code: code, Out: out.String(), Err: errb.String()}
}

// equal fails the test when got differs from want.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// decode unmarshals s, failing the test when it is not one JSON value.
func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value in %q", s)
	}
	return v
}
