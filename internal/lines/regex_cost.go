package lines

import (
	"regexp/syntax"

	"github.com/satchel-dev/satchel/internal/errs"
)

// MaxRegexProgram bounds the size of a grep pattern once its repetitions
// are expanded (a{100} costs 100, (a{100}){100} costs 10,000): RE2 runs in
// time linear in the text, but the factor is the program's size.
const MaxRegexProgram = 20000

// RegexCost estimates the number of instructions RE2 compiles re into,
// multiplying nested repetition counts; it saturates at limit+1.
func RegexCost(re *syntax.Regexp, limit int) int {
	sat := func(n int) int { return min(n, limit+1) }
	switch re.Op {
	case syntax.OpLiteral:
		return sat(len(re.Rune) + 1)
	case syntax.OpConcat, syntax.OpAlternate:
		n := 1
		for _, s := range re.Sub {
			n = sat(n + RegexCost(s, limit) + 1)
		}
		return n
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return sat(RegexCost(re.Sub[0], limit) + 2)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		sub := RegexCost(re.Sub[0], limit)
		if times > 0 && sub > (limit+1)/times {
			return limit + 1
		}
		return sat(times*sub + 2)
	}
	return 1
}

// CheckRegexCost refuses a pattern whose expanded program exceeds
// MaxRegexProgram, and returns the cost otherwise.
func CheckRegexCost(expr string) (int, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, nil // regexp.Compile reports it with its own words
	}
	cost := RegexCost(re, MaxRegexProgram)
	if cost > MaxRegexProgram {
		return 0, errs.New(errs.ErrInvalidPattern,
			"invalid regex: its repetitions expand to over %d instructions (counts multiply: (a{100}){100} is 10000); use smaller counts", MaxRegexProgram)
	}
	return max(cost, 1), nil
}
