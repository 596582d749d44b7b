package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel/internal/collection"
)

// The golden values below were cross-checked against the usual JavaScript
// mulberry32 (Math.imul, >>> 0) run under node.
func TestMulberry32(t *testing.T) {
	if got := W1Seed(1, 0); got != 606290984 {
		t.Fatalf("W1Seed(1, 0) = %d, want 606290984", got)
	}
	if got := W2Seed(1, 42, 2); got != 2716111950 {
		t.Fatalf("W2Seed(1, 42, 2) = %d, want 2716111950", got)
	}
	m := NewMulberry32(606290984)
	var got []uint32
	for range 5 {
		got = append(got, m.Next())
	}
	want := []uint32{1000619634, 2291122030, 3122339705, 1392620394, 4208359601}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Next() (-want +got):\n%s", diff)
	}
}

// TestW1Checksum is the port check of WORKLOADS.md.
func TestW1Checksum(t *testing.T) {
	h := sha256.New()
	for i := range 1000 {
		h.Write([]byte(W1Path(i)))
		h.Write([]byte{0})
		h.Write([]byte(W1Content(1, i)))
	}
	const want = "669bca2f27a1be6854a79826dc5f68a0a3b3b4d6f5ff89354b2be0e9a08b0ba9"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("sha256 of the first 1000 W1 files = %s, want %s", got, want)
	}
}

func TestW1Paths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{W1Path(0), "notes/d00/f00000.md"},
		{W1Path(7), "notes/d07/f00007.md"},
		{W1Path(1234), "notes/d34/f01234.md"},
		{W1Path(9999), "notes/d99/f09999.md"},
		{W1MissingPath(0), "notes/d00/missing00000.md"},
		{W1MissingPath(1234), "notes/d34/missing01234.md"},
		{W1AppendLine(0), "append 000000 " + strings.Repeat(".", 25) + "\n"},
		{W1AppendLine(9999), "append 009999 " + strings.Repeat(".", 25) + "\n"},
		{W1Marker(12), "MARKER-12"},
		{W1Edited(12), "EDITED-12"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if n := len(W1AppendLine(123456)); n != 40 {
		t.Errorf("len(W1AppendLine(123456)) = %d, want 40", n)
	}
}

func TestW1Content(t *testing.T) {
	for _, i := range []int{0, 1, 7, 49, 77, 9999} {
		c := W1Content(1, i)
		if c != W1Content(1, i) {
			t.Fatalf("file %d: not deterministic", i)
		}
		if c == W1Content(2, i) {
			t.Errorf("file %d: seeds 1 and 2 give the same content", i)
		}
		if !strings.HasSuffix(c, "\n") {
			t.Fatalf("file %d does not end in a newline", i)
		}
		lines := strings.Split(strings.TrimSuffix(c, "\n"), "\n")
		if len(lines) != W1Lines {
			t.Fatalf("file %d has %d lines, want %d", i, len(lines), W1Lines)
		}
		if strings.Count(c, W1Marker(i)) != 1 {
			t.Errorf("file %d: %s is not unique", i, W1Marker(i))
		}
		for k, l := range lines {
			k++
			switch {
			case k == W1MarkerLine:
				if l != "MARKER-"+strconv.Itoa(i) {
					t.Errorf("file %d line %d = %q", i, k, l)
				}
			case k == W1TodoLine && i%7 == 0:
				if l != "TODO-"+strconv.Itoa(i) {
					t.Errorf("file %d line %d = %q", i, k, l)
				}
			default:
				p := "line " + strconv.Itoa(k) + " of file " + strconv.Itoa(i) + ": "
				if len(l) != W1LineWidth || !strings.HasPrefix(l, p) ||
					strings.Trim(l[len(p):], "abcdefghijklmnopqrstuvwxyz") != "" {
					t.Errorf("file %d line %d = %q", i, k, l)
				}
			}
		}
	}
}

// TestW1ReplacedLinesDraw pins the reading that replaced lines still take
// their draws: line 51 of a file is the same whether or not line 50 was
// replaced, so it must equal the line that a fresh generation would give.
func TestW1ReplacedLinesDraw(t *testing.T) {
	i := 3
	m := Mulberry32{a: W1Seed(1, i)}
	var want string
	for k := 1; k <= 51; k++ {
		var b strings.Builder
		p := linePrefix(k, strconv.Itoa(i))
		b.WriteString(p)
		fill(&b, &m, len(p), W1LineWidth)
		want = b.String()
	}
	got := strings.Split(W1Content(1, i), "\n")[50]
	if got != want {
		t.Errorf("line 51 = %q, want %q", got, want)
	}
}

func TestW1GrepExpected(t *testing.T) {
	const n = 1000
	re := regexp.MustCompile(W1GrepPattern)
	var want []string
	for i := range n {
		if re.MatchString(W1Content(1, i)) {
			want = append(want, W1Path(i))
		}
	}
	got := W1GrepExpected(n)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("W1GrepExpected(%d) (-regexp +got):\n%s", n, diff)
	}
	if len(got) != 15 || got[0] != "notes/d07/f00007.md" || got[1] != "notes/d77/f00077.md" {
		t.Errorf("W1GrepExpected(%d) = %v", n, got)
	}
	if got := len(W1GrepExpected(W1DefaultN)); got != 143 {
		t.Errorf("len(W1GrepExpected(10000)) = %d, want 143", got)
	}
}

func TestW2Doc(t *testing.T) {
	d := W2Doc(1, 1234, 2)
	if diff := cmp.Diff(d, W2Doc(1, 1234, 2)); diff != "" {
		t.Fatalf("not deterministic:\n%s", diff)
	}
	if cmp.Equal(d, W2Doc(1, 1234, 1)) || cmp.Equal(d, W2Doc(2, 1234, 2)) {
		t.Errorf("version or seed does not change the document")
	}
	if d["company_id"] != "c0234" || d["topic"] != "t001" || W2Key(1234) != "c0234:t001" {
		t.Errorf("identity = %v %v %v", d["company_id"], d["topic"], W2Key(1234))
	}
	if got := d["updated_at"]; got != "2026-01-03T00:20:34.000Z" {
		t.Errorf("updated_at = %v", got)
	}
	if got := W2UpdatedAt(5, 0); got != "2026-01-01T00:00:05.000Z" {
		t.Errorf("W2UpdatedAt(5, 0) = %v", got)
	}

	seenNull, seenAnalyst := false, false
	tagCounts := map[int]bool{}
	for i := range 2000 {
		d := W2Doc(1, i, i%3)
		s := d["summary"].(string)
		p := "summary v" + strconv.Itoa(i%3) + " of doc " + strconv.Itoa(i) + ": "
		if len(s) != W2SummaryWidth || !strings.HasPrefix(s, p) ||
			strings.Trim(s[len(p):], "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("doc %d summary = %q", i, s)
		}
		c := d["confidence"].(float64)
		if c < 0 || c >= 1 || math.Round(c*10000)/10000 != c {
			t.Fatalf("doc %d confidence = %v", i, c)
		}
		tags := d["tags"].([]any)
		tagCounts[len(tags)] = true
		for _, tg := range tags {
			if !strings.Contains(" saas fintech b2b b2c hardware ai infra health retail energy ", " "+tg.(string)+" ") {
				t.Fatalf("doc %d tag %q", i, tg)
			}
		}
		md := d["metadata"].(map[string]any)
		if !strings.Contains(" 10-K call news analyst-note web ", " "+md["source"].(string)+" ") {
			t.Fatalf("doc %d source %q", i, md["source"])
		}
		switch a := md["analyst"].(type) {
		case nil:
			seenNull = true
		case string:
			seenAnalyst = true
			if !strings.Contains(" ana bo chen dara ", " "+a+" ") {
				t.Fatalf("doc %d analyst %q", i, a)
			}
		default:
			t.Fatalf("doc %d analyst %#v", i, a)
		}
		if _, err := time.Parse(time.RFC3339, d["updated_at"].(string)); err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
	}
	if !seenNull || !seenAnalyst || len(tagCounts) != 3 {
		t.Errorf("2000 documents never hit null=%v analyst=%v, tag counts %v", seenNull, seenAnalyst, tagCounts)
	}
}

// TestW2DocJSON checks that a document survives encoding/json unchanged.
func TestW2DocJSON(t *testing.T) {
	d := W2Doc(1, 99999, 0)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

// TestW2StoreDefinition loads both definitions with the real loader and
// validates documents against them.
func TestW2StoreDefinition(t *testing.T) {
	for name, def := range map[string]string{"plain": W2StoreDefinition(), "indexed": W2StoreDefinitionIndexed()} {
		t.Run(name, func(t *testing.T) {
			if !json.Valid([]byte(def)) {
				t.Fatalf("not valid JSON:\n%s", def)
			}
			p, err := collection.LoadProjectFS(fstest.MapFS{"stores/" + W2StoreName + ".json": {Data: []byte(def)}})
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Store(W2StoreName)
			if err != nil {
				t.Fatal(err)
			}
			if s.Key != "{company_id}:{topic}" || s.HistoryVersions != W2HistoryVersions || s.Deletable {
				t.Errorf("store = %+v", s)
			}
			wantIdx := []string(nil)
			if name == "indexed" {
				wantIdx = []string{"company_id", "topic", "confidence"}
			}
			if diff := cmp.Diff(wantIdx, s.Indexes); diff != "" {
				t.Errorf("indexes (-want +got):\n%s", diff)
			}
			for i := 0; i < 3000; i += 7 {
				d := W2Doc(1, i, i%4)
				if err := s.Validate(d, nil); err != nil {
					t.Fatalf("doc %d: %v", i, err)
				}
				if k, err := s.KeyOf(d); err != nil || k != W2Key(i) {
					t.Fatalf("doc %d: key %q, %v; want %q", i, k, err, W2Key(i))
				}
			}
		})
	}
}

func BenchmarkW1Content(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		W1Content(1, i%W1DefaultN)
	}
}
