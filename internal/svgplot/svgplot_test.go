package svgplot

import (
	"encoding/xml"
	"strings"
	"testing"
)

type svgDoc struct {
	Polylines []struct {
		Points string `xml:"points,attr"`
		Title  string `xml:"title"`
	} `xml:"polyline"`
	Texts []string `xml:"text"`
}

// TestWriteDrawsEverySeries parses the SVG as XML and counts what it
// holds: one polyline a series with its positive points, titled by the
// series (escaped), and a tick label a decade.
func TestWriteDrawsEverySeries(t *testing.T) {
	charts := []Chart{{
		Title: "ops <per> second", XLabel: "N", YLabel: "ops/s",
		Series: []Series{
			{Name: "a & b", Color: Palette[0], Points: []Point{{1000, 50}, {10000, 500}, {100000, 5000}}},
			{Name: "zero skipped", Color: Palette[1], Dash: Dashes[1], Points: []Point{{1000, 0}, {10000, 20}, {0, 3}}},
		},
	}, {Title: "second", Series: []Series{{Name: "c", Points: []Point{{1, 1}}}}}}
	var b strings.Builder
	if err := Write(&b, charts); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if len(doc.Polylines) != 3 {
		t.Fatalf("%d polylines, want 3", len(doc.Polylines))
	}
	for i, want := range []struct {
		title  string
		points int
	}{{"a & b", 3}, {"zero skipped", 1}, {"c", 1}} {
		p := doc.Polylines[i]
		if p.Title != want.title || len(strings.Fields(p.Points)) != want.points {
			t.Errorf("polyline %d: %q with %d points, want %q with %d", i, p.Title, len(strings.Fields(p.Points)), want.title, want.points)
		}
	}
	// X from 1k to 100k: ticks 1k, 10k, 100k; Y from 10 to 10k.
	for _, tick := range []string{"1k", "10k", "100k", "10", "100"} {
		found := false
		for _, s := range doc.Texts {
			found = found || s == tick
		}
		if !found {
			t.Errorf("no tick %q among %q", tick, doc.Texts)
		}
	}
}

// TestLogAxes checks a point's place: a decade is the same distance
// everywhere on the axis, and the lowest decade sits on the axis's edge.
func TestLogAxes(t *testing.T) {
	var b strings.Builder
	Write(&b, []Chart{{Series: []Series{{Name: "s", Points: []Point{{10, 10}, {100, 100}, {1000, 1000}}}}}})
	var doc svgDoc
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	pts := strings.Fields(doc.Polylines[0].Points)
	want := []string{"80.0,360.0", "360.0,200.0", "640.0,40.0"}
	if strings.Join(pts, " ") != strings.Join(want, " ") {
		t.Fatalf("points %v, want %v", pts, want)
	}
}

func TestLabel(t *testing.T) {
	for v, want := range map[float64]string{1: "1", 0.01: "0.01", 1000: "1k", 1e5: "100k", 1e6: "1M", 2.5e9: "2.5G"} {
		if got := Label(v); got != want {
			t.Errorf("Label(%g) = %q, want %q", v, got, want)
		}
	}
}
