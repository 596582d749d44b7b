package backend

// As finds capability T of b (one of the interfaces of capabilities.go,
// Documents, or a backend's own type), as errors.As finds an error in a
// chain: b itself when it implements T, else, when b is a wrapper (it has
// a method Unwrap() Backend), what b wraps, and so on down. A wrapper
// that hides T (a Hider whose Hides reports true for a *T) ends the
// search: T is then not found, whatever the wrappers below offer. Every
// caller looks capabilities up with As, so that a wrapper (a test's
// fault injector, the conformance suite's hiders) need declare only what
// it changes.
func As[T any](b Backend) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		if h, ok := b.(Hider); ok && h.Hides((*T)(nil)) {
			break
		}
		u, ok := b.(interface{ Unwrap() Backend })
		if !ok {
			break
		}
		b = u.Unwrap()
	}
	var zero T
	return zero, false
}

// A Hider is a wrapper that hides capabilities of the backend it wraps
// from As: Hides reports whether it hides the capability whose nil
// pointer it is given (a (*backend.Forker)(nil) asks about Forker).
type Hider interface {
	Hides(capability any) bool
}
