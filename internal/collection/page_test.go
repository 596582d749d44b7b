package collection

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/satchel-dev/satchel/internal/errs"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []Cursor{
		{Store: "s", Key: "k"},
		{Store: "research-notes", Sort: "-confidence", Value: 0.1 + 0.2, Key: "c0001:t001"},
		{Store: "s", Sort: "at", Value: "2026-01-01T00:00:00.000000000Z", Key: "a'b\"c"},
		{Store: "s", Sort: "b", Value: false, Key: ""},
		{Store: "s", Sort: "n", Value: -1e300, Key: "é"},
	} {
		enc := EncodeCursor(c)
		if strings.ContainsAny(enc, "+/=") {
			t.Errorf("cursor %q is not base64url without padding", enc)
		}
		got, err := DecodeCursor(enc)
		if err != nil {
			t.Fatalf("DecodeCursor(%q): %v", enc, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	for _, bad := range []string{"!!!", base64.RawURLEncoding.EncodeToString([]byte(`{"st":"s","k":"k","x":1}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"st":"s","k":"k","v":[1]}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"st":"s","k":"k"} {}`)), strings.Repeat("A", 9000)} {
		if _, err := DecodeCursor(bad); !errors.Is(err, errs.ErrInvalidArgument) ||
			err.Error() != "invalid cursor: pass next_cursor exactly as the previous page returned it, or no cursor to start from the first page" {
			t.Errorf("DecodeCursor(%q) = %v", bad, err)
		}
	}
}

func TestPageRequest(t *testing.T) {
	s := queryStore(t)
	p, err := s.Page(PageRequest{})
	if err != nil || p.Limit != DefaultLimit || p.Sort != (Sort{}) || len(p.Query.Conds) != 0 || p.After != nil {
		t.Errorf("default page = %+v, %v", p, err)
	}
	for _, n := range []int{0, -1, 101} {
		_, err := s.Page(PageRequest{Limit: &n})
		if !errors.Is(err, errs.ErrInvalidArgument) || err.Error() != "limit must be between 1 and 100, was "+strconv.Itoa(n) {
			t.Errorf("limit %d: %v", n, err)
		}
	}
	for _, n := range []int{1, 100} {
		if p, err := s.Page(PageRequest{Limit: &n}); err != nil || p.Limit != n {
			t.Errorf("limit %d: %v", n, err)
		}
	}
	sortErrs := map[string]string{
		"nope":  `invalid sort "nope": unknown field (sort by one of id, n, b, at, status, m.source, m.score, c, with - before it for descending order; the default is the key)`,
		"-tags": `invalid sort "-tags": tags is an array field (sort by one of id, n, b, at, status, m.source, m.score, c, with - before it for descending order; the default is the key)`,
		"m":     `invalid sort "m": m is an object field (sort by one of id, n, b, at, status, m.source, m.score, c, with - before it for descending order; the default is the key)`,
	}
	for src, msg := range sortErrs {
		if _, err := s.Page(PageRequest{Sort: src}); !errors.Is(err, errs.ErrInvalidArgument) || err.Error() != msg {
			t.Errorf("sort %q: %v", src, err)
		}
	}
	if st, err := s.ParseSort("-m.score"); err != nil || st != (Sort{Field: "m.score", Desc: true}) || st.String() != "-m.score" {
		t.Errorf("ParseSort = %+v, %v", st, err)
	}
	// A cursor belongs to its store and sort.
	doc := decode(t, `{"id": "a", "n": 1, "tags": []}`)
	first, _ := s.Page(PageRequest{Sort: "n"})
	cur := first.Cursor("a", doc)
	if _, err := s.Page(PageRequest{Sort: "n", Cursor: cur}); err != nil {
		t.Errorf("same sort: %v", err)
	}
	const other = "invalid cursor: it belongs to another store or sort order; pass the same sort as the page it came from, or no cursor to start again"
	if _, err := s.Page(PageRequest{Sort: "-n", Cursor: cur}); err == nil || err.Error() != other {
		t.Errorf("other sort: %v", err)
	}
	rn := researchNotes(t)
	if _, err := rn.Page(PageRequest{Cursor: EncodeCursor(Cursor{Store: "q", Key: "a"})}); err == nil || err.Error() != other {
		t.Errorf("other store: %v", err)
	}
	// A cursor whose value does not fit the field is refused, not sent to SQL.
	for _, c := range []Cursor{{Store: "q", Sort: "n", Value: "x", Key: "a"}, {Store: "q", Sort: "n", Key: "a"},
		{Store: "q", Sort: "at", Value: "2026-01-01T00:00:00Z", Key: "a"}, {Store: "q", Sort: "b", Value: 1.0, Key: "a"}} {
		if _, err := s.Page(PageRequest{Sort: c.Sort, Cursor: EncodeCursor(c)}); err == nil || err.Error() != other {
			t.Errorf("cursor %+v: %v", c, err)
		}
	}
	// A null value is fine for a nullable sort field.
	if _, err := s.Page(PageRequest{Sort: "m.score", Cursor: EncodeCursor(Cursor{Store: "q", Sort: "m.score", Key: "a"})}); err != nil {
		t.Errorf("null cursor value: %v", err)
	}
}

// TestPagesWhileChanging pages through a changing collection in Go: a
// document that exists from the first page to the last and does not move
// is seen exactly once, and no document that never moved is seen twice (a
// document whose sort value changes moves, and may be seen again).
func TestPagesWhileChanging(t *testing.T) {
	s := queryStore(t)
	docs := map[string]map[string]any{}
	for i := 0; i < 50; i++ {
		k := "k" + strconv.Itoa(100+i)
		docs[k] = map[string]any{"id": k, "n": float64(i % 7), "tags": []any{}}
	}
	limit := 4
	req := PageRequest{Sort: "-n", Limit: &limit}
	seen := map[string]int{}
	moved := map[string]bool{}
	stable := map[string]bool{}
	for k := range docs {
		stable[k] = true
	}
	for page := 0; ; page++ {
		p, err := s.Page(req)
		if err != nil {
			t.Fatal(err)
		}
		var hits []string
		for k, d := range docs {
			if p.Match(k, d) {
				hits = append(hits, k)
			}
		}
		sortKeys := func(a, b string) int { return p.Compare(a, docs[a], b, docs[b]) }
		slicesSortFunc(hits, sortKeys)
		if len(hits) > limit {
			hits = hits[:limit]
		}
		for _, k := range hits {
			seen[k]++
		}
		if len(hits) < limit {
			break
		}
		last := hits[len(hits)-1]
		req.Cursor = p.Cursor(last, docs[last])
		// Change the collection between pages: add, remove and move.
		nk := "k" + strconv.Itoa(900+page)
		docs[nk] = map[string]any{"id": nk, "n": float64(page % 7), "tags": []any{}}
		rk := "k" + strconv.Itoa(100+(page*13)%50)
		if _, ok := docs[rk]; ok && rk != last {
			delete(docs, rk)
			delete(stable, rk)
		}
		mk := "k" + strconv.Itoa(100+(page*7+3)%50)
		if d, ok := docs[mk]; ok {
			d["n"] = float64(page % 3)
			delete(stable, mk)
			moved[mk] = true
		}
	}
	for k, n := range seen {
		if n > 1 && !moved[k] {
			t.Errorf("%s seen %d times", k, n)
		}
	}
	for k := range stable {
		if seen[k] != 1 {
			t.Errorf("stable document %s seen %d times", k, seen[k])
		}
	}
}
