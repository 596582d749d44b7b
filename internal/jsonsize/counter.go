package jsonsize

import "unicode/utf8"

// Counter counts a string given in pieces (an io.Writer), so that content
// read from a stream is measured without being held: after the last Write,
// Total is String of the pieces joined.
type Counter struct {
	n     int64
	carry [utf8.UTFMax]byte // the start of a rune cut by the last piece
	nc    int
}

// Write counts p; it never fails.
func (c *Counter) Write(p []byte) (int, error) {
	n := len(p)
	if c.nc > 0 {
		// Complete the cut rune from p and count it; the carried bytes it
		// does not use (an invalid byte is counted alone) are counted
		// again, ahead of the rest of p.
		k := 0
		for k < len(p) && !utf8.FullRune(c.carry[:c.nc]) {
			c.carry[c.nc] = p[k]
			c.nc++
			k++
		}
		if !utf8.FullRune(c.carry[:c.nc]) {
			return n, nil // p was too short to complete it
		}
		_, w := utf8.DecodeRune(c.carry[:c.nc])
		c.n += int64(String(string(c.carry[:w])) - 2)
		var rest [utf8.UTFMax]byte
		r := copy(rest[:], c.carry[w:c.nc])
		c.nc = 0
		c.Write(rest[:r])
		c.Write(p[k:])
		return n, nil
	}
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	c.n += int64(String(string(p[:cut])) - 2)
	c.nc = copy(c.carry[:], p[cut:])
	return n, nil
}

// Total returns the JSON size of everything written, quotes included.
func (c *Counter) Total() int64 {
	n := c.n + 2
	if c.nc > 0 {
		n += int64(String(string(c.carry[:c.nc])) - 2)
	}
	return n
}
