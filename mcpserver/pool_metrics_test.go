package mcpserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// pooled is a memory backend that says it has a pool of connections.
type pooled struct {
	*memory.Backend
	stats backend.PoolStats
}

func (p *pooled) PoolStats() backend.PoolStats { return p.stats }

// TestHTTPPoolMetrics: on a backend with a pool of connections, /metrics
// has the pool's figures, read at the scrape; on one without, none.
func TestHTTPPoolMetrics(t *testing.T) {
	b := &pooled{Backend: memory.New(), stats: backend.PoolStats{
		Max: 8, InUse: 3, Idle: 2, Acquires: 1234, Waits: 56, Waited: 1500 * time.Millisecond,
	}}
	st := satchel.New(b)
	t.Cleanup(func() { st.Close() })
	f := newHTTP(t, Config{Store: st})
	m := scrape(t, f.url)
	for _, want := range []string{
		`satchel_db_pool_connections{state="in_use"} 3`,
		`satchel_db_pool_connections{state="idle"} 2`,
		`satchel_db_pool_max_connections 8`,
		`satchel_db_pool_acquires_total 1234`,
		`satchel_db_pool_acquire_waits_total 56`,
		`satchel_db_pool_acquire_wait_seconds_total 1.5`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	b.stats.Waits = 57
	if m := scrape(t, f.url); !strings.Contains(m, "satchel_db_pool_acquire_waits_total 57\n") {
		t.Errorf("the second scrape does not read the pool again")
	}

	if m := scrape(t, newHTTP(t, Config{}).url); strings.Contains(m, "satchel_db_pool") {
		t.Errorf("a store without a pool reports one")
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", MetricsPath, resp.StatusCode, err)
	}
	return string(b)
}
