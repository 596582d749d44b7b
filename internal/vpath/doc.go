// Package vpath validates workspace paths and matches them against globs.
//
// Every file operation validates its path before it reads or writes
// anything (DESIGN §2.1), so the rules live here once and every surface
// reports the same refusal with the same words. A valid path is relative,
// at most 1024 bytes of UTF-8 text without control characters or
// backslashes, made of non-empty segments that are not "." or "..", that do
// not end in a dot or a space and are not Windows device names: such a
// path can be exported to any real filesystem unchanged.
//
// Globs (DESIGN §2.3) know two wildcards: "*" matches any run of characters
// within one segment and "**", as a whole segment, matches zero or more
// whole segments. Everything else is literal. Shell syntax this grammar does
// not have ("?", "[...]", "{...}", backslash escapes) is refused with a
// message that says so rather than silently matching nothing. Matching is
// iterative and never backtracks: a set-of-states simulation over the
// pattern's segments, with a linear leftmost-first scan inside a segment,
// so it costs at most O(len(pattern) × len(path)) whatever the input.
// [Glob.Prefix] lets a caller scan only the sorted key range that can match.
package vpath
