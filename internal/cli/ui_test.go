package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestUIRefusals(t *testing.T) {
	h := newHarness(t)
	h.refused("refusing to listen on 0.0.0.0:0: it is not a loopback address and no access token exists; create one with `satchel token create --operator`, or listen on 127.0.0.1",
		"ui", "--addr", "0.0.0.0:0")
	h.usage("--ui applies to --http only (or run satchel ui)", "serve", "--ui")
}

// waitFor returns the first submatch of re in the growing stderr.
func waitFor(t *testing.T, stderr *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s in: %s", re, stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestUIServes(t *testing.T) {
	h := newHarness(t)
	ws, _ := h.store.Workspace(context.Background(), "acme", "main")
	if err := ws.Write(context.Background(), "a.md", "hello\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, stderr, wait := h.serving(ctx, "ui", "--addr", "127.0.0.1:0")
	addr := waitFor(t, stderr, regexp.MustCompile(`inspector at http://(127\.0\.0\.1:\d+)/`))
	if code, body := getPage(t, "http://"+addr+"/s/acme/t/main/files/a.md"); code != 200 || !strings.Contains(body, "hello") {
		t.Errorf("the file's page: %d\n%s", code, body)
	}
	cancel()
	if code := wait(); code != 0 {
		t.Errorf("ui exited %d: %s", code, stderr)
	}
}

func TestServeHTTPWithUI(t *testing.T) {
	h := newHarness(t)
	ws, _ := h.store.Workspace(context.Background(), "acme", "main")
	if err := ws.Write(context.Background(), "a.md", "hello\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, stderr, wait := h.serving(ctx, "serve", "--http", "127.0.0.1:0", "--ui")
	addr := waitFor(t, stderr, regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`))
	code, body := getPage(t, "http://"+addr+"/ui/s/acme/t/main/")
	if code != 200 || !strings.Contains(body, `href="/ui/s/acme/t/main/c/1"`) || !strings.Contains(body, `src="/ui/static/live.js"`) {
		t.Errorf("the thread's page under /ui/: %d\n%s", code, body)
	}
	if code, _ := getPage(t, "http://"+addr+"/healthz"); code != 200 {
		t.Errorf("healthz next to the UI: %d", code)
	}
	cancel()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}
