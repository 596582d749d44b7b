package inspector

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/satchel-dev/satchel"
)

// Config.Git mounts under /git/ beside the inspector (satchel ui --git).
func TestGitMount(t *testing.T) {
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	git := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	in, err := New(Config{Store: st, Git: git, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	in.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/git/s/main.git/info/refs?service=git-upload-pack", nil))
	if rec.Code != http.StatusTeapot {
		t.Errorf("GET /git/...: %d, want the git handler's 418", rec.Code)
	}
	rec = httptest.NewRecorder()
	in.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code == http.StatusTeapot {
		t.Errorf("GET /: reached the git handler")
	}
}
