package container

// SetStartHook makes Start run hook just before a stoppable start;
// restore undoes it.
func SetStartHook(hook func()) (restore func()) {
	startHook = hook
	return func() { startHook = nil }
}
