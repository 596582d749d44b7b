package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBinaryFiles: write_file takes base64; read_file returns an image as
// image content and other binary files as a notice; stat_file reports
// the type; grep skips binary files and says how many.
func TestBinaryFiles(t *testing.T) {
	st := newStore(t)
	c, _ := newClient(t, Config{Store: st})
	pic := pngBytes(t)
	blob := []byte("\x00\x01\x02 not text \xff")
	c.is("write_file", map[string]any{"path": "pic.png", "content": base64.StdEncoding.EncodeToString(pic), "encoding": "base64"},
		"wrote "+strconv.Itoa(len(pic))+" bytes to pic.png")
	c.ok("write_file", map[string]any{"path": "data.bin", "content": base64.StdEncoding.EncodeToString(blob), "encoding": "base64"})
	c.ok("write_file", map[string]any{"path": "zero.txt", "content": "text with a NUL \x00 match"})
	c.ok("write_file", map[string]any{"path": "plain.txt", "content": "a match\n"})

	// The bytes are stored exactly.
	ws, err := st.Workspace(context.Background(), "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][]byte{"pic.png": pic, "data.bin": blob} {
		if got, err := ws.Read(context.Background(), p); err != nil || got != string(want) {
			t.Errorf("%s stored as %q (%v)", p, got, err)
		}
	}

	r := c.call("read_file", map[string]any{"path": "pic.png"})
	if r.IsError || len(r.Content) != 1 {
		t.Fatalf("read_file of an image: %+v", r)
	}
	im, ok := r.Content[0].(*mcp.ImageContent)
	if !ok || im.MIMEType != "image/png" || !bytes.Equal(im.Data, pic) {
		t.Fatalf("read_file of an image: %T %+v", r.Content[0], r.Content[0])
	}
	if m := structured(t, r); m["binary"] != true || m["type"] != "image/png" {
		t.Errorf("structured %v", m)
	}

	c.is("read_file", map[string]any{"path": "data.bin"},
		"[data.bin is a binary file: "+strconv.Itoa(len(blob))+" bytes, application/octet-stream; read_file returns text and images only]")
	c.is("read_file", map[string]any{"path": "zero.txt", "numbered": false},
		"[zero.txt is a binary file: 23 bytes, application/octet-stream; read_file returns text and images only]")

	if got := c.ok("stat_file", map[string]any{"path": "pic.png"}); !strings.HasSuffix(got, "\ntype: image/png") {
		t.Errorf("stat_file of an image: %q", got)
	}
	if got := c.ok("stat_file", map[string]any{"path": "plain.txt"}); !strings.HasSuffix(got, "\ntype: text/plain; charset=utf-8") {
		t.Errorf("stat_file of text: %q", got)
	}

	r = c.is("grep", map[string]any{"pattern": "match"}, "plain.txt:1:a match", "[skipped 3 binary files]")
	if m := structured(t, r); m["skipped_binary"] != float64(3) {
		t.Errorf("grep structured %v", m)
	}

	c.refused("write_file", map[string]any{"path": "x", "content": "not base64!", "encoding": "base64"},
		"content is not valid base64: illegal base64 data at input byte 3")
	c.refused("write_file", map[string]any{"path": "x", "content": "a", "encoding": "latin1"},
		`encoding must be "utf-8" or "base64", was "latin1"`)
}
