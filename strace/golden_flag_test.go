package strace

import "flag"

var update = flag.Bool("update", false, "rewrite golden files and generated samples under testdata/")
