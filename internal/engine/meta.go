package engine

import "github.com/satchel-dev/satchel/internal/jsonquote"

// A commit's metadata (DESIGN §2.6) is the JSON object json.Marshal gives
// package satchel's record of it: {"op", "summary", then the author's
// fields and the idempotency key, each left out when empty}. AppendMeta
// writes that JSON by hand (every commit makes one, and reflection cost a
// write about 2% of its time); package satchel reads it back with
// json.Unmarshal.

// Author is who made a commit, and through what, as its metadata records
// it (package satchel's Actor, field for field).
type Author struct {
	Agent, Credential, Via, Client, ClientVersion string
}

// MaxSummary is how many bytes of a summary a commit keeps; a longer one
// is cut there (perhaps inside a character) and ends with "…".
const MaxSummary = 200

// Summary collects a commit's summary, keeping its first MaxSummary bytes
// and whether there were more, without allocating.
type Summary struct {
	b   [MaxSummary + len("…")]byte
	n   int
	cut bool
}

// Add appends x to the summary.
func (s *Summary) Add(x string) {
	k := copy(s.b[s.n:MaxSummary], x)
	s.n += k
	s.cut = s.cut || k < len(x)
}

// Bytes returns the summary as stored: cut, with "…", when it was longer
// than MaxSummary bytes.
func (s *Summary) Bytes() []byte {
	if s.cut {
		return append(s.b[:MaxSummary], "…"...)
	}
	return s.b[:s.n]
}

// AppendMeta appends to b the metadata of a commit: what json.Marshal
// writes for satchel's record {op, sum, a, key}.
func AppendMeta(b []byte, op string, sum []byte, a Author, key string) []byte {
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
