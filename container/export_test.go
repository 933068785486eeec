package container

// SetStartHook makes Start run hook just before a stoppable start;
// restore undoes it.
func SetStartHook(hook func()) (restore func()) {
	startHook = hook
	return func() { startHook = nil }
}

// BindViewByRunc makes Start leave the host view's binds to runc, as it
// did before inJobRoot: the view must not change (TestViewSameAsRunc).
func BindViewByRunc(s *Spec) { s.bindsByRunc = true }
