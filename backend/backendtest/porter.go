package backendtest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// checkPorter checks backend.Porter, when the backend implements it:
// commit and thread times set as given and read back everywhere, and
// documents stored with exactly the versions, times and history given.
func checkPorter(t *testing.T, b backend.Backend) {
	p, ok := backend.As[backend.Porter](b)
	if !ok {
		t.Skip("not a backend.Porter")
	}
	ctx := context.Background()
	th := newThread(t, b, "s", "t")
	cs := commits(t, b, th.ID, 3)
	at := time.Date(2020, 2, 3, 4, 5, 6, 789012000, time.UTC)
	if err := p.SetCommitTime(ctx, th.ID, 2, at); err != nil {
		t.Fatalf("SetCommitTime: %v", err)
	}
	c, err := b.CommitAt(ctx, th.ID, 2)
	if err != nil || !c.Time.Equal(at) || c.ID != cs[1].ID {
		t.Errorf("CommitAt after SetCommitTime: %s %v, want time %s", fmtCommit(c), err, at)
	}
	log, err := b.Log(ctx, th.ID, 0, 0)
	if err != nil || len(log) != 3 || !log[1].Time.Equal(at) || log[0].Time.Equal(at) {
		t.Errorf("Log after SetCommitTime: %v %v", log, err)
	}
	if err := p.SetCommitTime(ctx, th.ID, 3, at); err != nil {
		t.Fatal(err)
	}
	if h, _ := head(t, b, th.ID); !h.Time.Equal(at) {
		t.Errorf("Head after SetCommitTime: %s", fmtCommit(h))
	}
	drop(t, b, th.ID, 1)
	wantErr(t, "SetCommitTime of a dropped commit", p.SetCommitTime(ctx, th.ID, 1, at), backend.ErrNoCommit)
	wantErr(t, "SetCommitTime of a missing commit", p.SetCommitTime(ctx, th.ID, 9, at), backend.ErrNoCommit)

	if err := p.SetThreadCreated(ctx, th.ID, at); err != nil {
		t.Fatalf("SetThreadCreated: %v", err)
	}
	if got, err := b.Thread(ctx, "s", "t", false); err != nil || !got.Created.Equal(at) {
		t.Errorf("Thread after SetThreadCreated: %+v %v", got, err)
	}
	if ts, err := b.Threads(ctx, "s"); err != nil || len(ts) != 1 || !ts[0].Created.Equal(at) {
		t.Errorf("Threads after SetThreadCreated: %+v %v", ts, err)
	}
	wantErr(t, "SetThreadCreated of a missing thread", p.SetThreadCreated(ctx, th.ID+1000, at), backend.ErrNoThread)

	db, ok := backend.As[backend.Documents](b)
	if !ok {
		return
	}
	id := backend.DocID{Store: "st", Scope: "s", Key: "k"}
	doc := func(v int64, body string, upd time.Time, exp time.Time) backend.Doc {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		return backend.Doc{Key: "k", Version: v, Updated: upd, Expires: exp, JSON: []byte(body), Map: m}
	}
	if _, err := db.ReplaceDoc(ctx, backend.DocReplace{DocID: id, Doc: map[string]any{"a": "old"}, JSON: []byte(`{"a":"old"}`), Version: 1}); err != nil {
		t.Fatal(err)
	}
	exp := at.Add(100 * 365 * 24 * time.Hour)
	want := []backend.Doc{
		doc(7, `{"a":"seven"}`, at.Add(3*time.Second), exp),
		doc(6, `{"a":"six"}`, at.Add(2*time.Second), time.Time{}),
		doc(4, `{"a":"four"}`, at, time.Time{}),
	}
	if err := p.PutDocVersions(ctx, id, want); err != nil {
		t.Fatalf("PutDocVersions: %v", err)
	}
	cur, hist, ok, err := db.GetDoc(ctx, id, true)
	if err != nil || !ok {
		t.Fatalf("GetDoc after PutDocVersions: %v %v", ok, err)
	}
	got := append([]backend.Doc{cur}, hist...)
	if len(got) != len(want) {
		t.Fatalf("GetDoc: %d versions, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		gj := g.JSON
		if gj == nil {
			gj, _ = json.Marshal(g.Map)
		}
		if g.Version != w.Version || !g.Updated.Equal(w.Updated) || !g.Expires.Equal(w.Expires) || string(gj) != string(w.JSON) {
			t.Errorf("version %d: got %d %s %s %s, want %d %s %s %s", i, g.Version, g.Updated, g.Expires, gj, w.Version, w.Updated, w.Expires, w.JSON)
		}
	}
	// The next set continues from the imported version.
	d, err := db.ReplaceDoc(ctx, backend.DocReplace{DocID: id, Doc: map[string]any{"a": "eight"}, JSON: []byte(`{"a":"eight"}`),
		Version: 8, Expect: 7, Live: true, Archive: true, Keep: 5})
	if err != nil || d.Version != 8 {
		t.Errorf("ReplaceDoc after PutDocVersions: version %d %v, want 8", d.Version, err)
	}
	shared := backend.DocID{Store: "st", Scope: "", Key: "x"}
	if err := p.PutDocVersions(ctx, shared, []backend.Doc{doc(1, `{"a":"x"}`, at, time.Time{})}); err != nil {
		t.Fatal(err)
	}
	if sc, err := p.DocScopes(ctx, "st"); err != nil || !slices.Equal(sc, []string{"", "s"}) {
		t.Errorf(`DocScopes: %q %v, want ["" "s"]`, sc, err)
	}
	if st, err := p.DocStores(ctx); err != nil || !slices.Contains(st, "st") || slices.Contains(st, "none") || !slices.IsSorted(st) {
		t.Errorf(`DocStores: %q %v, want "st" among them, in order`, st, err)
	}
	if sc, err := p.DocScopes(ctx, "none"); err != nil || len(sc) != 0 {
		t.Errorf("DocScopes of an unknown store: %q %v", sc, err)
	}
	if err := p.PutDocVersions(ctx, id, nil); err == nil || errors.Is(err, backend.ErrNoCommit) {
		t.Errorf("PutDocVersions with no versions: %v", err)
	}
}
