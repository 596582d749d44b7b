package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

func bulkPut(key string, version, expect int64) backend.DocReplace {
	return backend.DocReplace{
		DocID:   backend.DocID{Store: "bulk", Scope: "s", Key: key},
		JSON:    []byte(fmt.Sprintf(`{"k":%q,"v":%d}`, key, version)),
		Version: version, Expect: expect, Archive: true, Keep: 5,
		Change: &backend.DocChange{Op: "set", Scope: "s", Meta: []byte(`{}`)},
	}
}

// TestDocBatchShape: the first sets of new keys share one statement; a
// replacement, a later set of a key already in the batch and a keyed set
// each keep a statement of their own, after it.
func TestDocBatchShape(t *testing.T) {
	keyed := bulkPut("d", 1, 0)
	keyed.Change.Key = &backend.KeyClaim{}
	rs := []backend.DocReplace{bulkPut("a", 1, 0), bulkPut("b", 1, 0), bulkPut("c", 2, 1), bulkPut("a", 2, 1), keyed, bulkPut("e", 1, 0)}
	order := []int{0, 3, 1, 2, 4, 5} // rs sorted by key
	batch, bulk, alone := docBatch(rs, order, nil)
	if fmt.Sprint(bulk) != "[0 2 5]" || fmt.Sprint(alone) != "[3 2 4]" {
		t.Errorf("bulk positions %v, alone %v; want [0 2 5] (a, b, e) and [3 2 4] (the second a, c, the keyed d)", bulk, alone)
	}
	if batch.Len() != 3+len(alone) { // the plan mode set, the new keys, the plan mode reset
		t.Errorf("%d statements for %d new keys and %d others, want %d", batch.Len(), len(bulk), len(alone), 3+len(alone))
	}
	// One new key alone is replaceDoc's.
	if batch, bulk, _ := docBatch(rs[:1], []int{0}, nil); bulk != nil || batch.Len() != 1 {
		t.Errorf("a batch of one: bulk %v, %d statements", bulk, batch.Len())
	}
}

// TestBulkKeyCreatedMeanwhile races a batch of new keys with a writer
// that creates one of them in a transaction still open when the batch's
// statement starts: the insert of that key waits, then does nothing when
// the writer commits. That entry must be refused (its set tries again and
// then sees the writer's version); the others are stored, and only they
// are logged.
func TestBulkKeyCreatedMeanwhile(t *testing.T) {
	b := openTest(t)
	ctx := t.Context()
	commit := openRival(t, b, `INSERT INTO docs (store, scope, key, version, updated, doc)
		VALUES ('bulk', 's', 'k2', 7, now(), '{"theirs":true}')`)
	rs := []backend.DocReplace{bulkPut("k1", 1, 0), bulkPut("k2", 1, 0), bulkPut("k3", 1, 0)}
	type outcome struct {
		res []backend.DocResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := b.ReplaceDocs(ctx, rs)
		done <- outcome{res, err}
	}()
	awaitArraysWaiting(t, b, "the batch")
	commit()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	for i, r := range o.res {
		changed := errors.Is(r.Err, backend.ErrDocChanged)
		if want := i == 1; changed != want || !changed && (r.Err != nil || r.Doc.Version != 1) {
			t.Errorf("entry %d (%s): version %d, %v; want refused = %v", i, rs[i].Key, r.Doc.Version, r.Err, want)
		}
	}
	d, _, ok, err := b.GetDoc(ctx, rs[1].DocID, false)
	if err != nil || !ok || d.Version != 7 || string(d.JSON) != `{"theirs":true}` {
		t.Errorf("k2: version %d %s (found %v, %v), want the other writer's version 7", d.Version, d.JSON, ok, err)
	}
	var logged []string
	rows, err := b.pool.Query(ctx, `SELECT key || '@' || version FROM doc_changes WHERE store = 'bulk' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		logged = append(logged, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(logged) != "[k1@1 k3@1]" {
		t.Errorf("log of changes %v, want [k1@1 k3@1]", logged)
	}
}
