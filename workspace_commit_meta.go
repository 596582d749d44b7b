package satchel

import (
	"strconv"

	"github.com/satchel-dev/satchel/internal/jsonquote"
)

// commitMeta is what every commit records (DESIGN §2.6). It is stored as
// the JSON that json.Marshal gives it; appendMeta writes that JSON by hand
// (every commit makes one, and reflection cost a write about 2% of its
// time), and commitOf reads it back with json.Unmarshal.
type commitMeta struct {
	Op      string `json:"op"`
	Summary string `json:"summary"`
	Actor
	// Key is the idempotency key of the call that made the commit.
	Key string `json:"idempotency_key,omitempty"`
	// Parent is a merge commit's second parent: the commit merged.
	Parent *CommitRef `json:"parent,omitempty"`
}

// CommitRef names a commit of a thread of the same scope.
type CommitRef struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// String returns THREAD@SEQ.
func (r CommitRef) String() string { return r.Thread + "@" + strconv.FormatInt(r.Seq, 10) }

// maxSummary is how many bytes of a summary a commit keeps; a longer one
// is cut there (perhaps inside a character) and ends with "…".
const maxSummary = 200

// summary collects a commit's summary, keeping its first maxSummary bytes
// and whether there were more, without allocating.
type summary struct {
	b   [maxSummary + len("…")]byte
	n   int
	cut bool
}

func (s *summary) add(x string) {
	k := copy(s.b[s.n:maxSummary], x)
	s.n += k
	s.cut = s.cut || k < len(x)
}

// bytes returns the summary as stored: cut, with "…", when it was longer
// than maxSummary bytes.
func (s *summary) bytes() []byte {
	if s.cut {
		return append(s.b[:maxSummary], "…"...)
	}
	return s.b[:s.n]
}

// opNote is one operation of a commit, as its summary names it:
// "op path", or "op path -> to" for a move.
type opNote struct{ op, path, to string }

// ops adds ops to s, separated by "; ".
func (s *summary) ops(ops []opNote) {
	for i, o := range ops {
		if i > 0 {
			s.add("; ")
		}
		s.add(o.op)
		s.add(" ")
		s.add(o.path)
		if o.to != "" {
			s.add(" -> ")
			s.add(o.to)
		}
	}
}

// meta returns the metadata of a commit made by the workspace.
func (w *Workspace) meta(op, sum string) []byte {
	var s summary
	s.add(sum)
	return appendMeta(nil, op, s.bytes(), w.actor, w.key)
}

// metaOps is meta for a commit of ops, summarized as "op path; op path".
func (w *Workspace) metaOps(op string, ops []opNote) []byte {
	var s summary
	s.ops(ops)
	return appendMeta(nil, op, s.bytes(), w.actor, w.key)
}

// appendMeta appends what json.Marshal writes for commitMeta{op, sum, a,
// key}.
func appendMeta(b []byte, op string, sum []byte, a Actor, key string) []byte {
	if b == nil {
		// The keys, quotes and punctuation take 58 bytes; escapes may grow it.
		b = make([]byte, 0, 64+len(op)+len(sum)+len(a.Agent)+len(a.Credential)+len(a.Via))
	}
	b = append(b, `{"op":`...)
	b = appendHTMLString(b, op)
	b = append(b, `,"summary":`...)
	b = appendHTMLString(b, sum)
	if a.Agent != "" {
		b = append(b, `,"agent":`...)
		b = appendHTMLString(b, a.Agent)
	}
	if a.Credential != "" {
		b = append(b, `,"credential":`...)
		b = appendHTMLString(b, a.Credential)
	}
	if a.Via != "" {
		b = append(b, `,"via":`...)
		b = appendHTMLString(b, a.Via)
	}
	if a.Client != "" {
		b = append(b, `,"client":`...)
		b = appendHTMLString(b, a.Client)
	}
	if a.ClientVersion != "" {
		b = append(b, `,"client_version":`...)
		b = appendHTMLString(b, a.ClientVersion)
	}
	if key != "" {
		b = append(b, `,"idempotency_key":`...)
		b = appendHTMLString(b, key)
	}
	return append(b, '}')
}

// appendHTMLString quotes s as json.Marshal does: appendString's escapes,
// and also <, > and & (encoding/json's HTML escaping, on by default).
func appendHTMLString[S string | []byte](b []byte, s S) []byte {
	return jsonquote.Append(b, s, true)
}
