package spill_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/satchel-dev/satchel/spill"
)

func ExampleSafeName() {
	for _, name := range []string{"report.txt", "../../etc/passwd", ".hidden", "grep output (2).txt", "日本語"} {
		fmt.Println(spill.SafeName(name))
	}
	// Output:
	// report.txt
	// etc-passwd
	// hidden
	// grep-output-2-.txt
	// result.txt
}

// notes is a Backend of one's own: any type with Save, Fetch and Hint.
type notes map[spill.Locator]string

func (n notes) Save(ctx context.Context, owner, name, text string) (spill.Locator, error) {
	loc := spill.Locator(fmt.Sprintf("notes/%d-%s", len(n)+1, spill.SafeName(name)))
	n[loc] = text
	return loc, nil
}

func (n notes) Fetch(ctx context.Context, loc spill.Locator) (string, error) { return n[loc], nil }

func (n notes) Hint(loc spill.Locator, text string) string {
	return fmt.Sprintf("Read it with read_file (path %q).", loc)
}

func ExamplePolicy_Apply() {
	ctx := context.Background()
	backend := notes{}
	policy := spill.Policy{MaxInlineBytes: 300}

	small := policy.Apply(ctx, backend, "session-1", "grep", "", "a short result")
	fmt.Println(small.Spilled, small.Text)

	var big strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&big, "line %03d\n", i) // 900 bytes in all
	}
	r := policy.Apply(ctx, backend, "session-1", "grep", "", big.String())
	// The preview is r.Head + r.Notice + r.Tail, within the cap; the head
	// gets four bytes for each byte of the tail.
	fmt.Println(r.Spilled, r.Locator, len(r.Text), len(r.Head), len(r.Tail))
	fmt.Printf("%q\n", r.Head[len(r.Head)-13:])
	fmt.Printf("%q\n", r.Notice)
	fmt.Printf("%q\n", r.Tail[:10])
	full, _ := backend.Fetch(ctx, r.Locator)
	fmt.Println(full == big.String())
	// Output:
	// false a short result
	// true notes/1-grep.txt 300 148 37
	// "line 016\nline"
	// "\n\n(Omitted 715 bytes. Full result stored at: notes/1-grep.txt. Read it with read_file (path \"notes/1-grep.txt\").)\n\n"
	// "\nline 097\n"
	// true
}
