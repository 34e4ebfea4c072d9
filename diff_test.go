package phasetrace_test

import (
	"reflect"

	"github.com/google/go-cmp/cmp"
)

// quickDiff is cmp.Diff(want, got, opts...) for values that are usually
// equal: it tells equal values apart with reflect.DeepEqual first, since
// cmp.Diff walks a large value slowly, and calls cmp.Diff only to explain
// a difference (or to find values equal under opts).
func quickDiff(want, got any, opts ...cmp.Option) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got, opts...)
}
