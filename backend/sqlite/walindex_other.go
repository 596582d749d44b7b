//go:build !unix

package sqlite

// walIndex is not read on this platform: Head always asks SQLite.
type walIndex struct{}

type walHeader struct{}

func openWALIndex(string) *walIndex { return nil }

func (w *walIndex) release() {}

func (w *walIndex) header() (walHeader, bool) { return walHeader{}, false }
