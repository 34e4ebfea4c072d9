package phasetrace

// SliceLabel is sliceLabel, for the tests of package phasetrace_test.
var SliceLabel = sliceLabel
