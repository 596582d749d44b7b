package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newFSReadCmd(a *app) *cobra.Command {
	var (
		start, end, maxChars int
		numbered             bool
		at                   string
	)
	cmd := &cobra.Command{
		Use:   "read PATH",
		Short: "Print a file, or some of its lines",
		Long: `Print the file at PATH. Without bounds, the content byte for byte when
standard output is not a terminal (a file that does not end with a newline
gets none); on a terminal a missing final newline is added, so the prompt
starts on a line of its own.

--start N and --end N read lines N to M (1-based, inclusive), each printed
as a line, ending with a newline; --end defaults to the last line and is
clamped to it; a start past the last line prints nothing. --start 0 and an
--end without --start are refused. --numbered prefixes each line with its
number (" 9| ..."). --at REF reads at a retained commit (a sequence number
or a checkpoint). --max-chars N caps the output at N characters and says on
standard error where to continue.

With --json, the ReadResult: {"text": ...}, plus "truncated", "next_line"
and "notice" when --max-chars cut it.`,
		Example: `  satchel fs read notes/a.md
  satchel fs read notes/a.md --start 20 --end 40 --numbered
  satchel fs read notes/a.md --at draft-1
  satchel fs read big.log --max-chars 10000`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("max-chars", maxChars); err != nil {
				return err
			}
			f := cmd.Flags()
			if f.Changed("end") && !f.Changed("start") {
				return &satchel.Error{Kind: satchel.ErrInvalidRange, Msg: "--end requires --start"}
			}
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			res, err := r.ReadWith(ctx, args[0], satchel.ReadOptions{
				Bounds: satchel.Bounds{
					Start: start, End: end,
					HasStart: f.Changed("start"), HasEnd: f.Changed("end"),
				},
				Numbered: numbered,
				MaxChars: maxChars,
			})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(res)
			}
			out := res.Text
			lines := f.Changed("start") || numbered
			if out != "" && !strings.HasSuffix(out, "\n") && (lines || isTerminal(a.stdout)) {
				out += "\n"
			}
			if err := text(out)(a.stdout); err != nil {
				return err
			}
			if res.Truncated {
				a.notice("%s", res.Notice)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&start, "start", 0, "first line to read, from `N` = 1")
	f.IntVar(&end, "end", 0, "last line to read, `N` (inclusive; needs --start)")
	f.BoolVar(&numbered, "numbered", false, "prefix each line with its line number")
	f.StringVar(&at, "at", "", "read at commit `REF` (a sequence number or a checkpoint name)")
	f.IntVar(&maxChars, "max-chars", 0, "print at most `N` characters (0: no cap)")
	return cmd
}
