package shim

// SetOpeningHook makes every launch run hook before it opens the job's
// files (a file system that hangs); restore undoes it.
func SetOpeningHook(hook func()) (restore func()) {
	openingHook = hook
	return func() { openingHook = nil }
}

// SetHomeHook makes every launch run hook before it looks at the user's
// home; restore undoes it.
func SetHomeHook(hook func()) (restore func()) {
	homeHook = hook
	return func() { homeHook = nil }
}
