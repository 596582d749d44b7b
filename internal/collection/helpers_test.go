package collection

import (
	"slices"
	"time"
)

var timeZero = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func slicesSortFunc(s []string, cmp func(a, b string) int) { slices.SortFunc(s, cmp) }
