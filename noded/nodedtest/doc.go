// Package nodedtest provides a fake ctld node plane for tests of noded and
// of the corral-noded binary. Only tests import it.
package nodedtest
