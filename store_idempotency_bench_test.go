package satchel_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel"
)

var keyedRuns atomic.Int64

// BenchmarkKeyedWrite measures a write of a new 4 KiB file without and
// with an idempotency key, side by side, on each backend.
func BenchmarkKeyedWrite(b *testing.B) {
	content := strings.Repeat("some words of a note\n", 200)
	benchStores(b, func(b *testing.B, st *satchel.Store) {
		for _, keyed := range []bool{false, true} {
			b.Run("key="+strconv.FormatBool(keyed), func(b *testing.B) {
				run := strconv.FormatInt(keyedRuns.Add(1), 10) // every run writes new files, with new keys
				ws, err := st.Workspace(b.Context(), "default", "key"+strconv.FormatBool(keyed)+"-"+run)
				if err != nil {
					b.Fatal(err)
				}
				i := 0
				for b.Loop() {
					var opts []satchel.WriteOption
					if keyed {
						opts = append(opts, satchel.IdempotencyKey("k"+run+"-"+strconv.Itoa(i)))
					}
					if err := ws.Write(b.Context(), "notes/"+strconv.Itoa(i)+".md", content, opts...); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	})
}
