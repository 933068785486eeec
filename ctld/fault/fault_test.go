package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/corral-hpc/corral/ctld/fault"
)

func TestKinds(t *testing.T) {
	err := fmt.Errorf("cancel: %w", fault.Errorf(fault.NotFound, "job %d does not exist", 7))
	if !errors.Is(err, fault.NotFound) || errors.Is(err, fault.Conflict) {
		t.Errorf("errors.Is on %v: wrong kind", err)
	}
	if got := fault.KindOf(err); got != fault.NotFound {
		t.Errorf("KindOf = %v, want not found", got)
	}
	if got := fault.KindOf(errors.New("disk full")); got != fault.Internal {
		t.Errorf("KindOf(plain error) = %v, want internal", got)
	}
	if err.Error() != "cancel: job 7 does not exist" {
		t.Errorf("message %q", err)
	}
}
