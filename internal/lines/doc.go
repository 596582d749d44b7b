// Package lines implements the line-aware file operations of DESIGN §2.2
// and §2.3: bounded reads, numbered reads, unique-match replacement, and the
// functions that cap an output and say where to continue.
//
// Line semantics are fixed once here so every surface agrees: a line ends
// at "\n"; a "\r" right before that "\n" is not part of the line; the text
// after the last "\n" is a last line when it is not empty (so a trailing
// newline adds no line) and keeps any "\r" it ends with. A bounded read
// joins its lines with "\n" and has no trailing newline.
//
// These functions run on every read, so they scan with strings.IndexByte
// and touch only the lines a bounded read asks for, and they return a
// substring of the content, without copying, whenever they can.
package lines
