// Package bytesize reads and writes sizes in bytes as people write them:
// 1GiB, 500MB, 1024 (every unit a power of 1024, as satchel's other size
// flags read them).
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

var units = []struct {
	suffix string
	shift  uint
}{
	{"KIB", 10}, {"MIB", 20}, {"GIB", 30}, {"TIB", 40}, {"PIB", 50},
	{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}, {"PB", 50},
	{"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}, {"P", 50}, {"B", 0},
}

// Parse reads a size: a whole number of bytes, optionally followed (with
// or without a space) by B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB or
// P/PB/PiB, in any case. Zero is a size; a negative number, a fraction and
// a size past 2^62 bytes are not.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	var shift uint
	up := strings.ToUpper(t)
	for _, u := range units {
		if strings.HasSuffix(up, u.suffix) {
			t, shift = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.shift
			break
		}
	}
	if t == "" || t[0] == '+' || t[0] == '-' {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with KiB, MiB, GiB or TiB)", s)
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with KiB, MiB, GiB or TiB)", s)
	}
	return n << shift, nil
}

// Format writes n with two decimals in the largest binary unit it
// reaches ("1.00 GiB", "512.50 KiB"), or in bytes below 1 KiB ("512 B").
func Format(n int64) string {
	names := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1<<10 && n > -(1<<10) {
		return fmt.Sprintf("%d B", n)
	}
	i, d := 0, float64(n)/(1<<10)
	for i < len(names)-1 && (d >= 1024 || d <= -1024) {
		i, d = i+1, d/1024
	}
	return fmt.Sprintf("%.2f %s", d, names[i])
}

// Count writes n with commas between thousands: 100,000.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
