package satchel

import (
	"sync"

	"github.com/satchel-dev/satchel/internal/envelope"
)

// Run is one run of an agent (one server session, one script run): it
// carries the nonce of the untrusted envelope (DESIGN §5), fixed for the
// run and unguessable by the text it wraps.
type Run struct {
	nonce envelope.Nonce
}

// NewRun returns a run with a fresh 128-bit nonce from a strong random
// source.
func NewRun() (*Run, error) {
	n, err := envelope.NewNonce()
	if err != nil {
		return nil, err
	}
	return &Run{nonce: n}, nil
}

// Nonce returns the run's nonce: 32 lowercase hex digits.
func (r *Run) Nonce() string { return r.nonce.String() }

// Untrusted wraps stored text before it goes back into a prompt: a one-line
// preface saying the text is data, not instructions, then the text between
// <untrusted_input_NONCE> tags with every "<" written as "&lt;", so no
// content can close the envelope early or open a tag of its own.
func (r *Run) Untrusted(s string) string { return envelope.Wrap(r.nonce, s) }

var (
	processRunOnce sync.Once
	processRun     *Run
	processRunErr  error
)

// Untrusted wraps s with the envelope of this process's run (its nonce is
// drawn once, on first use). It panics only if the system's random source
// fails. Servers that host many runs use NewRun per session instead.
func Untrusted(s string) string {
	processRunOnce.Do(func() { processRun, processRunErr = NewRun() })
	if processRunErr != nil {
		panic("satchel: no random source for the untrusted envelope: " + processRunErr.Error())
	}
	return processRun.Untrusted(s)
}
