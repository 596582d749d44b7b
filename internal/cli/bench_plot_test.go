package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/bench"
)

// TestBenchScalesAndPlot runs W1 at two scales: each phase reports its N,
// and --plot draws two curves a phase (operations per second, CPU time
// per operation) with a point a scale.
func TestBenchScalesAndPlot(t *testing.T) {
	h := newHarness(t)
	file := filepath.Join(t.TempDir(), "w1.svg")
	out := h.ok("bench", "--workload", "w1", "--backend", "memory", "--n", "100,200", "--json", "--plot", file)
	ns := map[int]int{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r bench.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		ns[r.N]++
	}
	if ns[100] != len(bench.W1Phases) || ns[200] != len(bench.W1Phases) || len(ns) != 2 {
		t.Errorf("phases per scale %v, want %d at 100 and at 200", ns, len(bench.W1Phases))
	}
	checkW1Plot(t, file)
}

// checkW1Plot checks that the SVG file has one curve a W1 phase of
// operations per second, then one a phase of CPU time per operation,
// each of two points.
func checkW1Plot(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
			Title  string `xml:"title"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the plot is not XML: %v", err)
	}
	if len(doc.Polylines) != 2*len(bench.W1Phases) {
		t.Fatalf("%d curves, want two a phase (%d)", len(doc.Polylines), 2*len(bench.W1Phases))
	}
	for i, p := range doc.Polylines {
		want := "memory " + bench.W1Phases[i%len(bench.W1Phases)]
		if i >= len(bench.W1Phases) {
			want += " CPU"
		}
		if p.Title != want || len(strings.Fields(p.Points)) != 2 {
			t.Errorf("curve %q has %d points, want %q with 2", p.Title, len(strings.Fields(p.Points)), want)
		}
	}
}

// TestBenchPlotFrom: two runs at one scale each, saved as JSON lines,
// are drawn as one picture with a point a scale; --plot-from needs
// --plot, and a line that is not a result is refused with its place.
func TestBenchPlotFrom(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"100", "200"} {
		f := filepath.Join(dir, "w1-"+n+".jsonl")
		out := h.ok("bench", "--workload", "w1", "--backend", "memory", "--n", n, "--json")
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	svg := filepath.Join(dir, "w1.svg")
	h.ok("bench", "--plot", svg, "--plot-from", strings.Join(files, ","))
	checkW1Plot(t, svg)

	if r := h.run("bench", "--plot-from", files[0]); r.Code != 2 || !strings.Contains(r.Err, "give --plot FILE.svg") {
		t.Errorf("--plot-from alone: exit %d, stderr %q", r.Code, r.Err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("\n{\"workload\":\"W1\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := h.run("bench", "--plot", svg, "--plot-from", bad); r.Code != 1 || !strings.Contains(r.Err, bad+":3 is not a result of bench --json") {
		t.Errorf("a bad line: exit %d, stderr %q", r.Code, r.Err)
	}
	checkW1Plot(t, svg) // the picture drawn before is left as it was
}

func TestBenchScalesAndW5Usage(t *testing.T) {
	h := newHarness(t)
	h.env[benchPGEnv] = "postgres://127.0.0.1:1/none"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "--n", "100,x"}, "--n takes scales"},
		{[]string{"bench", "--n", ","}, "--n is empty"},
		{[]string{"bench", "--workload", "w5", "--backend", "sqlite"}, "W5 runs on the postgres backend only"},
		{[]string{"bench", "--workload", "w1,w5"}, "W5 runs alone"},
		{[]string{"bench", "--workload", "w5", "--backend", "postgres", "--processes", "0"}, "--processes takes numbers from 1 to 64"},
		{[]string{"bench", "--workload", "w5", "--backend", "postgres", "--rtt", "-1ms"}, "--rtt must be from 0 to 1s"},
		{[]string{"bench", "--workload", "w5", "--backend", "postgres", "--duration", "10ms"}, "--duration must be at least 1s"},
		{[]string{"bench", "--workload", "w5", "--backend", "postgres", "--phase", "cold"}, `unknown W5 phase "cold"`},
		{[]string{"bench", "--w5-client", "nonsense"}, "--w5-client takes"},
		{[]string{"bench", "--workload", "w1", "--backend", "sqlite", "--rtt", "1ms"}, "--rtt runs on the postgres backend only"},
		{[]string{"bench", "--workload", "w1,w2", "--backend", "postgres", "--rtt", "1ms"}, "--rtt applies to W1 and W5 only"},
		{[]string{"bench", "--workload", "w3", "--backend", "postgres", "--rtt", "1ms"}, "--rtt applies to W1 and W5 only"},
		{[]string{"bench", "--workload", "w1", "--backend", "postgres", "--rtt", "2s"}, "--rtt must be from 0 to 1s"},
	} {
		r := h.run(c.args...)
		if r.Code != 2 || !strings.Contains(r.Err, c.msg) {
			t.Errorf("satchel %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.Code, r.Err, c.msg)
		}
	}
}
