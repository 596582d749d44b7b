package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/satchel-dev/satchel"
)

// suggestLimit bounds the files a "did you mean" looks through.
const suggestLimit = 10000

// didYouMean adds to a refusal `file not found: P` the nearest existing
// path, when one is close (a typo away): `file not found: notes/plam.md
// (did you mean notes/plan.md?)`. The refusal keeps its kind and prefix.
func didYouMean(ctx context.Context, r satchel.Reader, path string, err error) error {
	var e *satchel.Error
	if !errors.As(err, &e) || !errors.Is(err, satchel.ErrNotFound) || e.Msg != "file not found: "+path {
		return err
	}
	paths, lerr := r.List(ctx, "", satchel.ListOptions{Limit: suggestLimit})
	if lerr != nil {
		return err
	}
	if near := nearest(path, paths); near != "" {
		return &satchel.Error{Kind: e.Kind, Msg: e.Msg + " (did you mean " + near + "?)"}
	}
	return err
}

// nearest returns the path of paths closest to p by edit distance, when it
// is at most half the length of p's file name without its extension (and
// at most 3), so that a.md does not suggest b.md; "" when none is.
func nearest(p string, paths []string) string {
	stem := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.LastIndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	best, bestD := "", min(3, len(stem)/2)+1
	lp := strings.ToLower(p)
	for _, q := range paths {
		if d := distance(lp, strings.ToLower(q), bestD); d < bestD {
			best, bestD = q, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b, or at least bound when
// it is bound or more.
func distance(a, b string, bound int) int {
	if d := len(a) - len(b); d >= bound || -d >= bound {
		return bound
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low >= bound {
			return bound
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
