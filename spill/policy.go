package spill

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxInlineBytes is the largest result kept inline when a Policy
// does not say: 64 KiB.
const DefaultMaxInlineBytes = 65536

// Policy decides which results are spilled and builds their preview
// (DESIGN §4). The zero Policy is ready to use.
type Policy struct {
	// MaxInlineBytes is the largest result, in bytes, that stays inline
	// (a result of exactly this size stays). 0 or less means
	// DefaultMaxInlineBytes.
	MaxInlineBytes int
	// ReaderTool is the tool that reads spills back; its results are never
	// spilled, so a read of a spill cannot spill again. "" means
	// DefaultReaderTool. Use the name the tool is exposed under (with the
	// server's tool prefix), and the same name in the backend's Tool.
	ReaderTool string
	// Logger receives a warning when a spill fails; nil means slog.Default().
	Logger *slog.Logger
}

// Result is what Policy.Apply made of a tool's result.
type Result struct {
	// Text replaces the result: the result itself when it was not
	// spilled, else Head + Notice + Tail, at most MaxInlineBytes long.
	Text string
	// Spilled reports whether the result was saved and Text is a preview.
	Spilled bool
	// Locator is where the full result was saved, when Spilled.
	Locator Locator
	// Head and Tail are the start and the end of the result that the
	// preview keeps, both cut on UTF-8 boundaries; Notice is
	// "\n\n(Omitted N bytes. Full result stored at: ID. HINT)\n\n". A
	// surface that shows the notice apart (as the MCP server does) uses
	// these three.
	Head, Notice, Tail string
	// Omitted is the number of bytes of the result between Head and Tail.
	Omitted int
}

func (p Policy) maxInline() int {
	if p.MaxInlineBytes <= 0 {
		return DefaultMaxInlineBytes
	}
	return p.MaxInlineBytes
}

func (p Policy) readerTool() string {
	if p.ReaderTool == "" {
		return DefaultReaderTool
	}
	return p.ReaderTool
}

// Apply spills text, the result of tool, when it must: when it is longer
// than MaxInlineBytes, is valid UTF-8, is not a result of the reader tool,
// and is not already a spill preview (IsSpill). Then it saves text with b
// under owner and name (name "" means the tool's name with ".txt") and
// returns a preview: the head and the tail of text, 4 bytes of head for 1
// of tail, around a notice that gives the locator and b's hint, the whole
// within MaxInlineBytes.
//
// When the notice alone does not fit in MaxInlineBytes (a cap of a few
// hundred bytes), the hint is left out of it, and if it still does not fit
// it is cut at the cap on a UTF-8 boundary, with no head and no tail: the
// cap always holds, and the locator is in the Result for the program.
//
// When the save fails, the result stays inline (Text is text and Spilled is
// false) and the failure is logged: a spill is an optimisation, never a
// reason to lose a result.
func (p Policy) Apply(ctx context.Context, b Backend, owner, tool, name, text string) Result {
	limit := p.maxInline()
	if len(text) <= limit || tool == p.readerTool() || !utf8.ValidString(text) || IsSpill(text) {
		return Result{Text: text}
	}
	if name == "" && tool != "" {
		name = tool + ".txt"
	}
	logger := p.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if b == nil {
		logger.WarnContext(ctx, "spill: no backend; result kept inline", "tool", tool, "bytes", len(text))
		return Result{Text: text}
	}
	loc, err := b.Save(ctx, owner, name, text)
	if err != nil {
		logger.WarnContext(ctx, "spill: save failed; result kept inline",
			"tool", tool, "name", name, "bytes", len(text), "error", err)
		return Result{Text: text}
	}
	var head, notice, tail string
	if hf, ok := b.(HintFromer); ok {
		// Sized for the longest hint (numbers of the most digits), then
		// given the line and character where the head stops.
		widest := hf.HintFrom(loc, text, countLines(text), len(text))
		head, notice, tail = preview(text, limit, loc, widest)
		if strings.Contains(notice, widest) {
			from := strings.Count(head, "\n") + 1
			char := 0
			if shown := head[strings.LastIndexByte(head, '\n')+1:]; len(shown) >= limit/2 {
				// A line as long as a preview: go on inside it.
				char = utf8.RuneCountInString(shown)
			}
			notice = strings.Replace(notice, widest, hf.HintFrom(loc, text, from, char), 1)
		}
	} else {
		head, notice, tail = preview(text, limit, loc, b.Hint(loc, text))
	}
	return Result{
		Text:    head + notice + tail,
		Spilled: true,
		Locator: loc,
		Head:    head,
		Notice:  notice,
		Tail:    tail,
		Omitted: len(text) - len(head) - len(tail),
	}
}

const (
	noticeStart = "\n\n(Omitted "
	noticeMid   = " bytes. Full result stored at: "
)

// notice returns the spill notice; without a hint it ends at the locator.
func notice(omitted int, loc Locator, hint string) string {
	s := noticeStart + strconv.Itoa(omitted) + noticeMid + string(loc) + "."
	if hint != "" {
		s += " " + hint
	}
	return s + ")\n\n"
}

// IsSpill reports whether text holds a spill notice, "\n\n(Omitted N bytes.
// Full result stored at: …", so it is (or quotes) a preview that must not
// be spilled again.
func IsSpill(text string) bool {
	for {
		i := strings.Index(text, noticeStart)
		if i < 0 {
			return false
		}
		text = text[i+len(noticeStart):]
		digits := 0
		for digits < len(text) && '0' <= text[digits] && text[digits] <= '9' {
			digits++
		}
		if digits > 0 && strings.HasPrefix(text[digits:], noticeMid) {
			return true
		}
	}
}

// preview splits limit bytes between a head, the notice and a tail. It
// needs len(text) > limit.
func preview(text string, limit int, loc Locator, hint string) (head, note, tail string) {
	// The notice is first sized for the most bytes that can be omitted, so
	// the real one (with a number no longer) keeps the total within limit.
	// When the real number is shorter, the spare bytes go to the preview.
	size := func(omitted int) int { return len(notice(omitted, loc, hint)) }
	if size(len(text)) > limit {
		hint = ""
	}
	if size(len(text)) > limit {
		return "", cutUTF8(notice(len(text), loc, ""), limit), ""
	}
	for sized := len(text); ; {
		budget := limit - size(sized)
		headBudget := budget * 4 / 5
		head = text[:floorBoundary(text, headBudget)]
		tail = text[ceilBoundary(text, len(text)-(budget-headBudget)):]
		omitted := len(text) - len(head) - len(tail)
		if size(omitted) == size(sized) {
			return head, notice(omitted, loc, hint), tail
		}
		sized = omitted // fewer digits: a larger budget, so fewer omitted
	}
}

// floorBoundary returns the largest UTF-8 boundary of s at or before i.
func floorBoundary(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// ceilBoundary returns the smallest UTF-8 boundary of s at or after i.
func ceilBoundary(s string, i int) int {
	for i < len(s) && i > 0 && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// cutUTF8 cuts s to at most n bytes on a UTF-8 boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:floorBoundary(s, n)]
}
