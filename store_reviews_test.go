package satchel

import (
	"strings"
	"testing"
)

// FuzzValidReviewID: an ID is accepted exactly when it is R- and 8
// characters of Crockford's base32, and every ID newReviewID draws is.
func FuzzValidReviewID(f *testing.F) {
	for _, s := range []string{"R-7K2M9Q4X", "R-00000000", "r-7K2M9Q4X", "R-7K2M9Q4", "R-7K2M9Q4XY", "R-ILOU0000", "R-7k2m9q4x", "", "R-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) == 10 && s[:2] == "R-"
		for i := 2; want && i < len(s); i++ {
			want = strings.IndexByte(crockford, s[i]) >= 0
		}
		if got := ValidReviewID(s) == nil; got != want {
			t.Errorf("ValidReviewID(%q) accepted %v, want %v", s, got, want)
		}
		id, err := newReviewID()
		if err != nil || ValidReviewID(id) != nil {
			t.Errorf("newReviewID drew %q (%v)", id, err)
		}
	})
}

// TestReviewNotices: the sentences a caller under review is told, word
// for word.
func TestReviewNotices(t *testing.T) {
	for _, c := range []struct {
		r    Review
		want string
	}{
		{Review{ID: "R-7K2M9Q4X", Thread: "main", State: ReviewApproved, Merge: 42},
			"review R-7K2M9Q4X was approved: its changes are in thread main (commit 42); your next change starts a new review"},
		{Review{ID: "R-7K2M9Q4X", Thread: "main", State: ReviewApproved},
			"review R-7K2M9Q4X was approved: thread main already had its changes; your next change starts a new review"},
		{Review{ID: "R-7K2M9Q4X", Thread: "main", State: ReviewRejected, Reason: "too broad"},
			"review R-7K2M9Q4X was rejected (too broad): its changes were not applied to thread main; your next change starts a new review"},
		{Review{ID: "R-7K2M9Q4X", Thread: "main", State: ReviewRejected},
			"review R-7K2M9Q4X was rejected: its changes were not applied to thread main; your next change starts a new review"},
	} {
		if got := decidedNotice(c.r); got != c.want {
			t.Errorf("decidedNotice(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
	if got := reviewWaits("R-7K2M9Q4X"); got != "your changes wait for review R-7K2M9Q4X" {
		t.Errorf("reviewWaits: %q", got)
	}
	for a, want := range map[Actor]string{
		{Agent: "lead"}:                       "agent lead",
		{Credential: "abc", Via: "inspector"}: "operator token abc (inspector)",
		{Credential: "abc"}:                   "operator token abc",
		{Via: "cli:review approve"}:           "an operator (cli:review approve)",
		{}:                                    "an operator",
	} {
		if got := decider(a); got != want {
			t.Errorf("decider(%+v) = %q, want %q", a, got, want)
		}
	}
}
