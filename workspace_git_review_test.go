package satchel_test

import (
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestOpenReview: a workspace under review names its open review once a
// change opened it, and none once it is decided; a workspace not under
// review has none.
func TestOpenReview(t *testing.T) {
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plain, err := st.Workspace(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Write(ctx, "a.txt", "a\n"); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspace(ctx, "s", "main", satchel.ForReview("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ws.OpenReview(ctx); ok || err != nil {
		t.Fatalf("before a change: ok=%v err=%v", ok, err)
	}
	if err := ws.Write(ctx, "a.txt", "b\n"); err != nil {
		t.Fatal(err)
	}
	rs, err := st.ListReviews(ctx, satchel.ReviewQuery{State: satchel.ReviewOpen})
	if err != nil || len(rs) != 1 {
		t.Fatalf("open reviews: %+v %v", rs, err)
	}
	// Another workspace of the same key finds it too.
	again, err := st.Workspace(ctx, "s", "main", satchel.ForReview("k"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*satchel.Workspace{ws, again} {
		r, ok, err := w.OpenReview(ctx)
		if !ok || err != nil || r.ID != rs[0].ID || r.ReviewThread != rs[0].ReviewThread || r.Base != 1 {
			t.Fatalf("open review: %+v ok=%v err=%v, want %+v", r, ok, err, rs[0])
		}
	}
	if _, err := st.RejectReview(ctx, rs[0].ID, "", satchel.Actor{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ws.OpenReview(ctx); ok || err != nil {
		t.Fatalf("after rejection: ok=%v err=%v", ok, err)
	}
	if _, ok, err := plain.OpenReview(ctx); ok || err != nil {
		t.Fatalf("not under review: ok=%v err=%v", ok, err)
	}
}
