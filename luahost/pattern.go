package luahost

import (
	"context"
	"fmt"
)

// Lua patterns, as Lua 5.1's lstrlib.c matches them, with one addition:
// the matcher counts its steps and, every few thousand, checks the run's
// context, so a pathological pattern ("(.-)(.-)(.-)...x" on a long
// subject) ends with the run's time limit instead of holding a goroutine
// forever. gopher-lua's own matcher cannot be interrupted
// (docs/decisions/0016-lua-limits.md).

const (
	maxCaptures   = 32
	maxPatternLen = 64 << 10
	checkEvery    = 1 << 12
	capUnfinished = -1
	capPosition   = -2
)

// patternError is a malformed pattern, raised as the Lua error message.
type patternError string

// stopped carries the context's error out of a match.
type stopped struct{ err error }

type capture struct {
	init, len int
}

type matchState struct {
	src, pat string
	level    int
	capture  [maxCaptures]capture
	steps    int
	ctx      context.Context
	depth    int
}

func (ms *matchState) step() {
	ms.steps++
	if ms.steps%checkEvery == 0 && ms.ctx != nil {
		if err := ms.ctx.Err(); err != nil {
			panic(stopped{err})
		}
	}
}

func (ms *matchState) pchar(p int) byte {
	if p < len(ms.pat) {
		return ms.pat[p]
	}
	return 0
}

func (ms *matchState) schar(s int) byte {
	if s < len(ms.src) {
		return ms.src[s]
	}
	return 0
}

func (ms *matchState) classEnd(p int) int {
	c := ms.pchar(p)
	p++
	switch c {
	case '%':
		if p >= len(ms.pat) {
			panic(patternError("malformed pattern (ends with '%')"))
		}
		return p + 1
	case '[':
		if ms.pchar(p) == '^' {
			p++
		}
		for {
			if p >= len(ms.pat) {
				panic(patternError("malformed pattern (missing ']')"))
			}
			c := ms.pat[p]
			p++
			if c == '%' && p < len(ms.pat) {
				p++
			}
			if ms.pchar(p) == ']' {
				break
			}
		}
		return p + 1
	}
	return p
}

func matchClass(c, cl byte) bool {
	var res bool
	lower := cl | 0x20
	switch lower {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || (c >= '0' && c <= '9')
	case 'x':
		res = (c >= '0' && c <= '9') || (lower2(c) >= 'a' && lower2(c) <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'A' && cl <= 'Z' {
		return !res
	}
	return res
}

func lower2(c byte) byte  { return c | 0x20 }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isPunct(c byte) bool {
	return c > 32 && c < 127 && !isAlpha(c) && !(c >= '0' && c <= '9')
}

// matchBracket matches c against the set [p, ec], ec being its ']'.
func (ms *matchState) matchBracket(c byte, p, ec int) bool {
	sig := true
	if ms.pchar(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.pat[p] == '%':
			p++
			if matchClass(c, ms.pchar(p)) {
				return sig
			}
		case ms.pchar(p+1) == '-' && p+2 < ec:
			p += 2
			if ms.pat[p-2] <= c && c <= ms.pat[p] {
				return sig
			}
		case ms.pat[p] == c:
			return sig
		}
	}
	return !sig
}

func (ms *matchState) single(s, p, ep int) bool {
	if s >= len(ms.src) {
		return false
	}
	c := ms.src[s]
	switch ms.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pchar(p+1))
	case '[':
		return ms.matchBracket(c, p, ep-1)
	}
	return ms.pat[p] == c
}

func (ms *matchState) balance(s, p int) int {
	if p+1 >= len(ms.pat) {
		panic(patternError("unbalanced pattern"))
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	b, e, cont := ms.pat[p], ms.pat[p+1], 1
	for s++; s < len(ms.src); s++ {
		ms.step()
		switch ms.src[s] {
		case e:
			cont--
			if cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for ms.single(s+i, p, ep) {
		ms.step()
		i++
	}
	for ; i >= 0; i-- {
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if !ms.single(s, p, ep) {
			return -1
		}
		s++
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	if ms.level >= maxCaptures {
		panic(patternError("too many captures"))
	}
	ms.capture[ms.level] = capture{init: s, len: what}
	ms.level++
	res := ms.match(s, p)
	if res < 0 {
		ms.level--
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := -1
	for i := ms.level - 1; i >= 0; i-- {
		if ms.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		panic(patternError("invalid pattern capture"))
	}
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) matchCapture(s int, l byte) int {
	i := int(l) - '1'
	if i < 0 || i >= ms.level || ms.capture[i].len == capUnfinished {
		panic(patternError("invalid capture index"))
	}
	c := ms.capture[i]
	if len(ms.src)-s >= c.len && ms.src[c.init:c.init+c.len] == ms.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// match returns the end of the match of pat[p:] at src[s:], or -1.
func (ms *matchState) match(s, p int) int {
	ms.step()
	ms.depth++
	defer func() { ms.depth-- }()
	if ms.depth > maxPatternLen {
		panic(patternError("pattern too complex"))
	}
	for {
		if p >= len(ms.pat) {
			return s
		}
		switch ms.pat[p] {
		case '(':
			if ms.pchar(p+1) == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '$':
			if p+1 == len(ms.pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		case '%':
			switch ms.pchar(p + 1) {
			case 'b':
				s = ms.balance(s, p+2)
				if s < 0 {
					return -1
				}
				p += 4
				continue
			case 'f':
				p += 2
				if ms.pchar(p) != '[' {
					panic(patternError("missing '[' after '%f' in pattern"))
				}
				ep := ms.classEnd(p)
				var prev byte
				if s > 0 {
					prev = ms.src[s-1]
				}
				if ms.matchBracket(prev, p, ep-1) || !ms.matchBracket(ms.schar(s), p, ep-1) {
					return -1
				}
				p = ep
				continue
			default:
				if d := ms.pchar(p + 1); d >= '0' && d <= '9' {
					s = ms.matchCapture(s, d)
					if s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		ep := ms.classEnd(p)
		m := ms.single(s, p, ep)
		switch ms.pchar(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
			continue
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if !m {
				return -1
			}
			return ms.maxExpand(s+1, p, ep)
		case '-':
			return ms.minExpand(s, p, ep)
		}
		if !m {
			return -1
		}
		s++
		p = ep
		ms.step()
	}
}

// captureValue is capture i of a match of src[s:e]: a string, or a
// position (1-based) for a position capture.
type captureValue struct {
	str   string
	pos   int
	isPos bool
}

func (ms *matchState) get(i, s, e int) captureValue {
	if i >= ms.level {
		if i == 0 {
			return captureValue{str: ms.src[s:e]}
		}
		panic(patternError("invalid capture index"))
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		panic(patternError("unfinished capture"))
	case capPosition:
		return captureValue{pos: c.init + 1, isPos: true}
	}
	return captureValue{str: ms.src[c.init : c.init+c.len]}
}

// captures returns the captures of a match (the whole match when the
// pattern has none and wholeIfNone).
func (ms *matchState) captures(s, e int, wholeIfNone bool) []captureValue {
	n := ms.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	out := make([]captureValue, n)
	for i := range out {
		out[i] = ms.get(i, s, e)
	}
	return out
}

// protect runs fn, turning a malformed pattern and a stop into errors.
func protect(fn func()) (err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case patternError:
			err = fmt.Errorf("%s", string(v))
		case stopped:
			err = v
		default:
			panic(v)
		}
	}()
	fn()
	return nil
}

func (s stopped) Error() string { return s.err.Error() }
