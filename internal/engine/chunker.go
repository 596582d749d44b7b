package engine

import "math/rand/v2"

// Content-defined chunking (a gear hash, as in FastCDC): a boundary falls
// where the rolling hash of the last bytes has its top bits zero, so a cut
// depends on the content near it, not on its offset. An append or a small
// edit of a large file then leaves most chunks, and their references,
// unchanged: only the chunks around the change are new.
const (
	// singleChunkMax: files up to this size are one chunk. Most agent files
	// are small, and one chunk makes them one read.
	singleChunkMax = 8 << 10
	chunkMin       = 2 << 10
	chunkMax       = 32 << 10
	chunkMask      = (1 << 13) - 1 // about 8 KiB past the minimum
)

var gear = func() (g [256]uint64) {
	r := rand.New(rand.NewPCG(0x5a7c4e1, 0x9e3779b97f4a7c15))
	for i := range g {
		g[i] = r.Uint64()
	}
	return g
}()

// cuts returns the end offsets of the chunks of s (the last is len(s)).
// known says that s[:known] holds no cut: it is the last chunk of a file
// and s is it with text appended. The gear hash at a byte depends only on
// the 64 bytes before it, so the search for the first cut resumes 64 bytes
// before known instead of rescanning the old chunk on every append.
func cuts(s string, known int) []int {
	if len(s) <= singleChunkMax {
		return []int{len(s)}
	}
	var out []int
	start := 0
	for start < len(s) {
		from := chunkMin
		if start == 0 && known-64 > from {
			from = known - 64
		}
		end := nextCut(s[start:], from)
		start += end
		out = append(out, start)
	}
	return out
}

// nextCut returns the end of the chunk that starts s, looking for a cut
// from offset from (at least chunkMin).
func nextCut(s string, from int) int {
	if len(s) <= chunkMin {
		return len(s)
	}
	n := min(len(s), chunkMax)
	if from >= n {
		return n
	}
	var h uint64
	for i := from; i < n; i++ {
		h = h<<1 + gear[s[i]]
		if h>>(64-13)&chunkMask == 0 {
			return i + 1
		}
	}
	return n
}
