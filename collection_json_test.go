package satchel

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// stdJSON is encoding/json's output without HTML escaping: what appendJSON
// must write.
func stdJSON(t testing.TB, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote \" backslash \\ slash /", "<&>", "\x00\x01\x1f\x7f", "tab\tnl\ncr\r", "\b\f",
		"é ü 日本 🎉", "\u2028\u2029", "bad \xff utf8 \xc3", json.Number("12345678901234567890"), json.Number("-1.50e+10"),
		0.0, math.Copysign(0, -1), 1.0, -2.5, 0.1, 1e20, 1e21, 1e-6, 1e-7, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64,
		42, int64(-7),
		[]any{}, []any{1.0, "a", nil, []any{true}},
		map[string]any{}, map[string]any{"b": 1.0, "a": map[string]any{"z": nil, "y": []any{"x"}}, "é": "k", "A": 2.0},
		[]string{"x"}, map[string]string{"k": "v"}, struct{ A int }{1},
	}
	for _, v := range values {
		got, err := appendJSON(nil, v)
		if err != nil {
			t.Errorf("%#v: %v", v, err)
			continue
		}
		if want := stdJSON(t, v); string(got) != want {
			t.Errorf("%#v: got %s, want %s", v, got, want)
		}
	}
	if _, err := appendJSON(nil, math.NaN()); err == nil {
		t.Error("NaN encoded")
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\u2028", "\xff", "<script>", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := string(appendString(nil, s))
		if want := stdJSON(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 0.1, 1e21, 1e-7, 123.456, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		got, err := appendFloat(nil, x)
		if err != nil {
			t.Fatal(err)
		}
		if want := stdJSON(t, x); string(got) != want {
			t.Errorf("%v: got %s, want %s", x, got, want)
		}
	})
}

// TestDecodeJSON keeps numbers as sent and refuses trailing data.
func TestDecodeJSON(t *testing.T) {
	v, err := decodeJSON([]byte(` {"n": 1.10, "big": 12345678901234567890} `))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["n"] != json.Number("1.10") || m["big"] != json.Number("12345678901234567890") {
		t.Errorf("numbers: %#v", m)
	}
	for _, in := range []string{`{} {}`, `{} x`, `{`, ``} {
		if _, err := decodeJSON([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
