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
func cuts(s string) []int {
	if len(s) <= singleChunkMax {
		return []int{len(s)}
	}
	var out []int
	start := 0
	for start < len(s) {
		end := nextCut(s[start:])
		start += end
		out = append(out, start)
	}
	return out
}

func nextCut(s string) int {
	if len(s) <= chunkMin {
		return len(s)
	}
	n := min(len(s), chunkMax)
	var h uint64
	for i := chunkMin; i < n; i++ {
		h = h<<1 + gear[s[i]]
		if h>>(64-13)&chunkMask == 0 {
			return i + 1
		}
	}
	return n
}
