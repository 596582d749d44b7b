package postgres

import (
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// BenchmarkPutDoc sets documents of 450 bytes at new keys, one at a time:
// the cost of one set, a round trip and a commit.
func BenchmarkPutDoc(b *testing.B) {
	be := openTest(b)
	defer be.Close()
	doc := []byte(`{"company_id":"c0001","confidence":0.5,"metadata":{"analyst":null,"source":"web"},"summary":"` + fmt.Sprintf("%0300d", 0) + `","tags":["a"],"topic":"t001","updated_at":"2026-01-31T09:30:00.000000000Z"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := be.ReplaceDoc(b.Context(), backend.DocReplace{DocID: backend.DocID{Store: "s", Scope: "x", Key: fmt.Sprint(i)}, JSON: doc, Version: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommit is the floor: one INSERT of one small row per
// transaction.
func BenchmarkCommit(b *testing.B) {
	be := openTest(b)
	defer be.Close()
	if _, err := be.pool.Exec(b.Context(), "CREATE TABLE bench_commit (id bigint PRIMARY KEY)"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := be.pool.Exec(b.Context(), "INSERT INTO bench_commit VALUES ($1)", i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetDoc gets one document by key.
func BenchmarkGetDoc(b *testing.B) {
	be := openTest(b)
	defer be.Close()
	id := backend.DocID{Store: "s", Scope: "x", Key: "k"}
	if _, err := be.ReplaceDoc(b.Context(), backend.DocReplace{DocID: id, JSON: []byte(`{"a":1}`), Version: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, ok, err := be.GetDoc(b.Context(), id, false); err != nil || !ok {
			b.Fatal(err)
		}
	}
}
