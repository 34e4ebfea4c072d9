module github.com/phasetrace/phasetrace

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
	google.golang.org/protobuf v1.36.11
)
