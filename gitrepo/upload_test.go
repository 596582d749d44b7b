package gitrepo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/storage/memory"
)

func pkts(lines ...string) []byte {
	var b bytes.Buffer
	e := pktline.NewEncoder(&b)
	for _, l := range lines {
		if l == "" {
			_ = e.Flush()
		} else {
			_ = e.EncodeString(l)
		}
	}
	return b.Bytes()
}

const h1 = "0123456789abcdef0123456789abcdef01234567"

func TestParseUpload(t *testing.T) {
	req, err := parseUpload(pkts("want "+h1+" multi_ack_detailed agent=git/2.39\n", "", "have "+h1+"\n", "done\n"))
	if err != nil || len(req.wants) != 1 || len(req.haves) != 1 || !req.done || req.wants[0].String() != h1 {
		t.Fatalf("%+v %v", req, err)
	}
	for _, bad := range [][]byte{
		pkts("have "+h1+"\n", "done\n"),            // no want
		pkts("want " + strings.ToUpper(h1) + "\n"), // not lowercase hex
		pkts("want " + h1[:39] + "\n"),             // short
		pkts("want "+h1+"\n", "deepen 1\n"),        // shallow
		pkts("want "+h1+"\n", "frobnicate\n"),      // unknown
		[]byte("zzzz"),                             // not a pkt-line
	} {
		if _, err := parseUpload(bad); err == nil {
			t.Errorf("parseUpload(%q) accepted it", bad)
		}
	}
}

func FuzzParseUpload(f *testing.F) {
	f.Add(pkts("want "+h1+" multi_ack_detailed\n", "", "have "+h1+"\n", "done\n"))
	f.Add(pkts("want "+h1+"\n", "", ""))
	f.Add([]byte("0009done\n0000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parseUpload(b)
		if err != nil {
			return
		}
		if len(req.wants) == 0 {
			t.Fatalf("%q: accepted without a want", b)
		}
		for _, h := range append(req.wants, req.haves...) {
			if !bytes.Contains(b, []byte(h.String())) {
				t.Fatalf("%q: hash %s is not in the request", b, h)
			}
		}
	})
}

// smallPack is a pack of one blob of n zero bytes.
func smallPack(t testing.TB, n int) []byte {
	st := memory.NewStorage()
	h, err := putBlob(st, string(make([]byte, n)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := packfile.NewEncoder(&b, st, false).Encode([]plumbing.Hash{h}, 0); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckPackSize(t *testing.T) {
	p := smallPack(t, 1<<20)
	if err := checkPackSize(p, 2<<20); err != nil {
		t.Fatalf("a pack of 1 MiB under a bound of 2 MiB: %v", err)
	}
	if err := checkPackSize(p, 1<<19); err == nil || !strings.Contains(err.Error(), "once inflated") {
		t.Fatalf("a pack of 1 MiB under a bound of 512 KiB: %v", err)
	}
}

func FuzzCheckPackSize(f *testing.F) {
	f.Add(smallPack(f, 100))
	f.Add(smallPack(f, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = checkPackSize(b, 1<<16) // must neither panic nor hang
	})
}
