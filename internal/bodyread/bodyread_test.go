package bodyread

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// A body that stops arriving fails at the deadline with a TimeoutError
// that matches ErrTimeout and os.ErrDeadlineExceeded; a whole body is read
// as it is.
func TestDeadline(t *testing.T) {
	errs := make(chan error, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Deadline(w, r, 100*time.Millisecond)
		_, err := io.ReadAll(r.Body)
		errs <- err
	}))
	t.Cleanup(srv.Close)

	if resp, err := http.Post(srv.URL, "text/plain", nil); err == nil {
		resp.Body.Close()
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Errorf("an empty body: %v", err)
	}
	err = <-errs
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || te.Limit != 100*time.Millisecond {
		t.Fatalf("a body that stops: %v, want a TimeoutError", err)
	}
	if got := err.Error(); got != "the request body did not arrive within 100ms (--body-read-timeout)" {
		t.Errorf("message %q", got)
	}
}
