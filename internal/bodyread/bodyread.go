// Package bodyread bounds the time a request's body may take to arrive:
// a client that sends its headers and then a byte now and then holds a
// connection, a goroutine and whatever the server reserved for it, for as
// long as it likes, unless the body has a deadline. The MCP server over
// HTTP and the inspector give every body one (--body-read-timeout).
package bodyread

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// ErrTimeout is matched (errors.Is) by the error of a body read that the
// deadline stopped.
var ErrTimeout = errors.New("request body not received in time")

// TimeoutError is the error of a body read that the deadline stopped.
type TimeoutError struct {
	Limit time.Duration // the deadline, after the request's headers
	Err   error         // the connection's error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s (--body-read-timeout)", e.Limit)
}

// Is matches ErrTimeout and os.ErrDeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == os.ErrDeadlineExceeded
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Deadline gives r's body d to arrive, from now: it sets the connection's
// read deadline, which net/http clears once the body has been read to its
// end (the server then watches for the client to leave while the handler
// answers), so that a handler may take its time to answer. A read the
// deadline stops fails with a *TimeoutError. A request with no body, or a
// ResponseWriter that cannot set deadlines (httptest.ResponseRecorder), is
// left as it is.
func Deadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)); err != nil {
		return
	}
	r.Body = &body{ReadCloser: r.Body, limit: d}
}

type body struct {
	io.ReadCloser
	limit time.Duration
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, &TimeoutError{Limit: b.limit, Err: err}
	}
	return n, err
}
