package satcheltest

// Hiders hide one optional capability of a backend (package backend,
// capabilities.go), so that a backend's test can run the suite on the
// fallback that satchel takes without it. Embed one beside the backend, at
// the same depth: the two methods of one name are then ambiguous, and the
// wrapper's method set has neither, while every other method of the
// backend is promoted as before.
//
//	type noFork struct {
//		*mybackend.Backend
//		satcheltest.HideForker
//	}
//
//	func TestConformance(t *testing.T) {
//		satcheltest.Run(t, open)
//		t.Run("NoForker", func(t *testing.T) {
//			satcheltest.Run(t, func(t *testing.T) backend.Backend { return noFork{Backend: open(t)} })
//		})
//	}
//
// The hiders' methods exist only to make the names ambiguous: nothing can
// call them through the wrapper.

// HideForker hides backend.Forker.
type HideForker struct{}

// Fork is the name it hides.
func (HideForker) Fork() {}

// HideCheckpointResolver hides backend.CheckpointResolver.
type HideCheckpointResolver struct{}

// CheckpointCommit is the name it hides.
func (HideCheckpointResolver) CheckpointCommit() {}

// HidePartsAppender hides backend.PartsAppender.
type HidePartsAppender struct{}

// AppendParts is the name it hides.
func (HidePartsAppender) AppendParts() {}

// HidePartsReader hides backend.PartsReader.
type HidePartsReader struct{}

// PackParts is the name it hides.
func (HidePartsReader) PackParts() {}

// HidePacksReader hides backend.PacksReader: every pack is then read
// on its own.
type HidePacksReader struct{}

// Packs is the name it hides.
func (HidePacksReader) Packs() {}

// HideVacuumer hides backend.Vacuumer.
type HideVacuumer struct{}

// Vacuum is the name it hides.
func (HideVacuumer) Vacuum() {}

// HideDocMaps hides backend.DocMaps: documents then go to the backend as
// JSON and come back as JSON.
type HideDocMaps struct{}

// KeepsDocMaps is the name it hides.
func (HideDocMaps) KeepsDocMaps() {}

// HideHeadsLister hides backend.HeadsLister.
type HideHeadsLister struct{}

// ThreadHeads is the name it hides.
func (HideHeadsLister) ThreadHeads() {}

// HideDocCounter hides backend.DocCounter: the documents of a scope are
// then not counted.
type HideDocCounter struct{}

// DocsByScope is the name it hides.
func (HideDocCounter) DocsByScope() {}

// HideDocBatcher hides backend.DocBatcher: every set is then its own
// transaction.
type HideDocBatcher struct{}

// ReplaceDocs is the name it hides.
func (HideDocBatcher) ReplaceDocs() {}

// HideConcurrentAppender hides backend.ConcurrentAppender.
type HideConcurrentAppender struct{}

// AppendConcurrency is the name it hides.
func (HideConcurrentAppender) AppendConcurrency() {}

// HideRemote hides backend.Remote: commits are then chained as on an
// embedded database.
type HideRemote struct{}

// Remote is the name it hides.
func (HideRemote) Remote() {}

// HideKeys hides backend.Keys: satchel then refuses idempotency keys and
// logs no document changes.
type HideKeys struct{}

// KeyRecord is the name it hides.
func (HideKeys) KeyRecord() {}

// HideThreadLocker hides backend.ThreadLocker: every writer is then
// optimistic.
type HideThreadLocker struct{}

// LockThread is the name it hides.
func (HideThreadLocker) LockThread() {}
