package mcpserver

import (
	stdjson "encoding/json"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/satchel-dev/satchel/internal/bench"
)

// unquoteCases are string values as clients send them: unquote must
// read each as the JSON decoder does, or leave it to the decoder.
var unquoteCases = []string{
	`""`, `"a"`, `"plain text"`, `"a\nb\tc\rd\"e\\f\/g\bh\fi"`, `"\\"`, `"\\\\n"`, `"ends with \\"`,
	`"\u003cdiv\u003e \u0026amp; \u00e9\u2028\u0000\u001f"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\uD83D\uDE00"`,
	`"\u00E9\u00e9"`, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"bad \xff utf-8\"", "\"\xed\xa0\x80\"",
	`"\u12"`, `"\x"`, `"\u"`, `"trailing\"`, `"a"b"`, "\"\x01\"", `5`, `null`, `{"a":1}`, `"`,
}

func TestUnquote(t *testing.T) {
	content, _ := stdjson.Marshal(bench.W1Content(1, 7))
	for _, c := range append(unquoteCases, string(content)) {
		checkUnquote(t, []byte(c))
	}
	// encoding/json writes <, >, & and U+2028 escaped: the fast path
	// takes them.
	if _, ok := unquote([]byte(`"\u003ca\u003e\n"`)); !ok {
		t.Error("unquote left a plain \\u escape to the decoder")
	}
	if _, ok := unquote(content); !ok {
		t.Error("unquote left W1's content to the decoder")
	}
}

func checkUnquote(t *testing.T, v []byte) {
	t.Helper()
	// As parseArgs gets the value: what the decoder accepted in an object.
	a := parseArgs("t", append(append([]byte(`{"k":`), v...), '}'), []string{"k"})
	if a.bad {
		return
	}
	v = a.raw["k"]
	got, ok := unquote(v)
	if !ok {
		return
	}
	var want string
	if err := json.Unmarshal(v, &want); err != nil {
		t.Errorf("unquote(%q) = %q, the decoder refuses it: %v", v, got, err)
		return
	}
	if got != want {
		t.Errorf("unquote(%q) = %q, the decoder reads %q", v, got, want)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkUnquote(t, []byte(s))
		// And the same text as a client would encode it.
		enc, _ := stdjson.Marshal(s)
		checkUnquote(t, enc)
	})
}
