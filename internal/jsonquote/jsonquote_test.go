package jsonquote

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppend: Append writes what encoding/json writes for the same string,
// with HTML escaping on and off, for any bytes.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "line\nend\t\"q\" \\", "<a&b>", "\x00\x1f\x7f", "\u2028\u2029", "caf\xc3\xa9 \xff\xfe", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			w := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
			if got := Append(nil, s, html); !bytes.Equal(got, w) {
				t.Errorf("html=%v %q: got %s, want %s", html, s, got, w)
			}
			if got := Append([]byte("x"), []byte(s), html); !bytes.Equal(got[1:], w) {
				t.Errorf("html=%v %q as bytes: got %s, want %s", html, s, got[1:], w)
			}
		}
	})
}
