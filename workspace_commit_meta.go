package satchel

import (
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/engine"
)

// commitMeta is what every commit records (DESIGN §2.6). It is stored as
// the JSON that json.Marshal gives it; appendMeta writes that JSON by hand
// (engine.AppendMeta), and commitOf reads it back with json.Unmarshal.
type commitMeta struct {
	Op      string `json:"op"`
	Summary string `json:"summary"`
	Actor
	// Key is the idempotency key of the call that made the commit.
	Key string `json:"idempotency_key,omitempty"`
	// Own is set when the store wrote the summary from the commit's own
	// changes where a caller's text may stand instead: a batch's list of
	// its operations (not Batch.Summarize's text, nor a git commit's
	// subject), a publish's "publish THREAD@SEQ" (not the caller's
	// summary). redact shows a caller whose rules hide paths no summary
	// of those ops without it.
	Own bool `json:"own,omitempty"`
	// Parent is a merge commit's second parent: the commit merged.
	Parent *CommitRef `json:"parent,omitempty"`
	// Git is the git commit a pushed or imported commit came from.
	Git *GitOrigin `json:"git,omitempty"`
}

// CommitRef names a commit of a thread of the same scope.
type CommitRef struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// String returns THREAD@SEQ.
func (r CommitRef) String() string { return r.Thread + "@" + strconv.FormatInt(r.Seq, 10) }

// opNote is one operation of a commit, as its summary names it:
// "op path", or "op path -> to" for a move.
type opNote struct{ op, path, to string }

// addOps adds ops to s, separated by "; ".
func addOps(s *engine.Summary, ops []opNote) {
	for i, o := range ops {
		if i > 0 {
			s.Add("; ")
		}
		s.Add(o.op)
		s.Add(" ")
		s.Add(o.path)
		if o.to != "" {
			s.Add(" -> ")
			s.Add(o.to)
		}
	}
}

// meta returns the metadata of a commit made by the workspace.
func (w *Workspace) meta(op, sum string) []byte {
	var s engine.Summary
	s.Add(sum)
	return appendMeta(nil, op, s.Bytes(), w.actor, w.key)
}

// metaOps is meta for a commit of ops, summarized as "op path; op path".
// A batch's and a spill's (of many operations) say the store wrote them
// (own) when no path holds "; ", which would make the list read as other
// operations.
func (w *Workspace) metaOps(op string, ops []opNote) []byte {
	var s engine.Summary
	addOps(&s, ops)
	if op != "batch" && op != "spill" {
		return appendMeta(nil, op, s.Bytes(), w.actor, w.key)
	}
	for _, o := range ops {
		if strings.Contains(o.path, "; ") || strings.Contains(o.to, "; ") {
			return appendMeta(nil, op, s.Bytes(), w.actor, w.key)
		}
	}
	// Room for the mark too, so that it costs no second allocation.
	a := w.actor
	b := make([]byte, 0, 96+len(op)+len(s.Bytes())+len(a.Agent)+len(a.Credential)+len(a.Via)+len(a.Client)+len(a.ClientVersion)+len(w.key))
	return markOwn(appendMeta(b, op, s.Bytes(), w.actor, w.key))
}

// markOwn adds "own":true to meta, written by appendMeta (commitMeta's
// Own, which json.Marshal writes after the idempotency key).
func markOwn(meta []byte) []byte {
	return append(meta[:len(meta)-1], `,"own":true}`...)
}

// appendMeta appends what json.Marshal writes for commitMeta{op, sum, a,
// key}.
func appendMeta(b []byte, op string, sum []byte, a Actor, key string) []byte {
	return engine.AppendMeta(b, op, sum, engine.Author(a), key)
}
