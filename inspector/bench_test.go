package inspector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
)

// The big workspace of the benchmarks: 100,000 files in 100 directories,
// then 10,000 commits that each edit one file, a checkpoint every 1,000,
// and a fork at the middle with commits of its own, on SQLite.
const (
	benchFiles   = 100_000
	benchDirs    = 100
	benchCommits = 10_000
)

var (
	benchOnce sync.Once
	benchDB   string
	benchErr  error
)

// bigStore builds the big workspace once per run of the test binary
// (SATCHEL_INSPECTOR_BENCH_DB keeps it between runs).
func bigStore(b *testing.B) *satchel.Store {
	b.Helper()
	benchOnce.Do(func() {
		benchDB = os.Getenv("SATCHEL_INSPECTOR_BENCH_DB")
		if benchDB != "" {
			if _, err := os.Stat(benchDB); err == nil {
				return
			}
		} else {
			dir, err := os.MkdirTemp("", "inspector-bench-")
			if err != nil {
				benchErr = err
				return
			}
			benchDB = filepath.Join(dir, "big.db")
		}
		benchErr = buildBig(benchDB)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	st, err := satchel.Open(context.Background(), benchDB)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

func buildBig(db string) error {
	ctx := context.Background()
	st, err := satchel.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, "big", "main", satchel.WorkspaceActor(satchel.Actor{Agent: "bench", Via: "bench:write"}))
	if err != nil {
		return err
	}
	const perBatch = 10_000
	for lo := 0; lo < benchFiles; lo += perBatch {
		err := ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for i := lo; i < lo+perBatch; i++ {
				if err := bt.Write(ctx, benchPath(i), fmt.Sprintf("file %d\nline two of %d\nthe end\n", i, i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := 0; i < benchCommits; i++ {
		if err := ws.Write(ctx, benchPath(i*7%benchFiles), fmt.Sprintf("file %d\nedited at step %d\n", i, i)); err != nil {
			return err
		}
		if i%1000 == 999 {
			if _, err := ws.Checkpoint(ctx, fmt.Sprintf("step-%d", i+1)); err != nil {
				return err
			}
		}
		if i == benchCommits/2 {
			alt, err := ws.Fork(ctx, "head", "alt")
			if err != nil {
				return err
			}
			for j := 0; j < 100; j++ {
				if err := alt.Write(ctx, benchPath(j), fmt.Sprintf("alt %d\n", j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func benchPath(i int) string { return fmt.Sprintf("d%03d/f%06d.txt", i%benchDirs, i) }

// BenchmarkPages renders each page of the inspector over the big
// workspace, through the handler (no network), as the local user.
func BenchmarkPages(b *testing.B) {
	st := bigStore(b)
	in, err := New(Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	h := in.Handler()
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}
	mid := 100 + benchCommits/2 // the batches are commits 1-10
	pages := []struct{ name, path string }{
		{"scopes", "/"},
		{"threads", "/s/big/"},
		{"tree", "/s/big/tree"},
		{"timeline", "/s/big/t/main/"},
		{"timeline-old", fmt.Sprintf("/s/big/t/main/?before=%d", mid)},
		{"commit", fmt.Sprintf("/s/big/t/main/c/%d", mid)},
		{"commit-batch", "/s/big/t/main/c/5"},
		{"compare-fork", "/s/big/t/alt/compare?from_thread=main&from=head&to=head"},
		{"compare-file", "/s/big/t/main/compare?from=step-1000&to=head&path=" + benchPath(7)},
		{"dir-root", "/s/big/t/main/files/"},
		{"dir-1000", "/s/big/t/main/files/d042/"},
		{"dir-old", "/s/big/t/main/files/d042/?at=step-1000"},
		{"file", "/s/big/t/main/files/" + benchPath(4242)},
		{"file-history", "/s/big/t/main/history/" + benchPath(7)},
		{"glob", "/s/big/t/main/search?glob=d042/*.txt"},
		{"grep", "/s/big/t/main/search?grep=edited+at&under=d007"},
		{"grep-miss", "/s/big/t/main/search?grep=no+such+text"},
		{"activity", "/s/big/activity"},
		{"activity-hide-appends", "/s/big/activity?hide=appends"},
		{"activity-path", "/s/big/activity?path=d007/**"},
		{"activity-thread-agent", "/s/big/activity?thread=alt&agent=bench"},
		{"timeline-filtered", "/s/big/t/main/?path=" + benchPath(7)},
		{"commit-split", fmt.Sprintf("/s/big/t/main/c/%d?view=split", mid)},
		{"blame", "/s/big/t/main/blame/" + benchPath(7)},
		{"blame-fork", "/s/big/t/alt/blame/" + benchPath(7)},
		{"file-history-fork", "/s/big/t/alt/history/" + benchPath(7)},
		{"raw", "/s/big/t/main/raw/" + benchPath(4242)},
		{"search-scope", "/s/big/search?q=edited+at+step+9999"},
		{"search-scope-next", "/s/big/search?q=edited+at+step+9999&from=main"},
		{"spills", "/s/big/t/main/spills/"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", "http://127.0.0.1:8765"+p.path, nil)
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(local)))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", p.path, rec.Code, rec.Body.String())
				}
			}
		})
	}
}
