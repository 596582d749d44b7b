package luahost

import (
	"bytes"
	"reflect"
	"testing"
)

// TestFrameRoundTrip: a frame comes out of the pipe as it went in.
func TestFrameRoundTrip(t *testing.T) {
	var b bytes.Buffer
	c := newConn(&b, &b)
	in := []*frame{
		{id: 1, op: opWrite, ws: 1, s: []string{"a.md", "content", ""}, n: []int64{0}},
		{id: 1 << 40, op: opRead, ws: 7, s: []string{""}, n: []int64{-1, 0, 1 << 62}},
		{op: opHello, s: []string{}, n: []int64{}},
	}
	for _, f := range in {
		if err := c.send(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range in {
		got, err := c.recv()
		if err == nil && got.size <= 0 {
			t.Fatalf("recv gave a frame of size %d", got.size)
		}
		if got != nil {
			got.size = 0 // recv's own
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v %v, want %+v", got, err, want)
		}
	}
}

// FuzzFrame: any bytes decode to a frame or errFrame, never a panic, and
// a decoded frame encodes back to the same bytes.
func FuzzFrame(f *testing.F) {
	var b bytes.Buffer
	c := newConn(&b, &b)
	_ = c.send(&frame{id: 3, op: opDocSet, ws: 1, s: []string{"notes", `{"a":1}`, "k"}, n: []int64{1}})
	f.Add(b.Bytes()[4:])
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 200, 200, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := decodeFrame(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := newConn(&out, &out).send(fr); err != nil {
			t.Fatal(err)
		}
		again, err := decodeFrame(out.Bytes()[4:])
		if err != nil || !reflect.DeepEqual(again, fr) {
			t.Fatalf("re-decoded %+v %v, want %+v", again, err, fr)
		}
	})
}
